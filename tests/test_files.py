"""memtape.lab.files: output files written whole or not at all, checked before any work."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import os
from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.files import check_writable, output_path, write_atomic


def test_a_file_in_an_existing_directory_is_writable(tmp_path: Path) -> None:
    assert tmp_path == check_writable(tmp_path / "out.json")


def test_a_bare_name_is_written_in_the_working_directory() -> None:
    assert Path(".") == check_writable(Path("out.json"))


@pytest.mark.parametrize(
    ("name", "reason"), [(".", "it is a directory"), ("no/out.json", "no such directory")]
)
def test_an_unwritable_path_is_one_line_in_one_style(
    tmp_path: Path, name: str, reason: str
) -> None:
    path = tmp_path / name
    with pytest.raises(BadInput, match=f"^{path}: cannot write it: {reason}"):
        check_writable(path)


class TestOutputPath:
    def test_a_file_in_an_existing_directory_is_its_path(self, tmp_path: Path) -> None:
        assert tmp_path / "run.jsonl" == output_path(str(tmp_path / "run.jsonl"))

    @pytest.mark.parametrize("name", ["x.db/", "new/", "run.jsonl/"])
    def test_a_trailing_slash_names_a_directory(self, tmp_path: Path, name: str) -> None:
        """``Path`` would drop the slash and write ``x.db``; the user named a directory."""
        text = f"{tmp_path}/{name}"
        with pytest.raises(BadInput) as raised:
            output_path(text)
        expected = f"{text}: cannot write it: it ends in a slash, so it names a directory"
        assert (expected, [], False) == (
            str(raised.value),
            list(tmp_path.iterdir()),
            Path(text).exists(),
        )

    def test_an_existing_directory_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match=f"^{tmp_path}: cannot write it: it is a directory$"):
            output_path(str(tmp_path))


def test_a_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"old")
    write_atomic(path, b"new")
    assert (b"new", ["out.json"]) == (path.read_bytes(), [p.name for p in tmp_path.iterdir()])


def test_a_written_file_is_readable_by_all(tmp_path: Path) -> None:
    """As a run file is: mkstemp alone would leave it private (0600)."""
    path = tmp_path / "out.json"
    write_atomic(path, b"x")
    assert 0o644 == path.stat().st_mode & 0o777


def test_a_write_into_a_missing_directory_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such directory"):
        write_atomic(tmp_path / "no" / "out.json", b"x")
    assert [] == list(tmp_path.iterdir())


def test_a_fifo_named_for_output_is_refused_before_any_work(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    os.mkfifo(path)
    with pytest.raises(BadInput) as raised:
        output_path(str(path))
    assert f"{path}: cannot write it: it is a FIFO" == str(raised.value)
