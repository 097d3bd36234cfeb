"""A bench cell whose tiered compaction has a model write its WARM stand-ins and its gist,
from a warm cache, beside the same cell with the default (verbatim) tiers.

The model is the tests' Chat Completions server on 127.0.0.1; a first,
untimed run fills the cache, and the timed rounds make no request. No
target is checked: the two cells do not decide alike (short stand-ins
compact less often and keep a longer WARM tier), so the figures are shown.
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
"""The cell's session length, as the rolling summary's LLM benchmark."""

ROUNDS = 3
"""Timed rounds per cell."""


@pytest.fixture
def server() -> Iterator[ChatServer]:
    """The tests' model server, stopped after the benchmark."""
    yield from serving()


def test_tiered_llm_warm_cache(
    bench: Bench, server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache.sqlite"))
    source = tmp_path / "support.toml"
    source.write_text(support_session(bench.size(TURNS), 1), "utf-8")
    model = ("llm.model=bench-model", f"llm.base_url={server.url}")
    settings = ("compaction.warm=llm", "compaction.gist=llm")
    llm = Cell(str(source), PolicySpec("compaction", "tiered", settings, "llm"), model, ())
    bench.benchmark.group = "llm tiered"
    try:
        cold = run_cell(llm)
        asked = server.requests
        warm = bench.measure("tiered-llm-warm-10k", run_cell, llm, rounds=ROUNDS, collector=False)
    finally:
        close_caches()

    assert asked == cold.metrics["llm_calls"] > 0
    assert asked == server.requests
    assert (asked, 0.0) == (warm.metrics["llm_cache_hits"], warm.metrics["llm_seconds"])
    if bench.timed:
        bench.note(
            f"tiered, warm and gist by a model, {bench.size(TURNS):,} turns: {asked} calls, "
            f"all from the cache; {warm.metrics['compactions']} compactions"
        )


def test_tiered_verbatim(bench: Bench, tmp_path: Path) -> None:
    source = tmp_path / "support.toml"
    source.write_text(support_session(bench.size(TURNS), 1), "utf-8")
    plain = Cell(str(source), PolicySpec("compaction", "tiered", (), "verbatim"), (), ())
    bench.benchmark.group = "llm tiered"
    run_cell(plain)  # as the LLM cell's cold run does: the scenario is loaded before timing
    result = bench.measure("tiered-10k", run_cell, plain, rounds=ROUNDS, collector=False)

    assert result.metrics["compactions"] > 0
    assert 0 == result.metrics["llm_calls"]
    if bench.timed:
        compactions = result.metrics["compactions"]
        bench.note(f"tiered, verbatim, {bench.size(TURNS):,} turns: {compactions} compactions")
