"""memtape.lab.importers.claude_code: a Claude Code session's main thread, and its compactions."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.lab.importers import (
    Compaction,
    claude_code_thread,
    import_transcript,
    read_transcript,
)
from memtape.lab.importers.fields import UnreadCount
from memtape.lab.importers.ledger import LeftOut
from memtape.lab.importers.records import SkippedLine, UnfinishedLine
from memtape.policies.session import Session
from memtape.scenarios.usage import Usage
from tests.transcripts import fixture, imported, turns_of, unpaired, write_lines

SESSION = fixture("claude-code-session.jsonl")


def _entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SESSION.read_text("utf-8").splitlines()]


def _blocks(kind: str, *, sidechain: bool) -> list[dict[str, Any]]:
    return [
        block
        for entry in _entries()
        if entry["type"] in ("user", "assistant") and entry["isSidechain"] is sidechain
        if isinstance(entry["message"]["content"], list)
        for block in entry["message"]["content"]
        if block["type"] == kind
    ]


def _user(uuid: str, parent: str | None, content: Any, **more: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "isSidechain": False,
        "message": {"role": "user", "content": content},
        **more,
    }


def _assistant(uuid: str, parent: str, text: str, **more: Any) -> dict[str, Any]:
    message = {
        "id": f"msg_{uuid}",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
    }
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "isSidechain": False,
        "message": message,
        **more,
    }


def _boundary(uuid: str, logical: str | None) -> dict[str, Any]:
    entry = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": uuid,
        "parentUuid": None,
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "manual", "preTokens": 9000},
    }
    if logical is not None:
        entry["logicalParentUuid"] = logical
    return entry


def _summary(uuid: str, parent: str, text: str) -> dict[str, Any]:
    return _user(uuid, parent, text, isCompactSummary=True, isVisibleInTranscriptOnly=True)


class TestFixture:
    def test_every_main_thread_tool_use_and_result_is_kept_and_paired(self) -> None:
        uses = [block["id"] for block in _blocks("tool_use", sidechain=False)]
        results = [block["tool_use_id"] for block in _blocks("tool_result", sidechain=False)]
        turns = turns_of(SESSION)
        assert (uses, results, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (6, 6, 14) == (len(uses), len(results), len(turns))

    def test_the_entries_of_one_response_are_one_turn_with_its_parallel_calls(self) -> None:
        turn = turns_of(SESSION)[1]
        assert ("assistant", ("toolu_01Rd", "toolu_02Gp")) == (turn.role, turn.calls)
        lines = turn.text.splitlines()
        assert [
            "[thinking] Read the test and find parse_date at the same time.",
            "I'll read the failing test and find the parser.",
        ] == lines[:2]
        assert lines[2].startswith('call Read({"file_path": ')

    def test_an_error_result_says_so(self) -> None:
        turn = turns_of(SESSION)[5]
        assert (("toolu_03Bs",), True) == (
            turn.answers,
            turn.text.startswith("[error] Exit code 1"),
        )

    def test_the_boundary_is_a_compaction_before_the_turn_after_it_never_a_turn(self) -> None:
        transcript = read_transcript(SESSION)
        (compaction,) = transcript.compactions
        summary = _entries()[21]["message"]["content"]
        assert Compaction(11, summary, f"{SESSION}:21", "auto", 155873) == compaction
        assert "Run the whole suite now." == transcript.turns[10].text
        assert not any("being continued" in turn.text for turn in transcript.turns)

    def test_the_scenario_is_headed_by_the_recorded_policy(self) -> None:
        scenario = imported(SESSION, budget=150, tokenizer="words")
        table = scenario.policies.params()["compaction"]
        assert ("recorded", 150, "words") == (table["policy"], table["budget"], table["tokenizer"])
        assert [11] == [record["before"] for record in table["compactions"]]
        assert ("auto", 155873) == (
            table["compactions"][0]["trigger"],
            table["compactions"][0]["pre_tokens"],
        )

    def test_what_did_not_import_is_in_the_ledger_by_kind(self) -> None:
        ledger = read_transcript(SESSION).ledger
        assert ledger is not None
        assert (
            LeftOut("file-history-snapshot", 1),
            LeftOut("rewound branch", 1),
            LeftOut("sidechain", 4, 1, 1),
            LeftOut("summary", 1),
        ) == ledger.left_out

    def test_a_branch_the_session_left_does_not_import(self) -> None:
        texts = [turn.text for turn in turns_of(SESSION)]
        assert "All tests pass." not in texts
        assert texts[-1].startswith("All 214 tests pass")

    def test_sidechains_take_their_place_in_file_order(self) -> None:
        turns = turns_of(SESSION, sidechains=True)
        uses = [block["id"] for block in _blocks("tool_use", sidechain=True)]
        assert 18 == len(turns)
        assert [
            ("assistant", ("toolu_04Tk",), ()),
            ("user", (), ()),
            ("assistant", tuple(uses), ()),
            ("tool", (), tuple(uses)),
            ("assistant", (), ()),
            ("tool", (), ("toolu_04Tk",)),
        ] == [(t.role, t.calls, t.answers) for t in turns[6:12]]
        assert [] == unpaired(turns)
        assert not any(
            "sidechain" in note for note in read_transcript(SESSION, sidechains=True).notes
        )


class TestThreads:
    def test_a_boundary_without_its_logical_parent_links_to_the_entry_before_it(
        self, tmp_path: Path
    ) -> None:
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "one"),
            _assistant("a1", "u1", "two"),
            _boundary("b1", None),
            _summary("s1", "b1", "summary of one and two"),
            _user("u2", "s1", "three"),
        )
        transcript = read_transcript(path)
        assert (["one", "two", "three"], [(3, "summary of one and two")]) == (
            [turn.text for turn in transcript.turns],
            [(c.before, c.summary) for c in transcript.compactions],
        )

    def test_two_boundaries_make_two_compactions(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "one"),
            _boundary("b1", "u1"),
            _summary("s1", "b1", "first"),
            _user("u2", "s1", "two"),
            _boundary("b2", "u2"),
            _summary("s2", "b2", "second"),
            _user("u3", "s2", "three"),
        )
        compactions = read_transcript(path).compactions
        assert [(2, "first", "manual", 9000), (3, "second", "manual", 9000)] == [
            (c.before, c.summary, c.trigger, c.pre_tokens) for c in compactions
        ]

    def test_a_boundary_before_every_turn_makes_its_summary_the_first_turn(
        self, tmp_path: Path
    ) -> None:
        path = write_lines(
            tmp_path / "s.jsonl",
            _boundary("b1", None),
            _summary("s1", "b1", "what came before"),
            _user("u1", "s1", "go on"),
        )
        transcript = read_transcript(path)
        assert (["what came before", "go on"], ()) == (
            [turn.text for turn in transcript.turns],
            transcript.compactions,
        )
        assert any("precedes every turn" in note for note in transcript.notes)

    def test_a_boundary_no_turn_follows_is_said_and_not_applied(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "one"),
            _boundary("b1", "u1"),
            _summary("s1", "b1", "the end"),
        )
        transcript = read_transcript(path)
        assert () == transcript.compactions
        assert f"the compaction at {path}:2 is followed by no turn: nothing to apply it at" in (
            transcript.notes
        )

    def test_two_boundaries_with_no_turn_between_are_refused(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "one"),
            _boundary("b1", "u1"),
            _boundary("b2", "b1"),
            _user("u2", "b2", "two"),
        )
        with pytest.raises(BadInput, match=rf"^{path}:3: a second compact boundary"):
            read_transcript(path)

    def test_a_thread_whose_first_parent_is_in_another_file_is_said(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "s.jsonl", _user("u2", "elsewhere", "continued"))
        transcript = read_transcript(path)
        assert ["continued"] == [turn.text for turn in transcript.turns]
        assert f"the thread starts at {path}:1: its parent 'elsewhere' is not in this file" in (
            transcript.notes
        )

    def test_a_subagent_s_own_file_needs_sidechains(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "agent-1.jsonl",
            _user("u1", None, "find it", isSidechain=True),
            _assistant("a1", "u1", "found", isSidechain=True),
        )
        with pytest.raises(BadInput, match="every message is on a sidechain"):
            read_transcript(path)
        assert ["find it", "found"] == [
            turn.text for turn in read_transcript(path, sidechains=True).turns
        ]

    def test_an_entry_whose_parent_was_never_written_links_to_the_message_before_it(
        self, tmp_path: Path
    ) -> None:
        """Claude Code writes a hook's progress hanging off an entry it never wrote; the walk
        back stopped there and took the conversation before it for a rewound branch."""
        call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
        hook = {
            "type": "progress",
            "uuid": "p1",
            "parentUuid": "never-written",
            "isSidechain": False,
            "data": {"type": "hook_progress"},
        }
        summary = {
            "type": "system",
            "subtype": "stop_hook_summary",
            "uuid": "h1",
            "parentUuid": "p1",
            "isSidechain": False,
        }
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "Read it."),
            {**_assistant("a1", "u1", ""), "message": {"id": "m1", "content": [call]}},
            _user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
            _assistant("a2", "r1", "It is fine."),
            hook,
            summary,
            _user("u2", "h1", "Thanks."),
            _assistant("a3", "u2", "Welcome."),
        )
        transcript = read_transcript(path)
        ledger = transcript.ledger
        assert ledger is not None
        assert (6, 1, 1, ()) == (
            len(transcript.turns),
            ledger.calls_out,
            ledger.results_out,
            tuple(kind.kind for kind in ledger.left_out if kind.kind == "rewound branch"),
        )
        assert (
            f"{path}:5: its parent 'never-written' is not in this file: the thread goes on "
            "from the message before it"
        ) in transcript.notes

    def test_a_result_for_a_call_the_file_never_makes_is_left_out_and_counted(
        self, tmp_path: Path
    ) -> None:
        """A transcript cut from a longer one (a checkpoint's) can open on the result of a call
        made before it began; Claude Code's own loader drops such a result."""
        result = {"type": "tool_result", "tool_use_id": "made-before", "content": "ok"}
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("r0", "elsewhere", [result]),
            _user("u1", "r0", "Go on."),
            _assistant("a1", "u1", "Done."),
        )
        transcript = read_transcript(path)
        ledger = transcript.ledger
        assert ledger is not None
        assert (["Go on.", "Done."], [("result of a call not in this file", 1, 1)]) == (
            [turn.text for turn in transcript.turns],
            [(k.kind, k.entries, k.results) for k in ledger.left_out],
        )

    def test_a_result_before_the_call_the_file_makes_is_still_refused(self, tmp_path: Path) -> None:
        call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
        result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("r0", None, [result]),
            {**_assistant("a1", "r0", ""), "message": {"id": "m1", "content": [call]}},
        )
        with pytest.raises(BadInput, match="a tool result for call 't1', which no earlier"):
            read_transcript(path)

    def test_a_new_chain_after_earlier_messages_is_the_context_cleared(
        self, tmp_path: Path
    ) -> None:
        """Accepting a plan with a fresh context starts a chain of its own in the same file;
        the conversation before it was counted a rewound branch."""
        call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
        start = {
            "type": "progress",
            "uuid": "p1",
            "parentUuid": None,
            "isSidechain": False,
            "data": {"type": "hook_progress"},
        }
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "Plan the flag change."),
            {**_assistant("a1", "u1", ""), "message": {"id": "m1", "content": [call]}},
            _user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
            _assistant("a2", "r1", "Plan: invert the flag."),
            start,
            _user("u2", "p1", "Implement the following plan: invert the flag."),
            _assistant("a3", "u2", "Done."),
        )
        transcript = read_transcript(path)
        ledger = transcript.ledger
        assert ledger is not None
        assert (6, [(5, "", "context cleared")], 1, []) == (
            len(transcript.turns),
            [(c.before, c.summary, c.trigger) for c in transcript.compactions],
            ledger.results_out,
            [kind.kind for kind in ledger.left_out if kind.kind == "rewound branch"],
        )

    def test_a_loop_of_parents_is_refused(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "s.jsonl", _user("u1", "a1", "one"), _assistant("a1", "u1", "two")
        )
        with pytest.raises(BadInput, match="the parentUuid chain loops back here"):
            read_transcript(path)

    def test_an_entry_without_a_type_is_refused(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "s.jsonl", _user("u1", None, "one"), {"uuid": "x"})
        with pytest.raises(BadInput, match=rf"^{path}:2: a Claude Code entry is an object"):
            read_transcript(path, "claude-code")


