"""memtape.core.upcast: old event versions brought to the current one on load."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.checking.check import check_file
from memtape.cli import main
from memtape.core.codec import event_data, event_from_data
from memtape.core.errors import BadInput
from memtape.core.events import (
    EVENT_TYPES,
    BlockEdited,
    CompactionTriggered,
    Consolidated,
    Event,
    FactRead,
    FactWritten,
    Queried,
    TurnAdded,
    WarmItem,
)
from memtape.core.logfile import read_run
from memtape.core.upcast import UPCASTERS, Upcasters, upcast, use_upcasters
from memtape.policies.session import Session
from memtape.runs.files import load_run
from memtape.scenarios import load_scenario

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent

CORE_MEMORY_V1 = FIXTURES / "core-memory-blocks-v1.jsonl"
"""examples/core-memory.toml as memtape wrote it before read-only blocks: BlockEdited at
version 1."""

SLEEP_PASS_V3 = FIXTURES / "sleep-pass-consolidated-v3.jsonl"
"""sleep-pass as memtape wrote it before a pass could edit memory blocks: Consolidated at
version 3."""

REFUND_DESK_V0 = FIXTURES / "refund-desk-v0.jsonl"
"""refund-desk as a hypothetical pre-release memtape wrote it: its ``TurnAdded``
lines are version 0, which had no ``salient`` field (a turn was salient iff its
role was ``tool``). No memtape ever shipped this format; it stands in for the
first real old format until there is one."""


def _turn_added_v0_v1(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "salient": data["role"] == "tool"}


V0_UPCASTERS: Upcasters = {**UPCASTERS, ("TurnAdded", 0): _turn_added_v0_v1}
"""The shipped upcasters and the hypothetical version 0's: a version-0 turn goes to 1, then 2."""


def _mark(label: str) -> Any:
    """An upcaster that appends ``label`` to the ``trail`` field, to show the order of steps."""

    def step(data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "trail": [*data["trail"], label]}

    return step


CHAIN: Upcasters = {("Thing", 0): _mark("0->1"), ("Thing", 1): _mark("1->2")}


def _refused(*args: Any, **kwargs: Any) -> str:
    with pytest.raises(BadInput) as caught:
        upcast(*args, **kwargs)
    return str(caught.value)


def _shipped_refund_desk() -> list[Event]:
    """The events ``memtape run refund-desk`` records."""
    scenario = load_scenario("refund-desk")
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return list(session.run.events)


class TestChaining:
    def test_each_step_applies_once_in_version_order(self) -> None:
        data, _ = upcast("Thing", 0, {"trail": []}, upcasters=CHAIN, current=2)

        assert {"trail": ["0->1", "1->2"]} == data

    def test_the_result_carries_the_version_reached(self) -> None:
        assert ({"trail": ["1->2"]}, 2) == upcast(
            "Thing", 1, {"trail": []}, upcasters=CHAIN, current=2
        )

    def test_the_current_version_passes_unchanged(self) -> None:
        assert ({"trail": []}, 2) == upcast("Thing", 2, {"trail": []}, upcasters=CHAIN, current=2)

    def test_the_current_version_defaults_to_the_event_class(self) -> None:
        fields = {"turn": 1, "role": "tool", "text": "hi", "tokens": 2}

        structure = {"calls": [], "answers": [], "pinned": False}
        assert (fields | {"salient": True} | structure, TurnAdded.VERSION) == upcast(
            "TurnAdded", 0, fields, upcasters=V0_UPCASTERS
        )

    def test_the_callers_fields_are_not_changed(self) -> None:
        def pops(data: dict[str, Any]) -> dict[str, Any]:
            data.pop("gone")
            return data

        fields = {"gone": 1, "kept": 2}
        upcast("Thing", 0, fields, upcasters={("Thing", 0): pops}, current=1)

        assert {"gone": 1, "kept": 2} == fields

    def test_an_upcaster_of_another_type_is_not_used(self) -> None:
        message = _refused("Other", 0, {"trail": []}, upcasters=CHAIN, current=1)

        assert "Other version 0 is not readable here: no upcaster" in message


