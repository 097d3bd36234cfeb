"""The ``[llm]`` table of a scenario: which model to ask, where, and how.

```toml
[llm]
model = "gpt-4o-mini"                    # required
base_url = "http://127.0.0.1:8000/v1"    # default: OPENAI_BASE_URL, else OpenAI's
temperature = 0                          # the default
seed = 7                                 # optional
timeout = 60                             # seconds per attempt (the default)
max_retries = 2                          # the SDK's retries with backoff (the default)
max_answer_bytes = 65536                 # a longer answer is cut, and says so (the default)
embedding_model = "nomic-embed-text"     # what recall = "embeddings" asks (default: model)
```

The key is never a setting: it comes from ``OPENAI_API_KEY`` (the SDK's own
variable) and is written nowhere, so that a run file, which records this
table, can be shared. ``memtape.policies.plumbing.model_settings`` reads the table.

A file never chooses where a request goes. The table a run file records is
read as ``recorded`` (unless the user trusts the run): its model and
``base_url`` are shown, and an answer already recorded or cached for them is
used, but no request is sent on the file's word. The user names a model
(``--set llm.model=NAME``, and ``llm.base_url``) or trusts the run.
"""

import os
from typing import Any

import attrs

MAX_ANSWER_BYTES = 64 * 1024
"""The most bytes (UTF-8) of an answer memtape keeps by default: the rest is cut."""

OPENAI = "https://api.openai.com/v1"
"""The SDK's default server, when neither the table nor ``OPENAI_BASE_URL`` names one."""

BASE_URL_ENV = "OPENAI_BASE_URL"
"""The SDK's variable for the server's base URL."""

KEY_ENV = "OPENAI_API_KEY"
"""The SDK's variable for the key; memtape reads it only to hand it to the SDK."""


@attrs.frozen
class ModelConfig:
    """How to ask a model: its name, the server, and the request's parameters."""

    model: str
    base_url: str | None = None
    temperature: float = 0.0
    seed: int | None = None
    timeout: float = 60.0
    max_retries: int = 2
    max_answer_bytes: int = MAX_ANSWER_BYTES
    embedding_model: str | None = None
    """The model ``recall = "embeddings"`` asks, on the same server (None: ``model``)."""
    recorded: str | None = attrs.field(default=None, eq=False, kw_only=True)
    """The run file this table was read from, untrusted (None: the user's own table).
    Its ``model`` and ``base_url`` are the file's word: shown, never asked."""

    def table(self) -> dict[str, Any]:
        """The settings as an ``[llm]`` table writes them (``model_config`` reads it back)."""
        table: dict[str, Any] = {"model": self.model}
        if self.base_url is not None:
            table["base_url"] = self.base_url
        table["temperature"] = self.temperature
        if self.seed is not None:
            table["seed"] = self.seed
        table.update(timeout=self.timeout, max_retries=self.max_retries)
        if self.max_answer_bytes != MAX_ANSWER_BYTES:
            table["max_answer_bytes"] = self.max_answer_bytes
        if self.embedding_model is not None:
            table["embedding_model"] = self.embedding_model
        return table

    def server(self) -> str:
        """The base URL a request goes to: the table's, else ``OPENAI_BASE_URL``, else
        OpenAI's; a ``recorded`` table's ``base_url`` is never one."""
        chosen = None if self.recorded is not None else self.base_url
        return (chosen or os.environ.get(BASE_URL_ENV) or OPENAI).rstrip("/")

    def named_server(self) -> str:
        """The base URL the table names (its own, else ``OPENAI_BASE_URL``, else OpenAI's):
        what an answer to it was cached under, whoever chose the table."""
        return (self.base_url or os.environ.get(BASE_URL_ENV) or OPENAI).rstrip("/")

    def refusal(self) -> str | None:
        """Why no request may be sent for this table, in one line; None when one may."""
        if self.recorded is None:
            return None
        where = f"at {self.base_url}" if self.base_url else "and no server"
        return (
            f"{self.recorded}: the run's [llm] table records model {self.model!r} {where}; "
            "a file never chooses the model or the server your key goes to, so nothing was "
            "sent: name the model (--set llm.model=NAME [--set llm.base_url=URL]; without a "
            f"URL, {BASE_URL_ENV}, else OpenAI's, is asked) or trust the run (--trust, or "
            "MEMTAPE_TRUST=1)"
        )

    def parameters(self) -> dict[str, Any]:
        """The request's parameters that shape the answer (what the cache keys on)."""
        parameters: dict[str, Any] = {"temperature": self.temperature}
        if self.seed is not None:
            parameters["seed"] = self.seed
        return parameters
