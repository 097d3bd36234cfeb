"""``memtape why turn:N`` on a priced run: which compaction broke the prefix a turn paid for."""

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main


def why(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert 0 == main(["why", *argv, "--json"])
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


class TestWhy:
    def test_names_the_compaction_that_broke_the_prefix_and_its_policy(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        # cache-breaker: turn 33 answers the request after turn 32, which the sliding
        # window's compaction after turn 32 (event 42) broke.
        cost = why(capsys, "cache-breaker", "turn:33")["cost"]
        assert ({"at": 42, "policy": "sliding-window"}, 32) == (
            cost["broken_by"],
            cost["request"]["turn"],
        )

    def test_a_request_before_the_window_fills_was_broken_by_nothing(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cost = why(capsys, "cache-breaker", "turn:3")["cost"]
        # The pinned 1,100 read; turns 2 and 3 (200 and 100) were written by then only
        # in part: the request after turn 2 writes its 200.
        assert (None, 1_100, 200) == (
            cost["broken_by"],
            cost["request"]["cache_read"],
            cost["request"]["cache_write"],
        )

    def test_a_run_file_keeps_its_cost_table(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "run.jsonl"
        assert 0 == main(["run", "cache-breaker", "--out", str(out)])
        capsys.readouterr()
        cost = why(capsys, str(out), "turn:33")["cost"]
        assert {"at": 42, "policy": "sliding-window"} == cost["broken_by"]

    def test_an_unpriced_run_says_nothing_of_cost(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert "cost" not in why(capsys, "refund-desk", "turn:3")

    def test_the_text_ends_with_the_bill_and_the_break(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 0 == main(["why", "cache-breaker", "turn:33"])
        last = capsys.readouterr().out.splitlines()[-1]
        assert last.endswith("broken by the compaction at event 42 (sliding-window)")
