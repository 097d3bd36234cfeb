"""The kernel's vocabulary: events, commands, states, the run, the codec.

Nothing in here knows about policies or projections.
"""
