"""memtape.runs.redact: a copy of a run with placeholder texts and the same figures."""

import json
import re
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memtape.checking.check import check_file
from memtape.checking.invariants import Violation
from memtape.cli import main
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    CreateBlock,
    Query,
    RecordEpisode,
    WriteFact,
)
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
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.text import tokenizers
from memtape.policies.text.tokenizers import Cl100kBase, O200kBase, Tokenizer, WordCount
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.projections.view import view_data
from memtape.runs.files import LoadedRun, load_run, save_run
from memtape.runs.redact import REDACTED, Masks, export_redacted, redact
from memtape.scenarios import SHIPPED, Scenario, load_scenario, parse_scenario
from memtape.viewer.payload import run_payload
from tests.agent_session import TURNS
from tests.blocked import blocked_session
from tests.chained import lines_of, rechained, write_lines

TAG = re.compile(r"[0-9a-f]{8,64}")
"""An opaque placeholder: a prefix of a keyed hash."""

ONCE_REFUSED = ["développement", "привет", "🙏"]
"""Texts the search for placeholders of equal token counts refused under two encodings."""

BYTE_PAIRS: tuple[Tokenizer, ...] = (Cl100kBase(), O200kBase())

TOKENIZER_SETS: dict[str, tuple[Tokenizer, ...]] = {
    **{name: (tokenizer,) for name, tokenizer in tokenizers.TOKENIZERS.items()},
    "words+o200k_base": (WordCount(), O200kBase()),
    "cl100k_base+o200k_base": BYTE_PAIRS,
}
"""Every shipped tokenizer, and the pairs a fork onto another one gives."""


def saved(tmp_path: Path, name: str, settings: tuple[str, ...] = ()) -> Path:
    """The run of the shipped scenario ``name`` (with ``settings``), written to a file."""
    scenario = support(60) if name == "support" else load_scenario(name)
    session = Session(scenario.policies.with_settings(list(settings)))
    session.execute_all(scenario.steps)
    path = tmp_path / f"{name}.jsonl"
    save_run(session, path, scenario.name)
    return path


