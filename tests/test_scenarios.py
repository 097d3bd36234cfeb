"""memtape.scenarios: the TOML format, the loader, and the shipped seed scenarios."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from importlib import resources
from pathlib import Path

import pytest

from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput
from memtape.core.events import Queried
from memtape.lab.bench import plan, run_cells
from memtape.policies import zoo
from memtape.policies.consolidation.rules import RuleConsolidation
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.text.tokenizers import O200kBase
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.runs.files import save_run
from memtape.scenarios import SHIPPED, Probe, is_scenario, load_scenario, parse_scenario
from memtape.scenarios.cost import Cost
from memtape.scenarios.loader import with_settings
from memtape.scenarios.usage import Usage
from memtape.scenarios.writer import scenario_text

COMPACTION = '[compaction]\npolicy = "tiered"\nbudget = 40\n'
FORGETTING = '[forgetting]\npolicy = "importance-recency-access"\ncapacity = 4\n'
CONSOLIDATION = '[consolidation]\npolicy = "rules"\n'
ALL = COMPACTION + FORGETTING + CONSOLIDATION
KNOWN = ", ".join(sorted(zoo.COMPACTION))
TURN = '[[step]]\nturn = "user"\ntext = "hello there"\n'


def _file(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def _refusal(tmp_path: Path, text: str) -> tuple[Path, str]:
    path = _file(tmp_path, text)
    with pytest.raises(BadInput) as caught:
        load_scenario(str(path))
    return path, str(caught.value)


class TestShipped:
    def test_the_three_seed_scenarios_and_the_cache_breaker_ship(self) -> None:
        assert ("refund-desk", "dana-facts", "sleep-pass", "cache-breaker") == SHIPPED

    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_shipped_scenario_loads_by_name(self, name: str) -> None:
        scenario = load_scenario(name)

        assert (name, name) == (scenario.name, scenario.source)

    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_shipped_scenario_says_what_it_shows(self, name: str) -> None:
        assert "" != load_scenario(name).about

    @pytest.mark.parametrize(
        ("name", "steps"), [("refund-desk", 10), ("dana-facts", 9), ("sleep-pass", 5)]
    )
    def test_a_shipped_scenario_has_one_step_per_command(self, name: str, steps: int) -> None:
        assert steps == len(load_scenario(name).steps)

    def test_refund_desk_uses_compaction_only(self) -> None:
        assert Policies(compaction=TieredCompaction(40, 2)) == load_scenario("refund-desk").policies

    def test_dana_facts_uses_forgetting_only(self) -> None:
        assert Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)) == (
            load_scenario("dana-facts").policies
        )

    def test_sleep_pass_uses_forgetting_and_consolidation(self) -> None:
        policies = load_scenario("sleep-pass").policies

        assert (None, True, True) == (
            policies.compaction,
            isinstance(policies.forgetting, ImportanceRecencyAccess),
            isinstance(policies.consolidation, RuleConsolidation),
        )

    def test_dana_facts_steps_are_writes_an_advance_reads_and_writes(self) -> None:
        steps = load_scenario("dana-facts").steps

        assert [WriteFact] * 4 + [AdvanceClock] + [ReadFact] * 2 + [WriteFact] * 2 == [
            type(s) for s in steps
        ]

    def test_sleep_pass_steps_are_four_episodes_and_a_pass(self) -> None:
        steps = load_scenario("sleep-pass").steps

        assert [RecordEpisode] * 4 + [Consolidate] == [type(s) for s in steps]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_shipped_scenario_runs_to_the_end(self, name: str) -> None:
        scenario = load_scenario(name)
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)

        assert len(scenario.steps) == len(session.run.commands)


class TestUserFiles:
    def test_a_user_file_loads_by_path(self, tmp_path: Path) -> None:
        path = _file(tmp_path, COMPACTION + TURN)

        assert (AddTurn("user", "hello there"),) == load_scenario(str(path)).steps

    def test_the_source_is_the_path_given(self, tmp_path: Path) -> None:
        path = _file(tmp_path, COMPACTION + TURN)

        assert str(path) == load_scenario(str(path)).source

    def test_the_name_defaults_to_the_file_stem(self, tmp_path: Path) -> None:
        path = _file(tmp_path, COMPACTION + TURN, "late-refund.toml")

        assert ("late-refund", "") == (
            load_scenario(str(path)).name,
            load_scenario(str(path)).about,
        )

    def test_the_header_names_the_scenario(self, tmp_path: Path) -> None:
        header = '[scenario]\nname = "mine"\nabout = "what it shows"\n'
        scenario = load_scenario(str(_file(tmp_path, header + COMPACTION + TURN)))

        assert ("mine", "what it shows") == (scenario.name, scenario.about)

    def test_a_user_copy_of_a_shipped_file_loads_the_same(self, tmp_path: Path) -> None:
        shipped = load_scenario("dana-facts")
        text = resources.files("memtape.scenarios").joinpath("dana-facts.toml").read_text("utf-8")
        copy = load_scenario(str(_file(tmp_path, text)))

        assert (shipped.policies, shipped.steps) == (copy.policies, copy.steps)

    def test_a_file_without_steps_is_refused(self, tmp_path: Path) -> None:
        """A header alone would record a run of no events: nothing to run, so say so."""
        path, message = _refusal(tmp_path, COMPACTION)

        assert f"{path}: no [[step]] tables: nothing to run" == message

    @pytest.mark.parametrize(
        ("table", "policy"),
        [
            ('policy = "sliding-window"\nbudget = 60', SlidingWindow(60)),
            (
                'policy = "rolling-summary"\nbudget = 60\nkeep = 4\nsummary_tokens = 20',
                RollingSummary(60, 4, 20),
            ),
            (
                'policy = "clear-tool-results"\nbudget = 60\nkeep = 1\nplaceholder = "[gone]"',
                ClearToolResults(60, 1, "[gone]"),
            ),
            (
                'policy = "none"\nbudget = 60\ntokenizer = "o200k_base"',
                NoCompaction(60, O200kBase()),
            ),
        ],
    )
    def test_each_compaction_policy_is_named_with_its_parameters(
        self, tmp_path: Path, table: str, policy: object
    ) -> None:
        path = _file(tmp_path, f"[compaction]\n{table}\n" + TURN)

        assert policy == load_scenario(str(path)).policies.compaction


class TestSteps:
    def test_a_turn_step(self) -> None:
        steps = parse_scenario(COMPACTION + TURN, "s").steps

        assert (AddTurn("user", "hello there", None),) == steps

    @pytest.mark.parametrize("flag", [True, False])
    def test_a_turn_step_may_set_salience(self, flag: bool) -> None:
        text = COMPACTION + TURN + f"salient = {str(flag).lower()}\n"

        assert (AddTurn("user", "hello there", flag),) == parse_scenario(text, "s").steps

    def test_a_turn_step_may_name_its_calls_answers_and_pin(self) -> None:
        text = COMPACTION + TURN + 'calls = ["a", "b"]\nanswers = ["z"]\npin = true\n'

        expected = AddTurn("user", "hello there", None, ("a", "b"), ("z",), pin=True)
        assert (expected,) == parse_scenario(text, "s").steps

    @pytest.mark.parametrize(
        ("line", "problem"),
        [
            ('calls = "a"', "calls must be a list of non-empty ids (strings), got 'a'"),
            ("calls = [1]", "calls must be a list of non-empty ids (strings), got [1]"),
            ('answers = [""]', "answers must be a list of non-empty ids (strings), got ['']"),
            ('calls = ["a", "a"]', "calls names an id twice: ['a', 'a']"),
            ('pin = "yes"', "pin must be true or false, got 'yes'"),
        ],
    )
    def test_a_malformed_structure_names_the_step(self, line: str, problem: str) -> None:
        with pytest.raises(BadInput) as caught:
            parse_scenario(COMPACTION + TURN + line + "\n", "s.toml")
        assert f"s.toml: step 1: {problem}" == str(caught.value)

    @pytest.mark.parametrize(("value", "to"), [("6", 6.0), ("2.5", 2.5), ("0", 0.0)])
    def test_an_advance_step(self, value: str, to: float) -> None:
        assert (AdvanceClock(to),) == parse_scenario(f"[[step]]\nadvance = {value}\n", "s").steps

    def test_a_write_step(self) -> None:
        text = FORGETTING + '[[step]]\nwrite = "name"\ntext = "Dana"\nimportance = 0.9\n'

        assert (WriteFact("name", "Dana", 0.9),) == parse_scenario(text, "s").steps

    def test_a_write_step_may_name_what_it_supersedes(self) -> None:
        text = FORGETTING + (
            '[[step]]\nwrite = "phone"\ntext = "x"\nimportance = 1\nsupersedes = "email"\n'
        )

        assert (WriteFact("phone", "x", 1.0, "email"),) == parse_scenario(text, "s").steps

    def test_a_write_step_may_name_when_it_expires(self) -> None:
        text = FORGETTING + (
            '[[step]]\nwrite = "promo"\ntext = "x"\nimportance = 1\nexpires_at = 1800\n'
        )

        assert (WriteFact("promo", "x", 1.0, None, 1800.0),) == parse_scenario(text, "s").steps

    def test_a_read_step_by_key(self) -> None:
        text = FORGETTING + '[[step]]\nread = "name"\n'

        assert (ReadFact(key="name"),) == parse_scenario(text, "s").steps

    def test_a_read_step_by_id(self) -> None:
        text = FORGETTING + "[[step]]\nread = 3\n"

        assert (ReadFact(id=3),) == parse_scenario(text, "s").steps

    def test_a_query_step_with_text_expected_key_and_k(self) -> None:
        text = FORGETTING + '[[step]]\nquery = "who am I"\nexpect = "name"\nk = 2\n'

        assert (Query("who am I", "name", 2),) == parse_scenario(text, "s").steps

    def test_a_query_step_wants_the_top_3_by_default(self) -> None:
        text = FORGETTING + '[[step]]\nquery = "who am I"\n'

        assert (Query("who am I", "", 3),) == parse_scenario(text, "s").steps

    def test_a_query_step_may_name_only_the_key_it_expects(self) -> None:
        text = FORGETTING + '[[step]]\nexpect = "name"\nk = 1\n'

        assert (Query("", "name", 1),) == parse_scenario(text, "s").steps

    def test_a_query_step_runs_and_reads_the_top_of_the_ranking(self, tmp_path: Path) -> None:
        writes = "".join(
            f'[[step]]\nwrite = "{key}"\ntext = "{key} fact"\nimportance = {imp}\n'
            for key, imp in (("a", 0.2), ("b", 0.9), ("c", 0.5))
        )
        path = _file(tmp_path, FORGETTING + writes + '[[step]]\nquery = "?"\nexpect = "b"\nk = 2\n')
        scenario = load_scenario(str(path))
        session = Session(scenario.policies)

        session.execute_all(scenario.steps)

        store = session.state.store
        assert [0, 1, 1] == [store.facts[i].reads for i in (1, 2, 3)]

    def test_the_query_fixture_answers_each_query_from_the_top_of_the_ranking(self) -> None:
        scenario = load_scenario(str(Path(__file__).parent / "fixtures" / "dana-queries.toml"))
        session = Session(scenario.policies)

        session.execute_all(scenario.steps)

        # At t=6 each score is importance x 0.5 ** 1.5 (no reads yet): order 0.7 and
        # name 0.9 lead; the second query comes after name and order were read once.
        queried = [e for e in session.run.events if isinstance(e, Queried)]
        assert [(1, 3), (1,)] == [q.results for q in queried]

    def test_an_episode_step(self) -> None:
        text = CONSOLIDATION + '[[step]]\nepisode = "it happened"\n'

        assert (RecordEpisode("it happened"),) == parse_scenario(text, "s").steps

    def test_a_consolidate_step(self) -> None:
        text = CONSOLIDATION + "[[step]]\nconsolidate = true\n"

        assert (Consolidate(),) == parse_scenario(text, "s").steps

    def test_steps_keep_their_order(self) -> None:
        text = ALL + TURN + "[[step]]\nadvance = 1\n" + '[[step]]\nepisode = "e"\n'

        assert [AddTurn, AdvanceClock, RecordEpisode] == [
            type(s) for s in parse_scenario(text, "s").steps
        ]


class TestMalformed:
    def test_a_missing_file_is_named(self) -> None:
        with pytest.raises(
            BadInput, match=r"^nope\.toml: no such scenario file, and not a shipped"
        ):
            load_scenario("nope.toml")

    def test_a_directory_is_not_a_scenario_file(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match="is a directory, not a scenario file"):
            load_scenario(str(tmp_path))

    def test_an_unreadable_file_is_named(self, tmp_path: Path) -> None:
        path = tmp_path / "latin.toml"
        path.write_bytes(b"# caf\xe9\n")

        with pytest.raises(BadInput, match=r"latin\.toml: cannot read it"):
            load_scenario(str(path))

    def test_invalid_toml_is_named_with_the_file(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, "[compaction\npolicy = 1\n")

        assert message.startswith(f"{path}: not valid TOML:")

    def test_an_unknown_step_kind_is_named_with_file_and_step(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, COMPACTION + TURN + '[[step]]\nspeak = "hi"\n')

        assert message.startswith(f"{path}: step 2: name exactly one of turn, advance, write")

    def test_an_unknown_step_kind_says_none_was_found(self, tmp_path: Path) -> None:
        _, message = _refusal(tmp_path, '[[step]]\nspeak = "hi"\n')

        assert message.endswith("found none")

    def test_two_kinds_in_one_step_are_named(self, tmp_path: Path) -> None:
        step = '[[step]]\nturn = "user"\ntext = "x"\nadvance = 3\n'
        path, message = _refusal(tmp_path, COMPACTION + TURN + step)

        assert (
            f"{path}: step 2: name exactly one of turn, advance, write, read, query, "
            "episode, consolidate, recall, block, edit, found ['turn', 'advance']"
        ) == message

    def test_an_unknown_field_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, COMPACTION + TURN + 'mood = "happy"\n')

        assert f"{path}: step 1: unknown parameter mood" == message

    def test_a_missing_field_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, COMPACTION + '[[step]]\nturn = "user"\n')

        assert f"{path}: step 1: missing parameter text" == message

    @pytest.mark.parametrize(
        ("step", "problem"),
        [
            ('turn = 3\ntext = "x"', "turn must be a string, got 3"),
            ('turn = "user"\ntext = ["x"]', "text must be a string, got ['x']"),
            ('turn = "user"\ntext = "x"\nsalient = "yes"', "salient must be true or false"),
            ("advance = -1", "advance must be a number in [0, inf), got -1"),
            ('advance = "soon"', "advance must be a number in [0, inf), got 'soon'"),
            ('write = "k"\ntext = "x"\nimportance = 1.5', "importance must be a number in [0, 1]"),
            ('write = "k"\ntext = "x"\nimportance = "high"', "importance must be a number"),
            (
                'write = "k"\ntext = "x"\nimportance = 0.5\nsupersedes = 3',
                "supersedes must be a key",
            ),
            (
                'write = "k"\ntext = "x"\nimportance = 0.5\nexpires_at = "soon"',
                "expires_at must be a number in [0, inf), got 'soon'",
            ),
            ("read = true", "read must be a key (a string) or an id, got True"),
            ("read = 1.5", "read must be a key (a string) or an id, got 1.5"),
            ('query = "x"\nk = 0', "k must be an integer >= 1, got 0"),
            ('query = "x"\nk = 1.5', "k must be an integer >= 1, got 1.5"),
            ("query = 3", "query must be a string, got 3"),
            ('query = "x"\nexpect = 3', "expect must be a string, got 3"),
            ("episode = 4", "episode must be a string, got 4"),
            ("consolidate = false", "consolidate must be true"),
        ],
        ids=lambda value: value.split("\n")[-1],
    )
    def test_a_field_of_the_wrong_type_is_named_with_file_and_step(
        self, tmp_path: Path, step: str, problem: str
    ) -> None:
        path, message = _refusal(tmp_path, ALL + TURN + f"[[step]]\n{step}\n")

        assert message.startswith(f"{path}: step 2: {problem}")

    @pytest.mark.parametrize(
        ("header", "step", "axis"),
        [
            (FORGETTING, TURN, "compaction"),
            (COMPACTION, '[[step]]\nwrite = "k"\ntext = "x"\nimportance = 0.5\n', "forgetting"),
            (COMPACTION, '[[step]]\nread = "k"\n', "forgetting"),
            (COMPACTION, '[[step]]\nquery = "k"\n', "forgetting"),
            (COMPACTION, '[[step]]\nepisode = "e"\n', "consolidation"),
            (COMPACTION, "[[step]]\nconsolidate = true\n", "consolidation"),
        ],
        ids=["turn", "write", "read", "query", "episode", "consolidate"],
    )
    def test_a_step_needing_a_missing_policy_is_named(
        self, tmp_path: Path, header: str, step: str, axis: str
    ) -> None:
        kind = step.removeprefix("[[step]]\n").split(" ", maxsplit=1)[0]

        path, message = _refusal(tmp_path, header + step)

        assert f"{path}: step 1: a {kind} step needs a [{axis}] policy in the header" == message

    def test_an_advance_step_needs_no_policy(self, tmp_path: Path) -> None:
        path = _file(tmp_path, "[[step]]\nadvance = 3\n")

        assert (AdvanceClock(3.0),) == load_scenario(str(path)).steps

    def test_an_unknown_policy_name_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, '[compaction]\npolicy = "sliding"\nbudget = 4\n')

        assert (
            f"{path}: [compaction] policy must be one of {KNOWN}, got 'sliding': "
            "did you mean 'sliding-window'?"
        ) == message

    def test_a_policy_name_that_is_not_a_string_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, '[compaction]\npolicy = ["tiered"]\nbudget = 4\n')

        assert message.startswith(f"{path}: [compaction] policy must be one of {KNOWN}")

    def test_a_policy_number_that_is_a_string_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, FORGETTING + 'half_life = "4"\n')

        assert message.startswith(f"{path}: [forgetting]: half_life must be a number")

    def test_an_impossible_policy_parameter_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, '[compaction]\npolicy = "tiered"\nbudget = 0\n')

        assert f"{path}: [compaction]: budget must be an integer >= 1, got 0" == message

    def test_an_unknown_policy_parameter_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, COMPACTION + "budjet = 50\n")

        assert f"{path}: [compaction]: unknown parameter budjet: did you mean budget?" == message

    def test_a_bad_consolidation_rule_is_named(self, tmp_path: Path) -> None:
        rule = '[[consolidation.rule]]\npattern = "("\nprocedural = "x"\n'
        path, message = _refusal(tmp_path, FORGETTING + CONSOLIDATION + rule)

        assert message.startswith(f"{path}: [consolidation] rule 1: pattern is not a regular")

    def test_an_unknown_section_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, COMPACTION + "[colours]\nred = 1\n")

        assert f"{path}: unknown section colours" == message

    def test_an_unknown_header_field_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, '[scenario]\nauthor = "me"\n' + COMPACTION)

        assert f"{path}: [scenario]: unknown parameter author" == message

    def test_a_header_that_is_not_a_table_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, 'scenario = "mine"\n' + COMPACTION)

        assert f"{path}: [scenario] must be a table" == message

    def test_steps_that_are_not_an_array_of_tables_are_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, COMPACTION + '[step]\nturn = "user"\ntext = "x"\n')

        assert f"{path}: steps are written as [[step]] tables" == message

    def test_a_step_that_is_not_a_table_is_named(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, "step = [1]\n")

        assert f"{path}: step 1: must be a table" == message

    def test_parse_names_the_source_it_is_given(self) -> None:
        with pytest.raises(BadInput, match=r"^pasted: step 1: missing parameter text$"):
            parse_scenario(COMPACTION + '[[step]]\nturn = "user"\n', "pasted")


class TestUnreadableToml:
    @pytest.mark.parametrize(
        "text",
        ["[compaction]\npolicy = 'tiered'\nbudget = " + "9" * 5000, "a = " + "[" * 100_000],
        ids=["huge-integer", "deep-nesting"],
    )
    def test_what_python_cannot_read_is_bad_input_naming_the_file(self, text: str) -> None:
        with pytest.raises(BadInput, match=r"^big\.toml: "):
            parse_scenario(text, "big.toml")


class TestARecordedRunGivenForAScenario:
    """``run`` and ``bench`` take a scenario: a recorded run given instead is named as one."""

    EXPECTED = (
        "not a scenario: this takes a shipped scenario or a TOML scenario file "
        "(show, timeline, diff and fork open a recorded run)"
    )

    @pytest.mark.parametrize(
        ("name", "what"), [("r.jsonl", "a run file"), ("r.db", "a store of runs (SQLite)")]
    )
    def test_a_run_is_named_as_a_run(self, tmp_path: Path, name: str, what: str) -> None:
        path = tmp_path / name
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        save_run(session, path, scenario.name)

        with pytest.raises(BadInput) as refused:
            load_scenario(str(path))
        assert f"{path}: {what}, {self.EXPECTED}" == str(refused.value)

    def test_json_that_is_not_a_run_is_still_read_as_toml(self, tmp_path: Path) -> None:
        path = _file(tmp_path, '{"role": "user", "content": "hi"}\n', "chat.jsonl")

        with pytest.raises(BadInput, match="not valid TOML"):
            load_scenario(str(path))


class TestMeasuredTurns:
    def test_a_turn_may_say_what_it_costs(self) -> None:
        text = COMPACTION + '[[step]]\nturn = "user"\ntext = "hello there"\ntokens = 96\n'
        assert (AddTurn("user", "hello there", tokens=96),) == parse_scenario(text, "p.toml").steps

    @pytest.mark.parametrize(
        ("tokens", "message"),
        [
            ("-1", "p.toml: step 1: tokens must be an integer in 0..1099511627776, got -1"),
            ('"96"', "p.toml: step 1: tokens must be an integer in 0..1099511627776, got '96'"),
            ("true", "p.toml: step 1: tokens must be an integer in 0..1099511627776, got True"),
            (
                str(2**40 + 1),
                "p.toml: step 1: tokens must be an integer in 0..1099511627776, got 1099511627777",
            ),
        ],
    )
    def test_a_malformed_count_is_named(self, tokens: str, message: str) -> None:
        text = COMPACTION + f'[[step]]\nturn = "user"\ntext = "hi"\ntokens = {tokens}\n'
        with pytest.raises(BadInput) as caught:
            parse_scenario(text, "p.toml")
        assert message == str(caught.value)

    def test_only_a_turn_has_tokens(self) -> None:
        text = FORGETTING + '[[step]]\nepisode = "x"\ntokens = 3\n'
        with pytest.raises(BadInput, match=r"^p\.toml: step 1: unknown parameter tokens"):
            parse_scenario(text, "p.toml")


class TestProbes:
    def test_a_probe_has_its_text_and_first_turn(self) -> None:
        text = COMPACTION + '[[probe]]\ntext = "$180.00"\nfrom = 8\n' + TURN
        assert (Probe("$180.00", 8),) == parse_scenario(text, "p.toml").probes

    def test_a_scenario_without_probes_has_none(self) -> None:
        assert () == parse_scenario(COMPACTION + TURN, "p.toml").probes

    def test_refund_desk_plants_the_refund_and_the_fee(self) -> None:
        expected = (Probe("$180.00", 8), Probe("restocking fee", 5))
        assert expected == load_scenario("refund-desk").probes

    @pytest.mark.parametrize(
        ("probe", "message"),
        [
            ('text = "x"\nfrom = 0', "p.toml: probe 1: from must be an integer >= 1, got 0"),
            ('text = ""\nfrom = 1', "p.toml: probe 1: text must not be empty"),
            ("from = 1", "p.toml: probe 1: missing parameter text"),
            ('text = "x"\nfrom = 1\nuntil = 3', "p.toml: probe 1: unknown parameter until"),
        ],
    )
    def test_a_malformed_probe_is_named(self, probe: str, message: str) -> None:
        with pytest.raises(BadInput) as caught:
            parse_scenario(COMPACTION + f"[[probe]]\n{probe}\n" + TURN, "p.toml")
        assert message == str(caught.value)

    def test_a_probe_may_say_its_kind(self) -> None:
        text = COMPACTION + '[[probe]]\ntext = "$180.00"\nfrom = 8\nkind = "number"\n' + TURN
        assert (Probe("$180.00", 8, "number"),) == parse_scenario(text, "p.toml").probes

    @pytest.mark.parametrize(
        ("kind", "message"),
        [
            ('"amount"', "'amount'"),
            ("3", "3"),
        ],
    )
    def test_an_unknown_kind_is_named_with_the_known_ones(self, kind: str, message: str) -> None:
        text = COMPACTION + f'[[probe]]\ntext = "x"\nfrom = 1\nkind = {kind}\n' + TURN
        with pytest.raises(BadInput) as caught:
            parse_scenario(text, "p.toml")
        expected = (
            "p.toml: probe 1: kind must be one of path, command, number, identifier, url, "
            f"constraint, decision, got {message}"
        )
        assert expected == str(caught.value)

    def test_a_scenario_without_kinds_benches_as_the_same_one_with_them(
        self, tmp_path: Path
    ) -> None:
        plain = resources.files("memtape.scenarios").joinpath("refund-desk.toml").read_text()
        typed = plain.replace("\nfrom = 8\n", '\nfrom = 8\nkind = "number"\n')
        typed = typed.replace("\nfrom = 5\n", '\nfrom = 5\nkind = "constraint"\n')
        assert 2 == typed.count("kind = ")
        measured = [
            [
                (
                    {k: v for k, v in result.metrics.items() if k != "decide_us_per_command"},
                    [(loss.probe, loss.turn, loss.at, loss.event) for loss in result.losses],
                )
                for result in run_cells(plan([str(path)], ["tiered", "sliding-window"]))
            ]
            for path in (_file(tmp_path, plain, "plain.toml"), _file(tmp_path, typed, "typed.toml"))
        ]
        assert measured[0] == measured[1]

    def test_a_probe_may_carry_a_question_its_answer_and_evidence(self) -> None:
        probe = 'question = "Where?"\nanswer = "Lisbon"\nfrom = 1\nevidence = [1]\n'
        text = COMPACTION + f'[[probe]]\ntext = "hello"\n{probe}' + TURN
        expected = (Probe("hello", 1, None, "Where?", "Lisbon", (1,)),)
        assert expected == parse_scenario(text, "p.toml").probes

    def test_a_question_probe_may_leave_out_its_text(self) -> None:
        probe = '[[probe]]\nquestion = "Where?"\nanswer = "Lisbon"\nfrom = 1\n'
        expected = (Probe(None, 1, None, "Where?", "Lisbon"),)
        assert expected == parse_scenario(COMPACTION + probe + TURN, "p.toml").probes

    @pytest.mark.parametrize(
        ("probe", "message"),
        [
            (
                'question = "q"\nfrom = 1',
                "p.toml: probe 1: question needs its answer (both or neither)",
            ),
            (
                'answer = "a"\nfrom = 1',
                "p.toml: probe 1: answer needs its question (both or neither)",
            ),
            (
                'answer = "a"\ntext = "x"\nfrom = 1',
                "p.toml: probe 1: answer needs its question (both or neither)",
            ),
            (
                'question = ""\nanswer = "a"\nfrom = 1',
                "p.toml: probe 1: question must not be empty",
            ),
            (
                'question = "q"\nanswer = 3\nfrom = 1',
                "p.toml: probe 1: answer must be a string, got 3",
            ),
            (
                'question = "q"\nanswer = "a"\ntext = ""\nfrom = 1',
                "p.toml: probe 1: text must not be empty",
            ),
            (
                'text = "x"\nfrom = 1\nevidence = 1',
                "p.toml: probe 1: evidence must be a list of turn numbers >= 1, got 1",
            ),
            (
                'text = "x"\nfrom = 1\nevidence = [0]',
                "p.toml: probe 1: evidence must be a list of turn numbers >= 1, got [0]",
            ),
            (
                'text = "x"\nfrom = 1\nevidence = [true]',
                "p.toml: probe 1: evidence must be a list of turn numbers >= 1, got [True]",
            ),
            (
                'text = "x"\nfrom = 1\nevidence = [1, 1]',
                "p.toml: probe 1: evidence names a turn twice: [1, 1]",
            ),
            (
                'text = "x"\nfrom = 1\nevidence = [2]',
                "p.toml: probe 1: evidence turn 2 is past the last turn (1)",
            ),
        ],
    )
    def test_a_malformed_question_probe_is_named(self, probe: str, message: str) -> None:
        with pytest.raises(BadInput) as caught:
            parse_scenario(COMPACTION + f"[[probe]]\n{probe}\n" + TURN, "p.toml")
        assert message == str(caught.value)

    def test_a_probe_without_text_is_not_looked_for_in_the_window(self, tmp_path: Path) -> None:
        """A question probe with no text adds no probe check to a bench; its text twin does."""
        probe = '[[probe]]\nquestion = "Where?"\nanswer = "Lisbon"\nfrom = 1\n'
        path = _file(tmp_path, COMPACTION + probe + TURN, "q.toml")
        (cell,) = run_cells(plan([str(path)], ["tiered"]))
        assert None is cell.metrics["probe_retention"]

    def test_probes_need_a_window(self) -> None:
        with pytest.raises(BadInput, match=r"needs a \[compaction\] policy"):
            parse_scenario(FORGETTING + '[[probe]]\ntext = "x"\nfrom = 1\n', "p.toml")

    def test_probes_must_be_tables(self) -> None:
        with pytest.raises(BadInput, match=r"^p\.toml: probes are written as \[\[probe\]\] tables"):
            parse_scenario('probe = "x"\n' + COMPACTION, "p.toml")


@pytest.mark.parametrize(
    ("target", "expected"),
    [("refund-desk", True), ("mine.toml", True), ("run.jsonl", False), ("runs.db#2", False)],
)
def test_a_scenario_is_a_shipped_name_or_a_toml_file(target: str, expected: bool) -> None:
    assert expected == is_scenario(target)


_IMPORTED = """
[scenario]
name = "imported"