class TestMissingLink:
    def test_a_version_with_no_upcaster_names_the_type_and_versions(self) -> None:
        message = _refused("Thing", 0, {}, upcasters={}, current=1)

        assert (
            "Thing version 0 is not readable here: no upcaster from version 0 to 1 "
            "(this memtape reads version 1)"
        ) == message

    def test_a_gap_in_the_middle_of_the_chain_names_the_missing_step(self) -> None:
        upcasters = {("Thing", 0): CHAIN[("Thing", 0)], ("Thing", 2): _mark("2->3")}

        message = _refused("Thing", 0, {"trail": []}, upcasters=upcasters, current=3)

        assert "no upcaster from version 1 to 2" in message

    def test_the_shipped_registry_does_not_read_version_0(self) -> None:
        message = _refused("TurnAdded", 0, {"turn": 1, "role": "user", "text": "t", "tokens": 1})

        assert message.startswith("TurnAdded version 0 is not readable here: no upcaster")

    def test_an_upcaster_that_cannot_read_its_input_is_bad_input(self) -> None:
        message = _refused("TurnAdded", 0, {"turn": 1}, upcasters=V0_UPCASTERS)

        assert "TurnAdded version 0 cannot be upcast to version 1: KeyError: 'role'" == message


class TestNewerVersion:
    def test_a_newer_version_says_to_upgrade(self) -> None:
        message = _refused("TurnAdded", 3, {})

        assert (
            "TurnAdded version 3 is not readable here: it is newer than this memtape "
            "reads (2); upgrade memtape"
        ) == message

    def test_a_newer_version_is_refused_even_with_upcasters_from_it(self) -> None:
        upcasters = {("Thing", 3): _mark("3->4")}

        message = _refused("Thing", 3, {"trail": []}, upcasters=upcasters, current=2)

        assert "newer than this memtape reads (2)" in message

    def test_the_codec_refuses_a_newer_version_the_same_way(self) -> None:
        with pytest.raises(BadInput, match=r"FactRead version 2 .* upgrade memtape"):
            event_from_data("FactRead", 2, {"id": 1})


class TestVersionShape:
    @pytest.mark.parametrize("version", [True, False, "1", 1.0, None], ids=repr)
    def test_a_version_that_is_not_an_integer_is_refused(self, version: Any) -> None:
        message = _refused("FactRead", version, {"id": 1})

        assert f"FactRead version {version!r} is not a schema version (an integer)" == message

    @pytest.mark.parametrize("version", [True, "1"], ids=repr)
    def test_the_codec_refuses_a_version_that_is_not_an_integer(self, version: Any) -> None:
        with pytest.raises(BadInput, match="is not a schema version"):
            event_from_data("FactRead", version, {"id": 1})

    def test_a_negative_version_is_refused(self) -> None:
        message = _refused("Thing", -1, {}, upcasters={("Thing", -1): _mark("x")}, current=0)

        assert "Thing version -1 is not a schema version (below 0)" == message

    def test_fields_that_are_not_an_object_are_refused_before_any_upcaster(self) -> None:
        message = _refused("TurnAdded", 0, [1, "user"], upcasters=V0_UPCASTERS)

        assert "TurnAdded: expected an object of fields, got [1, 'user']" == message


class TestUnknownType:
    def test_upcast_names_an_unknown_type(self) -> None:
        assert "unknown event type 'FactForgotten'" == _refused("FactForgotten", 0, {})

    def test_the_codec_still_names_an_unknown_type_before_its_version(self) -> None:
        with pytest.raises(BadInput) as caught:
            event_from_data("FactForgotten", 0, {"id": 1})

        assert "unknown event type 'FactForgotten'" == str(caught.value)


