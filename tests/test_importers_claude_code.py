"""memtape.lab.importers.claude_code: a Claude Code session's main thread, and its compactions."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import Compaction, read_transcript
from memtape.lab.importers.ledger import LeftOut
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