[import]
file = "s.jsonl"
calls_in = 1
left_out = { progress = 2 }

[compaction]
policy = "tiered"
budget = 40

[[step]]
turn = "user"
text = "hi"

[[step]]
turn = "assistant"
text = "hello"
usage = { input = 4, output = 96, cache_read = 13027, cache_write = 1812 }
"""


class TestImportedScenarios:
    def test_the_import_table_is_kept_as_data(self) -> None:
        scenario = parse_scenario(_IMPORTED, "s.toml")
        assert {"file": "s.jsonl", "calls_in": 1, "left_out": {"progress": 2}} == scenario.imported

    def test_a_turn_s_usage_is_kept_by_its_turn_number_beside_the_command(self) -> None:
        scenario = parse_scenario(_IMPORTED, "s.toml")
        assert {2: Usage(4, 96, 13027, 1812)} == dict(scenario.usage)
        assert AddTurn("assistant", "hello") == scenario.steps[1]

    def test_an_imported_scenario_stays_a_value(self) -> None:
        """Hashable and equal to itself read again, as every scenario is (a bench caches
        them)."""
        first, again = (parse_scenario(_IMPORTED, "s.toml") for _ in range(2))
        assert (first, hash(first)) == (again, hash(again))

    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_scenario_not_imported_has_neither(self, name: str) -> None:
        scenario = load_scenario(name)
        assert (None, {}) == (scenario.imported, dict(scenario.usage))

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            (
                (_IMPORTED, 'import = 3\n[[step]]\nturn = "user"\ntext = "hi"'),
                r"\[import\] must be",
            ),
            (
                ("cache_write = 1812", "cache_written = 1"),
                "step 2: usage: unknown key 'cache_written'",
            ),
            (("output = 96", "output = -1"), "step 2: usage.output must be an integer >= 0"),
            (("usage = {", "usage = 3 #"), "step 2: usage must be a table of token counts"),
            (('turn = "user"', "advance = 1\nusage = {}"), "step 1: usage belongs to a turn step"),
        ],
    )
    def test_a_malformed_one_is_refused_naming_its_place(
        self, edit: tuple[str, str], message: str
    ) -> None:
        with pytest.raises(BadInput, match=message):
            parse_scenario(_IMPORTED.replace(*edit, 1), "s.toml")


PRICED = """
[cost]
model = "gpt-5"

