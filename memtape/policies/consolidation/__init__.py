"""Consolidation: the sleep-time passes that distill episodes into durable facts."""
