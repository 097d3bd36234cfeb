"""memtape.core.logfile: the JSONL run file, written atomically and read strictly."""

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from memtape import __version__
from memtape.core.chain import Signature, sign
from memtape.core.codec import command_data, event_data
from memtape.core.commands import Ask
from memtape.core.errors import BadInput
from memtape.core.events import EVENT_TYPES, Answered, ModelCall
from memtape.core.logfile import FORMAT, read_run, verify_run, write_run
from memtape.core.run import Run
from memtape.policies.session import Session
from memtape.runs.files import load_run
from memtape.scenarios import SHIPPED, load_scenario
from tests.chained import forged_past_head, lines_of, unchained, write_lines
from tests.loaded import strings_shared

HEADER = {"scenario": "test", "policies": {}}

QUERIES = str(Path(__file__).parent / "fixtures" / "dana-queries.toml")
"""A scenario with query steps, which no seed scenario has."""

EXAMPLES = Path(__file__).parent.parent / "examples"
FAMILIES = (
    str(EXAMPLES / "session-notes.toml"),
    str(EXAMPLES / "dana-moves.toml"),
    str(EXAMPLES / "order-recall.toml"),
    str(EXAMPLES / "core-memory.toml"),
)
"""Scenarios whose facts expire, whose facts say when they were true, that recall, and that
keep memory blocks."""


def _run(name: str) -> Run:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session.run


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    judged = load_run(EXAMPLES / "judged-facts.jsonl").session.run  # recorded: asks no model
    shipped = {name: _run(name) for name in (*SHIPPED, QUERIES, *FAMILIES)}
    return {**shipped, "judged": judged, "answered": _answered()}


def _answered() -> Run:
    """The refund desk, then a question asked of its window, recorded as a bench's judge
    records one (no model asked: the answer is written here)."""
    run = _run("refund-desk")
    call = ModelCall("ORD-3300", "judge-model", "0" * 32, 120, 3, 0.25, False)
    answered = Answered("Which order?", "ORD-3300", "ORD-3300", True, False, (call,))
    run.append(Ask("Which order?", "ORD-3300", "judge-model"), (answered,))
    return run