def exported(tmp_path: Path, name: str, settings: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """The saved run of ``name`` and its redacted copy."""
    source = saved(tmp_path, name, settings)
    out = tmp_path / f"{name}.redacted.jsonl"
    export_redacted(source, out)
    return source, out


def support(turns: int) -> Scenario:
    """A generated support session of ``turns`` turns (tool results, orders, chatter)."""
    return parse_scenario(support_session(turns, 7), "support")


def forked(tmp_path: Path, first: str = "words", then: str = "compaction.budget=30") -> Path:
    """refund-desk measured by ``first`` and forked after event 5 with ``then``, in a file."""
    scenario = load_scenario("refund-desk")
    session = Session(scenario.policies.with_settings([f"compaction.tokenizer={first}"]))
    session.execute_all(scenario.steps)
    path = tmp_path / "forked.jsonl"
    origin = {"run": "runs/dana-refund.jsonl", "at": 5, "set": [then]}
    fork = session.fork(5, [then])
    fork.execute_all(scenario.steps[len(fork.run.commands) :])
    save_run(fork, path, "refund-desk", origin=origin)
    return path


def header(path: Path) -> dict[str, Any]:
    """The header line of a run file."""
    data: dict[str, Any] = json.loads(path.read_text("utf-8").split("\n", 1)[0])
    return data


def shape(value: Any) -> Any:
    """``value`` with every string blanked: its numbers, flags and structure."""
    if isinstance(value, str):
        return ""
    if isinstance(value, dict):
        return {name: shape(item) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [shape(item) for item in value]
    return value


def views(loaded: LoadedRun) -> list[Any]:
    """What ``memtape show RUN --at N --json`` prints, at every position N of the run."""
    session = loaded.session
    run = session.run
    return [view_data(run.state_at(at), at, session.policies_at(at)) for at in range(len(run) + 1)]


def uncosted(params: dict[str, Any]) -> dict[str, Any]:
    """Policies' tables without ``placeholder_tokens``, which a copy adds where its
    clear-tool-results placeholder stands for one it does not cost as."""
    return {
        axis: {k: v for k, v in table.items() if k != "placeholder_tokens"}
        for axis, table in params.items()
    }


def printed(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """What ``memtape ARGV... --json`` prints, parsed."""
    assert 0 == main([*argv, "--json"])
    return json.loads(capsys.readouterr().out)


def every_figure(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    """The events' types and steps, and the figures of ``show`` at every position,
    ``timeline``, ``diff`` (start to end), ``why`` of every turn and fact and the ``view``
    page's data, of the run at ``path``."""
    loaded = load_run(path)
    run = loaded.session.run
    facts = sorted(run.state.store.facts)
    whys = [f"turn:{n}" for n in range(1, run.state.window.turns + 1)] + [str(i) for i in facts]
    return {
        "events": [(type(e).__name__, run.step_of(at)) for at, e in enumerate(run.events, 1)],
        "epochs": [(e.start, shape(uncosted(e.policies.params()))) for e in loaded.session.epochs],
        **shape(
            {
                "show": views(loaded),
                "timeline": printed(capsys, "timeline", str(path)),
                "diff": printed(capsys, "diff", str(path), "0", str(len(run))),
                "why": [printed(capsys, "why", str(path), target) for target in whys],
                "view": run_payload(run, loaded.session.policies_at, "run"),
            }
        ),
    }


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


def kept_texts(source: Path, out: Path) -> list[str]:
    """The free texts of ``source`` found in ``out``, escaped or not."""
    content = out.read_text("utf-8")
    return [
        t
        for t in sorted(original_texts(source))
        if json.dumps(t)[1:-1] in content or json.dumps(t, ensure_ascii=False)[1:-1] in content
    ]


def agrees(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path
) -> tuple[bool, tuple[Violation, ...], list[str]]:
    """Whether the redacted copy of ``source`` shows every figure it does, what ``check``
    finds in the copy, and the free texts of the source still in it."""
    out = tmp_path / f"{source.stem}.redacted.jsonl"
    export_redacted(source, out)
    same = every_figure(capsys, source) == every_figure(capsys, out)
    return same, check_file(out).problems, kept_texts(source, out)


def words(text: str) -> int:
    return WordCount().count(text)


RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    **{name: (name, ()) for name in SHIPPED},
    "refund-desk/cl100k_base": ("refund-desk", ("compaction.tokenizer=cl100k_base",)),
    "refund-desk/o200k_base": ("refund-desk", ("compaction.tokenizer=o200k_base",)),
    "refund-desk/rolling-summary": ("refund-desk", ("compaction.policy=rolling-summary",)),
    "support/cl100k_base": ("support", ("compaction.tokenizer=cl100k_base",)),
}
"""Runs to redact: the shipped scenarios, and refund-desk and a generated support session
under the encodings and another policy."""


class TestFiguresStayTheSame:
    @pytest.mark.parametrize("run", sorted(RUNS))
    def test_every_command_shows_the_same_figures_and_check_is_clean(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], run: str
    ) -> None:
        """show at every position, timeline, diff, why and view: every number and flag
        equal to the source's; check folds the copy clean, chained, and does not re-decide."""
        name, settings = RUNS[run]
        source, out = exported(tmp_path, name, settings)
        report = check_file(out)

        assert every_figure(capsys, source) == every_figure(capsys, out)
        assert (True, (), False, True, True) == (
            report.ok,
            report.problems,
            report.redecided,
            report.redacted,
            report.chained,
        )

    @pytest.mark.parametrize(
        ("first", "then"),
        [
            ("words", "compaction.budget=30"),
            ("words", "compaction.tokenizer=o200k_base"),
            ("cl100k_base", "compaction.tokenizer=o200k_base"),
        ],
    )
    def test_a_forked_run_keeps_its_epochs_and_figures(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], first: str, then: str
    ) -> None:
        """Forked onto another budget or tokenizer: the copy shows what each recorded."""
        assert (True, (), []) == agrees(capsys, tmp_path, forked(tmp_path, first, then))

    def test_under_the_word_count_placeholders_keep_the_word_counts(self, tmp_path: Path) -> None:
        """Free, so kept: a redacted "{role}: {text}" and a WARM item measure what they cost,
        an episode has as many words."""
        _, out = exported(tmp_path, "refund-desk")
        events = load_run(out).session.run.events
        turns = [e for e in events if isinstance(e, TurnAdded)]
        warm = [i for e in events if isinstance(e, CompactionTriggered) for i in e.warm]
        source, copy = exported(tmp_path, "sleep-pass")
        before, after = (
            [
                words(e.text)
                for e in load_run(p).session.run.events
                if isinstance(e, EpisodeRecorded)
            ]
            for p in (source, copy)
        )

        assert [t.tokens for t in turns] == [words(f"{t.role}: {t.text}") for t in turns]
        assert (True, [i.tokens for i in warm]) == (bool(warm), [words(i.text) for i in warm])
        assert (4, before) == (len(before), after)

    @pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base"])
    def test_under_an_encoding_each_text_is_one_tag_and_the_recorded_tokens_speak(
        self, tmp_path: Path, tokenizer: str
    ) -> None:
        """A placeholder keeps no count: each turn's tokens are the recorded ones, which
        measuring its placeholder would not give."""
        source, out = exported(tmp_path, "refund-desk", (f"compaction.tokenizer={tokenizer}",))
        count = tokenizers.tokenizer_named(tokenizer).count
        before = [e for e in load_run(source).session.run.events if isinstance(e, TurnAdded)]
        after = [e for e in load_run(out).session.run.events if isinstance(e, TurnAdded)]

        assert [] == [t.text for t in after if not TAG.fullmatch(t.text)]
        assert [t.tokens for t in before] == [t.tokens for t in after]
        assert [t.tokens for t in after] != [count(f"{t.role}: {t.text}") for t in after]


class TestNoOriginalTextRemains:
    @pytest.mark.parametrize("run", sorted(RUNS))
    def test_no_free_text_of_the_run_is_in_the_copy(self, tmp_path: Path, run: str) -> None:
        name, settings = RUNS[run]
        source, out = exported(tmp_path, name, settings)

        assert [] == kept_texts(source, out)

    @pytest.mark.parametrize("name", SHIPPED)
    def test_the_seed_data_is_not_in_the_copy(self, tmp_path: Path, name: str) -> None:
        _, out = exported(tmp_path, name)
        content = out.read_bytes()
        seeds = ["Dana", "ORD-3300", "$180.00", "$200", "Globex", "restocking", "name is"]

        assert [] == [s for s in seeds if s.encode("utf-8") in content]

    def test_the_texts_were_there_to_find(self, tmp_path: Path) -> None:
        """The same search finds the texts in the source (the search can fail)."""
        source = saved(tmp_path, "sleep-pass")

        assert sorted(original_texts(source)) == kept_texts(source, source)

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

    def test_roles_are_kept(self, tmp_path: Path) -> None:
        """A role is not free text: the policy measures and routes on it."""
        source, out = exported(tmp_path, "refund-desk")

        assert [
            c.role for c in load_run(source).session.run.commands if isinstance(c, AddTurn)
        ] == [c.role for c in load_run(out).session.run.commands if isinstance(c, AddTurn)]

    @pytest.mark.parametrize("tokenizer", ["words", "cl100k_base"])
    def test_the_tiered_gist_is_kept_word_for_word(self, tmp_path: Path, tokenizer: str) -> None:
        """The gist only counts the COLD turns; the gist invariant reads and counts it."""
        settings = ("compaction.budget=25", f"compaction.tokenizer={tokenizer}")
        _, out = exported(tmp_path, "refund-desk", settings)

        assert (True, "earlier turns summarized]") == (
            check_file(out).ok,
            load_run(out).session.state.window.gist.split(" ", 1)[1],
        )

    def test_any_other_gist_is_a_placeholder(self, tmp_path: Path) -> None:
        """A gist a policy wrote from the turns (here by hand) is free text."""
        source = saved(tmp_path, "refund-desk", ("compaction.budget=25",))
        lines = [json.loads(line) for line in source.read_text("utf-8").splitlines()]
        for line in lines[1:]:
            if line["type"] == "CompactionTriggered" and line["event"]["gist"]:
                line["event"]["gist"] = "Dana wants her $180.00 refund"
        source.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        out = tmp_path / "tight.redacted.jsonl"
        export_redacted(source, out)
        gist = load_run(out).session.state.window.gist

        assert (5, False) == (words(gist), "Dana" in out.read_text("utf-8"))

    def test_a_word_count_placeholder_is_pinned(self, tmp_path: Path) -> None:
        """Runs measured by word count keep the ``TAG.n`` placeholders of earlier copies."""
        first = redact(saved(tmp_path, "refund-desk")).run.events[0]

        assert isinstance(first, TurnAdded)
        assert " ".join(f"2781f791.{n}" for n in range(1, 11)) == first.text


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

    def test_the_query_text_and_key_are_placeholders_and_its_results_are_kept(
        self, tmp_path: Path
    ) -> None:
        source, copy = self._copies(tmp_path)
        (before,) = [e for e in source.events if isinstance(e, Queried)]
        (queried,) = [e for e in copy.events if isinstance(e, Queried)]
        (command,) = [c for c in copy.commands if isinstance(c, Query)]
        (key,) = {e.key for e in copy.events if isinstance(e, FactWritten) and e.id == 1}

        assert (5, key, key) == (words(queried.text), queried.key, command.key)
        assert "what is the user called" not in (queried.text, command.text)
        assert (before.k, before.results, before.scores) == (
            queried.k,
            queried.results,
            queried.scores,
        )


class TestQueriesRankedByText:
    """Generative-agents weighs the words a query shares with each fact, which no
    placeholder keeps: check does not rank a copy's queries again."""

    def _exported(self, tmp_path: Path) -> tuple[Path, Path]:
        forgetting = {"policy": "generative-agents", "capacity": 4}
        session = Session(Policies.from_params({"forgetting": forgetting}))
        session.execute_all(
            [
                WriteFact("name", "the user is Dana", 0.9),
                WriteFact("order", "the order ORD3300 is a broken kettle", 0.5),
                AdvanceClock(1.0),
                Query("what is the user called", "name", 2),
            ]
        )
        source = tmp_path / "relevance.jsonl"
        save_run(session, source, "relevance")
        out = tmp_path / "relevance.redacted.jsonl"
        export_redacted(source, out)
        return source, out

    def test_the_copy_checks_clean_and_keeps_the_recorded_results(self, tmp_path: Path) -> None:
        source, out = self._exported(tmp_path)
        (before,) = [e for e in load_run(source).session.run.events if isinstance(e, Queried)]
        (after,) = [e for e in load_run(out).session.run.events if isinstance(e, Queried)]

        assert (True, ()) == (check_file(source).ok, check_file(out).problems)
        assert (before.results, before.scores) == (after.results, after.scores)

    def test_without_the_mark_the_copy_s_query_is_ranked_again_and_fails(
        self, tmp_path: Path
    ) -> None:
        """What the mark spares a copy is that ranking (and the re-decision), not the
        other checks."""
        _, out = self._exported(tmp_path)
        lines = lines_of(out)
        del lines[0][REDACTED]
        write_lines(out, rechained(lines))

        assert ["query", "re-decide"] == sorted(p.invariant for p in check_file(out).problems)


def rules_masked(policies: dict[str, Any]) -> dict[str, Any]:
    """The policies' tables with each rule's free texts blanked."""
    for rule in policies.get("consolidation", {}).get("rule", []):
        rule["pattern"] = ""
        rule.pop("procedural", None)
        rule.get("semantic", {}).update(key="", text="")
    return policies


class TestHeader:
    def test_the_header_says_the_run_is_redacted(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "refund-desk")

        assert True is header(out)[REDACTED]

    def test_the_scenario_name_is_redacted(self, tmp_path: Path) -> None:
        """A user's scenario name is often a customer's; the shipped ones are redacted alike."""
        _, out = exported(tmp_path, "dana-facts")
        name = header(out)["scenario"]

        assert (1, False) == (words(name), "dana" in name)

    @pytest.mark.parametrize("run", sorted(RUNS))
    def test_policy_names_tokenizer_and_numbers_are_kept(self, tmp_path: Path, run: str) -> None:
        name, settings = RUNS[run]
        source, out = exported(tmp_path, name, settings)

        assert rules_masked(header(source)["policies"]) == rules_masked(header(out)["policies"])

    def test_the_embedding_model_is_kept_as_the_model_is(self, tmp_path: Path) -> None:
        settings = ("llm.model=chatter", "llm.embedding_model=vectors")
        _, out = exported(tmp_path, "refund-desk", settings)
        llm = header(out)["policies"]["llm"]

        assert ("chatter", "vectors") == (llm["model"], llm["embedding_model"])

    def test_rule_patterns_and_templates_are_placeholders(self, tmp_path: Path) -> None:
        _, out = exported(tmp_path, "sleep-pass")
        rules = header(out)["policies"]["consolidation"]["rule"]
        first, second = rules
        semantic = first["semantic"]

        assert [[3, 1, 3], [2, 10]] == [
            [words(first["pattern"]), words(semantic["key"]), words(semantic["text"])],
            [words(second["pattern"]), words(second["procedural"])],
        ]


class TestDeterminism:
    @pytest.mark.parametrize("run", sorted(RUNS))
    def test_redacting_twice_gives_the_same_bytes(self, tmp_path: Path, run: str) -> None:
        name, settings = RUNS[run]
        source, out = exported(tmp_path, name, settings)
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
        source.write_text("".join(lines) + lines[-1][:20], "utf-8")
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


class TestCheckingARedactedRun:
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


def mixed(tmp_path: Path, texts: list[str], tokenizer: str) -> Path:
    """A run of ``texts`` as turns, fact keys and texts, an episode, a rule distilling it and
    a query, measured by ``tokenizer``, in a file."""
    steps: list[Command] = []
    for n, text in enumerate(texts):
        steps.append(AddTurn("user" if n % 2 else "assistant", text))
        steps.append(WriteFact(f"key {text}", f"{text} {text}", 0.5))
    steps += [RecordEpisode(" ".join(texts)), Consolidate(), Query(texts[0], f"key {texts[0]}", 2)]
    steps += [AddTurn("user", text) for text in texts]
    literal = texts[-1].replace("{", "{{").replace("}", "}}")
    policies = Policies.from_params(
        {
            "compaction": {"policy": "tiered", "budget": 12, "hot_n": 1, "tokenizer": tokenizer},
            "forgetting": {"policy": "importance-recency-access", "capacity": 2},
            "consolidation": {
                "policy": "rules",
                "rule": [{"pattern": re.escape(texts[0]), "procedural": literal}],
            },
        }
    )
    session = Session(policies)
    session.execute_all(steps)
    path = tmp_path / f"mixed-{tokenizer}.jsonl"
    save_run(session, path, "mixed")
    return path


@attrs.frozen
class Characters:
    """A tokenizer counting characters, which no word placeholder matches."""

    name: ClassVar[str] = "chars"

    def count(self, text: str) -> int:
        return len(text)


class TestNoTextIsRefused:
    @pytest.mark.parametrize("tokenizer", sorted(tokenizers.TOKENIZERS))
    def test_the_texts_once_refused_are_redacted_under_every_tokenizer(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], tokenizer: str
    ) -> None:
        source = mixed(tmp_path, [*ONCE_REFUSED, "bureaucracy", "bureaucratic"], tokenizer)
        assert any(isinstance(e, CompactionTriggered) for e in load_run(source).session.run.events)

        assert (True, (), []) == agrees(capsys, tmp_path, source)

    @pytest.mark.parametrize("tokenizers", sorted(TOKENIZER_SETS))
    @pytest.mark.parametrize("text", ONCE_REFUSED)
    def test_each_gets_a_placeholder_of_its_own(self, tokenizers: str, text: str) -> None:
        masks = Masks(b"secret", TOKENIZER_SETS[tokenizers])
        made = masks.text(text)

        assert (False, made, made) == (made == text, masks.text(text), masks.text(text))

    def test_a_tokenizer_no_placeholder_fits_is_no_reason_to_refuse(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A tokenizer counting characters: the copy's figures are still the recorded ones."""
        monkeypatch.setitem(tokenizers.TOKENIZERS, Characters.name, Characters())
        session = Session(Policies(compaction=TieredCompaction(40, 2, Characters())))
        session.execute_all([AddTurn("user", "Hi, I'm Dana."), AddTurn("assistant", "Hello " * 5)])
        source = tmp_path / "chars.jsonl"
        save_run(session, source, "dana at the desk")

        assert (True, (), []) == agrees(capsys, tmp_path, source)

    @settings(max_examples=60, deadline=None)
    @given(
        texts=st.lists(st.text(), max_size=12),
        chosen=st.sampled_from(sorted(TOKENIZER_SETS)),
    )
    @example(texts=[*ONCE_REFUSED, " ", "\t", "", " "], chosen="words")
    @example(texts=[*ONCE_REFUSED, " ", "\t", ""], chosen="cl100k_base+o200k_base")
    def test_any_texts_get_placeholders_equal_for_equal_texts_and_apart_for_others(
        self, texts: list[str], chosen: str
    ) -> None:
        """Whatever the unicode: a placeholder for each text, the same each time it comes,
        another for another text, never the text itself (but for "" and spaces, which hold
        nothing); under the word count alone it keeps the text's word count, otherwise it
        is one opaque tag."""
        masks = Masks(b"secret", TOKENIZER_SETS[chosen])
        made = {text: masks.text(text) for text in texts}

        assert made == {text: masks.text(text) for text in reversed(texts)}
        assert len(set(made.values())) == len(made)
        assert [] == [t for t, m in made.items() if m == t and t.strip()]
        if chosen == "words":
            assert [words(t) for t in made] == [words(m) for m in made.values()]
        else:
            assert [] == [m for t, m in made.items() if t and not TAG.fullmatch(m)]

    @settings(max_examples=20, deadline=None)
    @given(
        texts=st.lists(st.text(min_size=1), min_size=1, max_size=5),
        tokenizer=st.sampled_from(sorted(tokenizers.TOKENIZERS)),
    )
    def test_any_run_keeps_its_figures_and_checks_clean(
        self, texts: list[str], tokenizer: str
    ) -> None:
        """show's figures at every position and check (the commands' figures are compared
        above; short texts may well occur in a placeholder by chance)."""
        with tempfile.TemporaryDirectory() as folder:
            source = mixed(Path(folder), texts, tokenizer)
            out = Path(folder) / "copy.jsonl"
            export_redacted(source, out)

            assert shape(views(load_run(source))) == shape(views(load_run(out)))
            assert () == check_file(out).problems


LONG_PLACEHOLDER = "[this tool's result was cleared to make room]"
"""A placeholder of more cl100k_base tokens than any opaque tag."""


# Each runs and redacts long tool sessions under a BPE tokenizer: the slow job's.
@pytest.mark.slow
class TestClearedResults:
    """clear-tool-results counts its placeholder for the budget's floor: where the mask
    would cost otherwise, a copy records what the source's cost."""

    def _exported(self, tmp_path: Path, tokenizer: str) -> tuple[Path, Path]:
        table = {
            "policy": "clear-tool-results",
            "budget": 60 if tokenizer == "words" else 300,
            "keep": 1,
            "placeholder": LONG_PLACEHOLDER,
            "tokenizer": tokenizer,
        }
        session = Session(Policies.from_params({"compaction": table}))
        session.execute_all(TURNS[:120])
        source = tmp_path / "refund-session.jsonl"
        save_run(session, source, "refund session")
        out = tmp_path / "refund-session.redacted.jsonl"
        export_redacted(source, out)
        return source, out

    @staticmethod
    def _floors(path: Path) -> list[int]:
        loaded = load_run(path)
        run, policy = loaded.session.run, loaded.session.policies.compaction
        assert isinstance(policy, ClearToolResults)
        return [policy.floor(run.state_at(at).window) for at in range(1, len(run) + 1)]

    @pytest.mark.parametrize("tokenizer", ["words", "cl100k_base"])
    def test_figures_floor_and_check_are_the_sources(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], tokenizer: str
    ) -> None:
        source, out = self._exported(tmp_path, tokenizer)
        events = load_run(source).session.run.events
        cleared = [
            i
            for e in load_run(out).session.run.events
            if isinstance(e, CompactionTriggered)
            for i in e.cleared
        ]

        assert any(e.cleared for e in events if isinstance(e, CompactionTriggered))
        assert (True, set()) == (bool(cleared), {i.text for i in cleared} & {LONG_PLACEHOLDER})
        assert self._floors(source) == self._floors(out)
        assert (True, (), []) == agrees(capsys, tmp_path, source)

    def test_under_an_encoding_the_copy_records_what_the_placeholder_cost(
        self, tmp_path: Path
    ) -> None:
        _, out = self._exported(tmp_path, "cl100k_base")
        compaction = header(out)["policies"]["compaction"]
        cost = Cl100kBase().count(LONG_PLACEHOLDER)

        assert (cost, True) == (
            compaction["placeholder_tokens"],
            bool(TAG.fullmatch(compaction["placeholder"])),
        )
        assert cost != Cl100kBase().count(compaction["placeholder"])

    def test_under_the_word_count_the_mask_keeps_the_cost_and_nothing_is_added(
        self, tmp_path: Path
    ) -> None:
        _, out = self._exported(tmp_path, "words")
        compaction = header(out)["policies"]["compaction"]

        assert (False, words(LONG_PLACEHOLDER)) == (
            "placeholder_tokens" in compaction,
            words(compaction["placeholder"]),
        )


