"""Projections: pure functions of states (and of the log, for timelines),
rendered as JSON-ready data and as text."""
