"""Examples of memtape used from outside the package: a user's own policy and its test."""
