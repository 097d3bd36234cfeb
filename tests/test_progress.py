"""memtape.lab.progress: a bar on a terminal, a line every few seconds with -v, none with -q."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import io
from pathlib import Path

import pytest

from memtape.checking.check import STAGES, check_file
from memtape.cli import main
from memtape.lab.bench import plan, process_pool, run_cells
from memtape.lab.generate import support_session
from memtape.lab.progress import EVERY, LINE_SECONDS, Progress, Stages, progress_mode
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


class TestStages:
    def test_each_stage_has_its_own_lines_and_total(self) -> None:
        clock, err = _Clock(), io.StringIO()
        with Stages("r.jsonl", mode="lines", err=err, clock=clock) as stages:
            clock.now = 1.0
            stages.update("reading", 10, 10)
            clock.now = 3.0
            stages.update("invariants", 4, 8)
            clock.now = 3.0 + LINE_SECONDS
            stages.update("invariants", 8, 8)

        assert [
            "r.jsonl: reading: 10/10 commands (10.0/s)",
            "r.jsonl: invariants: 8/8 commands (1.1/s)",
        ] == err.getvalue().splitlines()

    def test_off_opens_nothing(self) -> None:
        err = _Terminal()
        with Stages("r.jsonl", mode="off", err=err) as stages:
            stages.update("reading", 1, 1)

        assert "" == err.getvalue()


def _recorded(tmp_path: Path, steps: int) -> Path:
    """A generated support session of ``steps`` turns, recorded to a run file."""
    scenario = tmp_path / "long.toml"
    scenario.write_text(support_session(steps, 1), "utf-8")
    out = tmp_path / "long.jsonl"
    assert 0 == main(["run", str(scenario), "--out", str(out), "-q"])
    return out


class TestCheck:
    def test_check_file_reports_every_stage_in_order_every_few_hundred(
        self, tmp_path: Path
    ) -> None:
        path = _recorded(tmp_path, EVERY + 10)
        heard: list[tuple[str, int, int]] = []

        check_file(path, progress=lambda stage, done, total: heard.append((stage, done, total)))

        steps = EVERY + 10
        assert [(stage, done, steps) for stage in STAGES[:3] for done in (EVERY, steps)] == heard

    def test_check_with_v_off_a_terminal_writes_a_line_a_stage_on_stderr_only(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = _recorded(tmp_path, 20)
        capsys.readouterr()
        assert 0 == main(["check", str(path), "-q"])
        quiet = capsys.readouterr()

        assert 0 == main(["check", str(path), "-v"])
        captured = capsys.readouterr()

        assert "" == quiet.err
        assert quiet.out == captured.out
        assert [f"{path}: {stage}: 20/20 commands" for stage in STAGES[:3]] == [
            line.split(" (")[0] for line in captured.err.splitlines()
        ]


class TestImport:
    def test_import_with_v_writes_the_messages_line_and_q_silences_it(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat = tmp_path / "chat.jsonl"
        lines = [f'{{"role": "user", "content": "message {n}"}}' for n in range(EVERY + 3)]
        chat.write_text("\n".join(lines) + "\n", "utf-8")
        common = ["import", str(chat), "--salient", "all"]

        assert 0 == main([*common, "--out", str(tmp_path / "a.toml"), "-v"])
        loud = capsys.readouterr()
        assert 0 == main([*common, "--out", str(tmp_path / "b.toml"), "-v", "-q"])
        quiet = capsys.readouterr()

        total = EVERY + 3
        assert [f"{chat}: {total:,}/{total:,} messages"] == [
            line.split(" (")[0] for line in loud.err.splitlines()
        ]
        assert "" == quiet.err
        assert (tmp_path / "a.toml").read_bytes() == (tmp_path / "b.toml").read_bytes()
        assert "messages (" not in loud.out
