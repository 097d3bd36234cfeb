"""memtape.llm.cache: answers by content in SQLite, shared by processes, whole when killed."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import gc
import json
import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.llm.cache import (
    AnswerCache,
    StoredAnswer,
    cache_key,
    cache_setting,
    caching,
)
from memtape.llm.cache_location import CACHE_ENV, DEFAULT_CACHE
from tests.chained import lines_of
from tests.llm_runs import scenario
from tests.llm_server import ChatServer

MESSAGES = [{"role": "user", "content": "fold this"}]
KEY = cache_key("http://h/v1", "m", MESSAGES, {"temperature": 0.0})


def _answers(run: Path) -> list[dict[str, Any]]:
    return [
        line["event"]["asked"][0]
        for line in lines_of(run)[1:]
        if line["type"] == "CompactionTriggered"
    ]


def _write_many(path: str, worker: int, count: int) -> None:
    cache = AnswerCache(Path(path))
    for number in range(count):
        cache.put(f"{worker}-{number}", StoredAnswer(f"answer {worker} {number}", 1, 2, 0.5))


def _open_files(folder: Path) -> int:
    """How many of this process's file descriptors are open on files in ``folder``."""
    descriptors = Path("/proc/self/fd")
    paths = []
    for fd in os.listdir(descriptors):
        try:
            paths.append(os.readlink(descriptors / fd))
        except FileNotFoundError:  # the listing's own descriptor, closed by now
            continue
    return sum(Path(path).parent == folder for path in paths)


def _collect_then_write(path: str, worker: int, count: int) -> None:
    """A worker whose collector runs first: it finds whatever its parent left for it."""
    gc.collect()
    _write_many(path, worker, count)
    gc.collect()


def _write_forever(path: str) -> None:
    cache = AnswerCache(Path(path))
    number = 0
    while True:
        cache.put(f"k{number}", StoredAnswer("x" * 1000, 1, 2, 0.5))
        number += 1


class TestKey:
    @pytest.mark.parametrize(
        "other",
        [
            cache_key("http://other/v1", "m", MESSAGES, {"temperature": 0.0}),
            cache_key("http://h/v1", "m2", MESSAGES, {"temperature": 0.0}),
            cache_key("http://h/v1", "m", [{"role": "user", "content": "fold that"}], {}),
            cache_key("http://h/v1", "m", MESSAGES, {"temperature": 0.5}),
            cache_key("http://h/v1", "m", MESSAGES, {"temperature": 0.0, "seed": 1}),
        ],
    )
    def test_each_part_of_the_request_changes_the_key(self, other: str) -> None:
        assert KEY != other

    def test_the_same_request_has_the_same_key(self) -> None:
        assert KEY == cache_key("http://h/v1", "m", list(MESSAGES), {"temperature": 0.0})


