"""memtape.lab.rules: ``--fail-if METRIC OP EXPR`` read by memtape (never evaluated), and a
malformed rule refused in one line naming it and the column where it broke, before any run."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.bench import METRICS
from memtape.lab.rules import Rule, parse_rule

METRIC_NAMES = (*METRICS, "usd")


def _rule(text: str) -> Rule:
    return parse_rule(text, METRIC_NAMES)


class TestReading:
    @pytest.mark.parametrize(
        ("text", "read"),
        [
            ("probe_retention < baseline - 0.02", ("probe_retention", "<", True, "-", 0.02)),
            ("usd > baseline * 1.05", ("usd", ">", True, "*", 1.05)),
            ("tokens_resent>=baseline/2", ("tokens_resent", ">=", True, "/", 2.0)),
            ("  compactions != baseline  ", ("compactions", "!=", True, None, None)),
            ("peak_tokens > 4000", ("peak_tokens", ">", False, None, 4000.0)),
            ("regret <= -1.5e-3", ("regret", "<=", False, None, -0.0015)),
            ("hit_at_k == baseline + .5", ("hit_at_k", "==", True, "+", 0.5)),
        ],
    )
    def test_each_form_of_a_rule(
        self, text: str, read: tuple[str, str, bool, str | None, float | None]
    ) -> None:
        rule = _rule(text)

        assert read == (rule.metric, rule.comparison, rule.relative, rule.arithmetic, rule.number)

    def test_the_text_is_kept_as_written_without_its_outer_spaces(self) -> None:
        assert "usd > baseline" == _rule("  usd > baseline ").text


class TestFailing:
    @pytest.mark.parametrize(
        ("text", "value", "baseline", "fails"),
        [
            ("probe_retention < baseline - 0.02", 0.87, 0.9, True),
            ("probe_retention < baseline - 0.02", 0.89, 0.9, False),
            ("usd > baseline * 1.05", 1.06, 1.0, True),
            ("usd > baseline * 1.05", 1.04, 1.0, False),
            ("compactions != baseline", 5, 5, False),
            ("compactions != baseline", 6, 5, True),
            ("peak_tokens > 40", 41, None, True),
            ("peak_tokens > 40", 40, None, False),
        ],
    )
    def test_a_value_against_the_threshold(
        self, text: str, value: float, baseline: float | None, fails: bool
    ) -> None:
        assert fails == _rule(text).fails(value, baseline)

    def test_the_threshold_written_out(self) -> None:
        assert "0.9 - 0.02" == _rule("probe_retention < baseline - 0.02").expression(0.9)


class TestRefusals:
    @pytest.mark.parametrize(
        ("text", "reason"),
        [
            (
                "",
                "column 1: write METRIC OP EXPR, e.g. 'probe_retention < baseline - 0.02': "
                "no metric name, found the end",
            ),
            (
                "< 3",
                "column 1: write METRIC OP EXPR, e.g. 'probe_retention < baseline - 0.02': "
                "no metric name, found '<'",
            ),
            ("usd =~ 3", "column 5: after 'usd', one of <= >= == != < > is wanted, found '=~'"),
            ("usd >", "column 6: baseline or a number is wanted, found the end"),
            ("usd > baseline -", "column 17: a number after '-' is wanted, found the end"),
            ("usd > baseline ** 2", "column 17: a number after '*' is wanted, found '*'"),
            (
                "usd > baseline % 2",
                "column 16: after baseline, one of + - * / or the end, found '%'",
            ),
            ("usd > 3 4", "column 9: the rule ends after 'usd > 3', found '4'"),
            ("usd > inf", "column 7: baseline or a number is wanted, found 'inf'"),
            (
                "usd > 1e999",
                "column 7: baseline or a number is wanted (a finite one), found '1e999'",
            ),
            (
                "usd > basline",
                "column 7: baseline or a number is wanted, found 'basline': "
                "did you mean 'baseline'?",
            ),
            ("usd > baseline / 0", "it divides by zero"),
            ("usd > \u0663", "column 7: baseline or a number is wanted, found '\u0663'"),
            ("usd > baseline * \uff11", "column 18: a number after '*' is wanted, found '\uff11'"),
            ("usd > 2 * baseline", "column 9: the rule ends after 'usd > 2', found '*'"),
        ],
    )
    def test_a_malformed_rule_is_named_with_where_it_broke(self, text: str, reason: str) -> None:
        with pytest.raises(BadInput) as refused:
            _rule(text)

        assert f"--fail-if {text!r}: {reason}" == str(refused.value)

    def test_an_unknown_metric_offers_the_closest(self) -> None:
        with pytest.raises(BadInput) as refused:
            _rule("probe_retension < baseline")

        assert str(refused.value).startswith("--fail-if 'probe_retension < baseline': no metric ")
        assert str(refused.value).endswith(": did you mean 'probe_retention'?")

    def test_python_is_not_evaluated(self) -> None:
        with pytest.raises(BadInput, match="no metric '__import__'"):
            _rule("__import__('os').system('touch owned') < 1")


class TestInTheCommandLine:
    def test_a_malformed_rule_is_one_line_exit_2_and_nothing_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "out.json"

        status = main(
            ["bench", "refund-desk", "--policy", "tiered", "--json", str(out),
             "--fail-if", "peak_tokens > 40", "--fail-if", "tokens_resent > baseline -"]
        )  # fmt: skip

        captured = capsys.readouterr()
        assert 2 == status
        assert "" == captured.out
        assert (
            "memtape: error: --fail-if 'tokens_resent > baseline -': column 27: a number after "
            "'-' is wanted, found the end\n"
        ) == captured.err
        assert not out.exists()

    def test_an_unknown_metric_offers_the_closest(self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(["bench", "refund-desk", "--policy", "tiered", "--fail-if", "peak_tokes > 4"])

        err = capsys.readouterr().err
        assert 2 == status
        assert 1 == len(err.splitlines())
        assert err.endswith(": did you mean 'peak_tokens'?\n")
