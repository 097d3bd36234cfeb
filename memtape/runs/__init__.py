"""Runs as files: a session saved and loaded back with its policies, and redacted copies.

``files`` saves a session to a run file (JSONL or a SQLite store) and loads one back,
standing in for any policy a header names by import path; ``redact`` writes a copy of a
run with every text masked and every figure kept, for sharing.
"""
