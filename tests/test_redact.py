"""memtape.redact: a copy of a run with placeholder texts and the same figures."""

import json
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memtape import redact as redact_module
from memtape.checking import check_file
from memtape.core.commands import AddTurn, Query, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import (
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    FactWritten,
    Queried,
    TurnAdded,
)
from memtape.core.run import Run
from memtape.lab.generate import support_session
from memtape.policies import tokenizers
from memtape.policies.compaction import TieredCompaction
from memtape.policies.forgetting import ImportanceRecencyAccess
from memtape.policies.session import Policies, Session
from memtape.policies.tokenizers import Cl100kBase, O200kBase, Tokenizer, WordCount
from memtape.projections.view import view_data
from memtape.redact import REDACTED, Masks, export_redacted, redact
from memtape.runfiles import LoadedRun, load_run, save_run
from memtape.scenarios import SHIPPED, Scenario, load_scenario, parse_scenario
from tests.agent_session import TURNS
from tests.chained import lines_of, rechained, write_lines


def saved(tmp_path: Path, name: str) -> Path:
    """The run of the shipped scenario ``name``, written to a file."""
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    path = tmp_path / f"{name}.jsonl"
    save_run(session, path, scenario.name)
    return path


def exported(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """The saved run of ``name`` and its redacted copy."""
    source = saved(tmp_path, name)
    out = tmp_path / f"{name}.redacted.jsonl"
    export_redacted(source, out)
    return source, out


def forked(tmp_path: Path) -> Path:
    """refund-desk forked after event 5 with a budget of 30, written to a file."""
    scenario = load_scenario("refund-desk")
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    path = tmp_path / "forked.jsonl"
    origin = {"run": "runs/dana-refund.jsonl", "at": 5, "set": ["compaction.budget=30"]}
    save_run(session.fork(5, ["compaction.budget=30"]), path, "refund-desk", origin=origin)
    return path


def header(path: Path) -> dict[str, Any]:
    """The header line of a run file."""
    data: dict[str, Any] = json.loads(path.read_text("utf-8").splitlines()[0])
    return data


def figures(value: Any) -> Any:
    """A ``show --json`` view with its free texts (``text`` and ``key``) left out."""
    if isinstance(value, dict):
        return {k: figures(v) for k, v in value.items() if k not in {"text", "key"}}
    if isinstance(value, list):
        return [figures(item) for item in value]
    return value


def views(loaded: LoadedRun) -> list[Any]:
    """What ``memtape show RUN --at N --json`` prints, at every position N of the run."""
    session = loaded.session
    run = session.run
    return [view_data(run.state_at(at), at, session.policies_at(at)) for at in range(len(run) + 1)]


def original_texts(path: Path) -> set[str]:
    """Every free text of a saved run: turns, WARM items, facts and keys, episodes,
    distilled facts and rules, the rules' patterns and templates, the scenario name."""
    loaded = load_run(path)
    texts = {loaded.scenario}
    for event in loaded.session.run.events:
        if isinstance(event, TurnAdded | EpisodeRecorded):
            texts.add(event.text)
        elif isinstance(event, CompactionTriggered):
            texts.update(item.text for item in event.warm)
        elif isinstance(event, FactWritten):
            texts.update((event.key, event.text))
        elif isinstance(event, Consolidated):
            texts.update(f.key for f in event.semantic)
            texts.update(f.text for f in event.semantic)
            texts.update(r.text for r in event.procedural)
    for rule in header(path)["policies"].get("consolidation", {}).get("rule", []):
        texts.update((rule["pattern"], rule.get("procedural", "")))
        texts.update(rule.get("semantic", {}).get(name, "") for name in ("key", "text"))
    return texts - {""}


def rules_masked(policies: dict[str, Any]) -> dict[str, Any]:
    """The policies' tables with each rule's pattern and procedural text left out."""
    for rule in policies.get("consolidation", {}).get("rule", []):
        del rule["pattern"]
        rule.pop("procedural", None)
    return policies


def words(text: str) -> int:
    return WordCount().count(text)


class TestFiguresStayTheSame:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_every_figure_of_show_is_the_same_at_every_position(
        self, tmp_path: Path, name: str
    ) -> None:
        """Meter, budget, over, tier tokens, dropped turns, ranking scores and factors,
        retired and evicted facts, the clock: equal to the original's at every point."""
        source, out = exported(tmp_path, name)

        assert [figures(v) for v in views(load_run(source))] == [
            figures(v) for v in views(load_run(out))
        ]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_the_copy_has_the_same_shape_of_events(self, tmp_path: Path, name: str) -> None:
        """The same number of events in the same steps, of the same types."""
        source, out = exported(tmp_path, name)
        original, copy = load_run(source).session.run, load_run(out).session.run

        assert [
            (type(e).__name__, original.step_of(at)) for at, e in enumerate(original.events, 1)
        ] == [(type(e).__name__, copy.step_of(at)) for at, e in enumerate(copy.events, 1)]

    def test_each_turn_placeholder_measures_the_recorded_tokens(self, tmp_path: Path) -> None:
        """Re-measuring a redacted "{role}: {text}" gives the tokens the original turn cost."""
        _, out = exported(tmp_path, "refund-desk")
        turns = [e for e in load_run(out).session.run.events if isinstance(e, TurnAdded)]

        assert [t.tokens for t in turns] == [words(f"{t.role}: {t.text}") for t in turns]

    def test_each_warm_placeholder_measures_the_recorded_tokens(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "refund-desk")
        warm = [
            item
            for e in load_run(out).session.run.events
            if isinstance(e, CompactionTriggered)
            for item in e.warm
        ]

        assert (True, [i.tokens for i in warm]) == (bool(warm), [words(i.text) for i in warm])

    def test_a_forked_run_keeps_its_epochs_and_figures(self, tmp_path: Path) -> None:
        source = forked(tmp_path)
        out = tmp_path / "forked.redacted.jsonl"
        export_redacted(source, out)
        original, copy = load_run(source), load_run(out)

        assert (
            [(e.start, e.policies.params()) for e in original.session.epochs],
            [figures(v) for v in views(original)],
        ) == (
            [(e.start, e.policies.params()) for e in copy.session.epochs],
            [figures(v) for v in views(copy)],
        )


class TestNoOriginalTextRemains:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_no_free_text_of_the_run_is_in_the_copy(self, tmp_path: Path, name: str) -> None:
        source, out = exported(tmp_path, name)
        content = out.read_text("utf-8")
        texts = original_texts(source)

        assert [] == [t for t in sorted(texts) if json.dumps(t, ensure_ascii=False) in content]
        assert [] == [
            t for t in sorted(texts) if json.dumps(t, ensure_ascii=False)[1:-1] in content
        ]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_the_seed_data_is_not_in_the_copy(self, tmp_path: Path, name: str) -> None:
        _, out = exported(tmp_path, name)
        content = out.read_bytes()
        seeds = ["Dana", "ORD-3300", "$180.00", "$200", "Globex", "restocking", "name is"]

        assert [] == [s for s in seeds if s.encode("utf-8") in content]

    def test_the_texts_were_there_to_find(self, tmp_path: Path) -> None:
        """The same search finds the texts in the source (the search can fail)."""
        source = saved(tmp_path, "sleep-pass")
        content = source.read_text("utf-8")
        texts = original_texts(source)

        assert sorted(texts) == [
            t for t in sorted(texts) if json.dumps(t, ensure_ascii=False)[1:-1] in content
        ]

    def test_the_origin_of_a_fork_is_redacted_but_its_position_kept(self, tmp_path: Path) -> None:
        out = tmp_path / "forked.redacted.jsonl"
        export_redacted(forked(tmp_path), out)
        origin = header(out)["forked_from"]

        assert (5, False, False) == (
            origin["at"],
            "dana-refund" in out.read_text("utf-8"),
            "compaction.budget=30" in origin["set"],
        )


class TestPlaceholders:
    def test_the_same_key_gets_the_same_placeholder_everywhere(self, tmp_path: Path) -> None:
        """Both writes on "contact" (the second supersedes the first) and the commands agree."""
        _, out = exported(tmp_path, "dana-facts")
        run = load_run(out).session.run
        keys = [e.key for e in run.events if isinstance(e, FactWritten)]
        commands = [c for c in run.commands if isinstance(c, WriteFact)]

        assert (keys[1], keys[1], [c.key for c in commands]) == (
            keys[4],
            commands[4].supersedes,
            keys,
        )

    def test_different_texts_get_different_placeholders(self, tmp_path: Path) -> None:
        source, out = exported(tmp_path, "dana-facts")
        facts = [e for e in load_run(source).session.run.events if isinstance(e, FactWritten)]
        copies = [e for e in load_run(out).session.run.events if isinstance(e, FactWritten)]

        assert (
            len({f.key for f in facts}),
            len({f.text for f in facts}),
        ) == (len({c.key for c in copies}), len({c.text for c in copies}))

    def test_a_warm_item_reads_as_the_turn_it_stands_for(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "refund-desk")
        events = load_run(out).session.run.events
        turns = {e.turn: e.text for e in events if isinstance(e, TurnAdded)}
        warm = [i for e in events if isinstance(e, CompactionTriggered) for i in e.warm]

        assert [turns[i.turn] for i in warm] == [i.text for i in warm]

    def test_a_distilled_fact_reads_as_the_fact_it_wrote(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "sleep-pass")
        events = load_run(out).session.run.events
        semantic = [f for e in events if isinstance(e, Consolidated) for f in e.semantic]
        written = [e for e in events if isinstance(e, FactWritten)]

        assert [(f.key, f.text) for f in semantic] == [(w.key, w.text) for w in written]

    def test_a_placeholder_has_one_word_per_word_of_the_text(self, tmp_path: Path) -> None:
        source, out = exported(tmp_path, "sleep-pass")
        episodes = [
            e for e in load_run(source).session.run.events if isinstance(e, EpisodeRecorded)
        ]
        copies = [e for e in load_run(out).session.run.events if isinstance(e, EpisodeRecorded)]

        assert [words(e.text) for e in episodes] == [words(c.text) for c in copies]

    def test_roles_are_kept(self, tmp_path: Path) -> None:
        """A role is not free text: the policy measures and routes on it."""
        source, out = exported(tmp_path, "refund-desk")

        assert [
            c.role for c in load_run(source).session.run.commands if isinstance(c, AddTurn)
        ] == [c.role for c in load_run(out).session.run.commands if isinstance(c, AddTurn)]

    def test_the_tiered_gist_is_kept_word_for_word(self, tmp_path: Path) -> None:
        """The gist only counts the COLD turns; the gist invariant reads it."""
        source = tmp_path / "tight.jsonl"
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies.with_settings(["compaction.budget=25"]))
        session.execute_all(scenario.steps)
        save_run(session, source, "tight")
        out = tmp_path / "tight.redacted.jsonl"
        export_redacted(source, out)

        assert "[3 earlier turns summarized]" == load_run(out).session.state.window.gist

    def test_any_other_gist_is_a_placeholder(self, tmp_path: Path) -> None:
        """A gist a policy wrote from the turns (here by hand) is free text."""
        source = tmp_path / "tight.jsonl"
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies.with_settings(["compaction.budget=25"]))
        session.execute_all(scenario.steps)
        save_run(session, source, "tight")
        lines = [json.loads(line) for line in source.read_text("utf-8").splitlines()]
        for line in lines[1:]:
            if line["type"] == "CompactionTriggered" and line["event"]["gist"]:
                line["event"]["gist"] = "Dana wants her $180.00 refund"
        source.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        out = tmp_path / "tight.redacted.jsonl"
        export_redacted(source, out)
        gist = load_run(out).session.state.window.gist

        assert (5, False) == (words(gist), "Dana" in out.read_text("utf-8"))


