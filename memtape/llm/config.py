"""The ``[llm]`` table of a scenario: which model to ask, where, and how.

```toml
[llm]
model = "gpt-4o-mini"                    # required
base_url = "http://127.0.0.1:8000/v1"    # default: OPENAI_BASE_URL, else OpenAI's
temperature = 0                          # the default
seed = 7                                 # optional
timeout = 60                             # seconds per attempt (the default)
max_retries = 2                          # the SDK's retries with backoff (the default)
```

The key is never a setting: it comes from ``OPENAI_API_KEY`` (the SDK's own
variable) and is written nowhere, so that a run file, which records this
table, can be shared. ``memtape.policies.model_settings`` reads the table.
"""

import os
from typing import Any

import attrs

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

    def table(self) -> dict[str, Any]:
        """The settings as an ``[llm]`` table writes them (``model_config`` reads it back)."""
        table: dict[str, Any] = {"model": self.model}
        if self.base_url is not None:
            table["base_url"] = self.base_url
        table["temperature"] = self.temperature
        if self.seed is not None:
            table["seed"] = self.seed
        table.update(timeout=self.timeout, max_retries=self.max_retries)
        return table

    def server(self) -> str:
        """The base URL asked: the table's, else ``OPENAI_BASE_URL``, else OpenAI's."""
        return (self.base_url or os.environ.get(BASE_URL_ENV) or OPENAI).rstrip("/")

    def parameters(self) -> dict[str, Any]:
        """The request's parameters that shape the answer (what the cache keys on)."""
        parameters: dict[str, Any] = {"temperature": self.temperature}
        if self.seed is not None:
            parameters["seed"] = self.seed
        return parameters
