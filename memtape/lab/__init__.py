"""The policy lab: benchmark policies side by side, generate and import scenarios."""