def _written(tmp_path: Path, run: Run, name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    write_run(path, HEADER, run)
    return path


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


class TestWriteRun:
    def test_header_line_names_the_format_and_memtape_version(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        header = _lines(_written(tmp_path, runs["dana-facts"]))[0]

        assert ("run", FORMAT, __version__) == (
            header["memtape"],
            header["format"],
            header["version"],
        )

    def test_header_carries_the_callers_fields(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        header = _lines(_written(tmp_path, runs["dana-facts"]))[0]

        assert ("test", {}) == (header["scenario"], header["policies"])

    def test_header_counts_events_and_steps(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        header = _lines(_written(tmp_path, runs["refund-desk"]))[0]

        assert (15, 10) == (header["events"], header["steps"])

    def test_one_line_per_event(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        lines = _lines(_written(tmp_path, runs["dana-facts"]))

        assert list(range(1, 12)) == [line["at"] for line in lines[1:]]

    def test_each_line_names_the_type_version_and_fields_of_its_event(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        run = runs["sleep-pass"]
        lines = _lines(_written(tmp_path, run))

        assert [(type(e).__name__, e.VERSION, event_data(e)) for e in run.events] == [
            (line["type"], line["v"], line["event"]) for line in lines[1:]
        ]

    def test_each_line_names_its_step(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        run = runs["refund-desk"]
        lines = _lines(_written(tmp_path, run))

        assert [run.step_of(at) for at in range(1, 16)] == [line["step"] for line in lines[1:]]

    def test_the_first_event_of_a_step_carries_its_command(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        run = runs["sleep-pass"]
        lines = _lines(_written(tmp_path, run))

        assert [command_data(c) for c in run.commands] == [
            line["command"] for line in lines[1:] if "command" in line
        ]

    def test_only_the_first_event_of_a_step_carries_a_command(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        lines = _lines(_written(tmp_path, runs["dana-facts"]))

        assert [1, 2, 3, 4, 5, 6, 7, 8, 10] == [
            line["at"] for line in lines[1:] if "command" in line
        ]

    def test_only_the_last_event_of_a_step_carries_the_end_mark(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        lines = _lines(_written(tmp_path, runs["dana-facts"]))

        assert [1, 2, 3, 4, 5, 6, 7, 9, 11] == [line["at"] for line in lines[1:] if "end" in line]

    def test_the_end_mark_is_true(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        lines = _lines(_written(tmp_path, runs["dana-facts"]))

        assert {True} == {line["end"] for line in lines[1:] if "end" in line}

    def test_an_empty_run_is_a_header_alone(self, tmp_path: Path) -> None:
        lines = _lines(_written(tmp_path, Run(lambda _, state: state)))

        assert [(0, 0)] == [(line["events"], line["steps"]) for line in lines]

    def test_text_is_written_as_utf_8_unescaped(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        text = _written(tmp_path, runs["refund-desk"]).read_text("utf-8")

        assert True is ("$200.00 × 0.9" in text)

    def test_only_the_run_file_is_left_behind(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        _written(tmp_path, runs["refund-desk"])

        assert ["run.jsonl"] == _listing(tmp_path)

    def test_an_existing_file_is_replaced(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        path = tmp_path / "run.jsonl"
        path.write_text("old\n", "utf-8")
        write_run(path, HEADER, runs["sleep-pass"])

        assert 7 == len(path.read_text("utf-8").splitlines())


class TestWriteRunIsAtomic:
    def test_a_parent_that_is_a_file_is_bad_input_naming_the_path(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        parent = tmp_path / "a-file"
        parent.write_text("x", "utf-8")
        path = parent / "run.jsonl"

        with pytest.raises(BadInput, match=str(path)):
            write_run(path, HEADER, runs["refund-desk"])

    def test_a_missing_parent_is_bad_input(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        with pytest.raises(BadInput, match="cannot write"):
            write_run(tmp_path / "nowhere" / "run.jsonl", HEADER, runs["refund-desk"])

    def test_a_target_that_is_a_directory_stays_a_directory(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        target = tmp_path / "run.jsonl"
        target.mkdir()
        with pytest.raises(BadInput):
            write_run(target, HEADER, runs["refund-desk"])

        assert (True, ["run.jsonl"]) == (target.is_dir(), _listing(tmp_path))

    def test_a_failed_replace_leaves_the_existing_file_untouched(
        self, tmp_path: Path, runs: dict[str, Run], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "run.jsonl"
        path.write_text("sentinel\n", "utf-8")

        def full_disk(src: Path, dst: Path) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr("memtape.core.atomic.os.replace", full_disk)
        with pytest.raises(BadInput, match="No space left"):
            write_run(path, HEADER, runs["refund-desk"])

        assert ("sentinel\n", ["run.jsonl"]) == (path.read_text("utf-8"), _listing(tmp_path))

    def test_a_failure_while_writing_leaves_the_existing_file_untouched(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        path = tmp_path / "run.jsonl"
        path.write_text("sentinel\n", "utf-8")
        with pytest.raises(TypeError):
            write_run(path, {"scenario": object()}, runs["refund-desk"])

        assert "sentinel\n" == path.read_text("utf-8")

    def test_a_failure_while_writing_leaves_no_temporary_file(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        # A header json cannot encode stands for any failure that is not an
        # OSError (an interrupt, say) in the middle of the write.
        path = tmp_path / "run.jsonl"
        path.write_text("sentinel\n", "utf-8")
        with pytest.raises(TypeError):
            write_run(path, {"scenario": object()}, runs["refund-desk"])

        assert ["run.jsonl"] == _listing(tmp_path)


class TestRoundTrip:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_events_come_back_equal(self, tmp_path: Path, runs: dict[str, Run], name: str) -> None:
        run = runs[name]
        batches = read_run(_written(tmp_path, run)).batches

        assert list(run.events) == [event for batch in batches for event in batch.events]

    def test_a_turn_and_a_fact_read_back_share_their_command_s_strings(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        # One copy of each text in memory, as when the run was decided live.
        turns = read_run(_written(tmp_path, runs["refund-desk"], "turns.jsonl")).batches
        facts = read_run(_written(tmp_path, runs["dana-facts"], "facts.jsonl")).batches

        assert (True, True) == (strings_shared(turns), strings_shared(facts))

    @pytest.mark.parametrize("name", SHIPPED)
    def test_commands_come_back_equal(
        self, tmp_path: Path, runs: dict[str, Run], name: str
    ) -> None:
        run = runs[name]

        assert list(run.commands) == [b.command for b in read_run(_written(tmp_path, run)).batches]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_batches_keep_their_boundaries(
        self, tmp_path: Path, runs: dict[str, Run], name: str
    ) -> None:
        run = runs[name]
        batches = read_run(_written(tmp_path, run)).batches

        assert [run.batch(step) for step in range(1, len(run.commands) + 1)] == [
            (b.line - 2, b.line - 2 + len(b.events)) for b in batches
        ]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_steps_are_numbered_from_1(
        self, tmp_path: Path, runs: dict[str, Run], name: str
    ) -> None:
        run = runs[name]
        batches = read_run(_written(tmp_path, run)).batches

        assert list(range(1, len(run.commands) + 1)) == [b.step for b in batches]

    def test_the_header_comes_back(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        header = read_run(_written(tmp_path, runs["sleep-pass"])).header

        assert {
            "memtape": "run",
            "format": FORMAT,
            "version": __version__,
            "scenario": "test",
            "policies": {},
            "events": 6,
            "steps": 5,
            "chain": header["chain"],
        } == header

    def test_the_seed_scenarios_and_the_queries_cover_every_event_type(
        self, runs: dict[str, Run]
    ) -> None:
        seen = {type(e).__name__ for run in runs.values() for e in run.events}

        assert set(EVENT_TYPES) == seen

    def test_floats_survive_exactly(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        run = runs["dana-facts"]
        batches = read_run(_written(tmp_path, run)).batches

        assert run.events[-1] == batches[-1].events[-1]

    def test_an_empty_run_reads_back_as_no_batches(self, tmp_path: Path) -> None:
        assert () == read_run(_written(tmp_path, Run(lambda _, state: state))).batches


def _broken(tmp_path: Path, runs: dict[str, Run], lines: list[str]) -> Path:
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(line + "\n" for line in lines), "utf-8")
    return path


def _good(tmp_path: Path, runs: dict[str, Run]) -> list[str]:
    return _written(tmp_path, runs["refund-desk"], "good.jsonl").read_text("utf-8").splitlines()


def _with(line: str, **changes: Any) -> str:
    data = json.loads(line)
    data.update(changes)
    return json.dumps(data)


def _without(line: str, key: str) -> str:
    data = json.loads(line)
    del data[key]
    return json.dumps(data)


class TestReadRunErrors:
    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match="no such run file"):
            read_run(tmp_path / "missing.jsonl")

    def test_directory(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match="is a directory"):
            read_run(tmp_path)

    def test_empty_file(self, tmp_path: Path) -> None:
        path = tmp_path / "empty.jsonl"
        path.write_text("", "utf-8")

        with pytest.raises(BadInput, match="empty file"):
            read_run(path)

    def test_not_utf_8(self, tmp_path: Path) -> None:
        path = tmp_path / "latin.jsonl"
        path.write_bytes(b"\xe9\n")

        with pytest.raises(BadInput, match=r"line 1: not JSON .*UTF-8"):
            read_run(path)

    def test_a_line_that_is_not_json(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:3], "{oops", *good[4:]])

        with pytest.raises(BadInput, match="line 4: not JSON"):
            read_run(path)

    def test_a_hand_edited_wrong_type_reads_in_the_file_s_terms(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        """Its file and line, the event's field, what it must be and what the file says."""
        good = _good(tmp_path, runs)
        edited = json.loads(good[1])
        edited["event"]["tokens"] = "abc"
        path = _broken(tmp_path, runs, [good[0], json.dumps(edited), *good[2:]])

        with pytest.raises(BadInput) as raised:
            read_run(path)

        assert f'{path}: line 2: TurnAdded.tokens must be an integer, got "abc"' == str(
            raised.value
        )

    def test_a_line_that_is_not_an_object(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:3], "3", *good[4:]])

        with pytest.raises(BadInput, match="line 4: expected a JSON object"):
            read_run(path)

    def test_a_header_that_is_not_a_memtape_run(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [_with(good[0], memtape="tape"), *good[1:]])

        with pytest.raises(BadInput, match="line 1: not a memtape run file header"):
            read_run(path)

    def test_a_missing_header(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        path = _broken(tmp_path, runs, _good(tmp_path, runs)[1:])

        with pytest.raises(BadInput, match="line 1"):
            read_run(path)

    def test_a_future_format(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [_with(good[0], format=FORMAT + 1), *good[1:]])

        with pytest.raises(BadInput, match=f"line 1: run file format {FORMAT + 1}"):
            read_run(path)

    def test_an_unknown_event_type(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], type="Nope"), *good[3:]])

        with pytest.raises(BadInput, match="line 3: unknown event type 'Nope'"):
            read_run(path)

    def test_a_future_event_version(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], v=3), *good[3:]])

        with pytest.raises(BadInput, match="line 3: TurnAdded version 3"):
            read_run(path)

    def test_an_event_without_a_version(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _without(good[2], "v"), *good[3:]])

        with pytest.raises(BadInput, match="line 3: an event needs a type and a version"):
            read_run(path)

    def test_a_version_that_is_true(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        # JSON true is not the integer 1 (the codec holds that for event fields).
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], v=True), *good[3:]])

        with pytest.raises(BadInput, match="line 3"):
            read_run(path)

    def test_a_gap_in_positions(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:3], *good[4:]])

        with pytest.raises(BadInput, match="line 4: expected event at 3, found at 4"):
            read_run(path)

    def test_a_position_that_is_a_string(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], at="2"), *good[3:]])

        with pytest.raises(BadInput, match="line 3: expected event at 2"):
            read_run(path)

    def test_a_wrong_step(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], step=3), *good[3:]])

        with pytest.raises(BadInput, match="line 3: expected step 2, found step 3"):
            read_run(path)

    def test_a_step_without_its_end_mark(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _without(good[2], "end"), *good[3:]])

        with pytest.raises(BadInput, match="line 4"):
            read_run(path)

    def test_a_next_command_before_the_end_mark(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        # Step 4 is turn 4 (line 5) and its compaction (line 6): a command on
        # line 6 means step 4 (not step 3, which ended on line 4) has no end.
        good = _good(tmp_path, runs)
        command = json.loads(good[4])["command"]
        path = _broken(tmp_path, runs, [*good[:5], _with(good[5], command=command), *good[6:]])

        with pytest.raises(BadInput, match="line 6: step 4 ended without its end mark"):
            read_run(path)

    def test_a_first_event_without_its_command(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _without(good[2], "command"), *good[3:]])

        with pytest.raises(BadInput, match="line 3: the first event of step 2"):
            read_run(path)

    def test_an_unknown_command_kind(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        broken = _with(good[2], command={"kind": "dance"})
        path = _broken(tmp_path, runs, [*good[:2], broken, *good[3:]])

        with pytest.raises(BadInput, match="line 3: command: unknown command kind 'dance'"):
            read_run(path)

    def test_an_event_field_of_the_wrong_type(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        event = json.loads(good[2])["event"] | {"tokens": "nine"}
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], event=event), *good[3:]])

        with pytest.raises(BadInput, match=r"line 3: .*TurnAdded\.tokens"):
            read_run(path)

    def test_a_salient_flag_that_is_a_number(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        event = json.loads(good[2])["event"] | {"salient": 1}
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], event=event), *good[3:]])

        with pytest.raises(BadInput, match=r"line 3: .*salient"):
            read_run(path)

    def test_an_event_that_is_not_an_object(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        good = _good(tmp_path, runs)
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], event=[1]), *good[3:]])

        with pytest.raises(BadInput, match="line 3"):
            read_run(path)


