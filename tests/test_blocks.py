"""memtape.policies.window.blocks: memory blocks created, edited, refused past their limit,
and counted against the budget by every compaction policy."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.checking.invariants import check_run
from memtape.core.commands import AddTurn, Consolidate, CreateBlock, EditBlock, RecordEpisode
from memtape.core.errors import Rejected
from memtape.core.events import BlockEdit, BlockEdited, Consolidated
from memtape.core.state import Block
from memtape.policies.session import Policies, Session


def _session(policy: str = "sliding-window", **compaction: Any) -> Session:
    table = {"policy": policy, "budget": 40, **compaction}
    return Session(Policies.from_params({"compaction": table}))


def _with_human(value: str = "Name: Dana.", limit: int = 40) -> Session:
    session = _session()
    session.execute(CreateBlock("human", limit, value))
    return session


def _edited(session: Session, command: CreateBlock | EditBlock) -> BlockEdited:
    (event,) = session.execute(command)
    assert isinstance(event, BlockEdited)
    return event


class TestCreate:
    def test_a_block_is_created_at_version_1_with_its_limit_and_tokens(self) -> None:
        events = _session().execute(CreateBlock("human", 40, "Name: Dana."))
        assert (BlockEdited("human", 1, "create", "Name: Dana.", 2, 40),) == events

    def test_its_tokens_are_the_compaction_policys_count(self) -> None:
        session = _session(tokenizer="cl100k_base")
        event = _edited(session, CreateBlock("human", 40, "Name: Dana."))
        assert 4 == event.tokens

    def test_the_window_holds_it_and_counts_its_tokens(self) -> None:
        window = _with_human().state.window
        assert ((Block("human", 40, "Name: Dana.", 2, 1),), 2) == (window.blocks, window.tokens)

    def test_a_taken_label_is_refused(self) -> None:
        with pytest.raises(Rejected, match="block 'human' exists already"):
            _with_human().execute(CreateBlock("human", 10, ""))

    def test_a_value_past_the_limit_is_refused(self) -> None:
        with pytest.raises(Rejected, match="at most 5 characters: this edit would make it 11"):
            _session().execute(CreateBlock("human", 5, "Name: Dana."))

    @pytest.mark.parametrize(("label", "limit"), [("", 5), ("  ", 5), ("human", 0)])
    def test_an_empty_label_or_a_limit_below_1_is_refused(self, label: str, limit: int) -> None:
        with pytest.raises(Rejected):
            _session().execute(CreateBlock(label, limit, ""))

    def test_a_session_without_compaction_refuses_a_block(self) -> None:
        session = Session(Policies())
        with pytest.raises(Rejected, match=r"needs a \[compaction\] policy"):
            session.execute(CreateBlock("human", 10, ""))


class TestEdit:
    def test_replace_writes_the_whole_value(self) -> None:
        events = _with_human().execute(EditBlock("human", "replace", "Name: Ana."))
        assert (BlockEdited("human", 2, "replace", "Name: Ana.", 2),) == events

    def test_append_adds_a_line(self) -> None:
        event = _edited(_with_human(), EditBlock("human", "append", "Lives in Porto."))
        assert "Name: Dana.\nLives in Porto." == event.value

    def test_append_to_an_empty_block_is_the_text_alone(self) -> None:
        event = _edited(_with_human(""), EditBlock("human", "append", "Lives in Porto."))
        assert "Lives in Porto." == event.value

    def test_find_replace_changes_the_first_occurrence(self) -> None:
        session = _with_human("a Dana, a Dana")
        event = _edited(session, EditBlock("human", "find-replace", "Ana", "Dana"))
        assert "a Ana, a Dana" == event.value

    def test_versions_count_up(self) -> None:
        session = _with_human()
        session.execute(EditBlock("human", "append", "x"))
        session.execute(EditBlock("human", "append", "y"))
        assert 3 == session.state.window.blocks[0].version

    def test_an_edit_past_the_limit_is_refused_and_nothing_is_appended(self) -> None:
        session = _with_human(limit=20)
        before = (len(session.run), session.state)
        with pytest.raises(Rejected, match="holds at most 20 characters"):
            session.execute(EditBlock("human", "append", "Lives in Porto."))
        assert before == (len(session.run), session.state)

    def test_a_find_that_is_not_there_is_refused(self) -> None:
        with pytest.raises(Rejected, match="holds no 'Ana' to replace"):
            _with_human().execute(EditBlock("human", "find-replace", "x", "Ana"))

    def test_an_unknown_block_is_refused_naming_the_blocks(self) -> None:
        with pytest.raises(Rejected, match=r"no block 'persona' to edit \(blocks: 'human'\)"):
            _with_human().execute(EditBlock("persona", "append", "x"))

    def test_an_unknown_op_is_refused(self) -> None:
        with pytest.raises(Rejected, match="op is one of replace, append, find-replace"):
            _with_human().execute(EditBlock("human", "insert", "x"))

    def test_an_edit_changes_the_window_by_the_difference(self) -> None:
        session = _with_human()
        session.execute(EditBlock("human", "replace", "Name: Dana Ng, of Porto."))
        assert 5 == session.state.window.tokens


class TestBudget:
    @pytest.mark.parametrize(
        ("policy", "params"), [("sliding-window", {}), ("tiered", {"hot_n": 1, "budget": 12})]
    )
    def test_the_blocks_leave_less_room_for_turns(
        self, policy: str, params: dict[str, Any]
    ) -> None:
        session = _session(policy, **{"budget": 12, **params})
        session.execute(CreateBlock("human", 80, "one two three four five six"))
        for _ in range(4):
            session.execute(AddTurn("user", "a b"))  # 3 tokens, with its role
        window = session.state.window
        assert (6, 12) == (window.block_tokens, window.tokens)

    def test_under_none_the_window_is_the_blocks_and_every_turn(self) -> None:
        session = _session("none", budget=12)
        session.execute(CreateBlock("human", 80, "one two three four five six"))
        for _ in range(4):
            session.execute(AddTurn("user", "a b"))
        assert 6 + 4 * 3 == session.state.window.tokens

    @pytest.mark.parametrize(
        ("policy", "params"),
        [
            ("sliding-window", {}),
            ("tiered", {"hot_n": 2}),
            ("rolling-summary", {"keep": 2}),
            ("clear-tool-results", {}),
        ],
    )
    def test_every_floor_counts_the_blocks(self, policy: str, params: dict[str, Any]) -> None:
        plain, blocked = _session(policy, **params), _session(policy, **params)
        blocked.execute(CreateBlock("human", 80, "one two three"))
        for session in (plain, blocked):
            session.execute(AddTurn("user", "a b c"))
        compaction = plain.policies.compaction
        assert compaction is not None
        floors = [getattr(compaction, "floor")(s.state.window) for s in (plain, blocked)]  # noqa: B009
        assert 3 == floors[1] - floors[0]


class TestReadOnly:
    def test_a_read_only_block_is_created_so(self) -> None:
        events = _session().execute(CreateBlock("persona", 40, "Polite.", read_only=True))

        assert (BlockEdited("persona", 1, "create", "Polite.", 1, 40, read_only=True),) == events

    def test_the_window_holds_it_read_only(self) -> None:
        session = _session()
        session.execute(CreateBlock("persona", 40, "Polite.", read_only=True))

        assert (Block("persona", 40, "Polite.", 1, 1, read_only=True),) == (
            session.state.window.blocks
        )

    @pytest.mark.parametrize(
        "command",
        [
            EditBlock("persona", "replace", "Rude."),
            EditBlock("persona", "append", "Brief."),
            EditBlock("persona", "find-replace", "Rude.", "Polite."),
        ],
    )
    def test_every_edit_of_it_is_refused_and_nothing_is_appended(self, command: EditBlock) -> None:
        session = _session()
        session.execute(CreateBlock("persona", 40, "Polite.", read_only=True))

        with pytest.raises(Rejected, match="block 'persona' is read-only: no edit may change it"):
            session.execute(command)
        assert (1, 1) == (len(session.run), session.state.window.blocks[0].version)


def _sleep_session(*rules: dict[str, Any], limit: int = 40, read_only: bool = False) -> Session:
    """A session whose rules consolidation edits blocks, with a 'human' block and an episode
    about a move to Porto pending."""
    session = Session(
        Policies.from_params(
            {
                "compaction": {"policy": "sliding-window", "budget": 40},
                "consolidation": {"policy": "rules", "rule": list(rules)},
            }
        )
    )
    session.execute(CreateBlock("human", limit, "Name: Dana.", read_only))
    session.execute(RecordEpisode("The user moved to Porto."))
    return session


MOVED: dict[str, Any] = {
    "pattern": "moved to (?P<city>[A-Z][a-z]+)",
    "block": {"label": "human", "op": "append", "text": "Lives in {city}."},
}
"""A block rule: a move appends the city to the 'human' block."""


class TestEditedByConsolidation:
    def test_a_pass_edits_the_block_in_its_own_step(self) -> None:
        session = _sleep_session(MOVED)

        events = session.execute(Consolidate())

        assert [
            Consolidated((1,), (), (), (), (BlockEdit("human", "append", "Lives in Porto."),)),
            BlockEdited("human", 2, "append", "Name: Dana.\nLives in Porto.", 5),
        ] == list(events)
        assert "Name: Dana.\nLives in Porto." == session.state.window.blocks[0].value

    def test_a_pass_whose_edit_passes_the_limit_is_refused_whole(self) -> None:
        session = _sleep_session(MOVED, limit=20)

        with pytest.raises(
            Rejected,
            match="the consolidation pass's block edit 1: block 'human' holds at most 20 "
            "characters: this edit would make it 27",
        ):
            session.execute(Consolidate())
        assert (2, 1, "Name: Dana.") == (
            len(session.run),
            len(session.state.memory.episodes),
            session.state.window.blocks[0].value,
        )

    def test_a_pass_that_edits_a_read_only_block_is_refused_whole(self) -> None:
        session = _sleep_session(MOVED, read_only=True)

        with pytest.raises(Rejected, match="block 'human' is read-only"):
            session.execute(Consolidate())
        assert 2 == len(session.run)

    def test_a_pass_that_edits_no_block_there_is_is_refused(self) -> None:
        rule = {**MOVED, "block": {**MOVED["block"], "label": "persona"}}
        session = _sleep_session(rule)

        with pytest.raises(Rejected, match="block edit 1: no block 'persona' to edit"):
            session.execute(Consolidate())

    def test_two_edits_of_a_pass_follow_each_other(self) -> None:
        session = _sleep_session(
            MOVED,
            {"pattern": "Porto", "block": {"label": "human", "op": "append", "text": "x"}},
        )
        session.execute(RecordEpisode("Porto again"))

        events = session.execute(Consolidate())

        assert [2, 3] == [e.version for e in events if isinstance(e, BlockEdited)]
        assert "Name: Dana.\nLives in Porto.\nx" == session.state.window.blocks[0].value


class TestPassesKeepTheLimit:
    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(
        limit=st.integers(1, 40),
        read_only=st.booleans(),
        episodes=st.lists(
            st.sampled_from(["Porto", "Lisbon", "Faro", "a long city name"]), max_size=6
        ),
        op=st.sampled_from(["append", "replace", "find-replace"]),
        passes=st.integers(1, 3),
    )
    def test_every_pass_keeps_block_limit_or_is_refused_whole(
        self, limit: int, read_only: bool, episodes: list[str], op: str, passes: int
    ) -> None:
        """Whatever the limit and the edits a rules pass asks for, the run keeps every
        promise (BLOCK_LIMIT checked at each step), and a refused pass appends nothing."""
        block = {"label": "human", "op": op, "text": "in {city}", "find": "in"}
        if op != "find-replace":
            del block["find"]
        session = Session(
            Policies.from_params(
                {
                    "compaction": {"policy": "sliding-window", "budget": 40},
                    "consolidation": {
                        "policy": "rules",
                        "rule": [{"pattern": "(?P<city>.+)", "block": block}],
                    },
                }
            )
        )
        session.execute(CreateBlock("human", max(limit, 5), "in x", read_only))
        for _ in range(passes):
            for episode in episodes:
                session.execute(RecordEpisode(episode))
            before = len(session.run)
            try:
                session.execute(Consolidate())
            except Rejected:
                assert before == len(session.run)

        assert [] == check_run(session.run, session.policies)
