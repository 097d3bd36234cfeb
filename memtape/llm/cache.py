"""The response cache: each answer stored under the content it answers, in SQLite.

The key is a hash of the server's base URL, the model, the prompt (the
messages) and the parameters that shape the answer (temperature, seed); no
key or header is part of it, and none is stored. A second run, a bench cell
or a fork that asks the same thing of the same model gets the stored answer
and makes no request.

The file is ``MEMTAPE_LLM_CACHE`` if set, else ``.memtape/llm-cache.sqlite``
under the current directory. It is in WAL mode, and each answer is stored in
a transaction of its own, so processes of a pool may write at once (each
waits for the other's lock) and a process killed at any point leaves every
answer stored before it readable and the file whole.
"""

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.llm.cache_location import CACHE_ENV, DEFAULT_CACHE

_BUSY_SECONDS = 30.0
"""How long a writer waits for another process's lock before giving up."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    output TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    seconds REAL NOT NULL,
    cut INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID
"""

_CUT_COLUMN = "ALTER TABLE answers ADD COLUMN cut INTEGER NOT NULL DEFAULT 0"
"""What a cache made before answers were capped lacks: how many characters each lost."""

_SELECT = "SELECT output, prompt_tokens, completion_tokens, seconds, cut FROM answers WHERE key = ?"

_INSERT = (
    "INSERT OR IGNORE INTO answers (key, output, prompt_tokens, completion_tokens, seconds, cut) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)


@attrs.frozen
class StoredAnswer:
    """An answer as the cache keeps it: the text (cut to the cap), its usage, the seconds it
    took and how many characters the cap ``cut`` from it."""

    output: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cut: int = 0


def cache_key(
    server: str, model: str, messages: Sequence[Mapping[str, str]], parameters: Mapping[str, Any]
) -> str:
    """The content address of a request: a SHA-256 of its canonical JSON."""
    content = {"server": server, "model": model, "messages": messages, "parameters": parameters}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class AnswerCache:
    """The answers stored in one SQLite file, opened on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def get(self, key: str) -> StoredAnswer | None:
        """The answer stored under ``key``, or None."""
        with self._lock:
            connection = self._open()
            try:
                row = connection.execute(_SELECT, (key,)).fetchone()
            except sqlite3.Error as error:
                raise BadInput(f"{self.path}: cannot read the response cache: {error}") from None
        return None if row is None else StoredAnswer(*row)

    def put(self, key: str, answer: StoredAnswer) -> None:
        """Store ``answer`` under ``key`` (the first answer stored for a key stays)."""
        row = (
            key,
            answer.output,
            answer.prompt_tokens,
            answer.completion_tokens,
            answer.seconds,
            answer.cut,
        )
        with self._lock:
            try:
                self._open().execute(_INSERT, row)
            except sqlite3.Error as error:
                raise BadInput(f"{self.path}: cannot store an answer: {error}") from None

    def __len__(self) -> int:
        with self._lock:
            count: int = self._open().execute("SELECT count(*) FROM answers").fetchone()[0]
        return count

    def close(self) -> None:
        """Close the file (it opens again on the next use)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _open(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False
            )
            _set_up(connection)
        except (OSError, sqlite3.Error) as error:
            raise BadInput(
                f"{self.path}: cannot open the response cache ({CACHE_ENV}): {error}"
            ) from None
        self._connection = connection
        return connection


def _set_up(connection: sqlite3.Connection) -> None:
    """WAL and the table, waiting out another process setting the same file up.

    Switching to WAL needs the file to itself, and SQLite answers "locked" at
    once, without its busy wait, when two processes (a bench's workers) open a
    new cache together: so the switch is tried again until the busy timeout.
    """
    deadline = time.monotonic() + _BUSY_SECONDS
    while True:
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(_SCHEMA)
            _add_cut(connection)
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _add_cut(connection: sqlite3.Connection) -> None:
    """Give a cache made before answers were capped its ``cut`` column (0: none was)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(answers)")}
    if "cut" in columns:
        return
    try:
        connection.execute(_CUT_COLUMN)
    except sqlite3.OperationalError as error:
        if "duplicate column" not in str(error):  # another process added it first
            raise


class _Unset:
    """The setting when nothing was said: the file ``MEMTAPE_LLM_CACHE`` or the default names."""


_UNSET = _Unset()
_setting: ContextVar[Path | _Unset | None] = ContextVar("llm_cache", default=_UNSET)
_opened: dict[tuple[int, str, str | Path | None], AnswerCache] = {}
_opened_lock = threading.Lock()


def cache_setting() -> Path | None:
    """The cache file in force, or None when answers are not cached (``--no-cache``)."""
    setting = _setting.get()
    if isinstance(setting, _Unset):
        return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)
    return setting


def cache_in_force() -> AnswerCache | None:
    """The cache in force, opened once per process and file; None when there is none."""
    setting = _setting.get()
    if setting is None:
        return None
    named = os.environ.get(CACHE_ENV) if isinstance(setting, _Unset) else setting
    # By process (a connection must not cross a fork into a pool's worker) and by the
    # directory a relative name is under; looked up on every model call, so no Path is made.
    where = (os.getpid(), os.getcwd(), named)
    cache = _opened.get(where)
    if cache is None:
        with _opened_lock:
            cache = _opened.setdefault(where, AnswerCache(Path(named or DEFAULT_CACHE)))
    return cache


@contextmanager
def caching(path: Path | None) -> Iterator[None]:
    """Within the block, cache answers in ``path`` (None: no cache, ask every time)."""
    token = _setting.set(path)
    try:
        yield
    finally:
        _setting.reset(token)


def use_cache(path: Path | None) -> None:
    """Cache answers in ``path`` from now on in this context (a pool worker's setting)."""
    _setting.set(path)


def close_caches() -> None:
    """Close every cache file this process opened (each opens again when next used)."""
    with _opened_lock:
        for cache in _opened.values():
            cache.close()
        _opened.clear()