class TestBlocks:
    def _copy(self, tmp_path: Path) -> Path:
        source = tmp_path / "blocked.jsonl"
        save_run(blocked_session(), source, "blocked")
        out = tmp_path / "blocked.redacted.jsonl"
        export_redacted(source, out)
        return out

    def test_labels_and_values_are_masked(self, tmp_path: Path) -> None:
        text = self._copy(tmp_path).read_text("utf-8")
        assert ("human" in text, "Porto" in text, "Dana" in text) == (False, False, False)

    def test_the_copy_checks_clean_though_its_placeholders_pass_a_limit(
        self, tmp_path: Path
    ) -> None:
        session = Session(
            Policies.from_params({"compaction": {"policy": "sliding-window", "budget": 40}})
        )
        session.execute(CreateBlock("tight", 11, "a b c d e f"))
        source, out = tmp_path / "tight.jsonl", tmp_path / "tight.redacted.jsonl"
        save_run(session, source, "tight")
        export_redacted(source, out)
        assert () == check_file(out).problems


class TestBlocksEditedByAPass:
    def _copy(self, tmp_path: Path) -> tuple[Path, Path]:
        scenario = load_scenario(
            str(Path(__file__).parent.parent / "examples/sleep-time-blocks.toml")
        )
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        source, out = tmp_path / "sleep.jsonl", tmp_path / "sleep.redacted.jsonl"
        save_run(session, source, scenario.name)
        export_redacted(source, out)
        return source, out

    def test_the_pass_s_edits_and_the_block_rules_leave_no_text(self, tmp_path: Path) -> None:
        _, out = self._copy(tmp_path)
        content = out.read_text("utf-8")

        assert [] == [t for t in ("Porto", "Lives in", "Prefers", "Acme") if t in content]

    def test_the_copy_keeps_the_read_only_block_and_the_edits(self, tmp_path: Path) -> None:
        source, out = self._copy(tmp_path)
        blocks = load_run(out).session.state.window.blocks

        assert [(True, 1), (False, 3)] == [(b.read_only, b.version) for b in blocks]
        assert [b.tokens for b in load_run(source).session.state.window.blocks] == [
            b.tokens for b in blocks
        ]
