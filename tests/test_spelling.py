"""memtape.core.spelling: a mistyped name is refused with the name it most likely meant, in
the one line of the refusal, wherever a name is given."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.spelling import did_you_mean


def _refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``memtape ARGS...`` in-process, refused: its status, stdout and stderr."""
    try:
        status = main(list(argv))
    except SystemExit as exited:
        status = int(exited.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


class TestDidYouMean:
    def test_the_closest_name_is_offered(self) -> None:
        assert ": did you mean 'tiered'?" == did_you_mean("tierd", ["none", "tiered"])

    def test_a_bare_name_for_a_parameter(self) -> None:
        assert ": did you mean budget?" == did_you_mean("budgte", ["budget"], quote=False)

    def test_nothing_close_offers_nothing(self) -> None:
        assert "" == did_you_mean("xyz", ["refund-desk", "dana-facts"])

    def test_the_name_itself_is_not_offered(self) -> None:
        assert "" == did_you_mean("tiered", ["tiered"])


class TestInTheCommandLine:
    @pytest.mark.parametrize(
        ("argv", "offered"),
        [
            (["shwo", "refund-desk"], "invalid choice: 'shwo' (choose from"),
            (["generate", "suport", "--out", "s.toml"], "invalid choice: 'suport' (choose from"),
        ],
    )
    def test_a_mistyped_command_or_kind(
        self, capsys: pytest.CaptureFixture[str], argv: list[str], offered: str
    ) -> None:
        status, out, err = _refusal(capsys, *argv)
        meant = "'show'" if argv[0] == "shwo" else "'support'"

        assert (2, "", 1) == (status, out, len(err.splitlines()))
        assert offered in err
        assert f"): did you mean {meant}? (see memtape" in err

    @pytest.mark.parametrize(
        ("argv", "ending"),
        [
            (["show", "refund-dsk"], ": did you mean 'refund-desk'?"),
            (["run", "dana-fact", "--out", "o.jsonl"], ": did you mean 'dana-facts'?"),
            (["bench", "sleep-pas", "--policy", "tiered"], ": did you mean 'sleep-pass'?"),
            (
                ["run", "refund-desk", "--out", "o.jsonl", "--set", "compaction.policy=tierd"],
                "got 'tierd': did you mean 'tiered'?",
            ),
            (["bench", "refund-desk", "--policy", "tierd"], ": did you mean 'tiered'?"),
            (
                ["run", "refund-desk", "--out", "o.jsonl", "--set", "compaction.budgte=60"],
                "unknown parameter budgte: did you mean budget?",
            ),
            (
                ["bench", "refund-desk", "--policy", "tiered:hot=3"],
                "unknown parameter hot: did you mean hot_n?",
            ),
            (
                ["run", "refund-desk", "--out", "o.jsonl", "--set", "compction.budget=60"],
                ": did you mean 'compaction'?",
            ),
        ],
    )
    def test_a_mistyped_scenario_policy_or_parameter(
        self,
        capsys: pytest.CaptureFixture[str],
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        argv: list[str],
        ending: str,
    ) -> None:
        monkeypatch.chdir(tmp_path)
        status, out, err = _refusal(capsys, *argv)

        assert (2, "", [f"{ending}"]) == (
            status,
            out,
            [line[-len(ending) :] for line in err.splitlines()],
        )
        assert [] == list(tmp_path.iterdir())

    def test_a_path_is_not_taken_for_a_misspelt_scenario(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """A file's name is its own: ``x/refund-dsk`` is missing, not a shipped name."""
        _, _, err = _refusal(capsys, "show", str(tmp_path / "refund-dsk"))

        assert "did you mean" not in err