class TestQueries:
    def _copies(self, tmp_path: Path) -> tuple[Run, Run]:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute_all(
            [
                WriteFact("name", "the user is Dana", 0.9),
                WriteFact("order", "ORD3300", 0.5),
                Query("what is the user called", "name", 2),
            ]
        )
        source = tmp_path / "queried.jsonl"
        save_run(session, source, "queried")
        out = tmp_path / "queried.redacted.jsonl"
        export_redacted(source, out)
        return load_run(source).session.run, load_run(out).session.run

    def test_the_query_text_and_expected_key_are_placeholders(self, tmp_path: Path) -> None:
        _, copy = self._copies(tmp_path)
        (queried,) = [e for e in copy.events if isinstance(e, Queried)]
        (command,) = [c for c in copy.commands if isinstance(c, Query)]
        (key,) = {e.key for e in copy.events if isinstance(e, FactWritten) and e.id == 1}

        assert (5, key, key) == (words(queried.text), queried.key, command.key)
        assert "what is the user called" not in (queried.text, command.text)

    def test_the_results_and_scores_are_kept(self, tmp_path: Path) -> None:
        source, copy = self._copies(tmp_path)
        (before,) = [e for e in source.events if isinstance(e, Queried)]
        (after,) = [e for e in copy.events if isinstance(e, Queried)]

        assert (before.k, before.results, before.scores) == (after.k, after.results, after.scores)


