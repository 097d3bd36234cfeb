"""memtape.lab.importers.records: a transcript's half-written last line is skipped with a
warning naming it, as a run file's is; any other malformed line is refused."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import warnings
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.importers.records import UnfinishedLine, read_source
from tests.transcripts import fixture

CHAT = b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n'
TORN = b'{"role": "user", "content": "and th'


def _file(tmp_path: Path, data: bytes, name: str = "chat.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


class TestAnUnfinishedLastLine:
    def test_it_is_skipped_with_a_warning_naming_the_line(self, tmp_path: Path) -> None:
        path = _file(tmp_path, CHAT + TORN)

        with pytest.warns(UnfinishedLine) as caught:
            source = read_source(path)
        assert [f"{path}:1", f"{path}:2"] == [record.where for record in source.records]
        assert [f"{path}:3: an unfinished last line (no newline, not JSON): skipped"] == [
            str(warning.message) for warning in caught
        ]

    def test_a_whole_last_line_without_a_newline_is_read(self, tmp_path: Path) -> None:
        path = _file(tmp_path, CHAT.rstrip(b"\n"))

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert 2 == len(read_source(path).records)

    def test_a_malformed_last_line_that_ends_its_line_is_refused(self, tmp_path: Path) -> None:
        path = _file(tmp_path, CHAT + TORN + b"\n")

        with pytest.raises(BadInput, match=rf"^{path}:3: not a JSON object: "):
            read_source(path)

    def test_a_malformed_line_before_the_last_is_refused(self, tmp_path: Path) -> None:
        path = _file(tmp_path, TORN + b"\n" + CHAT)

        with pytest.raises(BadInput, match=rf"^{path}:1: not a JSON object: "):
            read_source(path)


class TestImportingOne:
    def test_a_claude_code_session_cut_mid_write_imports_with_one_warning(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        whole = fixture("claude-code-session.jsonl").read_bytes()
        cut = _file(tmp_path, whole + whole.splitlines(keepends=True)[-1][:40], "session.jsonl")
        lines = len(whole.splitlines()) + 1
        out = tmp_path / "s.toml"

        assert 0 == main(["import", str(cut), "--out", str(out), "-q"])
        captured = capsys.readouterr()
        assert [
            f"memtape: warning: {cut}:{lines}: an unfinished last line (no newline, not JSON): "
            "skipped"
        ] == captured.err.splitlines()
        assert out.is_file()
