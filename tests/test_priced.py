"""memtape.commandline.priced: the model a run's header prices it as."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import attrs
import pytest

from memtape.cli import main
from memtape.commandline.priced import run_price
from memtape.core.errors import BadInput
from memtape.runs.files import load_run


def _run(tmp_path: Path, scenario: str, *settings: str) -> Path:
    out = tmp_path / "run.jsonl"
    argv = ["run", scenario, *(part for s in settings for part in ("--set", s)), "--out", str(out)]
    assert 0 == main(argv)
    return out


class TestRunPrice:
    def test_a_priced_run_gives_its_cost_table_and_its_model_s_price(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _run(tmp_path, "cache-breaker")
        priced = run_price(load_run(run), str(run))
        assert priced is not None
        cost, price = priced
        assert ("claude-sonnet-4-5", "claude-sonnet-4-5", 3.0) == (
            cost.model,
            price.model,
            price.input,
        )

    def test_an_unpriced_run_gives_none(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _run(tmp_path, "refund-desk")
        assert None is run_price(load_run(run), str(run))

    def test_a_model_without_a_shipped_price_is_refused_naming_the_run(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _run(tmp_path, "refund-desk", "cost.model=claude-sonnet-4-5")
        loaded = load_run(run)
        loaded = attrs.evolve(loaded, cost={"model": "no-such-model"})
        with pytest.raises(BadInput, match=rf"^{run}: \[cost\] model: no price for model"):
            run_price(loaded, str(run))
