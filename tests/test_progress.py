"""memtape.lab.progress: a bar on a terminal, a line every few seconds with -v, none with -q."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import io
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.lab.bench import plan, process_pool, run_cells
from memtape.lab.generate import support_session
from memtape.lab.progress import EVERY, LINE_SECONDS, Progress, progress_mode
from memtape.lab.report import bench


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TestMode:
    @pytest.mark.parametrize(
        ("terminal", "verbose", "quiet", "expected"),
        [
            (True, False, False, "bar"),
            (True, True, True, "off"),
            (False, True, False, "lines"),
            (False, False, False, "off"),
            (False, True, True, "off"),
        ],
    )
    def test_the_mode_follows_the_terminal_and_the_flags(
        self, terminal: bool, verbose: bool, quiet: bool, expected: str
    ) -> None:
        err = _Terminal() if terminal else io.StringIO()

        assert expected == progress_mode(err, verbose=verbose, quiet=quiet)


class TestLines:
    def test_a_line_every_few_seconds_and_one_at_the_end(self) -> None:
        clock, err = _Clock(), io.StringIO()
        with Progress("run", 1000, mode="lines", err=err, clock=clock) as progress:
            for done, now in ((100, 1.0), (200, LINE_SECONDS), (300, LINE_SECONDS + 1), (1000, 8)):
                clock.now = now
                progress.update(done)

        assert [
            "run: 200/1,000 commands (40.0/s, about 20 s left)",
            "run: 1,000/1,000 commands (125.0/s)",
        ] == err.getvalue().splitlines()

    def test_off_writes_nothing(self) -> None:
        err = _Terminal()
        with Progress("run", 10, mode="off", err=err) as progress:
            progress.update(10)

        assert "" == err.getvalue()


class TestBar:
    def test_the_bar_shows_the_count_the_rate_and_the_time_left(self) -> None:
        clock, err = _Clock(), io.StringIO()
        with Progress(
            "run", 1000, mode="bar", err=err, clock=clock, force_terminal=True
        ) as progress:
            clock.now = 1.0
            progress.update(500)
            clock.now = 2.0
            progress.update(1000)
        text = err.getvalue()

        assert "run" in text
        assert "1000/1000" in text
        assert "commands/s" in text


class TestCommands:
    def test_run_with_v_off_a_terminal_ends_with_the_progress_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 0 == main(["run", "refund-desk", "--out", str(tmp_path / "r.jsonl"), "-v"])
        captured = capsys.readouterr()

        assert 1 == sum(
            line.startswith("refund-desk: 10/10 commands (") for line in captured.err.splitlines()
        )
        assert "commands (" not in captured.out

    def test_quiet_silences_it(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert 0 == main(["run", "refund-desk", "--out", str(tmp_path / "r.jsonl"), "-v", "-q"])

        assert "commands (" not in capsys.readouterr().err

    def test_without_v_off_a_terminal_nothing_is_said(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 0 == main(["run", "refund-desk", "--out", str(tmp_path / "r.jsonl")])

        assert "" == capsys.readouterr().err


class TestWithinACell:
    def test_a_long_cell_reports_its_commands_every_few_hundred(self, tmp_path: Path) -> None:
        scenario = tmp_path / "long.toml"
        scenario.write_text(support_session(2 * EVERY + 10, 1), "utf-8")
        heard: list[tuple[int, int, int]] = []

        run_cells(
            plan([str(scenario)], ["tiered"]),
            engine=process_pool(1, lambda cell, done, total: heard.append((cell, done, total))),
        )

        total = heard[0][2]
        assert [(0, EVERY, total), (0, 2 * EVERY, total)] == heard[:2]
        assert all(done % EVERY == 0 for _, done, _ in heard)


class _Stepping:
    """A clock that moves ten seconds each time it is read, so every update is a line."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 10
        return self.now


class TestResumed:
    def test_a_resumed_sweep_counts_the_cells_it_had_finished(self, tmp_path: Path) -> None:
        scenario = tmp_path / "long.toml"
        scenario.write_text(support_session(2 * EVERY + 10, 1), "utf-8")
        results = tmp_path / "sweep.jsonl"
        quiet = io.StringIO()
        assert 0 == bench(
            [str(scenario)], ["tiered", "none"], jobs=1, quiet=True, results_out=results, out=quiet
        )
        *kept, _ = results.read_text("utf-8").splitlines(keepends=True)
        results.write_text("".join(kept), "utf-8")
        err = io.StringIO()

        bench(
            [str(scenario)],
            ["tiered", "none"],
            jobs=1,
            verbose=True,
            results_out=results,
            resume=True,
            out=io.StringIO(),
            err=err,
            clock=_Stepping(),
        )

        counts = [float(line.split()[1].split("/")[0]) for line in err.getvalue().splitlines()]
        # The cell left to run moves the count from the one finished before, not from 0.
        assert [1, 2] == [counts[0], counts[-1]]
        assert any(1 < count < 2 for count in counts), counts
        assert all(count >= 1 for count in counts), counts
