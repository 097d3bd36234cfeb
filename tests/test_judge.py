"""memtape.lab.judge, memtape.policies.text.answering and ``bench --judge``: questions
asked against the window at their turn, through a loopback server and the real ``openai``
SDK, recorded as events and replayed."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any, cast

import attrs
import pytest

from memtape.checking.check import check_file
from memtape.cli import main
from memtape.core.commands import Ask
from memtape.core.errors import BadInput
from memtape.core.events import Answered
from memtape.lab.bench import Cell, Result, parse_policy, plan, planning, run_cell
from memtape.llm.cache import caching
from memtape.llm.config import BASE_URL_ENV
from memtape.policies.session import Session
from memtape.policies.text.answering import matches, normalized
from memtape.policies.text.request import chat_messages
from memtape.projections.answers import answer_metrics, verdicts
from memtape.runs.files import load_run, save_run
from memtape.runs.redact import export_redacted
from memtape.scenarios import Probe, Scenario, load_scenario
from tests.llm_server import ChatServer

MODEL = "judge-model"


@attrs.frozen
class Asked:
    """A probe with a question, as the loader's ``Probe`` carries one on branch tokens."""

    text: str
    start: int
    kind: str | None = None
    question: str | None = None
    answer: str | None = None


QUESTIONS = (
    Asked("ORD-3300", 2, "identifier", "Which order is it?", "ORD-3300"),
    Asked("10%", 6, "number", "What is the restocking fee?", "10%"),
    Asked("$180.00", 9, "number", "What is the refund?", "$180.00"),
)
"""Asked at turns 2, 6 and 9 of the refund desk: the first reply is the answer as written,
the second says it in other words (a judge grades it), the third is wrong."""


def _answerer(model: str, prompt: str) -> str:
    if "Reply to grade:" in prompt:
        reference = prompt.split("Reference answer: ")[1].split("\n", maxsplit=1)[0]
        reply = prompt.split("Reply to grade: ")[1].split("\n", maxsplit=1)[0]
        return "Yes." if reference in reply else "No."
    if "Which order" in prompt:
        return "ORD-3300"
    if "restocking" in prompt:
        return "The fee is 10% after the window."
    return "I do not know."


def _desk() -> Scenario:
    scenario = load_scenario("refund-desk")
    return attrs.evolve(scenario, probes=cast(tuple[Probe, ...], QUESTIONS))