class TestHeader:
    def test_the_header_says_the_run_is_redacted(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "refund-desk")

        assert True is header(out)[REDACTED]

    def test_the_scenario_name_is_redacted(self, tmp_path: Path) -> None:
        """A user's scenario name is often a customer's; the shipped ones are redacted alike."""
        _, out = exported(tmp_path, "dana-facts")
        name = header(out)["scenario"]

        assert (1, False) == (words(name), "dana" in name)

    @pytest.mark.parametrize("name", SHIPPED)
    def test_policy_names_tokenizer_and_numbers_are_kept(self, tmp_path: Path, name: str) -> None:
        source, out = exported(tmp_path, name)

        assert figures(rules_masked(header(source)["policies"])) == figures(
            rules_masked(header(out)["policies"])
        )

    def test_rule_patterns_and_templates_are_placeholders(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "sleep-pass")
        rules = header(out)["policies"]["consolidation"]["rule"]
        first, second = rules
        semantic = first["semantic"]

        assert [[3, 1, 3], [2, 10]] == [
            [words(first["pattern"]), words(semantic["key"]), words(semantic["text"])],
            [words(second["pattern"]), words(second["procedural"])],
        ]

    def test_the_copy_loads_with_its_policies(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "sleep-pass")
        policies = load_run(out).session.policies

        assert (True, True) == (
            policies.forgetting is not None,
            policies.consolidation is not None,
        )


class TestDeterminism:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_redacting_twice_gives_the_same_bytes(self, tmp_path: Path, name: str) -> None:
        source, out = exported(tmp_path, name)
        again = tmp_path / "again.jsonl"
        export_redacted(source, again)

        assert out.read_bytes() == again.read_bytes()

    def test_by_default_a_placeholder_depends_on_the_whole_run(self, tmp_path: Path) -> None:
        """A reader cannot confirm a guess of one text by hashing it alone."""
        source = saved(tmp_path, "refund-desk")
        scenario = load_scenario("refund-desk")
        other = Session(scenario.policies)
        other.execute_all([*scenario.steps[:-1], AddTurn("user", "Thanks, bye.")])
        changed = tmp_path / "changed.jsonl"
        save_run(other, changed, "refund-desk")

        first = redact(source).run.events[0]
        second = redact(changed).run.events[0]
        assert (True, False) == (
            isinstance(first, TurnAdded) and isinstance(second, TurnAdded),
            first == second,
        )

    def test_a_shared_secret_makes_placeholders_agree_across_runs(self, tmp_path: Path) -> None:
        source, fork = saved(tmp_path, "refund-desk"), forked(tmp_path)
        secret = b"one bug report"

        assert (
            redact(source, secret=secret).run.events[:5]
            == (redact(fork, secret=secret).run.events[:5])
        )