class TestUpcastersInForce:
    def test_the_codec_uses_the_upcasters_in_force(self) -> None:
        fields = {"turn": 2, "role": "tool", "text": "result", "tokens": 3}
        with use_upcasters(V0_UPCASTERS):
            event = event_from_data("TurnAdded", 0, fields)

        assert TurnAdded(2, "tool", "result", 3, salient=True) == event

    def test_the_shipped_upcasters_come_back_after_the_block(self) -> None:
        fields = {"turn": 2, "role": "tool", "text": "result", "tokens": 3}
        with use_upcasters(V0_UPCASTERS):
            pass

        with pytest.raises(BadInput, match="no upcaster from version 0 to 1"):
            event_from_data("TurnAdded", 0, fields)

    def test_the_shipped_upcasters_come_back_after_an_error(self) -> None:
        with pytest.raises(BadInput), use_upcasters(V0_UPCASTERS):
            event_from_data("TurnAdded", 0, {"turn": 1})

        with pytest.raises(BadInput, match="no upcaster from version 0 to 1"):
            event_from_data("TurnAdded", 0, {"turn": 1, "role": "u", "text": "t", "tokens": 1})

    def test_an_upcast_event_is_checked_like_any_other(self) -> None:
        fields = {"turn": 2, "role": "tool", "text": "result", "tokens": "3"}
        with pytest.raises(BadInput, match=r"TurnAdded\.tokens"), use_upcasters(V0_UPCASTERS):
            event_from_data("TurnAdded", 0, fields)

    def test_an_event_at_the_current_version_is_decoded_without_upcasters(self) -> None:
        with use_upcasters({}):
            event = event_from_data("FactRead", 1, event_data(FactRead(7)))

        assert FactRead(7) == event


class TestShippedUpcasters:
    def test_each_names_a_known_type_and_a_version_below_its_current_one(self) -> None:
        for name, start in UPCASTERS:
            assert name in EVENT_TYPES
            assert 0 <= start < EVENT_TYPES[name].VERSION

    @pytest.mark.parametrize("name", list(EVENT_TYPES))
    def test_every_released_version_reaches_the_current_one(self, name: str) -> None:
        # Versions 1 up to the current one have been written by a release;
        # bumping VERSION without registering an upcaster fails here.
        current = EVENT_TYPES[name].VERSION

        assert [] == [v for v in range(1, current) if (name, v) not in UPCASTERS]


class TestTurnAddedV1:
    def test_a_version_1_turn_made_no_calls_answered_none_and_was_not_pinned(self) -> None:
        fields = {"turn": 3, "role": "tool", "text": "ok", "tokens": 2, "salient": True}
        assert TurnAdded(3, "tool", "ok", 2, True, (), (), False) == event_from_data(
            "TurnAdded", 1, fields
        )

    def test_a_version_1_log_folds_to_the_state_it_always_did(self, tmp_path: Path) -> None:
        """refund-desk written as version-1 turns (the fields memtape 0.1 wrote) folds to
        the same state as the current recording."""
        path = tmp_path / "refund.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(path)])
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        for line in lines[1:]:
            if line["type"] == "TurnAdded":
                assert (False, [], []) == (
                    line["event"].pop("pinned"),
                    line["event"].pop("calls"),
                    line["event"].pop("answers"),
                )
                line["v"] = 1
        old = tmp_path / "old.jsonl"
        old.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        assert load_run(path).session.state == load_run(old).session.state


