"""Policies: the deciders of each memory axis, and the session that runs them."""