class TestUnreadableNumbersAndShapes:
    def _with_line(self, tmp_path: Path, runs: dict[str, Run], raw: str) -> Path:
        path = _written(tmp_path, runs["refund-desk"])
        lines = path.read_text("utf-8").splitlines()
        lines[2] = raw
        path.write_text("\n".join(lines) + "\n", "utf-8")
        return path

    @pytest.mark.parametrize(
        "raw",
        [
            '{"at": 2, "step": 2, "type": "ClockAdvanced", "v": 1, "event": {"to": NaN}}',
            '{"at": 2, "step": 2, "type": "ClockAdvanced", "v": 1, "event": {"to": Infinity}}',
            '{"at": ' + "9" * 5000 + "}",
            "[" * 100_000,
        ],
        ids=["nan", "infinity", "huge-integer", "deep-nesting"],
    )
    def test_a_line_python_cannot_read_as_json_names_its_line(
        self, tmp_path: Path, runs: dict[str, Run], raw: str
    ) -> None:
        path = self._with_line(tmp_path, runs, raw)

        with pytest.raises(BadInput, match=r"line 3: not (readable )?JSON"):
            read_run(path)


class TestHeaderCounts:
    def test_a_file_cut_between_two_steps_is_not_a_shorter_run(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        path = _written(tmp_path, runs["refund-desk"])
        lines = path.read_text("utf-8").splitlines()
        path.write_text("\n".join(lines[:3]) + "\n", "utf-8")

        with pytest.raises(
            BadInput, match="header promises 15 events in 10 steps, the file holds 2 in 2"
        ):
            read_run(path)


class TestTornTail:
    """A torn tail after the last whole command (its link the header's head) is dropped."""

    def test_a_step_without_its_end_mark_at_the_end_is_dropped(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        good = _good(tmp_path, runs)
        started = _without(_with(good[1], at=16, step=11), "end")
        loaded = read_run(_broken(tmp_path, runs, [*good, started]))

        assert (10, "a torn tail: step 11 (from line 17) has no end mark") == (
            len(loaded.batches),
            (loaded.torn or "").split(";")[0],
        )

    def test_an_unfinished_last_line_is_dropped(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        path = _written(tmp_path, runs["refund-desk"])
        path.write_text(path.read_text("utf-8") + '{"at": 16, "st', "utf-8")
        loaded = read_run(path)

        assert 10 == len(loaded.batches)
        assert loaded.torn is not None
        assert "line 17 is an unfinished write" in loaded.torn

    def test_a_command_cut_short_loads_no_step_the_head_does_not_cover(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        """No memtape writer leaves a chained run cut inside it (a file is replaced whole, a
        store's head moves with its rows): what the head covers cannot be told."""
        loaded = read_run(_broken(tmp_path, runs, _good(tmp_path, runs)[:5]))

        assert ((), None) == (loaded.batches, loaded.torn)
        assert (loaded.uncovered or "").startswith("no event's link is the header's chain head")

    def test_a_whole_file_has_no_torn_tail(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        assert None is read_run(_written(tmp_path, runs["refund-desk"])).torn

    def test_a_last_line_missing_only_its_newline_is_whole(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        path = _written(tmp_path, runs["refund-desk"])
        path.write_text(path.read_text("utf-8").rstrip("\n"), "utf-8")

        assert (None, 10) == (read_run(path).torn, len(read_run(path).batches))

    def test_a_file_cut_between_two_commands_is_still_an_error(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        path = _written(tmp_path, runs["refund-desk"])
        lines = path.read_text("utf-8").splitlines(keepends=True)
        path.write_text("".join(lines[:12]), "utf-8")

        with pytest.raises(BadInput, match="header promises 15 events"):
            read_run(path)


class TestChainHead:
    """A chained run ends at its header's head: steps chained on after it are no part of it."""

    def test_a_forged_step_before_a_torn_tail_is_dropped_and_said(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        loaded = read_run(forged_past_head(_written(tmp_path, runs["refund-desk"])))

        assert (10, None) == (len(loaded.batches), loaded.torn)
        assert (
            "step 11 and the steps after it (from line 17) come after the header's chain head: "
            "they were added after the run was written and are not part of it; loaded the 10 "
            "steps the head covers"
        ) == loaded.uncovered

    def test_a_forged_step_with_the_counts_made_to_match_is_dropped_too(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        path = forged_past_head(_written(tmp_path, runs["refund-desk"]))
        text = path.read_text("utf-8")
        path.write_text(text[: text.rindex("\n") + 1], "utf-8")  # without the junk line
        lines = lines_of(path)
        lines[0].update(events=16, steps=11)
        loaded = read_run(write_lines(path, lines))

        assert (10, True) == (len(loaded.batches), loaded.uncovered is not None)

    def test_a_run_written_whole_ends_at_its_head(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        loaded = read_run(_written(tmp_path, runs["refund-desk"]))
        assert (10, None, None) == (len(loaded.batches), loaded.torn, loaded.uncovered)

    def test_an_unchained_run_is_read_whole(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        path = _written(tmp_path, runs["refund-desk"])
        loaded = read_run(write_lines(path, unchained(lines_of(path))))
        assert (10, None) == (len(loaded.batches), loaded.uncovered)


class TestBytesAtTheEnd:
    def test_a_write_cut_inside_a_character_is_a_torn_tail(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        path = _written(tmp_path, runs["refund-desk"])
        path.write_bytes(path.read_bytes() + '{"at": 16, "text": "café'.encode()[:-1])
        loaded = read_run(path)

        assert 10 == len(loaded.batches)
        assert loaded.torn is not None

    def test_blank_lines_after_the_last_event_are_ignored(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        path = _written(tmp_path, runs["refund-desk"])
        path.write_bytes(path.read_bytes() + b"\n  \n\n")
        loaded = read_run(path)

        assert (None, 10) == (loaded.torn, len(loaded.batches))


class TestStamp:
    def test_a_header_cannot_override_the_stamp(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        path = tmp_path / "run.jsonl"
        write_run(
            path, {**HEADER, "format": 99, "memtape": "other", "version": "0"}, runs["refund-desk"]
        )
        header = _lines(path)[0]

        assert ("run", FORMAT, __version__) == (
            header["memtape"],
            header["format"],
            header["version"],
        )
        assert ["memtape", "format", "version"] == list(header)[:3]


class TestCollectorPaused:
    def test_a_failed_load_restores_the_collector_too(self, tmp_path: Path) -> None:
        path = tmp_path / "bad.jsonl"
        path.write_text('{"memtape": "run", "format": 1}\nnot json\n')
        with pytest.raises(BadInput):
            read_run(path)
        assert gc.isenabled()


class TestChainedLines:
    def test_each_event_line_ends_with_its_link_of_32_hex_digits(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        lines = _lines(_written(tmp_path, runs["refund-desk"]))

        assert [("h", 32, True)] * 15 == [
            (list(line)[-1], len(line["h"]), set(line["h"]) <= set("0123456789abcdef"))
            for line in lines[1:]
        ]

    def test_the_header_ends_with_the_head_and_no_signature_without_a_key(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        header = _lines(_written(tmp_path, runs["refund-desk"]))[0]

        assert (["events", "steps", "chain"], 64) == (list(header)[-3:], len(header["chain"]))

    def test_the_head_is_the_last_line_s_whole_link(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        lines = _lines(_written(tmp_path, runs["dana-facts"]))

        assert lines[-1]["h"] == lines[0]["chain"][:32]

    def test_a_written_file_verifies(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        verdict = verify_run(_written(tmp_path, runs[QUERIES]), None)

        assert (True, None, Signature.NONE) == (
            verdict.chained,
            verdict.broken,
            verdict.signature,
        )

    def test_with_a_key_the_head_is_signed(
        self, tmp_path: Path, runs: dict[str, Run], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "key")
        header = _lines(_written(tmp_path, runs["sleep-pass"]))[0]

        assert (["chain", "signature"], sign(header["chain"], b"key")) == (
            list(header)[-2:],
            header["signature"],
        )

    def test_a_chain_in_the_callers_header_is_replaced(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        """A header copied from another run carries that run's head and signature."""
        plain = _lines(_written(tmp_path, runs["sleep-pass"], "plain.jsonl"))[0]
        path = tmp_path / "copied.jsonl"
        write_run(path, {**HEADER, "chain": "0" * 64, "signature": "1" * 64}, runs["sleep-pass"])

        assert plain == _lines(path)[0]

    def test_writing_a_run_twice_gives_the_same_bytes(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        first = _written(tmp_path, runs["dana-facts"], "first.jsonl")
        second = _written(tmp_path, runs["dana-facts"], "second.jsonl")

        assert first.read_bytes() == second.read_bytes()

    def test_an_edited_line_is_named_by_its_line(
        self, tmp_path: Path, runs: dict[str, Run]
    ) -> None:
        good = _good(tmp_path, runs)
        event = json.loads(good[2])["event"] | {
            "text": "Policy search: refunds within 30 days of purchase."
        }
        path = _broken(tmp_path, runs, [*good[:2], _with(good[2], event=event), *good[3:]])
        broken = verify_run(path, None).broken

        assert (2, "line 3 breaks the chain") == (
            getattr(broken, "position", None),
            getattr(broken, "problem", "").split(":")[0],
        )

    def test_links_do_not_change_what_is_read(self, tmp_path: Path, runs: dict[str, Run]) -> None:
        """A file stripped of its chain (as written before it) reads the same batches."""
        path = _written(tmp_path, runs["sleep-pass"])
        chained = read_run(path).batches
        stripped = [
            {k: v for k, v in line.items() if k not in ("h", "chain")} for line in _lines(path)
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in stripped), "utf-8")

        assert (chained, False) == (read_run(path).batches, verify_run(path, None).chained)

    def test_an_empty_run_s_head_is_its_header_s_and_guards_it(self, tmp_path: Path) -> None:
        path = _written(tmp_path, Run(lambda _, state: state))
        clean = verify_run(path, None).broken
        lines = _lines(path)
        lines[0]["scenario"] = "other"
        path.write_text(json.dumps(lines[0]) + "\n", "utf-8")
        broken = verify_run(path, None).broken

        assert (None, 0) == (clean, getattr(broken, "position", None))
