"""The model a scenario's run is priced as: its ``[cost]`` table, or ``--set cost.model=NAME``.

```toml
[cost]
model = "claude-sonnet-4-5"   # a model of the price table (memtape.projections.billing.prices)
ttl = "5m"                     # or "1h": how long a cache entry lives (Anthropic's 1-hour write)
prefix = 3000                  # tokens every request sends before the window (default 0)
warm = true                    # the prefix is cached before the run begins (default false)
```

``prefix`` stands for what an agent sends that a transcript does not hold:
its system prompt and its tools' definitions (``bench --calibrate`` says
how many tokens a session's recorded usage shows beyond its turns); ``warm``
says an earlier session left it cached, as an agent's system prompt often is
when a session begins.

Like ``usage``, it is data beside the steps: no policy reads it and no
event records it, so another model re-prices the same run. An importer
writes the transcript's model here when the transcript names one.
"""

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.integers import is_digits
from memtape.core.values import MAX_TOKENS
from memtape.policies.plumbing.params import Params

AXIS = "cost"
"""The table, and the ``--set`` prefix, that name the priced model."""

TTLS = ("5m", "1h")
"""The cache lifetimes a scenario may choose."""


@attrs.frozen
class Cost:
    """The priced model (None: the run is not priced) and its cache entries' lifetime."""

    model: str | None = None
    ttl: str = "5m"
    prefix: int = 0
    """Tokens every request sends before the window (a system prompt, tools)."""
    warm: bool = False
    """Whether the prefix is cached before the run begins (by an earlier session)."""

    def table(self) -> dict[str, str | int | bool]:
        """The ``[cost]`` table that writes this back."""
        table: dict[str, str | int | bool] = {} if self.model is None else {"model": self.model}
        if self.ttl != "5m":
            table["ttl"] = self.ttl
        if self.prefix:
            table["prefix"] = self.prefix
        if self.warm:
            table["warm"] = True
        return table


def read_cost(value: Any, where: str) -> Cost:
    """A scenario's ``[cost]`` table; a refusal names ``where`` and the key."""
    if not isinstance(value, Mapping):
        raise BadInput(f"{where}: [cost] must be a table")
    params = Params(value, f"{where}: [cost]")
    model = params.optional("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise params.error("model", f"must be a model's name, got {model!r}")
    ttl = params.text("ttl", "5m")
    if ttl not in TTLS:
        raise params.error("ttl", f"must be one of {', '.join(TTLS)}, got {ttl!r}")
    prefix = _prefix(params)
    warm = params.raw("warm", False)
    if warm in ("true", "false"):
        warm = warm == "true"  # a --set value is text
    if not isinstance(warm, bool):
        raise params.error("warm", f"must be true or false, got {warm!r}")
    params.done()
    return Cost(model, ttl, prefix, warm)


def _prefix(params: Params) -> int:
    """The ``prefix`` tokens: a whole number (ASCII digits in a ``--set`` value, which is
    text) no larger than one text may count, checked before ``int`` makes it."""
    prefix = params.raw("prefix", 0)
    if isinstance(prefix, str) and is_digits(prefix.strip()):
        digits = prefix.strip().lstrip("0") or "0"
        # Past MAX_TOKENS's digits is too large: int() is spared thousands of them.
        prefix = int(digits) if len(digits) <= len(str(MAX_TOKENS)) else MAX_TOKENS + 1
    if isinstance(prefix, bool) or not isinstance(prefix, int) or prefix < 0:
        raise params.error(
            "prefix", f"must be an integer in 0..{MAX_TOKENS} ({_MOST}), got {prefix!r}"
        )
    if prefix > MAX_TOKENS:
        raise params.error("prefix", f"must be at most {MAX_TOKENS} ({_MOST})")
    return prefix


_MOST = "the most a text may count"


def is_cost_setting(setting: str) -> bool:
    """Whether an ``AXIS.PARAM=VALUE`` setting is a ``cost.`` one."""
    return setting.partition("=")[0].partition(".")[0].strip() == AXIS


def with_cost_settings(cost: Cost, settings: Iterable[str], where: str) -> Cost:
    """``cost`` with the ``cost.PARAM=VALUE`` ones of ``settings`` on top."""
    table: dict[str, Any] = cost.table()
    for setting in settings:
        if not is_cost_setting(setting):
            continue
        name, _, value = setting.partition("=")
        table[name.partition(".")[2].strip()] = value.strip()
    return read_cost(table, where)
