"""Where the response cache is kept: the variable that names its file, and the default.

A module of its own, with nothing to import, so that the command line's help
can say it without opening SQLite.
"""

from pathlib import Path

CACHE_ENV = "MEMTAPE_LLM_CACHE"
"""The variable naming the cache file."""

DEFAULT_CACHE = Path(".memtape") / "llm-cache.sqlite"
"""The cache file when ``MEMTAPE_LLM_CACHE`` is not set, under the current directory."""
