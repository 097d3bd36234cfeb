"""memtape.lab.importers.wrappers: the records of a document that wraps them, and --path."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from tests.transcripts import write_json, write_lines

CHAT = [
    {"role": "user", "content": "What is in /etc/hostname?"},
    {"role": "assistant", "content": "It says web-01."},
]


class TestWrappers:
    def test_a_traj_wrapper_is_found_without_being_told(self, tmp_path: Path) -> None:
        path = write_json(tmp_path / "row.json", {"instance_id": "x-1", "traj": CHAT})
        transcript = read_transcript(path)
        assert (["user", "assistant"], f"{path}: traj[1]") == (
            [turn.role for turn in transcript.turns],
            transcript.turns[1].where,
        )

    def test_path_names_a_list_nested_in_the_document(self, tmp_path: Path) -> None:
        path = write_json(tmp_path / "run.json", {"run": {"id": 7, "history": CHAT}})
        transcript = read_transcript(path, key="run.history")
        assert ["What is in /etc/hostname?", "It says web-01."] == [
            turn.text for turn in transcript.turns
        ]

    def test_path_a_document_does_not_have_is_refused_naming_it(self, tmp_path: Path) -> None:
        path = write_json(tmp_path / "run.json", {"run": {"messages": CHAT}})
        with pytest.raises(BadInput) as caught:
            read_transcript(path, key="run.history")
        expected = f"{path}: --path run.history: the document has no 'history' there"
        assert expected == str(caught.value)

    def test_path_to_something_not_a_list_is_refused(self, tmp_path: Path) -> None:
        path = write_json(tmp_path / "run.json", {"run": {"history": "none"}})
        with pytest.raises(BadInput, match=r"--path run.history is not a list of records"):
            read_transcript(path, key="run.history")

    def test_path_on_a_jsonl_file_is_refused(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "chat.jsonl", *CHAT)
        with pytest.raises(BadInput, match=r"--path messages is for one JSON document"):
            read_transcript(path, key="messages")


class TestCommandLine:
    def test_path_on_the_command_line(self, tmp_path: Path) -> None:
        path = write_json(tmp_path / "run.json", {"run": {"history": CHAT}})
        out = tmp_path / "run.toml"
        status = main(["import", str(path), "--path", "run.history", "--out", str(out), "-q"])
        assert (0, True) == (status, "It says web-01." in out.read_text("utf-8"))

    def test_a_bad_path_is_one_line_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = write_json(tmp_path / "run.json", {"run": {"history": CHAT}})
        out = tmp_path / "run.toml"
        status = main(["import", str(path), "--path", "run.turns", "--out", str(out)])
        err = capsys.readouterr().err
        assert (2, 1, False) == (status, len(err.strip().splitlines()), out.exists())
        assert "--path run.turns: the document has no 'turns' there" in err
