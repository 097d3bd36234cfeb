"""memtape.core.paths: readers take regular files only, writers write over nothing else.

Nothing here opens a FIFO for reading: each refusal comes from ``os.stat``.
The commands' refusals, which could hang on a regression, are tested in a
subprocess with a timeout (``test_cli.py``, ``TestSpecialFiles``).
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtape.core import paths
from memtape.core.errors import BadInput
from memtape.core.paths import check_writable, kind, read_regular, regular_file, same_file


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A listening Unix socket (bound by a relative name: socket paths are short)."""
    monkeypatch.chdir(tmp_path)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("s.jsonl")
    yield tmp_path / "s.jsonl"
    listener.close()


def _refusal(call: object, *args: object) -> str:
    assert callable(call)
    with pytest.raises(BadInput) as raised:
        call(*args)
    return str(raised.value)


class TestRegularFile:
    def test_a_regular_file_is_its_path(self, tmp_path: Path) -> None:
        path = tmp_path / "run.jsonl"
        path.write_bytes(b"{}\n")
        assert path == regular_file(path, "run file")

    def test_a_symlink_to_a_regular_file_is_followed(self, tmp_path: Path) -> None:
        (tmp_path / "real.jsonl").write_bytes(b"{}\n")
        link = tmp_path / "link.jsonl"
        link.symlink_to("real.jsonl")
        assert link == regular_file(link, "run file")

    def test_a_fifo_is_refused_by_its_kind(self, fifo: Path) -> None:
        assert f"{fifo}: not a regular file (a FIFO)" == _refusal(regular_file, fifo, "run file")

    def test_a_socket_is_refused_by_its_kind(self, unix_socket: Path) -> None:
        assert f"{unix_socket}: not a regular file (a socket)" == _refusal(
            regular_file, unix_socket, "run file"
        )

    def test_a_device_is_refused_by_its_kind(self) -> None:
        assert "/dev/null: not a regular file (a character device)" == _refusal(
            regular_file, Path("/dev/null"), "run file"
        )

    def test_a_missing_file_names_what_was_expected(self, tmp_path: Path) -> None:
        path = tmp_path / "gone.toml"
        assert f"{path}: no such scenario file" == _refusal(regular_file, path, "scenario file")

    def test_a_missing_file_may_be_refused_in_the_callers_words(self, tmp_path: Path) -> None:
        path = tmp_path / "gone"
        with pytest.raises(BadInput) as raised:
            regular_file(path, "run file", missing="not here, nor a scenario")
        assert f"{path}: not here, nor a scenario" == str(raised.value)

    def test_a_directory_is_called_a_directory(self, tmp_path: Path) -> None:
        assert f"{tmp_path}: is a directory, not a run store" == _refusal(
            regular_file, tmp_path, "run store"
        )

    def test_a_symlink_loop_names_the_path_once(self, tmp_path: Path) -> None:
        """``str(OSError)`` would repeat the path: ``x: cannot read it: [Errno 40] ...: 'x'``."""
        loop = tmp_path / "loop.jsonl"
        loop.symlink_to("loop.jsonl")
        message = _refusal(regular_file, loop, "run file")
        assert (f"{loop}: cannot read it: Too many levels of symbolic links", 1) == (
            message,
            message.count(str(loop)),
        )

    def test_a_name_too_long_is_one_line_not_a_crash(self, tmp_path: Path) -> None:
        path = tmp_path / ("a" * 300)
        assert f"{path}: cannot read it: File name too long" == _refusal(
            regular_file, path, "run file"
        )


class TestReadRegular:
    def test_a_regular_file_is_read_whole(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.jsonl"
        path.write_bytes(b"x" * 70_000)
        assert b"x" * 70_000 == read_regular(path, "transcript")

    def test_a_fifo_is_refused(self, fifo: Path) -> None:
        assert f"{fifo}: not a regular file (a FIFO)" == _refusal(read_regular, fifo, "run file")

    def test_a_fifo_that_passed_the_first_check_is_refused_once_open(
        self, fifo: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A FIFO put in a file's place between the check and the open is opened without
        blocking, then refused by what the open descriptor is."""
        monkeypatch.setattr(paths, "regular_file", lambda path, what, **_: path)
        assert f"{fifo}: not a regular file (a FIFO)" == _refusal(read_regular, fifo, "run file")


class TestCheckWritable:
    def test_a_new_file_is_written_in_its_directory(self, tmp_path: Path) -> None:
        assert tmp_path == check_writable(tmp_path / "new.jsonl")

    def test_an_existing_regular_file_may_be_replaced(self, tmp_path: Path) -> None:
        path = tmp_path / "old.jsonl"
        path.write_bytes(b"old")
        assert tmp_path == check_writable(path)

    def test_a_fifo_is_not_written(self, fifo: Path) -> None:
        assert f"{fifo}: cannot write it: it is a FIFO" == _refusal(check_writable, fifo)

    def test_a_socket_is_not_written(self, unix_socket: Path) -> None:
        assert f"{unix_socket}: cannot write it: it is a socket" == _refusal(
            check_writable, unix_socket
        )

    def test_a_device_is_not_written(self) -> None:
        assert "/dev/null: cannot write it: it is a character device" == _refusal(
            check_writable, Path("/dev/null")
        )

    def test_a_name_too_long_is_refused_in_the_same_style(self, tmp_path: Path) -> None:
        path = tmp_path / ("a" * 300)
        assert f"{path}: cannot write it: File name too long" == _refusal(check_writable, path)


class TestKind:
    def test_each_kind_in_words(self, tmp_path: Path, fifo: Path) -> None:
        (tmp_path / "file").write_bytes(b"")
        files = (fifo, tmp_path, tmp_path / "file", Path("/dev/null"))
        assert ["a FIFO", "a directory", "a regular file", "a character device"] == [
            kind(os.stat(path).st_mode) for path in files
        ]


class TestSameFile:
    def test_a_file_and_a_link_to_it_are_the_same(self, tmp_path: Path) -> None:
        (tmp_path / "a").write_bytes(b"")
        (tmp_path / "b").symlink_to("a")
        assert (True, False) == (
            same_file(tmp_path / "a", tmp_path / "b"),
            same_file(tmp_path / "a", tmp_path),
        )

    def test_a_path_that_cannot_be_looked_up_is_no_other_file(self, tmp_path: Path) -> None:
        (tmp_path / "a").write_bytes(b"")
        assert (False, False) == (
            same_file(tmp_path / "a", tmp_path / "gone"),
            same_file(tmp_path / ("x" * 300), tmp_path / "a"),
        )