class TestStore:
    def test_an_answer_comes_back_as_it_was_stored(self, tmp_path: Path) -> None:
        cache = AnswerCache(tmp_path / "c.sqlite")
        cache.put(KEY, StoredAnswer("the summary", 10, 3, 0.25))

        assert StoredAnswer("the summary", 10, 3, 0.25) == cache.get(KEY)
        assert cache.get("other") is None

    def test_an_answer_keeps_what_the_cap_cut(self, tmp_path: Path) -> None:
        cache = AnswerCache(tmp_path / "c.sqlite")
        cache.put(KEY, StoredAnswer("cut", 1, 2, 0.5, 40))

        assert StoredAnswer("cut", 1, 2, 0.5, 40) == cache.get(KEY)

    def test_a_cache_made_before_the_cap_gains_its_column(self, tmp_path: Path) -> None:
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            db.execute(
                "CREATE TABLE answers (key TEXT PRIMARY KEY, output TEXT NOT NULL, "
                "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
                "seconds REAL NOT NULL) WITHOUT ROWID"
            )
            db.execute("INSERT INTO answers VALUES (?, 'old', 1, 2, 0.5)", (KEY,))
        db.close()
        cache = AnswerCache(tmp_path / "c.sqlite")
        cache.put("new", StoredAnswer("new", 1, 2, 0.5, 3))

        assert [StoredAnswer("old", 1, 2, 0.5), StoredAnswer("new", 1, 2, 0.5, 3)] == [
            cache.get(KEY),
            cache.get("new"),
        ]

    def test_the_first_answer_for_a_key_stays(self, tmp_path: Path) -> None:
        cache = AnswerCache(tmp_path / "c.sqlite")
        cache.put(KEY, StoredAnswer("first", 1, 1, 0.1))
        cache.put(KEY, StoredAnswer("second", 1, 1, 0.1))

        assert "first" == (cache.get(KEY) or StoredAnswer("", 0, 0, 0)).output

    def test_the_file_is_in_wal_mode(self, tmp_path: Path) -> None:
        AnswerCache(tmp_path / "c.sqlite").put(KEY, StoredAnswer("a", 1, 1, 0.1))

        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            assert ("wal",) == db.execute("PRAGMA journal_mode").fetchone()

    def test_its_folder_is_made(self, tmp_path: Path) -> None:
        AnswerCache(tmp_path / "a" / "b" / "c.sqlite").put(KEY, StoredAnswer("a", 1, 1, 0.1))

        assert (tmp_path / "a" / "b" / "c.sqlite").is_file()

    def test_a_file_that_is_no_cache_is_one_line(self, tmp_path: Path) -> None:
        (tmp_path / "c.sqlite").write_text("not a database, but long enough to look like one " * 9)

        with pytest.raises(BadInput, match=r"c\.sqlite: cannot open the response cache"):
            AnswerCache(tmp_path / "c.sqlite").get(KEY)

    def test_processes_writing_at_once_lose_nothing(self, tmp_path: Path) -> None:
        path = str(tmp_path / "c.sqlite")
        AnswerCache(Path(path)).put("seed", StoredAnswer("s", 1, 1, 0.1))
        workers = [
            multiprocessing.Process(target=_write_many, args=(path, worker, 60))
            for worker in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)

        assert [0, 0, 0, 0] == [worker.exitcode for worker in workers]
        cache = AnswerCache(Path(path))
        assert 1 + 4 * 60 == len(cache)
        assert "answer 3 59" == (cache.get("3-59") or StoredAnswer("", 0, 0, 0)).output

    def test_a_cache_let_go_closes_its_file_at_once(self, tmp_path: Path) -> None:
        """Python's sqlite3 connection sits in a reference cycle: left to the collector, it
        stayed open, and a fork handed it to children that could close it under others."""
        gc.disable()
        try:
            AnswerCache(tmp_path / "c.sqlite").put(KEY, StoredAnswer("a", 1, 1, 0.1))
            open_files = _open_files(tmp_path.resolve())
        finally:
            gc.enable()

        assert 0 == open_files

    def test_a_child_never_closes_its_parents_connection(self, tmp_path: Path) -> None:
        """The parent's cache stays open across the fork; each child collects its garbage and
        closes its caches, and every answer of every process is still there."""
        path = tmp_path / "c.sqlite"
        parents = AnswerCache(path)
        parents.put("seed", StoredAnswer("s", 1, 1, 0.1))
        context = multiprocessing.get_context("fork")
        workers = [
            context.Process(target=_collect_then_write, args=(str(path), worker, 60))
            for worker in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(300)
        parents.put("after", StoredAnswer("a", 1, 1, 0.1))

        assert [0, 0, 0, 0] == [worker.exitcode for worker in workers]
        assert 2 + 4 * 60 == len(AnswerCache(path))

    def test_a_killed_writer_leaves_a_whole_file(self, tmp_path: Path) -> None:
        path = tmp_path / "c.sqlite"
        writer = multiprocessing.Process(target=_write_forever, args=(str(path),))
        writer.start()
        deadline = time.monotonic() + 30
        watcher = AnswerCache(path)
        while time.monotonic() < deadline:
            if path.exists() and len(watcher) >= 50:
                break
            time.sleep(0.05)
        watcher.close()
        assert writer.pid is not None
        os.kill(writer.pid, signal.SIGKILL)
        writer.join(10)

        with sqlite3.connect(path) as db:
            assert ("ok",) == db.execute("PRAGMA integrity_check").fetchone()
        cache = AnswerCache(path)
        assert len(cache) >= 50
        assert "x" * 1000 == (cache.get("k0") or StoredAnswer("", 0, 0, 0)).output
        cache.put("after", StoredAnswer("still writable", 1, 1, 0.1))
        assert cache.get("after") is not None


class TestSetting:
    def test_the_variable_names_the_file(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine.sqlite"))

        assert tmp_path / "mine.sqlite" == cache_setting()

    def test_else_the_default_under_the_current_directory(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv(CACHE_ENV, raising=False)

        assert Path(".memtape/llm-cache.sqlite") == DEFAULT_CACHE == cache_setting()

    def test_no_cache_within_caching_none(self) -> None:
        with caching(None):
            assert cache_setting() is None


@pytest.mark.usefixtures("llm_env")
class TestRuns:
    def test_a_second_run_asks_nothing_and_says_each_answer_was_cached(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        assert 0 == main(["run", str(path), "--out", str(tmp_path / "one.jsonl")])
        assert 3 == chat_server.requests

        assert 0 == main(["run", str(path), "--out", str(tmp_path / "two.jsonl")])
        assert 3 == chat_server.requests
        first, second = _answers(tmp_path / "one.jsonl"), _answers(tmp_path / "two.jsonl")
        assert [False] * 3 == [call["cached"] for call in first]
        assert [{**call, "cached": True} for call in first] == second

    def test_runs_from_a_warm_cache_are_the_same_bytes(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        for name in ("cold", "warm", "again"):
            assert 0 == main(["run", str(path), "--out", str(tmp_path / f"{name}.jsonl")])

        assert (tmp_path / "warm.jsonl").read_bytes() == (tmp_path / "again.jsonl").read_bytes()

    def test_the_default_file_is_made_under_the_working_directory(
        self, tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv(CACHE_ENV)
        path = scenario(tmp_path / "desk.toml", chat_server.url)

        assert 0 == main(["run", str(path), "--out", str(tmp_path / "one.jsonl")])
        assert 3 == len(AnswerCache(tmp_path / ".memtape" / "llm-cache.sqlite"))

    def test_no_cache_asks_every_time_and_stores_nothing(
        self, tmp_path: Path, chat_server: ChatServer, llm_env: Path
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        for name in ("one", "two"):
            out = str(tmp_path / f"{name}.jsonl")
            assert 0 == main(["run", str(path), "--out", out, "--no-cache"])

        assert 6 == chat_server.requests
        assert not llm_env.exists()

    def test_a_cache_that_cannot_be_opened_is_one_line_and_nothing_is_written(
        self,
        tmp_path: Path,
        chat_server: ChatServer,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        (tmp_path / "folder").mkdir()
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / "folder"))
        path = scenario(tmp_path / "desk.toml", chat_server.url)

        assert 2 == main(["run", str(path), "--out", str(tmp_path / "one.jsonl")])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert f"{tmp_path / 'folder'}: cannot open the response cache" in err
        assert not (tmp_path / "one.jsonl").exists()

    def test_a_pool_asks_what_a_serial_run_asks_and_measures_the_same(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        policies = ["--policy", "rolling-summary:summarizer=llm", "--policy", "tiered"]
        results = []
        for jobs in ("1", "2"):
            out = tmp_path / f"bench-{jobs}.json"
            bench = ["bench", str(path), *policies, "--jobs", jobs, "--json", str(out)]
            assert 0 == main([*bench, "--no-cache"])
            results.append(json.loads(out.read_text("utf-8"))["results"])

        timed = {"decide_us_per_command", "llm_seconds"}
        serial, pooled = (
            [{k: v for k, v in r["metrics"].items() if k not in timed} for r in run]
            for run in results
        )
        assert serial == pooled
        assert 6 == chat_server.requests

    def test_a_bench_names_the_model_with_set_for_a_scenario_without_one(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        """The model's settings come first, whichever option gives them."""
        out = tmp_path / "bench.json"
        bench = [
            "bench",
            "refund-desk",
            "--policy",
            "rolling-summary:summarizer=llm",
            "--set",
            "llm.model=m",
            "--set",
            f"llm.base_url={chat_server.url}",
            "--json",
            str(out),
        ]

        assert 0 == main(bench)
        (result,) = json.loads(out.read_text("utf-8"))["results"]
        assert result["metrics"]["llm_calls"] == chat_server.requests > 0

    def test_the_table_shows_the_model_columns_only_when_a_model_was_asked(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        capsys.readouterr()

        assert 0 == main(["bench", str(path), "--policy", "rolling-summary:summarizer=llm"])
        asked = capsys.readouterr().out
        assert 0 == main(["bench", str(path), "--policy", "rolling-summary:summarizer=salient"])
        plain = capsys.readouterr().out
        assert ("llm calls" in asked, "tok out" in asked) == (True, True)
        assert ("llm calls" in plain, "tok out" in plain) == (False, False)

    def test_a_changed_model_is_asked_again(self, tmp_path: Path, chat_server: ChatServer) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        assert 0 == main(["run", str(path), "--out", str(tmp_path / "one.jsonl")])

        out = str(tmp_path / "two.jsonl")
        assert 0 == main(["run", str(path), "--out", out, "--set", "llm.model=other-model"])
        assert 6 == chat_server.requests
        assert all(call["output"].startswith("[other-model]") for call in _answers(Path(out)))

    def test_a_second_bench_on_a_pool_makes_no_request(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        bench = [
            "bench",
            str(path),
            "--policy",
            "rolling-summary:summarizer=llm,summary_tokens=8",
            "--policy",
            "rolling-summary:summarizer=llm,summary_tokens=6",
            "--jobs",
            "2",
            "--json",
            str(tmp_path / "bench.json"),
        ]
        assert 0 == main(bench)
        first = json.loads((tmp_path / "bench.json").read_text("utf-8"))
        asked = chat_server.requests
        assert asked > 0

        assert 0 == main(bench)
        assert asked == chat_server.requests
        second = json.loads((tmp_path / "bench.json").read_text("utf-8"))
        usage = [
            (r["metrics"]["llm_calls"], r["metrics"]["llm_cache_hits"]) for r in first["results"]
        ]
        assert asked == sum(calls for calls, _ in usage)
        assert [0, 0] == [hits for _, hits in usage]
        assert [(calls, calls) for calls, _ in usage] == [
            (r["metrics"]["llm_calls"], r["metrics"]["llm_cache_hits"]) for r in second["results"]
        ]
        assert all(r["metrics"]["llm_seconds"] > 0 for r in first["results"])
        assert [0.0, 0.0] == [r["metrics"]["llm_seconds"] for r in second["results"]]
        assert all(r["metrics"]["llm_prompt_tokens"] > 0 for r in second["results"])
        metrics = ("peak_tokens", "tokens_resent", "compactions", "probe_retention")
        assert [[r["metrics"][m] for m in metrics] for r in first["results"]] == [
            [r["metrics"][m] for m in metrics] for r in second["results"]
        ]
