"""The store's policies: how facts are ranked, superseded, evicted and queried."""
