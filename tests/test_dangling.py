"""memtape.checking.dangling: the calls a run leaves without their results, and check's word
on them."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.checking.dangling import OpenCall, open_calls
from memtape.cli import main
from memtape.core.events import TurnAdded

_HEAD = """
[compaction]
policy = "tiered"
budget = 2000
"""


def _turn(
    number: int, role: str, calls: tuple[str, ...] = (), answers: tuple[str, ...] = ()
) -> TurnAdded:
    return TurnAdded(number, role, "x", 1, False, calls, answers)


def _scenario(tmp_path: Path, *turns: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(_HEAD + "".join(f"\n[[step]]\n{turn}\n" for turn in turns), "utf-8")
    return path


class TestOpenCalls:
    def test_a_call_answered_is_not_open(self) -> None:
        events = [_turn(1, "assistant", ("c1",)), _turn(2, "tool", answers=("c1",))]
        assert () == open_calls(events)

    def test_a_call_the_session_went_on_past_dangles(self) -> None:
        events = [_turn(1, "assistant", ("c1", "c2")), _turn(2, "tool", answers=("c2",))]
        events.append(_turn(3, "user"))
        assert (OpenCall("c1", 1, 1, stopped=False),) == open_calls(events)

    def test_a_call_of_the_last_turn_that_spoke_is_one_the_session_stopped_on(self) -> None:
        events = [_turn(1, "user"), _turn(2, "assistant", ("c1", "c2"))]
        events.append(_turn(3, "tool", answers=("c1",)))
        assert (OpenCall("c2", 2, 2, stopped=True),) == open_calls(events)


class TestCheck:
    def _checked(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], *turns: str
    ) -> tuple[int, list[str]]:
        run = tmp_path / "run.jsonl"
        assert 0 == main(["run", str(_scenario(tmp_path, *turns)), "--out", str(run), "-q"])
        capsys.readouterr()
        status = main(["check", str(run), "-q"])
        return status, capsys.readouterr().out.splitlines()

    def test_a_dangling_call_is_a_finding_naming_its_turn(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, lines = self._checked(
            tmp_path,
            capsys,
            'turn = "user"\ntext = "look it up"',
            'turn = "assistant"\ntext = "call find()"\ncalls = ["c1"]',
            'turn = "user"\ntext = "well?"',
        )
        assert 1 == status
        assert [
            f"{tmp_path / 'run.jsonl'}: event 2: dangling: turn 2's call 'c1' never got its "
            "result, and the session went on without it: every turn after it is one unit that "
            "never closes"
        ] == lines

    def test_a_call_the_session_stopped_on_is_said_and_passes(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, lines = self._checked(
            tmp_path,
            capsys,
            'turn = "user"\ntext = "look it up"',
            'turn = "assistant"\ntext = "call find()"\ncalls = ["c1"]',
        )
        assert (0, 2) == (status, len(lines))
        assert (
            f"{tmp_path / 'run.jsonl'}: turn 2's call 'c1' is open at the end: the session "
            "stopped before its result came"
        ) == lines[1]
