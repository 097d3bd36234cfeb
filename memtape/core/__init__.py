"""The kernel's vocabulary: events, commands, states, the run, the codec; the run file,
and the file handling it needs (``paths``: what may be read or written; ``atomic``).

Nothing in here knows about policies or projections.
"""