class TestSourceAndCopy:
    def test_the_source_is_not_changed(self, tmp_path: Path) -> None:
        source = saved(tmp_path, "sleep-pass")
        before = source.read_bytes()
        export_redacted(source, tmp_path / "copy.jsonl")

        assert before == source.read_bytes()

    def test_the_copy_cannot_replace_the_source(self, tmp_path: Path) -> None:
        source = saved(tmp_path, "dana-facts")
        before = source.read_bytes()

        with pytest.raises(BadInput, match="is the run being redacted"):
            export_redacted(source, tmp_path / "." / source.name)
        assert before == source.read_bytes()

    def test_the_written_copy_is_the_one_in_memory(self, tmp_path: Path) -> None:
        source, out = exported(tmp_path, "refund-desk")

        assert redact(source).run.events == load_run(out).session.run.events

    def test_a_torn_tail_is_left_out_and_said(self, tmp_path: Path) -> None:
        source = saved(tmp_path, "dana-facts")
        lines = source.read_text("utf-8").splitlines(keepends=True)
        source.write_text("".join(lines[:-1]) + lines[-1][:20], "utf-8")
        out = tmp_path / "copy.jsonl"
        redacted = export_redacted(source, out)
        whole = load_run(source)

        assert (len(whole.session.run), True, whole.torn) == (
            len(load_run(out).session.run),
            bool(whole.torn),
            redacted.torn,
        )

    def test_a_file_that_is_not_a_run_is_bad_input_and_nothing_is_written(
        self, tmp_path: Path
    ) -> None:
        source = tmp_path / "notes.jsonl"
        source.write_text("hello\n", "utf-8")
        out = tmp_path / "copy.jsonl"

        with pytest.raises(BadInput, match=r"notes\.jsonl"):
            export_redacted(source, out)
        assert False is out.exists()


@attrs.frozen
class Characters:
    """A tokenizer counting characters, for which word placeholders do not work."""

    name: ClassVar[str] = "chars"

    def count(self, text: str) -> int:
        return len(text)


class TestTokenizers:
    def test_a_tokenizer_the_placeholders_cannot_match_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(tokenizers.TOKENIZERS, Characters.name, Characters())
        session = Session(Policies(compaction=TieredCompaction(40, 2, Characters())))
        session.execute(AddTurn("user", "Hi, I'm Dana."))
        source = tmp_path / "chars.jsonl"
        save_run(session, source, "chars")
        out = tmp_path / "copy.jsonl"

        with pytest.raises(BadInput, match="'chars' tokenizer"):
            export_redacted(source, out)
        assert False is out.exists()


class TestCheckingARedactedRun:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_it_is_clean_chained_and_not_re_decided(self, tmp_path: Path, name: str) -> None:
        _, out = exported(tmp_path, name)
        report = check_file(out)

        assert (True, (), False, True, True) == (
            report.ok,
            report.problems,
            report.redecided,
            report.redacted,
            report.chained,
        )

    def test_its_chain_is_its_own(self, tmp_path: Path) -> None:
        """The copy is chained afresh over its placeholders, not given the source's head."""
        source, out = exported(tmp_path, "dana-facts")

        assert lines_of(source)[0]["chain"] != lines_of(out)[0]["chain"]

    def test_its_line_says_it_cannot_be_re_decided(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "refund-desk")

        assert [
            f"{out}: ok: 15 events in 10 steps fold and keep every invariant; its chain holds, "
            "unsigned; redacted, so it cannot be re-decided (its texts and rules are placeholders)"
        ] == check_file(out).lines()

    def test_a_forked_copy_is_clean(self, tmp_path: Path) -> None:
        out = tmp_path / "forked.redacted.jsonl"
        export_redacted(forked(tmp_path), out)

        assert (True, False) == (check_file(out).ok, check_file(out).redecided)

    def test_invariants_are_still_checked(self, tmp_path: Path) -> None:
        """A hand-edited eviction score in a redacted copy is a problem, and the note follows."""
        _, out = exported(tmp_path, "dana-facts")
        lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
        evicted = next(i for i, line in enumerate(lines) if line.get("type") == "Evicted")
        lines[evicted]["event"]["score"] = 0.5
        write_lines(out, rechained(lines))
        report = check_file(out)

        assert (["eviction"], f"{out}: redacted, so it cannot be re-decided") == (
            [p.invariant for p in report.problems],
            report.lines()[-1].split(" (")[0],
        )

    def test_without_the_mark_the_placeholder_rules_fail_to_re_decide(self, tmp_path: Path) -> None:
        """Why the mark matters: the redacted rules no longer distill the redacted episodes."""
        _, out = exported(tmp_path, "sleep-pass")
        lines = lines_of(out)
        del lines[0][REDACTED]
        write_lines(out, rechained(lines))
        report = check_file(out)

        assert (["re-decide"], True, False) == (
            [p.invariant for p in report.problems],
            report.redecided,
            report.redacted,
        )


class TestOtherCompactionPolicies:
    @staticmethod
    def _saved(tmp_path: Path, settings: list[str]) -> Path:
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies.with_settings(settings))
        session.execute_all(scenario.steps)
        path = tmp_path / "other.jsonl"
        save_run(session, path, scenario.name)
        return path

    def test_a_rolling_summary_keeps_its_figures_and_its_summarizer(self, tmp_path: Path) -> None:
        source = self._saved(tmp_path, ["compaction.policy=rolling-summary"])
        out = tmp_path / "copy.jsonl"
        export_redacted(source, out)

        assert "salient" == header(out)["policies"]["compaction"]["summarizer"]
        assert figures(views(load_run(source))) == figures(views(load_run(out)))


BYTE_PAIRS: tuple[Tokenizer, ...] = (Cl100kBase(), O200kBase())


def measured_by(tmp_path: Path, scenario: Scenario, tokenizer: str) -> Path:
    """The run of ``scenario`` with its compaction measured by ``tokenizer``, in a file."""
    session = Session(scenario.policies.with_settings([f"compaction.tokenizer={tokenizer}"]))
    session.execute_all(scenario.steps)
    path = tmp_path / f"{tokenizer}.jsonl"
    save_run(session, path, scenario.name)
    return path


def support(turns: int) -> Scenario:
    """A generated support session of ``turns`` turns (tool results, orders, chatter)."""
    return parse_scenario(support_session(turns, 7), "support")


