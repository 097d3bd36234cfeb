"""memtape.lab.files: output files written whole or not at all, checked before any work."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.files import check_writable, write_atomic


def test_a_file_in_an_existing_directory_is_writable(tmp_path: Path) -> None:
    assert tmp_path == check_writable(tmp_path / "out.json")


def test_a_bare_name_is_written_in_the_working_directory() -> None:
    assert Path(".") == check_writable(Path("out.json"))


@pytest.mark.parametrize(
    ("name", "message"), [(".", "is a directory"), ("no/out.json", "no such directory")]
)
def test_an_unwritable_path_is_named_with_its_option(
    tmp_path: Path, name: str, message: str
) -> None:
    path = tmp_path / name
    with pytest.raises(BadInput, match=f"^--json {path}: {message}"):
        check_writable(path, "--json")


def test_a_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"old")
    write_atomic(path, b"new")
    assert (b"new", ["out.json"]) == (path.read_bytes(), [p.name for p in tmp_path.iterdir()])


def test_a_write_into_a_missing_directory_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such directory"):
        write_atomic(tmp_path / "no" / "out.json", b"x")
    assert [] == list(tmp_path.iterdir())
