"""memtape.policies.consolidation.rules: rules distill episodes; a pass consumes every episode."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import pytest

from memtape.core.commands import Consolidate, RecordEpisode
from memtape.core.errors import BadInput
from memtape.core.events import (
    BlockEdit,
    Consolidated,
    EpisodeRecorded,
    ProceduralRule,
    SemanticFact,
)
from memtape.core.state import INITIAL_STATE, State
from memtape.policies.consolidation.rules import RuleConsolidation
from memtape.reducers import evolve

NAME_RULE: dict[str, Any] = {
    "pattern": "name is (?P<name>[A-Z][a-z]+)",
    "semantic": {"key": "user.name", "text": "user.name = {name}", "importance": 0.9},
}
FEE_RULE: dict[str, Any] = {
    "pattern": "restocking fee",
    "procedural": "returns after the 30-day window: apply a 10% restocking fee",
}


def _policy(*rules: dict[str, Any]) -> RuleConsolidation:
    return RuleConsolidation.from_params({"rule": list(rules)}, "here")


def _recorded(policy: RuleConsolidation, *texts: str) -> State:
    state = INITIAL_STATE
    for text in texts:
        for event in policy.decide(state, RecordEpisode(text)):
            state = evolve(state, event)
    return state


def _pass(policy: RuleConsolidation, *texts: str) -> Consolidated:
    (event,) = policy.decide(_recorded(policy, *texts), Consolidate())
    assert isinstance(event, Consolidated)
    return event


def _refused(rule: dict[str, Any]) -> str:
    with pytest.raises(BadInput) as caught:
        RuleConsolidation.from_params({"rule": [FEE_RULE, rule]}, "f.toml: [consolidation]")
    return str(caught.value)


class TestRecordEpisode:
    def test_an_episode_is_recorded_with_the_next_id(self) -> None:
        policy = _policy()

        assert (EpisodeRecorded(3, "c"),) == policy.decide(
            _recorded(policy, "a", "b"), RecordEpisode("c")
        )

    def test_ids_continue_after_a_pass(self) -> None:
        policy = _policy()
        state = _recorded(policy, "a")
        state = evolve(state, _pass(policy, "a"))

        assert (EpisodeRecorded(2, "b"),) == policy.decide(state, RecordEpisode("b"))


class TestPass:
    def test_a_matching_episode_becomes_a_semantic_fact(self) -> None:
        event = _pass(_policy(NAME_RULE), "the user confirmed their name is Dana")

        assert (SemanticFact("user.name", "user.name = Dana", 0.9, 1),) == event.semantic

    def test_a_matching_episode_becomes_a_procedural_rule(self) -> None:
        event = _pass(_policy(FEE_RULE), "x", "after the window a restocking fee applies")

        assert (ProceduralRule(FEE_RULE["procedural"], 2),) == event.procedural

    def test_the_first_matching_rule_wins(self) -> None:
        event = _pass(_policy(FEE_RULE, NAME_RULE), "name is Dana; restocking fee too")

        assert ((), 1) == (event.semantic, len(event.procedural))

    def test_rule_order_decides_which_rule_wins(self) -> None:
        event = _pass(_policy(NAME_RULE, FEE_RULE), "name is Dana; restocking fee too")

        assert (1, ()) == (len(event.semantic), event.procedural)

    def test_a_match_whose_key_comes_out_blank_distills_nothing_but_is_consumed(self) -> None:
        blank = {
            "pattern": "^(?P<key>\\w*) = (?P<value>\\w+)$",
            "semantic": {"key": "{key}", "text": "{value}", "importance": 0.5},
        }
        event = _pass(_policy(blank), " = blue")

        assert ((1,), ()) == (event.episodes, event.semantic)

    def test_after_a_blank_key_the_next_rule_may_distill(self) -> None:
        blank = {
            "pattern": "^(?P<key>\\w*) = ",
            "semantic": {"key": "{key}", "text": "nothing", "importance": 0.5},
        }
        event = _pass(_policy(blank, FEE_RULE), " = a restocking fee")

        assert ((), 1) == (event.semantic, len(event.procedural))

    def test_unmatched_episodes_are_consumed_too(self) -> None:
        event = _pass(_policy(NAME_RULE), "nothing to learn", "name is Dana", "small talk")

        assert ((1, 2, 3), 1) == (event.episodes, len(event.semantic))

    def test_a_pass_without_rules_consumes_everything_and_distills_nothing(self) -> None:
        assert Consolidated((1, 2), (), ()) == _pass(_policy(), "a", "b")

    def test_a_pass_over_no_episodes_is_empty(self) -> None:
        assert Consolidated((), (), ()) == _pass(_policy(NAME_RULE))

    def test_each_distillate_names_its_episode(self) -> None:
        event = _pass(_policy(NAME_RULE, FEE_RULE), "restocking fee", "x", "name is Dana")

        assert (3, 1) == (event.semantic[0].episode, event.procedural[0].episode)

    def test_templates_fill_in_named_groups_in_key_and_text(self) -> None:
        rule = {
            "pattern": r"(?P<who>\w+) prefers (?P<how>\w+)",
            "semantic": {"key": "{who}.contact", "text": "{who} by {how}", "importance": 0.5},
        }

        event = _pass(_policy(rule), "Dana prefers phone")

        assert (SemanticFact("Dana.contact", "Dana by phone", 0.5, 1),) == event.semantic

    def test_a_procedural_template_fills_in_named_groups(self) -> None:
        rule = {"pattern": r"fee of (?P<pct>\d+%)", "procedural": "charge {pct}"}

        assert "charge 10%" == _pass(_policy(rule), "a fee of 10% applies").procedural[0].text

    def test_an_unmatched_optional_group_fills_in_empty(self) -> None:
        rule = {"pattern": r"fee(?P<pct> of \d+%)?", "procedural": "charge[{pct}]"}

        assert "charge[]" == _pass(_policy(rule), "a fee applies").procedural[0].text

    def test_patterns_search_anywhere_in_the_episode(self) -> None:
        assert 1 == len(_pass(_policy(FEE_RULE), "...then a restocking fee...").procedural)


class TestRulesFromParams:
    def test_rules_keep_their_order(self) -> None:
        policy = _policy(NAME_RULE, FEE_RULE)

        assert ["SemanticPattern", "ProceduralPattern"] == [type(r).__name__ for r in policy.rules]

    def test_semantic_rules_make_semantic_facts(self) -> None:
        assert (True, False) == (
            _policy(FEE_RULE, NAME_RULE).makes_semantic_facts(),
            _policy(FEE_RULE).makes_semantic_facts(),
        )

    def test_params_read_back_to_the_same_policy(self) -> None:
        policy = _policy(NAME_RULE, FEE_RULE)
        data = policy.params()
        del data["policy"]

        assert policy == RuleConsolidation.from_params(data, "here")

    def test_params_name_the_policy_and_its_rules(self) -> None:
        assert {"policy": "rules", "rule": [NAME_RULE, FEE_RULE]} == _policy(
            NAME_RULE, FEE_RULE
        ).params()

    def test_from_params_leaves_the_data_unchanged(self) -> None:
        rule = {"pattern": "x", "semantic": {"key": "k", "text": "t", "importance": 0.5}}

        _policy(rule)

        assert {"pattern": "x", "semantic": {"key": "k", "text": "t", "importance": 0.5}} == rule

    def test_a_bad_regular_expression_is_named(self) -> None:
        message = _refused({"pattern": "name is (", "procedural": "x"})

        assert message.startswith(
            "f.toml: [consolidation] rule 2: pattern is not a regular expression"
        )

    def test_a_rule_with_both_procedural_and_semantic_is_refused(self) -> None:
        rule = {**NAME_RULE, "procedural": "x"}

        assert (
            "f.toml: [consolidation] rule 2: give exactly one of procedural, semantic or block"
            == _refused(rule)
        )

    def test_a_rule_with_neither_procedural_nor_semantic_is_refused(self) -> None:
        assert (
            "f.toml: [consolidation] rule 2: give exactly one of procedural, semantic or block"
            == _refused({"pattern": "x"})
        )

    def test_a_semantic_text_naming_an_unknown_group_is_refused(self) -> None:
        rule = {
            "pattern": "name is (?P<name>\\w+)",
            "semantic": {"key": "user.name", "text": "{nmae}", "importance": 0.9},
        }

        assert (
            "f.toml: [consolidation] rule 2 semantic text: {nmae} names no group of the pattern"
            == _refused(rule)
        )

    def test_a_semantic_key_naming_an_unknown_group_is_refused(self) -> None:
        rule = {"pattern": "x", "semantic": {"key": "{who}", "text": "t", "importance": 0.9}}

        assert _refused(rule).startswith("f.toml: [consolidation] rule 2 semantic key: {who}")

    @pytest.mark.parametrize("field", ["{a!r}", "{a:d}", "{a:>99999999999}", "{a.upper}", "{a[0]}"])
    def test_a_template_field_must_be_a_plain_group(self, field: str) -> None:
        """Conversions, formats, attributes and indexes could fail or blow up at a pass."""
        message = _refused({"pattern": "(?P<a>x)", "procedural": f"do {field}"})

        assert message.startswith("f.toml: [consolidation] rule 2 procedural: ")

    def test_a_procedural_template_naming_an_unknown_group_is_refused(self) -> None:
        assert _refused({"pattern": "x", "procedural": "do {what}"}).startswith(
            "f.toml: [consolidation] rule 2 procedural: {what}"
        )

    def test_a_positional_field_is_refused(self) -> None:
        assert "names no group" in _refused({"pattern": "(x)", "procedural": "do {0}"})

    def test_a_malformed_template_is_refused(self) -> None:
        assert _refused({"pattern": "x", "procedural": "do {what"}).startswith(
            "f.toml: [consolidation] rule 2 procedural:"
        )

    @pytest.mark.parametrize("importance", [-0.1, 1.5])
    def test_a_semantic_importance_outside_0_1_is_refused(self, importance: float) -> None:
        rule = {"pattern": "x", "semantic": {"key": "k", "text": "t", "importance": importance}}

        assert _refused(rule).startswith(
            "f.toml: [consolidation] rule 2 semantic: importance must be a number in [0, 1]"
        )

    def test_a_semantic_part_missing_its_key_is_refused(self) -> None:
        rule = {"pattern": "x", "semantic": {"text": "t", "importance": 0.5}}

        assert "f.toml: [consolidation] rule 2 semantic: missing parameter key" == _refused(rule)

    def test_a_semantic_part_with_an_unknown_field_is_refused(self) -> None:
        rule = {"pattern": "x", "semantic": {"key": "k", "text": "t", "importance": 0.5, "ttl": 3}}

        assert "f.toml: [consolidation] rule 2 semantic: unknown parameter ttl" == _refused(rule)

    def test_a_semantic_part_must_be_a_table(self) -> None:
        assert _refused({"pattern": "x", "semantic": "k = v"}).startswith(
            "f.toml: [consolidation] rule 2: semantic must be a table"
        )

    def test_a_procedural_part_must_be_a_string(self) -> None:
        assert _refused({"pattern": "x", "procedural": 3}).startswith(
            "f.toml: [consolidation] rule 2: procedural must be a string"
        )

    def test_a_rule_without_a_pattern_is_refused(self) -> None:
        assert "f.toml: [consolidation] rule 2: missing parameter pattern" == _refused(
            {"procedural": "x"}
        )

    def test_a_rule_with_an_unknown_field_is_refused(self) -> None:
        assert "f.toml: [consolidation] rule 2: unknown parameter flags" == _refused(
            {**FEE_RULE, "flags": "i"}
        )

    @pytest.mark.parametrize("rules", ["x", {"pattern": "x"}, [FEE_RULE, "x"]], ids=repr)
    def test_rules_must_be_a_list_of_tables(self, rules: Any) -> None:
        with pytest.raises(BadInput, match=r"^here: rule must be a list of tables"):
            RuleConsolidation.from_params({"rule": rules}, "here")

    def test_an_unknown_parameter_of_the_policy_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^here: unknown parameter rules: did you mean rule\?$"):
            RuleConsolidation.from_params({"rules": [FEE_RULE]}, "here")


MOVED_RULE: dict[str, Any] = {
    "pattern": "moved to (?P<city>[A-Z][a-z]+)",
    "block": {"label": "human", "op": "find-replace", "find": "Lisbon", "text": "{city}"},
}


class TestBlockRules:
    def test_a_matching_episode_becomes_a_block_edit_of_the_pass(self) -> None:
        event = _pass(_policy(MOVED_RULE, FEE_RULE), "Dana moved to Porto.", "a restocking fee")

        assert (
            (BlockEdit("human", "find-replace", "Porto", "Lisbon"),),
            (ProceduralRule(FEE_RULE["procedural"], 2),),
        ) == (event.blocks, event.procedural)

    def test_a_block_rule_reads_back_to_the_same_policy(self) -> None:
        policy = _policy(MOVED_RULE)
        data = policy.params()
        del data["policy"]

        assert policy == RuleConsolidation.from_params(data, "here")

    def test_a_block_rule_with_an_unknown_op_is_refused(self) -> None:
        rule = {**MOVED_RULE, "block": {"label": "human", "op": "insert", "text": "x"}}

        assert (
            "f.toml: [consolidation] rule 2 block: op must be one of replace, append, "
            "find-replace, got 'insert'"
        ) == _refused(rule)

    def test_a_block_text_naming_an_unknown_group_is_refused(self) -> None:
        rule = {**MOVED_RULE, "block": {"label": "human", "op": "append", "text": "{town}"}}

        assert (
            "f.toml: [consolidation] rule 2 block text: {town} names no group of the pattern"
        ) == _refused(rule)

    def test_a_pass_without_a_block_rule_edits_nothing(self) -> None:
        assert () == _pass(_policy(NAME_RULE), "my name is Dana").blocks