class TestFactWrittenV1:
    def test_a_version_1_fact_never_expires(self) -> None:
        fields = {"id": 1, "key": "name", "text": "Dana", "importance": 0.9}
        assert FactWritten(1, "name", "Dana", 0.9, None, "") == event_from_data(
            "FactWritten", 1, fields
        )

    def test_a_version_2_fact_was_true_from_its_write(self) -> None:
        fields = {"id": 1, "key": "name", "text": "Dana", "importance": 0.9, "expires_at": 4.0}
        assert FactWritten(1, "name", "Dana", 0.9, 4.0, "", None, None) == event_from_data(
            "FactWritten", 2, fields
        )

    def test_a_version_1_query_asked_about_now(self) -> None:
        fields = {"text": "", "key": "a", "k": 1, "results": [1], "scores": [0.5]}
        assert Queried("", "a", 1, (1,), (0.5,), None, None) == event_from_data(
            "Queried", 1, fields
        )

    def test_a_fact_of_no_expiry_or_valid_time_leaves_those_fields_out(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "dana.jsonl"
        assert 0 == main(["run", "dana-facts", "--out", str(path)])
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        written = [line for line in lines[1:] if line["type"] == "FactWritten"]
        assert (3, set()) == (
            written[0]["v"],
            set().union(
                *(
                    set(line["event"]) & {"expires_at", "ttl", "valid_from", "valid_to"}
                    for line in written
                )
            ),
        )

    def test_a_version_1_log_folds_to_the_state_it_always_did(self, tmp_path: Path) -> None:
        """dana-facts written with version-1 writes (as memtape 0.1 wrote them) folds to
        the same state as the current recording."""
        path = tmp_path / "dana.jsonl"
        assert 0 == main(["run", "dana-facts", "--out", str(path)])
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        for line in lines[1:]:
            if line["type"] == "FactWritten":
                line["v"] = 1
        old = tmp_path / "old.jsonl"
        old.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        assert load_run(path).session.state == load_run(old).session.state


class TestQueriedV1:
    def test_a_version_1_log_of_queries_folds_to_the_state_it_always_did(
        self, tmp_path: Path
    ) -> None:
        """A run with queries, its writes at version 2 and its queries at version 1 (as
        memtape wrote them before bi-temporal queries), folds to the same state."""
        path = tmp_path / "queries.jsonl"
        assert 0 == main(["run", str(FIXTURES / "dana-queries.toml"), "--out", str(path)])
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        versions = {"Queried": 1, "FactWritten": 2}
        for line in lines[1:]:
            line["v"] = versions.get(line["type"], line["v"])
        old = tmp_path / "old.jsonl"
        old.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        assert load_run(path).session.state == load_run(old).session.state


class TestCompactionTriggeredV1:
    def test_a_version_1_compaction_asked_no_model(self) -> None:
        fields = {
            "budget": 40,
            "hot": [3],
            "warm": [{"turn": 2, "text": "s", "tokens": 1}],
            "dropped": [1],
            "cold": 0,
            "gist": "",
            "gist_tokens": 0,
        }
        assert CompactionTriggered(40, (WarmItem(2, "s", 1),), (1,), 0, "", 0, ()) == (
            event_from_data("CompactionTriggered", 1, fields)
        )

    def test_a_compaction_that_asked_nothing_and_cleared_nothing_leaves_both_out(
        self, tmp_path: Path
    ) -> None:
        """An event that asked no model is no longer for the field that would say so."""
        path = tmp_path / "refund.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(path)])
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        compactions = [line for line in lines[1:] if line["type"] == "CompactionTriggered"]
        assert [5] * 5 == [line["v"] for line in compactions]
        assert all(
            not {"asked", "cleared", "kept", "recall"} & set(line["event"]) for line in compactions
        )

    def test_a_version_4_compaction_kept_nothing_for_a_recall(self) -> None:
        """Version 4 was written before recall: its upcast keeps nothing of what it moved."""
        fields = {"budget": 40, "warm": [], "dropped": [1], "cold": 0, "gist": "", "gist_tokens": 0}
        event = event_from_data("CompactionTriggered", 4, fields)
        assert isinstance(event, CompactionTriggered)
        assert (CompactionTriggered(40, (), (1,), 0, "", 0), False) == (event, event.recall)

    @pytest.mark.parametrize("version", [1, 2])
    @pytest.mark.parametrize("policy", ["tiered", "clear-tool-results", "sliding-window"])
    def test_an_old_log_folds_to_the_state_it_always_did(
        self, tmp_path: Path, policy: str, version: int
    ) -> None:
        """refund-desk with its compactions written as version 1 (as memtape wrote them
        before tool calls had structure) or 2 (before they named only what moves), each
        listing the turns that stay HOT, folds to the state the current recording does."""
        path = tmp_path / "refund.jsonl"
        setting = f"compaction.policy={policy}"
        assert 0 == main(["run", "refund-desk", "--out", str(path), "--set", setting])
        old, count = _written_as(path, version, tmp_path / "old.jsonl")
        assert (True, load_run(path).session.state) == (bool(count), load_run(old).session.state)

    def test_an_old_log_checks_clean(self, tmp_path: Path) -> None:
        """Its upcast compactions equal those re-decided today."""
        path = tmp_path / "refund.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(path)])
        old, _ = _written_as(path, 2, tmp_path / "old.jsonl")
        problems = check_file(old).problems
        assert ["chain"] == sorted({problem.invariant for problem in problems})

    def test_an_old_list_that_leaves_a_hot_turn_out_is_refused_as_it_was(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "refund.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(path)])
        old, _ = _written_as(path, 2, tmp_path / "old.jsonl", lose_one=True)
        with pytest.raises(BadInput, match=r"compaction names turns .* but HOT holds"):
            load_run(old)


def _written_as(path: Path, version: int, old: Path, *, lose_one: bool = False) -> tuple[Path, int]:
    """The run at ``path`` written to ``old`` with its compactions at ``version`` 1 or 2,
    each listing in ``hot`` the turns that stayed HOT (read from the run's states), as
    memtape wrote them then; with ``lose_one``, the first list misses its oldest turn.
    Returns the path and the number of compactions."""
    run = load_run(path).session.run
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    compactions = [line for line in lines[1:] if line["type"] == "CompactionTriggered"]
    for line in compactions:
        event = line["event"]
        hot = [turn.turn for turn in run.state_at(line["at"]).window.hot]
        if lose_one and line is compactions[0]:
            hot = hot[1:]
        line["event"] = {"budget": event.pop("budget"), "hot": hot, **event}
        if version == 1:
            assert not {"asked", "cleared"} & set(event)
        line["v"] = version
    old.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return old, len(compactions)


class TestConsolidatedV1:
    def test_a_version_1_pass_asked_no_model(self) -> None:
        fields = {"episodes": [1], "semantic": [], "procedural": []}

        assert Consolidated((1,), (), (), ()) == event_from_data("Consolidated", 1, fields)


CALL = {
    "output": "a summary",
    "model": "m",
    "prompt": "0" * 32,
    "prompt_tokens": 5,
    "completion_tokens": 2,
    "seconds": 0.5,
    "cached": False,
}
"""A model call as versions 3 of a compaction and 2 of a pass wrote it: never cut."""


class TestAnswersCut:
    def test_a_version_3_compactions_calls_were_never_cut(self) -> None:
        fields = {"budget": 9, "warm": [], "dropped": [], "cold": 0, "gist": "", "gist_tokens": 0}

        upcast = event_from_data("CompactionTriggered", 3, {**fields, "asked": [CALL]})
        assert isinstance(upcast, CompactionTriggered)
        assert [0] == [call.cut for call in upcast.asked]

    def test_a_version_2_passs_calls_were_never_cut(self) -> None:
        fields = {"episodes": [1], "semantic": [], "procedural": [], "asked": [CALL, CALL]}

        upcast = event_from_data("Consolidated", 2, fields)
        assert isinstance(upcast, Consolidated)
        assert [0, 0] == [call.cut for call in upcast.asked]

    def test_a_call_says_cut_only_when_it_was(self) -> None:
        event = event_from_data(
            "Consolidated",
            3,
            {
                "episodes": [1],
                "semantic": [],
                "procedural": [],
                "asked": [CALL, {**CALL, "cut": 7}],
            },
        )

        assert [CALL, {**CALL, "cut": 7}] == event_data(event)["asked"]

    def test_calls_that_are_not_a_list_are_bad_input(self) -> None:
        with pytest.raises(BadInput, match="Consolidated version 2 cannot be upcast to version 3"):
            event_from_data(
                "Consolidated",
                2,
                {"episodes": [1], "semantic": [], "procedural": [], "asked": "no"},
            )


class TestBlockEditedV1:
    def test_a_version_1_block_was_not_read_only(self) -> None:
        fields = {"label": "human", "version": 1, "op": "create", "value": "x", "tokens": 1}

        assert BlockEdited("human", 1, "create", "x", 1, None, False) == event_from_data(
            "BlockEdited", 1, fields
        )


class TestConsolidatedV3:
    def test_a_version_3_pass_edited_no_block(self) -> None:
        fields = {"episodes": [1], "semantic": [], "procedural": []}

        assert Consolidated((1,), (), (), (), ()) == event_from_data("Consolidated", 3, fields)


class TestBlocksAndPassesOfOldRuns:
    @pytest.mark.parametrize(
        ("fixture", "scenario"),
        [(CORE_MEMORY_V1, "examples/core-memory.toml"), (SLEEP_PASS_V3, "sleep-pass")],
    )
    def test_an_old_run_folds_to_the_state_memtape_records_now(
        self, fixture: Path, scenario: str
    ) -> None:
        loaded = load_scenario(scenario if scenario == "sleep-pass" else str(REPO / scenario))
        session = Session(loaded.policies)
        session.execute_all(loaded.steps)

        assert session.state == load_run(fixture).session.state

    def test_the_fixtures_hold_the_old_versions(self) -> None:
        versions = {
            (line["type"], line["v"])
            for fixture in (CORE_MEMORY_V1, SLEEP_PASS_V3)
            for line in map(json.loads, fixture.read_text("utf-8").splitlines()[1:])
            if line["type"] in ("BlockEdited", "Consolidated")
        }

        assert {("BlockEdited", 1), ("Consolidated", 3)} == versions


class TestOldFormatFixture:
    def test_the_fixture_holds_version_0_turns_without_a_salient_flag(self) -> None:
        lines = [json.loads(raw) for raw in REFUND_DESK_V0.read_text("utf-8").splitlines()[1:]]
        turns = [line for line in lines if line["type"] == "TurnAdded"]

        assert (10, {0}, []) == (
            len(turns),
            {line["v"] for line in turns},
            [line["at"] for line in turns if "salient" in line["event"]],
        )

    def test_it_loads_to_the_events_memtape_records_for_refund_desk(self) -> None:
        with use_upcasters(V0_UPCASTERS):
            batches = read_run(REFUND_DESK_V0).batches

        assert _shipped_refund_desk() == [event for batch in batches for event in batch.events]

    def test_without_the_upcaster_it_is_refused_at_its_first_turn(self) -> None:
        with pytest.raises(BadInput) as caught:
            read_run(REFUND_DESK_V0)

        assert (
            f"{REFUND_DESK_V0}: line 2: TurnAdded version 0 is not readable here: "
            "no upcaster from version 0 to 1 (this memtape reads version 2)"
        ) == str(caught.value)

    def test_it_checks_clean_and_unchained(self) -> None:
        """Written before memtape chained its logs: no links, no head, and no problem."""
        with use_upcasters(V0_UPCASTERS):
            report = check_file(REFUND_DESK_V0)

        assert (True, False) == (report.ok, report.chained)
        assert report.lines()[0].endswith("; unchained (written before memtape chained its logs)")
