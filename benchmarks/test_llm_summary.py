"""A bench cell whose rolling summary asks a model, from a warm cache, against the same cell
with the deterministic summarizer: the cache must make the model nearly free.

The model is the tests' Chat Completions server on 127.0.0.1 (``tests.llm_server``);
a first, untimed run fills the cache, and the timed rounds make no request.
``conftest.py`` checks the ratio (issue 12: at most 1.5).
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.conftest import Bench
from memtape.lab.bench import Cell, PolicySpec, run_cell
from memtape.lab.generate import support_session
from memtape.llm.cache import close_caches
from memtape.llm.cache_location import CACHE_ENV
from tests.llm_server import ChatServer, serving

TURNS = 10_000
"""The cell's session length, as the README's bench of the support session."""

ROUNDS = 3
"""Timed rounds per summarizer."""


@pytest.fixture
def server() -> Iterator[ChatServer]:
    """The tests' model server, stopped after the benchmark."""
    yield from serving()


def test_llm_summary_warm_cache(
    bench: Bench, server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache.sqlite"))
    source = tmp_path / "support.toml"
    source.write_text(support_session(bench.size(TURNS), 1), "utf-8")
    model = ("llm.model=bench-model", f"llm.base_url={server.url}")
    spec = PolicySpec("compaction", "rolling-summary", ("compaction.summarizer=llm",), "llm")
    llm = Cell(str(source), spec, model, ())
    salient = Cell(str(source), PolicySpec("compaction", "rolling-summary", (), "salient"), (), ())
    bench.benchmark.group = "llm summary"
    try:
        cold = run_cell(llm)
        asked = server.requests
        warm = bench.measure("llm-warm-10k", run_cell, llm, rounds=ROUNDS, collector=False)
        plain = run_cell(salient)
    finally:
        close_caches()

    assert asked == cold.metrics["llm_calls"] > 0
    assert asked == server.requests
    assert (asked, 0.0) == (warm.metrics["llm_cache_hits"], warm.metrics["llm_seconds"])
    assert plain.metrics["llm_calls"] == 0
    if bench.timed:
        bench.note(f"llm summary, {bench.size(TURNS):,} turns: {asked} calls, all from the cache")


def test_salient_summary(bench: Bench, tmp_path: Path) -> None:
    source = tmp_path / "support.toml"
    source.write_text(support_session(bench.size(TURNS), 1), "utf-8")
    salient = Cell(str(source), PolicySpec("compaction", "rolling-summary", (), "salient"), (), ())
    bench.benchmark.group = "llm summary"
    run_cell(salient)  # as the LLM cell's cold run does: the scenario is loaded before timing
    result = bench.measure("salient-10k", run_cell, salient, rounds=ROUNDS, collector=False)

    assert result.metrics["compactions"] > 0