class TestBytePairRuns:
    @pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base"])
    @pytest.mark.parametrize("scenario", ["refund-desk", "support"])
    def test_every_figure_is_the_same_at_every_position(
        self, tmp_path: Path, tokenizer: str, scenario: str
    ) -> None:
        run = support(300) if scenario == "support" else load_scenario(scenario)
        source = measured_by(tmp_path, run, tokenizer)
        out = tmp_path / "copy.jsonl"
        export_redacted(source, out)
        report = check_file(out)

        assert [figures(v) for v in views(load_run(source))] == [
            figures(v) for v in views(load_run(out))
        ]
        assert (True, (), False, True) == (
            report.ok,
            report.problems,
            report.redecided,
            report.redacted,
        )

    @pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base"])
    def test_no_free_text_of_the_run_is_in_the_copy(self, tmp_path: Path, tokenizer: str) -> None:
        source = measured_by(tmp_path, load_scenario("refund-desk"), tokenizer)
        out = tmp_path / "copy.jsonl"
        export_redacted(source, out)
        content = out.read_text("utf-8")

        assert [] == [
            t
            for t in sorted(original_texts(source))
            if json.dumps(t, ensure_ascii=False)[1:-1] in content
        ]

    @pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base"])
    def test_each_turn_measures_its_recorded_tokens_again(
        self, tmp_path: Path, tokenizer: str
    ) -> None:
        source = measured_by(tmp_path, load_scenario("refund-desk"), tokenizer)
        count = tokenizers.tokenizer_named(tokenizer).count
        turns = [e for e in redact(source).run.events if isinstance(e, TurnAdded)]

        assert [t.tokens for t in turns] == [count(f"{t.role}: {t.text}") for t in turns]

    @pytest.mark.parametrize("first", ["cl100k_base", "words"])
    def test_a_run_forked_onto_another_tokenizer_keeps_its_figures(
        self, tmp_path: Path, first: str
    ) -> None:
        """Two tokenizers measured the run: each placeholder keeps the count of each."""
        scenario = support(120)
        session = Session(scenario.policies.with_settings([f"compaction.tokenizer={first}"]))
        session.execute_all(scenario.steps)
        source = tmp_path / "forked.jsonl"
        origin = {"run": "support.jsonl", "at": 60, "set": ["compaction.tokenizer=o200k_base"]}
        fork = session.fork(60, ["compaction.tokenizer=o200k_base"])
        fork.execute_all(scenario.steps[60:])
        save_run(fork, source, "support", origin=origin)
        out = tmp_path / "copy.jsonl"
        export_redacted(source, out)

        assert [counted(figures(v)) for v in views(load_run(source))] == [
            counted(figures(v)) for v in views(load_run(out))
        ]
        assert (True, ()) == (check_file(out).ok, check_file(out).problems)

    def test_redacting_twice_gives_the_same_bytes(self, tmp_path: Path) -> None:
        source = measured_by(tmp_path, load_scenario("refund-desk"), "o200k_base")
        first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
        export_redacted(source, first)
        export_redacted(source, second)

        assert first.read_bytes() == second.read_bytes()


def kept(masks: Masks, tokenizer: Tokenizer, text: str) -> bool:
    """Whether the placeholder of ``text`` counts as ``text`` alone, after a space and in a turn."""
    made = masks.text(text)
    return all(
        tokenizer.count(whole.format(made)) == tokenizer.count(whole.format(text))
        for whole in ("{}", " {}", "user: {}", "assistant: {}")
    )


REFUSAL = "no placeholder keeps the token count of a text under the"


def apart(tokenizer: Tokenizer, text: str) -> int:
    """How many tokens ``text`` alone and after a space are apart."""
    return abs(tokenizer.count(text) - tokenizer.count(f" {text}"))


def placeholder_or_refusal(masks: Masks, text: str) -> str | BadInput:
    """The placeholder of ``text``, or the error refusing it."""
    try:
        return masks.text(text)
    except BadInput as error:
        return error


PINNED_ORDER = [
    "Hi, this is Dana. Can you look up order ORD-3300?",
    "dép",
    "calculator: $200.00 × 0.9 = $180.00 after the fee",
    "お誕生日おめでとう",
    "consolidation",
    "I'm fine, thanks!",
    "42",
    "👌",
    "👍🏻 ok",
    "  two spaces",
    "\nnew line",
    "привет",
    "name",
    "the user wants a refund for the broken kettle",
    "señor café",
    "Größe",
    "\x80\x83",
    "x",
]
"""Texts redacted in this order, one Masks per tokenizer set, before the later heads."""

