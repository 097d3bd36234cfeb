"""``memtape show`` on a priced run: its bill up to the point shown."""

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert 0 == main(["show", *argv, "--json"])
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


class TestShow:
    def test_a_priced_run_shows_its_bill_up_to_the_event(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cost = show(capsys, "cache-breaker", "--at", "10")["cost"]
        # Events 1..10 are turns 1..10 (no compaction yet): a request after the system
        # turn (1,100 tokens, written) and after each tool turn, 2, 4, 6, 8 and 10 (a tool
        # output of 200 and an answer of 100 an exchange): each reads the prompt before it
        # and writes what is new (200, then 300).
        reads = 1_100 + 1_300 + 1_600 + 1_900 + 2_200
        assert ("claude-sonnet-4-5", 0, 0) == (
            cost["model"],
            cost["billed_input_tokens"],
            cost["cache_breaks"],
        )
        assert (reads, 1_100 + 200 + 4 * 300) == (
            cost["cache_read_tokens"],
            cost["cache_write_tokens"],
        )

    def test_an_unpriced_run_has_no_bill(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert "cost" not in show(capsys, "refund-desk")

    def test_the_text_ends_with_the_bill(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert 0 == main(["show", "cache-breaker"])
        last = capsys.readouterr().out.splitlines()[-1]
        expected = (
            "billed as claude-sonnet-4-5: $0.142800 (0 input, 26,000 cache read, "
            "28,000 cache write, 14 cache breaks)"
        )
        assert expected == last


class TestRun:
    def test_a_model_without_a_price_is_refused_and_nothing_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "run.jsonl"
        status = main(["run", "refund-desk", "--set", "cost.model=gpt5", "--out", str(out)])
        expected = (
            "memtape: error: refund-desk: [cost] model: no price for model 'gpt5' "
            "(--prices FILE.toml adds one): did you mean 'gpt-5'?\n"
        )
        assert (2, expected, False) == (status, capsys.readouterr().err, out.exists())

    @pytest.mark.parametrize(
        ("value", "problem"),
        [
            (
                "\u00b2",
                "must be an integer in 0..1099511627776 (the most a text may count), got '\u00b2'",
            ),
            (
                "\u0663",
                "must be an integer in 0..1099511627776 (the most a text may count), got '\u0663'",
            ),
            ("1099511627777", "must be at most 1099511627776 (the most a text may count)"),
            ("9" * 5000, "must be at most 1099511627776 (the most a text may count)"),
        ],
    )
    def test_a_prefix_not_a_count_is_one_line_and_nothing_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, problem: str
    ) -> None:
        """A superscript or 5,000 digits were int()'s ValueError traceback, an Arabic-Indic
        three a prefix of 3, and 10**22 tokens a bill of 10**17 dollars."""
        out = tmp_path / "run.jsonl"
        status = main(["run", "cache-breaker", "--set", f"cost.prefix={value}", "--out", str(out)])
        expected = f"memtape: error: --set: [cost]: prefix {problem}\n"
        assert (2, expected, False) == (status, capsys.readouterr().err, out.exists())

    def test_a_fork_keeps_the_cost_table(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run, forked = tmp_path / "run.jsonl", tmp_path / "fork.jsonl"
        assert 0 == main(["run", "cache-breaker", "--out", str(run)])
        argv = ["fork", str(run), "--at", "19", "--set", "compaction.policy=none"]
        assert 0 == main([*argv, "--out", str(forked)])
        capsys.readouterr()
        cost = show(capsys, str(forked))["cost"]
        # The sliding window's two compactions before event 19 broke two cached prefixes
        # (its whole run broke 14); under none, from there on, nothing breaks another.
        assert ("claude-sonnet-4-5", 2) == (cost["model"], cost["cache_breaks"])


PRICES = str(Path(__file__).parent.parent / "examples" / "prices.toml")
"""A price file of one model, ``my-gateway-sonnet`` (Sonnet's rules at 80% of its prices)."""


@pytest.fixture
def gateway(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """cache-breaker recorded as priced by the price file's model."""
    out = tmp_path / "run.jsonl"
    argv = ["run", "cache-breaker", "--set", "cost.model=my-gateway-sonnet"]
    assert 0 == main([*argv, "--prices", PRICES, "--out", str(out)])
    capsys.readouterr()
    return out


class TestPriceFile:
    """A run priced by a model of a price file is shown and explained with that file; a
    bench --runs directory holds such runs, and show and why took no --prices."""

    def test_show_bills_the_run_at_the_file_s_prices(
        self, gateway: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cost = show(capsys, str(gateway), "--prices", PRICES)["cost"]
        # The shipped run's bill at Sonnet's prices ($0.1428), at 80% of each of them.
        assert ("my-gateway-sonnet", 14) == (cost["model"], cost["cache_breaks"])
        assert 0.1428 * 0.8 == pytest.approx(cost["usd"], rel=1e-12)

    def test_why_names_the_break_at_the_file_s_prices(
        self, gateway: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 0 == main(["why", str(gateway), "turn:33", "--prices", PRICES])
        last = capsys.readouterr().out.splitlines()[-1]
        assert last.startswith("       billed as my-gateway-sonnet: the request after turn 32")

    def test_without_the_file_the_model_is_refused_in_one_line(
        self, gateway: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status = main(["show", str(gateway)])
        expected = (
            f"memtape: error: {gateway}: [cost] model: no price for model "
            "'my-gateway-sonnet' (--prices FILE.toml adds one)\n"
        )
        assert (2, expected) == (status, capsys.readouterr().err)

    def test_a_price_file_that_is_not_there_is_refused_in_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        missing = tmp_path / "nope.toml"
        status = main(["show", "refund-desk", "--prices", str(missing)])
        assert (2, f"memtape: error: {missing}: no such price file\n") == (
            status,
            capsys.readouterr().err,
        )

    def test_run_refuses_a_bad_price_file_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad, out = tmp_path / "bad.toml", tmp_path / "run.jsonl"
        bad.write_text('[models."x"]\nprovider = "azure"\n', "utf-8")
        status = main(["run", "refund-desk", "--prices", str(bad), "--out", str(out)])
        expected = (
            f"memtape: error: {bad}: models.'x': provider must be one of anthropic, openai, "
            "google, got 'azure'\n"
        )
        assert (2, expected, False) == (status, capsys.readouterr().err, out.exists())

    def test_why_of_a_fact_refuses_a_price_file_that_is_not_there(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A fact's life bills nothing, but the option was read only for a turn: a fact's
        was printed with exit 0, the missing file unsaid."""
        missing = tmp_path / "nope.toml"
        status = main(["why", "dana-facts", "name", "--prices", str(missing)])
        said = capsys.readouterr()
        assert (2, f"memtape: error: {missing}: no such price file\n", "") == (
            status,
            said.err,
            said.out,
        )
