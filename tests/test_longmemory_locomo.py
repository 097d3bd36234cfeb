"""memtape.lab.longmemory.locomo: a LoCoMo conversation and its questions as a scenario."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, AdvanceClock
from memtape.core.errors import BadInput
from memtape.lab.longmemory import import_benchmark
from memtape.scenarios import Probe, Scenario, parse_scenario
from tests.transcripts import fixture, write_json

FILE = fixture("locomo.json")


def _text(sample: str | None = "conv-1", path: Path = FILE) -> str:
    return import_benchmark(path, "locomo", item=sample, tokenizer="words")


def _scenario(sample: str | None = "conv-1", path: Path = FILE) -> Scenario:
    return parse_scenario(_text(sample, path), "locomo.toml")


def _sample(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(FILE.read_text("utf-8"))[0]
    entry.update(changes)
    return entry


class TestConversation:
    def test_each_speaker_s_turns_keep_the_name_speaker_a_the_user(self) -> None:
        turns = [(s.role, s.text) for s in _scenario().steps if isinstance(s, AddTurn)]
        assert [
            ("user", "Ines: Morning Tomas! I finally booked the pottery class for Saturdays."),
            ("assistant", "Tomas: Nice! I adopted a greyhound last week, her name is Luna."),
            ("user", "Ines: Send a picture!"),
            ("assistant", "Tomas: [image: a grey dog lying on a sofa]"),
        ] == turns[:4]
        assert 8 == len(turns)

    def test_the_questions_are_probes_with_their_evidence_turns(self) -> None:
        assert (
            Probe(None, 8, None, "What is the name of Tomas's dog?", "Luna", (2,)),
            Probe(
                None, 8, None, "On which day does Ines go to pottery class now?", "Sunday", (1, 7)
            ),
            Probe(
                None, 8, None, "When did Tomas adopt his dog?", "The week before 4 March 2023", (2,)
            ),
        ) == _scenario().probes

    def test_an_adversarial_question_is_left_out_and_said(self) -> None:
        assert "# 1 adversarial question (no answer, only a bait) left out\n" in _text()

    def test_the_session_dates_are_on_the_clock(self) -> None:
        advances = [s.to for s in _scenario().steps if isinstance(s, AdvanceClock)]
        first = datetime(2023, 3, 4, 9, 5)
        expected = [
            (datetime(2023, 3, 19, 19, 40) - first).total_seconds() / 3600,
            (datetime(2023, 4, 2, 13, 15) - first).total_seconds() / 3600,
        ]
        assert expected == advances

    def test_a_numeric_answer_reads_as_written(self) -> None:
        (probe,) = _scenario("conv-2").probes
        assert ("5", (3,)) == (probe.answer, probe.evidence)

    def test_a_sample_may_be_named_by_its_place(self) -> None:
        assert "conv-2" == _scenario("2").name

    def test_evidence_naming_no_turn_is_left_out_and_said(self, tmp_path: Path) -> None:
        qa = [{"question": "Dog?", "answer": "Luna", "evidence": ["D1:2", "D9:9"], "category": 1}]
        path = write_json(tmp_path / "locomo.json", [_sample(qa=qa)])
        text = _text(None, path)
        assert "# 1 evidence reference naming no turn of the sessions left out\n" in text
        assert ((2,),) == tuple(p.evidence for p in parse_scenario(text, "l.toml").probes)


class TestSessionKeys:
    def _turns(self, tmp_path: Path, conversation: dict[str, Any]) -> list[str]:
        path = write_json(tmp_path / "locomo.json", [_sample(conversation=conversation)])
        return [s.text for s in _scenario(None, path).steps if isinstance(s, AddTurn)]

    def test_a_session_numbered_with_a_leading_zero_is_read(self, tmp_path: Path) -> None:
        conversation = _sample()["conversation"]
        conversation["session_01"] = conversation.pop("session_1")
        conversation["session_01_date_time"] = conversation.pop("session_1_date_time")
        assert 8 == len(self._turns(tmp_path, conversation))

    def test_two_keys_of_one_number_are_both_read_once(self, tmp_path: Path) -> None:
        conversation = _sample()["conversation"]
        conversation["session_01"] = [{"speaker": "Ines", "dia_id": "D0:1", "text": "Also."}]
        turns = self._turns(tmp_path, conversation)
        assert (9, 1) == (len(turns), turns.count("Ines: Also."))

    def test_a_session_number_of_5000_digits_comes_last(self, tmp_path: Path) -> None:
        conversation = _sample()["conversation"]
        key = "session_" + "9" * 5000
        conversation[key] = [{"speaker": "Ines", "dia_id": "D9:1", "text": "Bye."}]
        conversation[f"{key}_date_time"] = "1:00 pm on 1 May, 2024"
        assert "Ines: Bye." == self._turns(tmp_path, conversation)[-1]


class TestRefusals:
    def test_an_unknown_sample_gets_the_list(self) -> None:
        with pytest.raises(BadInput) as caught:
            _scenario("zzz")
        assert f"{FILE}: --sample 'zzz': no such sample (the file's: conv-1, conv-2)" == str(
            caught.value
        )

    @pytest.mark.parametrize("sample", ["9" * 5000, "\u0662"], ids=["5000-digits", "arabic-two"])
    def test_a_place_is_ascii_digits_within_the_file(self, sample: str) -> None:
        with pytest.raises(BadInput) as caught:
            _scenario(sample)
        assert str(caught.value).startswith(f"{FILE}: --sample {sample!r}: no such sample")

    def test_a_file_of_several_samples_needs_one_named(self) -> None:
        with pytest.raises(BadInput) as caught:
            _scenario(None)
        assert f"{FILE}: 2 samples: choose one with --sample (conv-1, conv-2)" == str(caught.value)

    @pytest.mark.parametrize(
        ("document", "message"),
        [
            ({}, "a LoCoMo file is a list of samples, got an object"),
            ([{"sample_id": "c"}], "[0]: a sample is an object with a conversation"),
            (
                [_sample(qa="none")],
                "sample 'conv-1': qa must be a list, got str 'none'",
            ),
            (
                [
                    _sample(
                        conversation={
                            **_sample()["conversation"],
                            "session_2_date_time": "last spring",
                        }
                    )
                ],
                "sample 'conv-1': session_2_date_time: a date is written 1:56 pm on 8 May, "
                "2023, got 'last spring'",
            ),
            (
                [
                    _sample(
                        conversation={**_sample()["conversation"], "session_3": [{"text": "hi"}]}
                    )
                ],
                "sample 'conv-1': session_3[0]: speaker must be a non-empty string, got nothing",
            ),
        ],
    )
    def test_a_bad_file_is_one_line_naming_the_place(
        self, tmp_path: Path, document: Any, message: str
    ) -> None:
        path = write_json(tmp_path / "locomo.json", document)
        with pytest.raises(BadInput) as caught:
            _scenario(None, path)
        assert f"{path}: {message}" == str(caught.value)


class TestCommandLine:
    def test_import_writes_the_sample_s_scenario(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "c.toml"
        argv = ["import", str(FILE), "--format", "locomo", "--sample", "conv-1"]
        assert 0 == main([*argv, "--out", str(out)])
        assert f"wrote {out}\n" == capsys.readouterr().out
        assert 3 == len(parse_scenario(out.read_text("utf-8"), "c.toml").probes)