PINNED: dict[str, dict[str, str]] = {
    "cl100k_base": {
        "Hi, this is Dana. Can you look up order ORD-3300?": (
            "net lem be amo cac ter blo vy dj svm rp aug usu umb oil lua"
        ),
        "calculator: $200.00 × 0.9 = $180.00 after the fee": (
            "las adj bf kn enc cul sla umb crc prt obl bz wis cin j gid how oa fit"
        ),
        "お誕生日おめでとう": "umo hs mu gid svg sex ici cx ash",
        "I'm fine, thanks!": "sen st ks aph boo jun",
        "42": "470",
        "👌": "pij fre",
        "👍🏻 ok": "gdy ipt tap get net std",
        "  two spaces": "kc w kle",
        "\nnew line": "hey ire wer",
        "привет": "rfl wit vb",
        "name": "uv",
        "the user wants a refund for the broken kettle": "img hn oo csv cpt gps rsa day mob",
        "señor café": "nem bar ye",
        "Größe": "asm fil",
        "x": "fun",
    },
    "o200k_base": {
        "Hi, this is Dana. Can you look up order ORD-3300?": (
            "sts low jab joy lk ppt dan mee ef cat nad qi eno ios bf png"
        ),
        "dép": "wyg",
        "calculator: $200.00 × 0.9 = $180.00 after the fee": (
            "tsi ovu nta te nye pkg lav dde bib ony toi ola fab edu zei wai nol eil eng"
        ),
        "お誕生日おめでとう": "ame mw bv psz le yay ful mov",
        "I'm fine, thanks!": "pev bx bev uc ziy",
        "42": "364",
        "👌": "570",
        "👍🏻 ok": "cg gem hag",
        "  two spaces": "pik jac iv",
        "\nnew line": "inh zo ad",
        "привет": "odl",
        "name": "srv",
        "the user wants a refund for the broken kettle": "cak pem mlx blu mv boo htt wan izi",
        "Größe": "tib",
        "\x80\x83": "cko anh elu",
        "x": "lw",
    },
    "both": {
        "Hi, this is Dana. Can you look up order ORD-3300?": (
            "soc did fn por rel das aur mm dex na cis kel org ae rig un"
        ),
        "calculator: $200.00 × 0.9 = $180.00 after the fee": (
            "fol svc kt mut das ba ar pf do act egg car cum leo vr re htt sub hum"
        ),
        "お誕生日おめでとう": "jen egz nz sla avi nak tp auc",
        "I'm fine, thanks!": "n sgr wed cut see",
        "42": "isy",
        "👌": "👇",
        "👍🏻 ok": "👉 pux ien",
        "  two spaces": "cin it gtk",
        "\nnew line": "ons kle way",
        "name": "ctl",
        "the user wants a refund for the broken kettle": "ur sk aw oft tl ni aim xd dam",
        "Größe": "maw",
        "x": "snd",
    },
}
"""The placeholders of ``PINNED_ORDER`` recorded (secret ``b"secret"``) before the later
heads existed; a text missing was refused then."""

TOKENIZER_SETS: dict[str, tuple[Tokenizer, ...]] = {
    "cl100k_base": (Cl100kBase(),),
    "o200k_base": (O200kBase(),),
    "both": BYTE_PAIRS,
}


