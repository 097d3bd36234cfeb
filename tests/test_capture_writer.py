"""The capture file's writer (memtape.capture.writer): a header, numbered lines,
threads that follow previous_response_id, appends."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memtape.capture.exchanges import Exchange
from memtape.capture.writer import CaptureWriter
from memtape.core.errors import BadInput


def _responses(request: dict[str, Any], response_id: str) -> Exchange:
    return Exchange(
        method="POST",
        path="/v1/responses",
        endpoint="openai.responses",
        request_headers=[("Authorization", "Bearer sk-canary")],
        request_body=json.dumps(request).encode(),
        status=200,
        response_body=bytearray(json.dumps({"id": response_id}).encode()),
    )


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class TestCaptureWriter:
    def test_a_header_then_numbered_exchanges(self, tmp_path: Path) -> None:
        writer = CaptureWriter(tmp_path / "c.jsonl")
        writer.record(_responses({"input": "a"}, "r1"))
        writer.record(_responses({"input": "b"}, "r2"))
        writer.close()
        lines = _lines(tmp_path / "c.jsonl")
        assert ([1, None, None], [1, 2]) == (
            [lines[0]["memtape_capture"], lines[0].get("exchange"), lines[0].get("endpoint")],
            [line["exchange"] for line in lines[1:]],
        )

    def test_a_previous_response_id_follows_the_thread_of_its_response(
        self, tmp_path: Path
    ) -> None:
        writer = CaptureWriter(tmp_path / "c.jsonl")
        writer.record(_responses({"instructions": "S", "input": "first"}, "r1"))
        writer.record(_responses({"input": "other"}, "r2"))
        writer.record(_responses({"input": "next", "previous_response_id": "r1"}, "r3"))
        writer.close()
        threads = [line["thread"] for line in _lines(tmp_path / "c.jsonl")[1:]]
        assert (threads[0], True) == (threads[2], threads[0] != threads[1])

    def test_a_second_recording_appends_a_header_and_numbers_from_one(self, tmp_path: Path) -> None:
        for _ in range(2):
            writer = CaptureWriter(tmp_path / "c.jsonl")
            writer.record(_responses({"input": "a"}, "r1"))
            writer.close()
        lines = _lines(tmp_path / "c.jsonl")
        assert [None, 1, None, 1] == [line.get("exchange") for line in lines]

    def test_no_credential_is_written(self, tmp_path: Path) -> None:
        writer = CaptureWriter(tmp_path / "c.jsonl")
        writer.record(_responses({"input": "a"}, "r1"))
        writer.close()
        assert "sk-canary" not in (tmp_path / "c.jsonl").read_text()


class TestSpecialFiles:
    def test_a_fifo_is_refused_without_waiting_for_a_reader(self, tmp_path: Path) -> None:
        fifo = tmp_path / "c.jsonl"
        os.mkfifo(fifo)
        with pytest.raises(BadInput, match="cannot write it: it is a FIFO"):
            CaptureWriter(fifo)

    def test_a_directory_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match="cannot write it: it is a directory"):
            CaptureWriter(tmp_path)


class TestOtherFiles:
    def test_a_file_that_is_no_capture_is_refused_and_left_as_it_was(self, tmp_path: Path) -> None:
        run = tmp_path / "run.jsonl"
        run.write_text('{"format": "memtape-run", "version": 3}\n')
        with pytest.raises(BadInput) as refused:
            CaptureWriter(run)
        assert (
            f"{run}: not a capture file (its first line is no memtape_capture header): "
            "name a new file, or one memtape record wrote",
            '{"format": "memtape-run", "version": 3}\n',
        ) == (str(refused.value), run.read_text())
