"""Checking runs: the invariants as functions, deciding in made-up worlds, ``memtape check``.

``invariants`` holds what the kit and ``memtape check`` check (budget, tiers, promises,
re-decision); ``determinism`` decides a command again under a changed wall clock and
``random``; ``check`` is the command's whole pass over a run file.
"""