class TestBytePairPlaceholders:
    @settings(max_examples=40, deadline=None)
    @given(texts=st.lists(st.text(max_size=40), max_size=12))
    @example(texts=["dép", "disproportionate", "dép", "acquaintance", "\x80\x83"])
    @example(texts=["bureaucracy", "développement", "bureaucratic", "overwhelmingly"])
    @pytest.mark.parametrize("tokenizer", BYTE_PAIRS, ids=lambda t: t.name)
    def test_counts_are_kept_and_placeholders_are_injective(
        self, tokenizer: Tokenizer, texts: list[str]
    ) -> None:
        """Every text keeps its counts alone, after a space and in a turn; equal texts get
        equal placeholders and different texts different ones. Only a text that is a head
        alone (one token after a space) three or more tokens apart from itself alone may be
        refused, in one line, once the heads of its shape are taken."""
        masks = Masks(b"secret", (tokenizer,))
        twice = texts + texts
        outcomes = [placeholder_or_refusal(masks, text) for text in twice]
        made = {text: m for text, m in zip(twice, outcomes, strict=True) if isinstance(m, str)}
        refused = {
            t: str(m) for t, m in zip(twice, outcomes, strict=True) if isinstance(m, BadInput)
        }

        assert {} == {
            text: reason
            for text, reason in refused.items()
            if apart(tokenizer, text) < 3
            or tokenizer.count(f" {text}") != 1
            or not reason.startswith(REFUSAL)
            or "\n" in reason
        }
        assert [True] * len(made) == [kept(masks, tokenizer, text) for text in made]
        assert len(made) == len(set(made.values()))
        assert [str(m) for m in outcomes[: len(texts)]] == [str(m) for m in outcomes[len(texts) :]]

    @settings(max_examples=40, deadline=None)
    @given(texts=st.lists(st.text(max_size=40), max_size=12))
    def test_both_encodings_at_once_keep_their_counts_or_refuse(self, texts: list[str]) -> None:
        """A run forked onto the other encoding: the two count many texts differently. A
        placeholder keeps both counts; where none can, the text is refused in one line,
        never given a placeholder of another count."""
        masks = Masks(b"secret", BYTE_PAIRS)
        made: dict[str, str] = {}
        for text in texts:
            outcome = placeholder_or_refusal(masks, text)
            if isinstance(outcome, BadInput):
                assert "no placeholder keeps the token count" in str(outcome)
                continue
            made[text] = outcome
            assert [True, True] == [kept(masks, tokenizer, text) for tokenizer in BYTE_PAIRS]
        assert len(made) == len(set(made.values()))

    @pytest.mark.parametrize("text", ["développement", "bureaucracy"])
    def test_a_text_no_placeholder_can_match_under_both_encodings_is_refused(
        self, text: str
    ) -> None:
        """développement is five cl100k tokens alone and two o200k ones, one after a space
        under each (bureaucracy five and three): no head of the pool, of the later heads
        or of either vocabulary repeats both."""
        with pytest.raises(BadInput) as refused:
            Masks(b"secret", BYTE_PAIRS).text(text)

        assert (
            "no placeholder keeps the token count of a text under the 'cl100k_base' and "
            "'o200k_base' tokenizers"
        ) == str(refused.value)

    def test_a_text_only_a_vocabulary_word_matches_under_both_encodings_is_kept(self) -> None:
        """привет counts differently under the two encodings (four cl100k tokens alone and
        three after a space, two and one under o200k): a word of the vocabularies that
        does the same under both stands in."""
        masks = Masks(b"secret", BYTE_PAIRS)

        assert (True, True, False) == (
            kept(masks, Cl100kBase(), "привет"),
            kept(masks, O200kBase(), "привет"),
            masks.text("привет") == "привет",
        )

    def test_both_encodings_at_once_keep_the_counts_of_ordinary_texts(self) -> None:
        masks = Masks(b"secret", BYTE_PAIRS)
        texts = [
            "Hi, this is Dana. Can you look up order ORD-3300?",
            "calculator: $200.00 × 0.9 = $180.00 after the fee",
            "お誕生日おめでとう",
            "I'm fine, thanks!",
            "42",
        ]

        assert [True] * 10 == [kept(masks, t, text) for text in texts for t in BYTE_PAIRS]

    @pytest.mark.parametrize("text", ["👌", "👌 ok", "ok 👌", "👍🏻", "👍👍"])
    def test_symbols_no_short_letters_match_under_both_encodings_are_kept(self, text: str) -> None:
        """👌 is three cl100k tokens alone and two after a space, one and two under o200k: no
        head of letters or digits has that shape, so another symbol (or pair) of it stands in."""
        masks = Masks(b"secret", BYTE_PAIRS)

        assert [True, True] == [kept(masks, tokenizer, text) for tokenizer in BYTE_PAIRS]
        assert text != masks.text(text)

    @pytest.mark.parametrize("tokenizer", BYTE_PAIRS, ids=lambda t: t.name)
    def test_a_text_that_splits_after_a_space_keeps_both_counts(self, tokenizer: Tokenizer) -> None:
        """A leading number gains a token after a space; a name may lose one."""
        masks = Masks(b"secret", (tokenizer,))
        texts = ["42 is the answer", "Dana called", "  two spaces", "\nnew line", "$180.00"]

        assert [True] * len(texts) == [kept(masks, tokenizer, text) for text in texts]

    @pytest.mark.parametrize(
        "text",
        [
            "dép",
            "consolidation",
            "señor café",
            "déjà Größe",
            "déjà 😀 naïve",
            "dép Việt 你好",
            "\x80\x83",
            "\x80\x9e>{",
            "\x80\x9a\x1fI\x8f9",
            "disproportionate share of refunds",
            "développement durable",
            "acquaintance",
            "overwhelmingly",
        ],
    )
    @pytest.mark.parametrize("tokenizer", BYTE_PAIRS, ids=lambda t: t.name)
    def test_texts_of_rare_shapes_keep_their_counts(self, tokenizer: Tokenizer, text: str) -> None:
        """Under cl100k_base dép is three tokens alone and one after a space (' dép' is one
        token), control bytes two alone and four after one, a long word up to five alone
        and one after a space. Where no short head has the shape under the encoding, a
        later head (a long word, an accented or Cyrillic syllable, punctuation, control
        bytes, a word of the vocabulary) does; either way the counts are kept."""
        masks = Masks(b"secret", (tokenizer,))

        assert (True, False) == (kept(masks, tokenizer, text), masks.text(text) == text)

    @pytest.mark.parametrize("tokenizers", TOKENIZER_SETS, ids=str)
    def test_placeholders_made_before_the_later_heads_do_not_change(self, tokenizers: str) -> None:
        """Earlier redacted copies stay consistent: a text that had a placeholder keeps it,
        even with texts that were refused then (and now are not) redacted among them."""
        masks = Masks(b"secret", TOKENIZER_SETS[tokenizers])
        made = {text: placeholder_or_refusal(masks, text) for text in PINNED_ORDER}

        assert PINNED[tokenizers] == {t: made[t] for t in PINNED_ORDER if t in PINNED[tokenizers]}
        assert [] == [t for t in PINNED_ORDER if isinstance(made[t], BadInput)]

    def test_the_common_path_does_not_search_the_later_heads(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Texts a short head matches never pay for the long search of the later ones."""

        def searched(_: tuple[Tokenizer, ...], group: int) -> None:
            raise AssertionError("the later heads were searched")

        monkeypatch.setattr("memtape.redact._later_heads", searched)
        masks = Masks(b"secret", (Cl100kBase(),))
        texts = list(PINNED["cl100k_base"])

        assert PINNED["cl100k_base"] == {text: masks.text(text) for text in texts}

    def test_a_head_alone_is_refused_once_the_heads_of_its_shape_are_taken(self) -> None:
        """bureaucracy, développement and bureaucratic are five cl100k tokens alone and one
        after a space, and the only heads of that shape: once the first two hold each
        other, the third (never its own placeholder) has none left, and is refused in one
        line rather than given a placeholder of another count."""
        masks = Masks(b"secret", (Cl100kBase(),))
        first = [masks.text("bureaucracy"), masks.text("développement")]
        with pytest.raises(BadInput) as refused:
            masks.text("bureaucratic")

        assert (
            ["développement", "bureaucracy"],
            "no placeholder keeps the token count of a text under the 'cl100k_base' tokenizer",
        ) == (first, str(refused.value))

    @pytest.mark.parametrize(
        "text",
        [
            "disproportionate",
            "disproportionately",
            "acquaintance",
            "overwhelmingly",
            "extraordinarily",
            "unquestionably",
            "Disproportionate",
            "disproportionate share of refunds",
        ],
    )
    @pytest.mark.parametrize("tokenizers", TOKENIZER_SETS, ids=str)
    def test_long_single_words_get_a_placeholder_of_their_counts(
        self, tokenizers: str, text: str
    ) -> None:
        """A long first word an encoding holds whole after a space (disproportionate: four
        cl100k tokens alone, one after a space) gets a head of the vocabulary that does the
        same; under both encodings at once, one that does it under both."""
        chosen = TOKENIZER_SETS[tokenizers]
        masks = Masks(b"secret", chosen)

        assert ([True] * len(chosen), False) == (
            [kept(masks, tokenizer, text) for tokenizer in chosen],
            masks.text(text) == text,
        )

    def test_disproportionate_gets_a_word_of_the_vocabulary(self) -> None:
        """No earlier head has its shape under cl100k; a vocabulary word does."""
        made = Masks(b"secret", (Cl100kBase(),)).text("disproportionate")

        assert (True, False) == (
            made in Cl100kBase().spaced_words(),
            made in redact_module._LONG_WORDS,
        )

    def test_the_vocabulary_is_searched_only_when_the_earlier_heads_find_nothing(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """dép and consolidation have earlier later heads; their placeholders never pay for
        (nor change with) the vocabulary."""

        def searched(_: tuple[Tokenizer, ...]) -> tuple[str, ...]:
            raise AssertionError("the vocabulary was searched")

        monkeypatch.setattr("memtape.redact._vocabulary_heads", searched)
        masks = Masks(b"secret", (O200kBase(),))

        assert "wyg" == masks.text("dép")
        assert kept(masks, O200kBase(), "consolidation")

    def test_the_vocabulary_is_used_only_when_every_tokenizer_lists_it(self) -> None:
        """A fork from the word count onto an encoding: the word count lists no words."""
        assert (0, True) == (
            len(redact_module._vocabulary_heads((WordCount(), Cl100kBase()))),
            "extravagant" in redact_module._vocabulary_heads((Cl100kBase(),)),
        )

    def test_the_vocabulary_heads_are_no_earlier_heads(self) -> None:
        """Longer than three characters (every short head is) and no long word, so a
        placeholder they start is no placeholder of an earlier group."""
        heads = redact_module._vocabulary_heads(BYTE_PAIRS)

        assert (True, [], []) == (
            len(heads) > 20_000,
            [head for head in heads if len(head) <= 3],
            sorted(set(heads) & set(redact_module._LONG_WORDS)),
        )

    def test_words_are_drawn_from_a_pool_of_one_token_words(self) -> None:
        masks = Masks(b"secret", BYTE_PAIRS)
        words = masks.text("the user wants a refund for the broken kettle").split()

        assert (9, True) == (
            len(words),
            all(t.count(w) == t.count(f" {w}") == 1 for w in words for t in BYTE_PAIRS),
        )

    def test_a_long_word_under_the_word_count_and_an_encoding_is_glued(self) -> None:
        """A fork from the word count onto an encoding: one word, eight tokens."""
        both = (WordCount(), O200kBase())
        made = Masks(b"secret", both).text("compaction.tokenizer=o200k_base")

        assert [(1, 1), (8, 8)] == [(t.count(made), t.count(f" {made}")) for t in both]

    def test_the_empty_text_is_empty(self) -> None:
        assert "" == Masks(b"secret", BYTE_PAIRS).text("")

    def test_many_one_token_texts_get_distinct_placeholders(self) -> None:
        """More one-token texts than the hash spreads without meeting: the next candidate."""
        tokenizer = Cl100kBase()
        masks = Masks(b"secret", (tokenizer,))
        texts = [str(number) for number in range(1000)]
        made = [masks.text(text) for text in texts]

        assert (1000, {1}) == (len(set(made)), {tokenizer.count(m) for m in made})


class TestWordCountPlaceholders:
    def test_a_word_count_placeholder_is_pinned(self, tmp_path: Path) -> None:
        """Runs measured by word count keep the ``TAG.n`` placeholders of earlier copies."""
        first = redact(saved(tmp_path, "refund-desk")).run.events[0]

        assert isinstance(first, TurnAdded)
        assert " ".join(f"2781f791.{n}" for n in range(1, 11)) == first.text


def counted(value: Any) -> Any:
    """A view with each turn's call and answer ids (masked in a copy) given as their count."""
    if isinstance(value, dict):
        return {k: len(v) if k in {"calls", "answers"} else counted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [counted(item) for item in value]
    return value


class TestClearedInPlace:
    """A tool result cleared in place reads as a placeholder in the copy, at the same cost."""

    def _exported(self, tmp_path: Path) -> tuple[Path, Path]:
        policies = Policies.from_params(
            {"compaction": {"policy": "clear-tool-results", "budget": 60, "keep": 1}}
        )
        session = Session(policies)
        session.execute_all(TURNS[:120])
        source = tmp_path / "cleared.jsonl"
        save_run(session, source, "cleared")
        out = tmp_path / "cleared.redacted.jsonl"
        export_redacted(source, out)
        return source, out

    def test_the_figures_stay_and_the_copy_checks_clean(self, tmp_path: Path) -> None:
        source, out = self._exported(tmp_path)
        original = load_run(source).session.run
        assert any(isinstance(e, CompactionTriggered) and e.cleared for e in original.events)
        assert [counted(figures(v)) for v in views(load_run(source))] == [
            counted(figures(v)) for v in views(load_run(out))
        ]
        assert (True, ()) == (check_file(out).ok, check_file(out).problems)

    def test_a_cleared_text_is_masked_like_a_warm_one(self, tmp_path: Path) -> None:
        _, out = self._exported(tmp_path)
        copy = load_run(out).session.run
        cleared = [i for e in copy.events if isinstance(e, CompactionTriggered) for i in e.cleared]
        assert (True, set()) == (
            bool(cleared),
            {i.text for i in cleared} & {"[tool result cleared]"},
        )
