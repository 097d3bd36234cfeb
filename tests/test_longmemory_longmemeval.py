"""memtape.lab.longmemory.longmemeval: a LongMemEval question and its history as a scenario."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, AdvanceClock
from memtape.core.errors import BadInput
from memtape.lab.longmemory import import_benchmark
from memtape.scenarios import Probe, Scenario, parse_scenario
from tests.transcripts import fixture, write_json

FILE = fixture("longmemeval.json")


def _scenario(question: str | None = "q-move-city", path: Path = FILE) -> Scenario:
    text = import_benchmark(path, "longmemeval", item=question, tokenizer="words")
    return parse_scenario(text, "lme.toml")


def _turns(scenario: Scenario) -> list[tuple[str, str]]:
    return [(s.role, s.text) for s in scenario.steps if isinstance(s, AddTurn)]


def _question(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(FILE.read_text("utf-8"))[0]
    entry.update(changes)
    return entry


def _unmarked() -> dict[str, Any]:
    """The first question with no turn marked has_answer."""
    entry = _question()
    for session in entry["haystack_sessions"]:
        for turn in session:
            turn.pop("has_answer", None)
    return entry


class TestQuestion:
    def test_the_sessions_are_turns_in_order(self) -> None:
        entry = _question()
        expected = [(t["role"], t["content"]) for s in entry["haystack_sessions"] for t in s]
        assert expected == _turns(_scenario())

    def test_the_question_is_a_probe_after_the_last_turn_with_its_marked_evidence(self) -> None:
        expected = Probe(None, 6, None, "Which city does the user live in now?", "Lisbon", (1, 5))
        assert (expected,) == _scenario().probes

    def test_the_dates_are_on_the_clock_in_hours_from_the_first_session(self) -> None:
        """2024/01/05 09:30, 02/01 20:15, 03/02 11:00; asked 03/10 18:00."""
        advances = [s.to for s in _scenario().steps if isinstance(s, AdvanceClock)]
        assert [658.75, 1369.5, 1568.5] == advances

    def test_sessions_listed_out_of_date_order_are_sorted(self) -> None:
        """The abstention question lists its later session first, as the oracle file may."""
        turns = _turns(_scenario("q-dog-name_abs"))
        assert turns[0][1].startswith("My dog Biscuit pulls on the lead")

    def test_an_abstention_question_has_no_evidence(self) -> None:
        (probe,) = _scenario("q-dog-name_abs").probes
        assert () == probe.evidence

    def test_without_marks_the_evidence_is_every_turn_of_the_answer_sessions(
        self, tmp_path: Path
    ) -> None:
        entry = _unmarked()
        path = write_json(tmp_path / "lme.json", [entry])
        (probe,) = _scenario(None, path).probes
        assert (1, 2, 5, 6) == probe.evidence

    def test_without_marks_an_answer_session_naming_no_session_is_counted(
        self, tmp_path: Path
    ) -> None:
        entry = _unmarked()
        entry["answer_session_ids"] = [*entry["answer_session_ids"], "gone-1", "gone-2"]
        path = write_json(tmp_path / "lme.json", [entry])
        text = import_benchmark(path, "longmemeval", item=None, tokenizer="words")
        assert "# 2 answer session ids naming no session left out\n" in text

    def test_the_import_table_names_the_item_and_counts_it(self) -> None:
        imported = _scenario().imported
        assert imported is not None
        assert {
            "file": "longmemeval.json",
            "format": "longmemeval",
            "item": "q-move-city",
            "sessions": 3,
            "turns_written": 6,
            "questions": 1,
        } == dict(imported)

    def test_the_question_type_is_in_the_about(self) -> None:
        expected = "LongMemEval question q-move-city (knowledge-update)."
        assert expected == _scenario().about


class TestRefusals:
    def test_tokenizer_recorded_says_the_data_set_records_no_counts(self) -> None:
        with pytest.raises(BadInput) as caught:
            import_benchmark(FILE, "longmemeval", item="q-move-city", tokenizer="recorded")
        assert (
            f"{FILE}: --tokenizer recorded: a longmemeval file records no token counts to "
            "measure its turns by (choose cl100k_base, o200k_base or words)"
        ) == str(caught.value)

    def test_a_file_of_several_questions_needs_one_named(self) -> None:
        with pytest.raises(BadInput) as caught:
            _scenario(None)
        expected = f"{FILE}: 2 questions: choose one with --question (q-move-city, q-dog-name_abs)"
        assert expected == str(caught.value)

    def test_an_unknown_question_gets_the_closest_one(self) -> None:
        with pytest.raises(BadInput) as caught:
            _scenario("q-dog-name")
        expected = (
            f"{FILE}: --question 'q-dog-name': no such question: did you mean 'q-dog-name_abs'?"
        )
        assert expected == str(caught.value)

    def test_an_unknown_question_far_from_any_gets_the_list(self) -> None:
        with pytest.raises(BadInput) as caught:
            _scenario("zzz")
        expected = (
            f"{FILE}: --question 'zzz': no such question (the file's: q-move-city, q-dog-name_abs)"
        )
        assert expected == str(caught.value)

    @pytest.mark.parametrize(
        ("document", "message"),
        [
            ({"question_id": "x"}, "a LongMemEval file is a list of questions, got an object"),
            ([3], "[0]: a question is an object with a question_id"),
            (
                [_question(haystack_dates=["yesterday", "", ""])],
                "question 'q-move-city': haystack_dates[0]: a date is written 2023/05/20 "
                "(Sat) 02:21, got 'yesterday'",
            ),
            (
                [_question(haystack_sessions=[[{"role": "bot", "content": "x"}], [], []])],
                "question 'q-move-city': haystack_sessions[0][0]: a turn's role is user or "
                "assistant, got 'bot'",
            ),
            (
                [_question(haystack_dates=[])],
                "question 'q-move-city': 3 haystack_sessions, 0 haystack_dates and 3 "
                "haystack_session_ids: one of each a session",
            ),
            (
                [_question(answer=None)],
                "question 'q-move-city': answer must be a non-empty string, got nothing",
            ),
        ],
    )
    def test_a_bad_file_is_one_line_naming_the_place(
        self, tmp_path: Path, document: Any, message: str
    ) -> None:
        path = write_json(tmp_path / "lme.json", document)
        with pytest.raises(BadInput) as caught:
            _scenario(None, path)
        assert str(caught.value).startswith(f"{path}: {message}")

    def test_a_file_that_is_not_json_is_one_line(self, tmp_path: Path) -> None:
        path = tmp_path / "lme.json"
        path.write_text("[{", "utf-8")
        with pytest.raises(BadInput, match=r"lme\.json: not a LongMemEval file \(not JSON: "):
            _scenario(None, path)


class TestCommandLine:
    def test_import_writes_the_question_s_scenario(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "q.toml"
        argv = ["import", str(FILE), "--format", "longmemeval", "--question", "q-move-city"]
        assert 0 == main([*argv, "--out", str(out)])
        assert f"wrote {out}\n" == capsys.readouterr().out
        assert 1 == len(parse_scenario(out.read_text("utf-8"), "q.toml").probes)

    def test_a_refusal_is_one_line_and_nothing_is_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "q.toml"
        argv = ["import", str(FILE), "--format", "longmemeval", "--question", "nope"]
        assert 0 != main([*argv, "--out", str(out)])
        captured = capsys.readouterr()
        assert (1, False) == (len(captured.err.splitlines()), out.exists())

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            (
                ["--format", "locomo", "--question", "q"],
                "--question is for --format longmemeval, not locomo",
            ),
            (["--question", "q"], "--question is for --format longmemeval, not auto"),
            (
                ["--format", "longmemeval", "--sample", "1"],
                "--sample is for --format locomo, not longmemeval",
            ),
            (
                ["--format", "longmemeval", "--salient", "all"],
                "--salient is for transcripts, not --format longmemeval",
            ),
        ],
    )
    def test_an_option_of_another_format_is_refused(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        options: list[str],
        message: str,
    ) -> None:
        out = tmp_path / "q.toml"
        assert 0 != main(["import", str(FILE), *options, "--out", str(out)])
        assert [f"memtape: error: {message}"] == capsys.readouterr().err.splitlines()
        assert not out.exists()

    @pytest.mark.parametrize(
        ("path", "options"),
        [
            (FILE, ["--format", "longmemeval", "--question", "q-move-city"]),
            (fixture("locomo.json"), ["--format", "locomo", "--sample", "1"]),
        ],
    )
    def test_recorded_counts_are_refused_as_none_recorded(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path, options: list[str]
    ) -> None:
        """The data sets' files hold no provider's usage: ``--tokenizer recorded`` says so,
        rather than calling ``recorded`` an unknown tokenizer."""
        out = tmp_path / "q.toml"
        argv = ["import", str(path), *options, "--tokenizer", "recorded", "--out", str(out)]
        assert 0 != main(argv)
        expected = (
            f"memtape: error: {path}: --tokenizer recorded: a {options[1]} file records no "
            "token counts to measure its turns by (choose cl100k_base, o200k_base or words)"
        )
        assert [expected] == capsys.readouterr().err.splitlines()
        assert not out.exists()
