"""``bench --calibrate`` on a Claude Code session that recorded its usage."""

import json
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.calibrate import calibrated

FIXTURE = Path(__file__).parent / "fixtures" / "claude-code-usage.jsonl"


@pytest.fixture
def session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The fixture imported as a scenario (o200k_base, its one compaction recorded)."""
    out = tmp_path / "session.toml"
    assert 0 == main(["import", str(FIXTURE), "--out", str(out), "-q"])
    capsys.readouterr()
    return str(out)


class TestCalibrated:
    def test_each_turn_with_usage_is_set_beside_the_request_it_answered(self, session: str) -> None:
        found = calibrated(session, ["cost.model=claude-sonnet-4-5"])
        # The transcript's prompts (17 to 156 tokens) are below Sonnet's 1,024: nothing
        # is cached in the simulation, where the agent read about 3,000 a turn.
        expected = [
            (2, (17, 0, 0), (10, 3_000, 200)),
            (4, (156, 0, 0), (5, 3_250, 180)),
            (7, (46, 0, 0), (8, 900, 50)),
            (9, (58, 0, 0), (4, 983, 13)),
        ]
        actual = [(t.turn, t.simulated, t.recorded) for t in found.calibration.turns]
        assert (expected, "recorded") == (actual, found.policy)

    def test_the_unseen_prompt_is_the_median_of_what_was_recorded_beyond_the_simulated(
        self, session: str
    ) -> None:
        found = calibrated(session, ["cost.model=claude-sonnet-4-5"])
        # Recorded minus simulated prompts: 3,193, 3,279, 912, 942; their median.
        assert round((3_193 + 942) / 2) == found.calibration.unseen

    def test_with_the_unseen_prefix_the_errors_are_pinned(self, session: str) -> None:
        found = calibrated(session, ["cost.model=claude-sonnet-4-5", "cost.prefix=2068"])
        calibration = found.calibration
        # Reads: |0 - 3,000| + |2,085 - 3,250| + |2,068 - 900| + |2,114 - 983| = 6,464.
        expected = (6_464 / 4, 6_464 / 8_133, 2)
        actual = (
            calibration.mean_absolute("cache_read"),
            calibration.relative("cache_read"),
            calibration.worst.turn if calibration.worst else None,
        )
        assert expected == pytest.approx(actual)

    def test_the_prompts_are_priced_on_both_sides(self, session: str) -> None:
        calibration = calibrated(session).calibration
        # Sonnet 4.5: input 3.0, cache read 0.3, cache write 3.75 USD per million.
        recorded = (27 * 3.0 + 8_133 * 0.3 + 443 * 3.75) / 1e6
        simulated = 277 * 3.0 / 1e6
        assert (simulated, recorded) == pytest.approx(
            (calibration.usd(simulated=True), calibration.usd(simulated=False))
        )
        assert (simulated - recorded) / recorded == pytest.approx(calibration.usd_error)

    def test_a_warm_prefix_reads_what_an_earlier_session_cached(self, session: str) -> None:
        settings = ["cost.prefix=2068", "cost.warm=true"]
        calibration = calibrated(session, settings).calibration
        # Turn 2's request now reads the 2,068 an earlier session cached, and writes the
        # transcript's 17; the other turns are as without warm.
        assert ((0, 2_068, 17), 8_335) == (
            calibration.turns[0].simulated,
            calibration.total("cache_read", simulated=True),
        )

    def test_a_scenario_without_usage_is_refused(self) -> None:
        with pytest.raises(BadInput) as error:
            calibrated("refund-desk", ["cost.model=gpt-5"])
        assert str(error.value).startswith("refund-desk: --calibrate needs turns with the usage")
        assert str(error.value).endswith(
            "Claude Code, Codex, OpenTelemetry, a capture, Gemini CLI)"
        )

    def test_a_session_without_a_model_is_refused(self, session: str, tmp_path: Path) -> None:
        unpriced = tmp_path / "unpriced.toml"
        text = Path(session).read_text("utf-8")
        unpriced.write_text(text.replace('[cost]\nmodel = "claude-sonnet-4-5-20250929"', ""))
        with pytest.raises(BadInput) as error:
            calibrated(str(unpriced))
        assert str(error.value).startswith(f"{unpriced}: --calibrate needs the model to price")

    def test_the_imported_model_is_priced(self, session: str) -> None:
        assert "claude-sonnet-4-5" == calibrated(session).model


class TestTheFixtures:
    @pytest.mark.parametrize(
        ("name", "settings", "error"),
        [
            ("otel-trace.json", [], -0.876),
            ("codex-rollout.jsonl", [], -0.874),
            ("capture-session.jsonl", ["cost.model=claude-sonnet-4-5"], -0.418),
            ("gemini-cli-session.json", [], -0.958),
        ],
    )
    def test_each_prompt_bill_is_off_as_the_docs_table_says(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        name: str,
        settings: list[str],
        error: float,
    ) -> None:
        """docs/how-to/cost.md's tolerance table, as imported (a Gemini CLI session was
        refused: its import named no model)."""
        out = tmp_path / "session.toml"
        assert 0 == main(["import", str(FIXTURE.parent / name), "--out", str(out), "-q"])
        found = calibrated(str(out), settings).calibration.usd_error
        assert error == pytest.approx(found, abs=5e-4)


class TestCommand:
    def test_prints_each_kind_and_writes_every_turn_as_json(
        self, session: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "calibration.json"
        argv = ["bench", session, "--calibrate", "--set", "cost.model=claude-sonnet-4-5"]
        assert 0 == main([*argv, "--json", str(out)])
        lines = capsys.readouterr().out.splitlines()
        data = json.loads(out.read_text("utf-8"))["calibrations"][0]
        expected = "  cache read           0      8,133       2,033.2    100.0%"
        assert (expected, 4, 2_068) == (
            lines[3],
            len(data["per_turn"]),
            data["unseen_prompt_tokens"],
        )

    def test_the_lines_wrap_to_a_narrow_terminal(
        self, session: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The table and the worst turn's and unseen prompt's lines ran past the narrowest
        width (60) unbroken."""
        monkeypatch.setenv("COLUMNS", "60")
        argv = ["bench", session, "--calibrate", "--set", "cost.model=claude-sonnet-4-5"]
        assert 0 == main(argv)
        lines = capsys.readouterr().out.splitlines()
        assert ([], True) == (
            [line for line in lines if len(line) > 60],
            any(line.startswith("  the agent sent") for line in lines),
        )

    def test_a_policy_beside_calibrate_is_refused(
        self, session: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status = main(["bench", session, "--calibrate", "--policy", "tiered"])
        expected = (
            "memtape: error: --calibrate replays each session as its agent ran it: "
            "give no --policy\n"
        )
        assert (2, expected) == (status, capsys.readouterr().err)

    @pytest.mark.parametrize(
        ("given", "flag"),
        [
            (["--fail-if", "usd > 1"], "--fail-if"),
            (["--grid", "compaction.budget=1,2"], "--grid"),
            (["--replicates", "3"], "--replicates"),
            (["--results", "r.jsonl"], "--results"),
            (["--judge", "m"], "--judge"),
            (["--frontier"], "--frontier"),
            (["--columns", "usd"], "--columns"),
            (["--engine", "ray"], "--engine"),
        ],
    )
    def test_an_option_calibrate_does_not_take_is_refused(
        self, session: str, capsys: pytest.CaptureFixture[str], given: list[str], flag: str
    ) -> None:
        """Each was ignored in silence: --fail-if passed a CI gate it never held."""
        status = main(["bench", session, "--calibrate", *given])
        expected = (
            f"memtape: error: --calibrate takes no {flag}: it replays each session as "
            "recorded and compares its bill with the usage recorded, and gates nothing\n"
        )
        assert (2, expected) == (status, capsys.readouterr().err)

    def test_bench_without_calibrate_still_needs_a_policy(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status = main(["bench", "refund-desk"])
        expected = (
            "memtape: error: bench needs at least one --policy to compare, e.g. --policy "
            "tiered --policy none (memtape policies lists them)\n"
        )
        assert (2, expected) == (status, capsys.readouterr().err)