[compaction]
policy = "none"
budget = 100

[[step]]
turn = "user"
text = "hello"
"""


class TestCost:
    def test_the_cost_table_names_the_priced_model_and_its_ttl(self, tmp_path: Path) -> None:
        text = PRICED.replace('"gpt-5"', '"gpt-5"\nttl = "1h"\nprefix = 300\nwarm = true')
        assert Cost("gpt-5", "1h", 300, warm=True) == load_scenario(str(_file(tmp_path, text))).cost

    @pytest.mark.parametrize(
        ("change", "problem"),
        [
            ('"gpt-5"\nttl = "10m"', "ttl must be one of 5m, 1h, got '10m'"),
            (
                '"gpt-5"\nprefix = -1',
                "prefix must be an integer in 0..1099511627776 (the most a text may count), got -1",
            ),
            (
                '"gpt-5"\nprefix = 1099511627777',
                "prefix must be at most 1099511627776 (the most a text may count)",
            ),
            ('"gpt-5"\nmodle = "x"', "unknown parameter modle: did you mean model?"),
            ("3", "model must be a model's name, got 3"),
            ('"gpt-5"\nwarm = "yes"', "warm must be true or false, got 'yes'"),
        ],
    )
    def test_a_bad_cost_table_is_refused_naming_the_key(
        self, tmp_path: Path, change: str, problem: str
    ) -> None:
        path, refusal = _refusal(tmp_path, PRICED.replace('"gpt-5"', change))
        assert f"{path}: [cost]: {problem}" == refusal

    def test_set_cost_model_prices_a_scenario_without_a_cost_table(self) -> None:
        scenario = with_settings(load_scenario("refund-desk"), ["cost.model=gpt-5"])
        assert Cost("gpt-5") == scenario.cost


BLOCK = '[[block]]\nlabel = "human"\nlimit = 40\nvalue = "Name: Dana."\n'


class TestBlocks:
    def test_block_tables_are_created_before_the_first_step(self, tmp_path: Path) -> None:
        scenario = load_scenario(str(_file(tmp_path, COMPACTION + BLOCK + TURN)))
        assert CreateBlock("human", 40, "Name: Dana.") == scenario.steps[0]

    def test_an_edit_step_reads_its_op_text_and_find(self, tmp_path: Path) -> None:
        step = '[[step]]\nedit = "human"\nop = "find-replace"\nfind = "Dana"\ntext = "Ana"\n'
        scenario = load_scenario(str(_file(tmp_path, COMPACTION + BLOCK + step)))
        assert EditBlock("human", "find-replace", "Ana", "Dana") == scenario.steps[1]

    def test_a_block_step_creates_one_mid_session(self, tmp_path: Path) -> None:
        step = '[[step]]\nblock = "persona"\nlimit = 9\n'
        scenario = load_scenario(str(_file(tmp_path, COMPACTION + TURN + step)))
        assert CreateBlock("persona", 9, "") == scenario.steps[1]

    @pytest.mark.parametrize(
        ("text", "problem"),
        [
            (BLOCK.replace("40", "5"), "block 1: value is 11 characters, over the limit of 5"),
            (BLOCK + BLOCK, "block 2: label 'human' names an earlier block too"),
            (BLOCK.replace("40", "0"), "block 1: limit must be an integer >= 1, got 0"),
            (BLOCK.replace('"human"', '""'), "block 1: label must not be empty"),
            ('block = "human"\n', "memory blocks are written as [[block]] tables"),
        ],
    )
    def test_a_bad_block_table_is_one_line_naming_it(
        self, tmp_path: Path, text: str, problem: str
    ) -> None:
        path, message = _refusal(tmp_path, text + COMPACTION + TURN)
        assert f"{path}: {problem}" == message

    def test_a_block_needs_a_compaction_policy(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, FORGETTING + BLOCK + TURN)
        assert f"{path}: block 1: a memory block needs a [compaction] policy" == message

    @pytest.mark.parametrize(
        ("step", "problem"),
        [
            ('op = "insert"\ntext = "x"\n', "op must be one of replace, append, find-replace"),
            ('op = "find-replace"\ntext = "x"\n', "find a find-replace needs the text to find"),
            ('op = "append"\ntext = "x"\nfind = "y"\n', "unknown parameter find"),
        ],
    )
    def test_a_bad_edit_step_is_one_line_naming_it(
        self, tmp_path: Path, step: str, problem: str
    ) -> None:
        text = COMPACTION + BLOCK + f'[[step]]\nedit = "human"\n{step}'
        path, message = _refusal(tmp_path, text)
        assert message.startswith(f"{path}: step 1: {problem}")

    def test_a_block_table_may_be_read_only(self, tmp_path: Path) -> None:
        text = COMPACTION + BLOCK + "read_only = true\n" + TURN
        scenario = load_scenario(str(_file(tmp_path, text)))
        assert CreateBlock("human", 40, "Name: Dana.", read_only=True) == scenario.steps[0]

    def test_read_only_is_true_or_false(self, tmp_path: Path) -> None:
        path, message = _refusal(tmp_path, BLOCK + 'read_only = "yes"\n' + COMPACTION + TURN)
        assert f"{path}: block 1: read_only must be true or false, got 'yes'" == message

    def test_the_writer_writes_a_read_only_block_that_loads_back(self, tmp_path: Path) -> None:
        text = COMPACTION + BLOCK + "read_only = true\n" + TURN
        scenario = load_scenario(str(_file(tmp_path, text)))
        again = scenario_text("again", "", scenario.policies.params(), scenario.steps)
        assert scenario.steps == load_scenario(str(_file(tmp_path, again, "again.toml"))).steps

    def test_the_writer_writes_block_steps_that_load_back(self, tmp_path: Path) -> None:
        step = '[[step]]\nedit = "human"\nop = "find-replace"\nfind = "Dana"\ntext = "Ana"\n'
        scenario = load_scenario(str(_file(tmp_path, COMPACTION + BLOCK + step)))
        text = scenario_text("again", "", scenario.policies.params(), scenario.steps)
        assert scenario.steps == load_scenario(str(_file(tmp_path, text, "again.toml"))).steps