def _judged(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
    chat_server.answerer = _answerer
    cell = Cell("refund-desk", parse_policy("tiered"), (), (), judge=MODEL)
    return run_cell(cell, scenario=_desk())


class TestMatching:
    @pytest.mark.parametrize(
        ("reply", "answer"),
        [("ORD-3300", "ORD-3300"), ("The Refund: $180.00!", "refund 180 00"), (" yes ", "yes")],
    )
    def test_a_reply_equal_as_written_or_normalized_matches(self, reply: str, answer: str) -> None:
        assert matches(reply, answer)

    def test_other_words_do_not_match(self) -> None:
        assert not matches("The fee is 10% after the window.", "10%")

    def test_normalizing_drops_case_punctuation_articles_and_extra_spaces(self) -> None:
        assert "refund is 180 00" == normalized("The  REFUND is $180.00.")


class TestVerdicts:
    def test_each_question_is_scored_and_only_a_differing_reply_is_judged(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        result = _judged(chat_server, monkeypatch)
        assert [(2, True, False), (6, True, True), (9, False, True)] == [
            (verdict.turn, verdict.correct, verdict.judged) for verdict in result.verdicts
        ]
        assert (1 + 2 + 2, 2, 2) == (
            chat_server.requests,
            result.metrics["answers_correct"],
            result.metrics["answers_judged"],
        )

    def test_the_question_follows_the_window_as_it_stands_at_its_turn(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        _judged(chat_server, monkeypatch)
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps[:6])
        sent = chat_server.bodies[1]["messages"]
        assert chat_messages(session.state.window) == sent[:-1]
        assert "What is the restocking fee?" in sent[-1]["content"]

    def test_the_json_holds_each_answer(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        answers = _judged(chat_server, monkeypatch).data()["answers"]
        assert ["ORD-3300", "The fee is 10% after the window.", "I do not know."] == [
            answer["reply"] for answer in answers
        ]
        assert [1, 2, 2] == [len(answer["asked"]) for answer in answers]


class TestReplay:
    def test_recorded_then_replayed_with_the_server_stopped(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        first = _judged(chat_server, monkeypatch)
        chat_server.stop()
        cell = Cell("refund-desk", parse_policy("tiered"), (), (), judge=MODEL)
        again = run_cell(cell, scenario=_desk())
        assert [v.reply for v in first.verdicts] == [v.reply for v in again.verdicts]
        assert all(call.cached for verdict in again.verdicts for call in verdict.asked)
        assert not any(call.cached for verdict in first.verdicts for call in verdict.asked)

    def test_a_judged_bench_run_twice_asks_once_and_writes_the_same_answers(
        self,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """The whole command: the first run asks the server once for each call its --json
        says was not cached; the second, the server stopped, prints the same table and
        writes the same answers, every call read from the cache."""
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        monkeypatch.setattr(planning, "file_probes", lambda path: QUESTIONS)
        chat_server.answerer = _answerer
        argv = ["bench", "refund-desk", "--policy", "tiered", "--policy", "sliding-window"]
        argv += ["--judge", MODEL, "--probes", "q.toml", "--jobs", "1", "-q"]
        argv += ["--columns", "probe_retention,answers_correct,answers_judged"]
        assert 0 == main([*argv, "--json", "first.json"])
        table = capsys.readouterr().out.replace("first.json", "again.json")
        chat_server.stop()
        assert 0 == main([*argv, "--json", "again.json"])
        first, again = _calls(Path("first.json")), _calls(Path("again.json"))
        assert chat_server.requests == sum(not call["cached"] for call in first)
        assert (table, True) == (capsys.readouterr().out, all(c["cached"] for c in again))
        assert _without_cached(first) == _without_cached(again)


def _calls(path: Path) -> list[dict[str, Any]]:
    """The model calls of every answer of a bench --json file, each beside its answer's
    question, reply and verdict, in order."""
    return [
        {
            **call,
            "question": answer["question"],
            "reply": answer["reply"],
            "correct": answer["correct"],
        }
        for result in json.loads(path.read_text("utf-8"))["results"]
        for answer in result["answers"]
        for call in answer["asked"]
    ]


def _without_cached(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``calls`` without what a replay changes: whether the cache answered, and the time."""
    return [{k: v for k, v in call.items() if k not in ("cached", "seconds")} for call in calls]


class TestRecordedInEvents:
    def test_each_question_is_an_answered_event_of_the_cells_run(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Asked after its turn's command, as a command of its own, decided into one event
        with the reply, the verdict and the calls that decided it."""
        sessions: list[Session] = []
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        chat_server.answerer = _answerer
        cell = Cell("refund-desk", parse_policy("tiered"), (), (), judge=MODEL)
        run_cell(cell, scenario=_desk(), kept=sessions.append)
        run = sessions[0].run
        asked = [
            (step, command.question)
            for step, command in enumerate(run.commands, start=1)
            if isinstance(command, Ask)
        ]
        answered = [e for e in run.events if isinstance(e, Answered)]
        assert [(3, "Which order is it?"), (8, "What is the restocking fee?")] == asked[:2]
        assert [(True, False, 1), (True, True, 2), (False, True, 2)] == [
            (event.correct, event.judged, len(event.asked)) for event in answered
        ]

    def test_recorded_then_replayed_and_checked_with_the_server_stopped(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The run written, the server stopped and no cache in force: the run reads back its
        answers and their counts from its events, and check decides every question again
        from the recorded calls."""
        sessions: list[Session] = []
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        chat_server.answerer = _answerer
        cell = Cell("refund-desk", parse_policy("tiered"), (), (), judge=MODEL)
        result = run_cell(cell, scenario=_desk(), kept=sessions.append)
        save_run(sessions[0], Path("judged.jsonl"), "refund-desk")
        chat_server.stop()
        with caching(None):
            loaded = load_run(Path("judged.jsonl"))
            report = check_file(Path("judged.jsonl"))
        again = verdicts(loaded.session.run.events)
        assert (2, 2) == (result.metrics["answers_correct"], result.metrics["answers_judged"])
        assert {"answers_correct": 2, "answers_judged": 2} == answer_metrics(again)
        assert result.verdicts == again
        assert (True, True, ()) == (report.redecided, report.ok, report.problems)

    def test_a_redacted_copy_keeps_no_question_answer_nor_reply_and_checks_clean(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        sessions: list[Session] = []
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        chat_server.answerer = _answerer
        cell = Cell("refund-desk", parse_policy("tiered"), (), (), judge=MODEL)
        run_cell(cell, scenario=_desk(), kept=sessions.append)
        save_run(sessions[0], Path("judged.jsonl"), "refund-desk")
        export_redacted(Path("judged.jsonl"), Path("copy.jsonl"))
        copied = Path("copy.jsonl").read_text("utf-8")
        words = ("restocking", "Which order", "The fee is", "I do not know", "ORD-3300")
        assert ([], True) == ([w for w in words if w in copied], check_file(Path("copy.jsonl")).ok)

    def test_a_fork_of_a_received_run_asks_no_model_it_names(
        self,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Re-deciding the questions live would send the user's key to the model the file
        names: without --trust it is one line, and nothing is sent."""
        sessions: list[Session] = []
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        chat_server.answerer = _answerer
        cell = Cell("refund-desk", parse_policy("tiered"), (), (), judge=MODEL)
        run_cell(cell, scenario=_desk(), kept=sessions.append)
        save_run(sessions[0], Path("judged.jsonl"), "refund-desk")
        before = chat_server.requests
        with caching(None):
            status = main(["fork", "judged.jsonl", "--at", "0", "--out", "f.jsonl"])
        err = capsys.readouterr().err.splitlines()
        assert (2, 1, before) == (status, len(err), chat_server.requests)
        assert f"ask steps name model {MODEL!r}" in err[0]
        assert not Path("f.jsonl").exists()

    def test_timeline_show_and_view_read_a_judged_run_with_the_server_stopped(
        self,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        sessions: list[Session] = []
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        chat_server.answerer = _answerer
        cell = Cell("refund-desk", parse_policy("tiered"), (), (), judge=MODEL)
        run_cell(cell, scenario=_desk(), kept=sessions.append)
        save_run(sessions[0], Path("judged.jsonl"), "refund-desk")
        chat_server.stop()
        capsys.readouterr()
        assert 0 == main(["timeline", "judged.jsonl"])
        said = [line for line in capsys.readouterr().out.splitlines() if "Answered" in line]
        assert 3 == len(said)
        assert "asked 'Which order is it?': replied 'ORD-3300', correct; asked" in said[0]
        assert "replied 'I do not know.', wrong, as a judge said" in said[2]
        assert (0, 0) == (main(["show", "judged.jsonl"]), main(["view", "judged.jsonl"]))

    def test_bench_runs_writes_the_run_check_reads_with_the_server_stopped(
        self,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        monkeypatch.setattr(planning, "file_probes", lambda path: QUESTIONS)
        chat_server.answerer = _answerer
        argv = ["bench", "refund-desk", "--policy", "tiered", "--judge", MODEL]
        argv += ["--probes", "q.toml", "--runs", "runs", "--jobs", "1", "-q", "--json", "o.json"]
        assert 0 == main(argv)
        (path,) = Path("runs").iterdir()
        chat_server.stop()
        capsys.readouterr()
        with caching(None):
            assert 0 == main(["check", str(path)])
        (result,) = json.loads(Path("o.json").read_text("utf-8"))["results"]
        counted = answer_metrics(verdicts(load_run(path).session.run.events))
        assert (True, result["metrics"]["answers_correct"]) == (
            ": ok: " in capsys.readouterr().out,
            counted["answers_correct"],
        )

    def test_the_judges_calls_are_not_the_policys(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        assert 0 == _judged(chat_server, monkeypatch).metrics["llm_calls"]


class TestCommandLine:
    def test_a_server_that_fails_is_one_line(
        self,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        monkeypatch.setattr(planning, "file_probes", lambda path: QUESTIONS)
        chat_server.fail(500, times=10)
        argv = [
            "bench",
            "refund-desk",
            "--policy",
            "tiered",
            "--judge",
            MODEL,
            "--probes",
            "q.toml",
        ]
        assert 2 == main([*argv, "--jobs", "1", "-q"])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert "answered 500" in err

    def test_the_table_counts_the_answers(
        self,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        monkeypatch.setattr(planning, "file_probes", lambda path: QUESTIONS)
        chat_server.answerer = _answerer
        argv = [
            "bench",
            "refund-desk",
            "--policy",
            "tiered",
            "--judge",
            MODEL,
            "--probes",
            "q.toml",
        ]
        assert 0 == main(
            [*argv, "--jobs", "1", "-q", "--columns", "answers_correct,answers_judged"]
        )
        (row,) = [line for line in capsys.readouterr().out.splitlines() if "tiered" in line]
        assert ["2", "2"] == row.split()[-2:]

    @pytest.mark.parametrize("model", ["", "  "])
    def test_a_judge_without_a_model_name_is_refused(self, model: str) -> None:
        with pytest.raises(BadInput) as refused:
            plan(["refund-desk"], ["tiered"], judge=model)
        assert f"--judge {model!r}: name the model that answers the questions" == str(refused.value)

    def test_a_judge_without_questions_is_refused(self) -> None:
        with pytest.raises(BadInput, match="--judge judge-model: no probe of these scenarios"):
            plan(["refund-desk"], ["tiered"], judge=MODEL)


class TestReplicates:
    def test_each_replicate_asks_afresh_with_its_seed(
        self, chat_server: ChatServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        chat_server.answerer = _answerer
        for replicate in (0, 1):
            cell = Cell("refund-desk", parse_policy("tiered"), (), (), MODEL, None, replicate)
            run_cell(cell, scenario=_desk())
        assert (10, {0, 1}) == (
            chat_server.requests,
            {body["seed"] for body in chat_server.bodies},
        )