PARALLEL = fixture("claude-code-parallel.jsonl")
REWOUND = fixture("claude-code-rewound.jsonl")
LOST_PARENT = fixture("claude-code-lost-parent.jsonl")
PRESERVED = fixture("claude-code-preserved.jsonl")


def _ids(path: Path, kind: str, key: str) -> list[str]:
    """Every ``kind`` block's ``key`` in the file's message entries, in file order."""
    entries = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return [
        block[key]
        for entry in entries
        if entry["type"] in ("user", "assistant")
        if isinstance(entry["message"]["content"], list)
        for block in entry["message"]["content"]
        if block["type"] == kind
    ]


class TestParallelCalls:
    def test_every_result_on_a_side_branch_imports_paired_with_its_call(self) -> None:
        turns = turns_of(PARALLEL)
        assert (
            _ids(PARALLEL, "tool_use", "id"),
            _ids(PARALLEL, "tool_result", "tool_use_id"),
            [],
        ) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )

    def test_a_chained_response_is_one_turn_followed_by_its_results(self) -> None:
        turns = turns_of(PARALLEL)
        assert [
            ("user", (), ()),
            ("assistant", ("toolu_01Ka", "toolu_01Kb", "toolu_01Kc"), ()),
            ("tool", (), ("toolu_01Ka",)),
            ("tool", (), ("toolu_01Kb",)),
            ("tool", (), ("toolu_01Kc",)),
        ] == [(t.role, t.calls, t.answers) for t in turns[:5]]

    def test_a_fanned_out_response_is_one_turn_too(self) -> None:
        turns = turns_of(PARALLEL)
        assert [
            ("assistant", ("toolu_02Ga", "toolu_02Gb"), ()),
            ("tool", (), ("toolu_02Ga",)),
            ("tool", (), ("toolu_02Gb",)),
        ] == [(t.role, t.calls, t.answers) for t in turns[6:9]]

    def test_a_result_on_a_side_branch_with_text_beside_it_imports_both(
        self, tmp_path: Path
    ) -> None:
        entries = [json.loads(line) for line in PARALLEL.read_text("utf-8").splitlines()]
        entries[8]["message"]["content"].append({"type": "text", "text": "Note: locale.py is old."})
        path = write_lines(tmp_path / "s.jsonl", *entries)
        turns = read_transcript(path).turns
        assert [("tool", ("toolu_01Kb",)), ("user", ())] == [
            (turn.role, turn.answers) for turn in turns[3:5]
        ]

    def test_the_ledger_balances(self) -> None:
        ledger = read_transcript(PARALLEL).ledger
        assert ledger is not None
        assert (18, 12, 5, 5, 5, 5) == (
            ledger.entries,
            ledger.turns,
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
        )
        assert (LeftOut("file-history-snapshot", 1), LeftOut("progress", 1)) == ledger.left_out

    def test_a_reader_that_walks_the_main_line_alone_is_refused_by_the_ledger(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The walk memtape did before: the spine only. The ledger names the first result
        it would lose, and nothing imports."""
        monkeypatch.setattr(claude_code_thread.Graph, "thread", lambda self, spine: set(spine))
        with pytest.raises(BadInput) as caught:
            read_transcript(PARALLEL)
        assert (
            f"{PARALLEL}:7: the tool result for call 'toolu_01Ka', a call the turns make, is in "
            "an entry left out as rewound branch: the import would lose it"
        ) == str(caught.value)

    def test_the_run_of_the_import_closes_every_unit(self, tmp_path: Path) -> None:
        scenario = imported(PARALLEL)
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        assert {} == dict(session.state.window.waiting)


class TestServerTools:
    def test_a_web_search_the_provider_ran_is_a_note_in_the_assistant_s_turn(
        self, tmp_path: Path
    ) -> None:
        answer = _assistant("a1", "u1", "It rained.")
        search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        answer["message"]["content"].insert(0, search)
        path = write_lines(tmp_path / "s.jsonl", _user("u1", None, "weather?"), answer)
        assert [
            ("user", "weather?"),
            ("assistant", "[server_tool_use: web_search]\nIt rained."),
        ] == [(turn.role, turn.text) for turn in turns_of(path)]


class TestRewoundBranch:
    def test_a_branch_the_session_left_does_not_import(self) -> None:
        texts = [turn.text for turn in turns_of(REWOUND)]
        assert [
            "How many books does the catalogue hold?",
            "Actually, count only the books marked lent.",
        ] == [texts[0], texts[1]]
        assert not any("4,812" in text or "4812" in text for text in texts)

    def test_the_ledger_counts_the_branch_and_what_it_held(self) -> None:
        ledger = read_transcript(REWOUND).ledger
        assert ledger is not None
        assert ((LeftOut("rewound branch", 3, 1, 1),), 2, 1) == (
            ledger.left_out,
            ledger.calls_in,
            ledger.calls_out,
        )


class TestCompactions:
    def test_a_boundary_whose_logical_parent_is_not_in_the_file_keeps_what_came_before(
        self,
    ) -> None:
        transcript = read_transcript(LOST_PARENT)
        assert 8 == len(transcript.turns)
        assert "Rename the column 'borrower' to 'reader' everywhere." == transcript.turns[0].text
        assert [(7, "auto", 151208)] == [
            (c.before, c.trigger, c.pre_tokens) for c in transcript.compactions
        ]

    def test_a_preserved_segment_is_the_compaction_s_preserved_turns(self) -> None:
        (compaction,) = read_transcript(PRESERVED).compactions
        assert (9, "manual", 162044, 18311, (5, 8)) == (
            compaction.before,
            compaction.trigger,
            compaction.pre_tokens,
            compaction.post_tokens,
            compaction.preserved,
        )

    def test_the_recorded_run_keeps_the_preserved_turns_hot(self) -> None:
        scenario = imported(PRESERVED)
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        window = session.state.window
        assert ((5, 6, 7, 8, 9, 10), [4], [1, 2, 3]) == (
            tuple(turn.turn for turn in window.hot),
            [item.turn for item in window.warm],
            list(window.cold),
        )

    def test_a_segment_that_cannot_be_walked_folds_everything_and_says_so(
        self, tmp_path: Path
    ) -> None:
        entries = [json.loads(line) for line in PRESERVED.read_text("utf-8").splitlines()]
        entries[8]["compactMetadata"]["preservedSegment"]["headUuid"] = "not-here"
        path = write_lines(tmp_path / "s.jsonl", *entries)
        transcript = read_transcript(path)
        assert None is transcript.compactions[0].preserved
        assert any("kept verbatim cannot be found" in note for note in transcript.notes)

    def test_preserved_messages_listed_by_uuid_are_the_preserved_turns(
        self, tmp_path: Path
    ) -> None:
        entries = [json.loads(line) for line in PRESERVED.read_text("utf-8").splitlines()]
        metadata = entries[8]["compactMetadata"]
        del metadata["preservedSegment"]
        metadata["preservedMessages"] = {
            "anchorUuid": entries[9]["uuid"],
            "uuids": [entries[5]["uuid"], entries[7]["uuid"]],
        }
        path = write_lines(tmp_path / "s.jsonl", *entries)
        assert (6, 8) == read_transcript(path).compactions[0].preserved


def _kept_tail_written_after(tmp_path: Path) -> Path:
    """A partial compaction whose last kept message (the boundary's logical parent) is
    written after the summary, chained to it: the boundary's logical parent is a later
    entry than the boundary."""
    boundary = _boundary("b", "k3")
    boundary["compactMetadata"]["preservedSegment"] = {
        "headUuid": "k1",
        "anchorUuid": "s",
        "tailUuid": "k3",
    }
    return write_lines(
        tmp_path / "s.jsonl",
        _user("u1", None, "Plan the migration."),
        _assistant("a1", "u1", "Step one: back up."),
        _user("k1", "a1", "Go on."),
        _assistant("k2", "k1", "Step two: migrate."),
        boundary,
        _summary("s", "b", "Summary: a two-step migration plan."),
        _assistant("k3", "s", "Step three: verify."),
        _user("u2", "k3", "Done?"),
    )


class TestKeptTailWrittenAfter:
    def test_the_thread_crosses_the_boundary_to_the_entry_before_it(self, tmp_path: Path) -> None:
        transcript = read_transcript(_kept_tail_written_after(tmp_path))
        assert [
            "Plan the migration.",
            "Step one: back up.",
            "Go on.",
            "Step two: migrate.",
            "Step three: verify.",
            "Done?",
        ] == [turn.text for turn in transcript.turns]

    def test_the_kept_messages_before_the_boundary_are_the_preserved_turns(
        self, tmp_path: Path
    ) -> None:
        (compaction,) = read_transcript(_kept_tail_written_after(tmp_path)).compactions
        assert (5, (3, 4)) == (compaction.before, compaction.preserved)


class TestKeptWrittenAgain:
    def test_kept_messages_written_again_after_the_summary_are_said_so(
        self, tmp_path: Path
    ) -> None:
        boundary = _boundary("b", "k2")
        boundary["compactMetadata"]["preservedSegment"] = {
            "headUuid": "c1",
            "anchorUuid": "s",
            "tailUuid": "c2",
        }
        path = write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "Plan the migration."),
            _assistant("k1", "u1", "Step one: back up."),
            _user("k2", "k1", "Go on."),
            boundary,
            _summary("s", "b", "Summary: a migration plan."),
            _assistant("c1", "s", "Step one: back up."),
            _user("c2", "c1", "Go on."),
            _assistant("a2", "c2", "Step two: migrate."),
        )
        transcript = read_transcript(path)
        assert (None, 6) == (transcript.compactions[0].preserved, len(transcript.turns))
        assert (
            f"the messages the compaction at {path}:4 kept verbatim are written again after "
            "its summary: they are turns after it, and recorded folds every turn before it",
        ) == transcript.notes


class TestUsage:
    def test_each_response_keeps_the_usage_it_reported(self) -> None:
        scenario = imported(PARALLEL)
        assert Usage(input=6, output=212, cache_read=21480, cache_write=940) == scenario.usage[2]
        assert [2, 6, 7, 10, 12] == sorted(scenario.usage.keys())

    def _with_synthetic(self, tmp_path: Path) -> Path:
        """A session where Claude Code wrote a response itself (model ``<synthetic>``, every
        usage count zero: no request was made) between two the model answered."""

        def answered(uuid: str, parent: str, text: str, model: str, *counts: int) -> Any:
            keys = (
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            )
            entry = _assistant(uuid, parent, text)
            entry["message"].update(model=model, usage=dict(zip(keys, counts, strict=True)))
            return entry

        return write_lines(
            tmp_path / "s.jsonl",
            _user("u1", None, "Build it."),
            answered("a1", "u1", "Built.", "claude-sonnet-4-5", 10, 50, 0, 3000),
            _user("u2", "a1", "Run it."),
            answered("a2", "u2", "API Error: overloaded", "<synthetic>", 0, 0, 0, 0),
            _user("u3", "a2", "Again."),
            answered("a3", "u3", "It passes.", "claude-sonnet-4-5", 12, 40, 3050, 30),
            _user("u4", "a3", "ok"),
            answered("a4", "u4", "No response requested.", "<synthetic>", 0, 0, 0, 0),
        )

    def test_a_response_claude_code_wrote_itself_has_no_usage(self, tmp_path: Path) -> None:
        transcript = read_transcript(self._with_synthetic(tmp_path))
        assert [2, 6] == [n for n, turn in enumerate(transcript.turns, 1) if turn.usage]

    def test_nor_names_the_session_s_model(self, tmp_path: Path) -> None:
        assert "claude-sonnet-4-5" == read_transcript(self._with_synthetic(tmp_path)).model

    def test_recorded_counts_share_the_prompt_s_growth_across_it(self, tmp_path: Path) -> None:
        scenario = imported(self._with_synthetic(tmp_path), tokenizer="recorded", salient="all")
        counts = [step.tokens for step in scenario.steps if isinstance(step, AddTurn)]
        assert 32 == sum(count or 0 for count in counts[2:5])


class TestTolerance:
    def test_two_entries_on_one_line_are_both_read(self) -> None:
        path = fixture("claude-code-concatenated.jsonl")
        transcript = read_transcript(path)
        assert [f"{path}:1", f"{path}:2", f"{path}:2 (object 2): block 1", f"{path}:3"] == [
            turn.where for turn in transcript.turns
        ]

    def test_a_half_written_last_line_is_skipped_and_named(self) -> None:
        path = fixture("claude-code-half-written.jsonl")
        with pytest.warns(UnfinishedLine):
            transcript = read_transcript(path)
        assert transcript.ledger is not None
        assert (3, (f"{path}:4: an unfinished last line (no newline, not JSON)",)) == (
            len(transcript.turns),
            transcript.ledger.skipped_lines,
        )

    def test_a_bad_line_in_the_middle_refuses_the_file_naming_it(self, tmp_path: Path) -> None:
        lines = PARALLEL.read_text("utf-8").splitlines()
        lines[4] = lines[4][:40]
        path = tmp_path / "s.jsonl"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        with pytest.raises(BadInput, match=rf"^{path}:5: not a JSON object: .*--skip-bad-lines"):
            read_transcript(path)

    def test_skip_bad_lines_imports_the_rest_and_names_the_line(self, tmp_path: Path) -> None:
        lines = PARALLEL.read_text("utf-8").splitlines()
        lines[16] = lines[16][:40]  # a user turn, "Good, do it."
        path = tmp_path / "s.jsonl"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        with pytest.warns(SkippedLine):
            transcript = read_transcript(path, skip_bad_lines=True)
        assert transcript.ledger is not None
        (skipped,) = transcript.ledger.skipped_lines
        assert skipped.startswith(f"{path}:17: not a JSON object")
        assert "Good, do it." not in [turn.text for turn in transcript.turns]


class TestUnreadCounts:
    def test_a_negative_usage_count_is_said_naming_the_entry_and_read_as_absent(
        self, tmp_path: Path
    ) -> None:
        reply = _assistant("a1", "u1", "Done.")
        reply["message"]["usage"] = {"input_tokens": -5, "output_tokens": 7}
        path = write_lines(tmp_path / "s.jsonl", _user("u1", None, "Go."), reply)
        with pytest.warns(UnreadCount) as caught:
            transcript = read_transcript(path)
        assert [f"{path}:2: usage.input_tokens: not a token count, read as none: -5"] == [
            str(warning.message) for warning in caught
        ]
        assert [Usage(None, 7, None, None)] == [
            turn.usage for turn in transcript.turns if turn.usage is not None
        ]


class TestCounts:
    def test_import_tells_each_compaction_s_counts_beside_memtape_s(self, tmp_path: Path) -> None:
        told: list[str] = []
        text = import_transcript(PRESERVED, tokenizer="words", budget=2000, told=told.append)
        expected = (
            "compaction before turn 9 (manual): the agent counted 162,044 → 18,311 tokens; "
            "memtape counts 72 → 50 (words, turns only)"
        )
        assert [expected] == told
        assert f"# {expected}\n" in text
