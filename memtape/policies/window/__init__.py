"""The window's policies: what a compaction keeps HOT, folds WARM or COLD, clears or drops,
and the units and turn measures they share."""
