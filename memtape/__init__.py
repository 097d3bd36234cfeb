"""memtape: simulate the memory policies of LLM agents as an event-sourced system.

Policies decide, events record, pure reducers fold, projections render.
"""

__version__ = "0.1.0"
