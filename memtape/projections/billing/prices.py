"""The price table: what a model's tokens cost, USD per million, by kind.

The shipped table (``prices.toml`` beside this module) holds Anthropic,
OpenAI and Google models still sold in late 2026 (Claude Opus and Sonnet 4.5
and 4.6, Haiku 4.5, GPT-5, 5.1 and 4.1, Gemini 2.5; not the newest generation,
whose cache minimums no provider page gave), each with the page its prices
were read from and the day; ``--prices FILE.toml`` overrides a row or adds one, in the same form::

    [models."my-model"]
    provider = "openai"          # anthropic | openai | google
    input = 1.25                 # USD per million uncached input tokens
    output = 10.0
    cache_read = 0.125
    cache_write = 1.25           # a 5-minute write (Anthropic); the input price elsewhere
    cache_write_1h = 2.5         # optional: a 1-hour write (Anthropic)
    cache_minimum = 1024         # optional: the fewest tokens a cached prefix holds

A bad file is refused in one line that names the file and the key.
"""

import re
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.core.spelling import did_you_mean
from memtape.policies.plumbing.params import Params

PROVIDERS = ("anthropic", "openai", "google")
"""The providers whose cache rules memtape models (``memtape.projections.billing.caches``)."""

DEFAULT_MINIMUM = {"anthropic": 1024, "openai": 1024, "google": 2048}
"""The fewest tokens a cached prefix holds when a row does not say (each provider's
smallest documented minimum)."""

MOST = 1_000_000.0
"""The highest price a row may give, USD per million tokens (a dollar a token, far past any
model's): a bill at it stays finite, where 1e308 summed to inf, which the gate cannot compare
and JSON cannot hold."""

SHIPPED = "prices.toml"
"""The shipped table's file, in this package."""

_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
"""A model name's snapshot date (``claude-sonnet-4-5-20250929``, ``gpt-4.1-2025-04-14``)."""


@attrs.frozen
class Price:
    """One model's prices, USD per million tokens, and its provider's cache rules."""

    model: str
    provider: str
    input: float
    output: float
    cache_read: float
    cache_write: float
    cache_write_1h: float | None = None
    cache_minimum: int = 1024
    source: str = ""

    def write_price(self, ttl: str) -> float:
        """The price of a cache write under ``ttl`` (``5m`` or ``1h``); a row without a
        1-hour price bills a 1-hour write at twice the input price, as Anthropic does."""
        if ttl == "1h":
            return 2 * self.input if self.cache_write_1h is None else self.cache_write_1h
        return self.cache_write


@attrs.frozen
class PriceTable:
    """Prices by model name."""

    models: Mapping[str, Price]

    def price(self, model: str, where: str) -> Price:
        """The price of ``model`` (its snapshot date ignored when only the undated name is
        listed); an unknown one is refused, naming ``where`` and the closest name."""
        found = self.models.get(model) or self.models.get(_DATED.sub("", model))
        if found is None:
            hint = did_you_mean(model, self.models)
            raise BadInput(
                f"{where}: no price for model {model!r} (--prices FILE.toml adds one){hint}"
            )
        return found

    def knows(self, model: str) -> bool:
        """Whether ``price`` finds ``model``."""
        return model in self.models or _DATED.sub("", model) in self.models

    def updated(self, other: "PriceTable") -> "PriceTable":
        """This table with ``other``'s rows added, or in place of this one's."""
        return PriceTable({**self.models, **other.models})


@cache
def shipped_prices() -> PriceTable:
    """The price table memtape ships (read once a process)."""
    text = resources.files(__package__).joinpath(SHIPPED).read_text("utf-8")
    return parse_prices(text, SHIPPED)


def read_prices(path: Path) -> PriceTable:
    """The shipped table updated by the price file at ``path`` (``--prices``)."""
    data = read_regular(path, "price file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadInput(f"{path}: cannot read it: {error}") from None
    return shipped_prices().updated(parse_prices(text, str(path)))


def parse_prices(text: str, source: str) -> PriceTable:
    """A price file's ``[models."NAME"]`` tables; ``source`` names it in refusals."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as error:
        raise BadInput(f"{source}: not valid TOML: {error}") from None
    unknown = sorted(set(data) - {"models"})
    if unknown:
        raise BadInput(
            f'{source}: {unknown[0]}: unknown table (a price file holds [models."NAME"])'
        )
    models = data.get("models", {})
    if not isinstance(models, dict) or not models:
        raise BadInput(f'{source}: models: no [models."NAME"] table')
    return PriceTable({name: _price(name, table, source) for name, table in models.items()})


def _price(name: str, table: Any, source: str) -> Price:
    """One model's row."""
    where = f"{source}: models.{name!r}"
    if not isinstance(table, dict):
        raise BadInput(f"{where}: must be a table")
    params = Params(table, where)
    provider = params.text("provider")
    if provider not in PROVIDERS:
        hint = did_you_mean(provider, PROVIDERS)
        raise params.error(
            "provider", f"must be one of {', '.join(PROVIDERS)}, got {provider!r}{hint}"
        )
    prices = {
        key: params.number(key, minimum=0.0, maximum=MOST)
        for key in ("input", "output", "cache_read", "cache_write")
    }
    hourly = (
        params.number("cache_write_1h", minimum=0.0, maximum=MOST)
        if "cache_write_1h" in table
        else None
    )
    least = params.integer("cache_minimum", minimum=0) if "cache_minimum" in table else None
    source_page = params.optional("source")
    read_on = params.optional("read_on")
    for key, value in (("source", source_page), ("read_on", read_on)):
        if value is not None and not isinstance(value, str):
            raise params.error(key, f"must be a string, got {value!r}")
    params.done()
    return Price(
        name,
        provider,
        **prices,
        cache_write_1h=hourly,
        cache_minimum=DEFAULT_MINIMUM[provider] if least is None else least,
        source=source_page or "",
    )
