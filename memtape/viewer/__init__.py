"""The time-travel viewer in the browser: a static page per run, and a live server."""
