"""The long-memory benchmarks' data sets, read from the user's own copy into scenarios.

LongMemEval (``longmemeval``) and LoCoMo (``locomo``) publish JSON files of
multi-session chats and questions about them. Each loader reads one item
(a LongMemEval question with its history, a LoCoMo conversation with its
questions) into a ``Benchmark`` (``sessions``), and ``benchmark_scenario``
writes it as a scenario: the sessions' turns in order of their dates, the
dates on the logical clock, the questions as ``[[probe]]`` tables with their
answers and evidence turns. Nothing is downloaded and nothing of the data
sets ships with memtape.
"""

from memtape.lab.longmemory.importing import import_benchmark
from memtape.lab.longmemory.sessions import (
    BENCHMARKS,
    Benchmark,
    Question,
    Session,
    benchmark_scenario,
)

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "Question",
    "Session",
    "benchmark_scenario",
    "import_benchmark",
]
