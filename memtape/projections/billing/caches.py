"""Each provider's prompt cache, as a rule for what a request reads, writes and pays in full.

- **Anthropic** caches at explicit breakpoints. memtape models the request as
  Claude Code sends it: a breakpoint at the end of the pinned prefix (the
  system prompt) and one at the last message. A breakpoint's prefix is cached
  when it holds at least the model's minimum (1,024, 2,048 or 4,096 tokens by
  family: the price table's ``cache_minimum``); the request reads the longest
  live entry its prefix shares, found from its breakpoints (the API looks back
  at most 20 blocks from each, and so does the model: an item is a block), and
  writes every token from there to its last breakpoint. An entry lives 5
  minutes (or 1 hour, ``ttl = "1h"``, at the 1-hour write price) from its last
  write or read, against the run's clock, read in seconds.
- **OpenAI** caches automatically: a prompt of at least 1,024 tokens is read
  from the cache in 128-token blocks of the prefix it shares with the last
  request (1,024, 1,152, 1,280...), and nothing is billed for writing. A
  cache left idle is cleared after 5 to 10 minutes (documented); memtape takes
  the 5 minutes (or the ``ttl``), the least a user can count on.
- **Google** caches implicitly, like OpenAI, token by token, above the model's
  documented minimum (2,048 tokens for Gemini 2.5 Flash and Pro),
  with no write billed and the same idle lifetime. Google promises no hit; the
  model takes every one it could have.
"""

from typing import Protocol

import attrs

from memtape.projections.billing.prices import Price
from memtape.projections.billing.prompt import Prompt

TTLS = {"5m": 300.0, "1h": 3600.0}
"""The lifetimes a cache entry may be given, in seconds of the run's clock."""

LOOKBACK = 20
"""How many blocks before a breakpoint Anthropic's cache looks for an entry."""

OPENAI_BLOCK = 128
"""OpenAI's cached prefix grows in blocks of this many tokens."""


@attrs.frozen
class Bill:
    """What one request's prompt was billed as: uncached input, tokens read from the cache
    and written to it; ``broken`` when a live cached prefix was longer than the prefix
    this prompt shares with the one before (something rewrote it)."""

    input: int
    cache_read: int
    cache_write: int
    broken: bool = False


class Cache(Protocol):
    """A provider's cache, request after request."""

    def bill(self, prompt: Prompt, now: float) -> Bill:
        """Bill ``prompt`` sent at ``now`` (seconds of the run's clock), and remember what
        the request leaves cached."""
        ...

    def prime(self, tokens: int, now: float) -> None:
        """Hold the first item of every prompt, ``tokens`` long, as cached at ``now`` (an
        earlier session cached what the agent sends before the conversation)."""
        ...


def cache_for(price: Price, ttl: str) -> Cache:
    """The cache of ``price``'s provider, its entries living ``ttl`` (``5m`` or ``1h``)."""
    seconds = TTLS[ttl]
    if price.provider == "anthropic":
        return Breakpoints(price.cache_minimum, seconds)
    block = OPENAI_BLOCK if price.provider == "openai" else 1
    return Prefixes(price.cache_minimum, block, seconds)


@attrs.define
class _Entry:
    """A cached prefix: its items, its tokens, and when it expires."""

    items: int
    tokens: int
    expires: float


class Breakpoints:
    """Anthropic's cache: entries written at a request's breakpoints."""

    def __init__(self, minimum: int, ttl: float) -> None:
        self._minimum = minimum
        self._ttl = ttl
        self._entries: list[_Entry] = []
        """The live entries of the last request: at its breakpoints, and the one it read
        (at most three, so a request costs the same however long the run)."""

    def bill(self, prompt: Prompt, now: float) -> Bill:
        """Read the longest live entry the prompt shares, write the rest up to its end."""
        alive = [entry for entry in self._entries if now <= entry.expires]
        broken = any(entry.items > prompt.shared_items for entry in alive)
        breakpoints = (prompt.pinned_items, prompt.items)
        usable = [
            entry
            for entry in alive
            if entry.items <= prompt.shared_items
            and any(0 <= point - entry.items <= LOOKBACK for point in breakpoints)
        ]
        hit = max(usable, key=lambda entry: entry.tokens, default=None)
        read = 0 if hit is None else hit.tokens
        total = prompt.tokens
        write = total - read if total >= self._minimum else 0
        expires = now + self._ttl
        kept = [] if hit is None else [_Entry(hit.items, hit.tokens, expires)]
        pinned = prompt.pinned_items
        if 0 < pinned < prompt.items and prompt.pinned_tokens >= self._minimum:
            kept.append(_Entry(pinned, prompt.pinned_tokens, expires))
        if total >= self._minimum:
            kept.append(_Entry(prompt.items, total, expires))
        self._entries = list({entry.items: entry for entry in kept}.values())
        return Bill(total - read - write, read, write, broken)

    def prime(self, tokens: int, now: float) -> None:
        """Hold the first item as an entry written at ``now`` (when it is long enough)."""
        if tokens >= self._minimum:
            self._entries = [_Entry(1, tokens, now + self._ttl)]


class Prefixes:
    """OpenAI's and Google's automatic caches: the prefix a prompt shares with the last
    one is read in blocks above a minimum; nothing is billed for writing."""

    def __init__(self, minimum: int, block: int, ttl: float) -> None:
        self._minimum = minimum
        self._block = block
        self._ttl = ttl
        self._cached = 0
        """The tokens the last request left cached (its prompt, in blocks)."""
        self._last: float | None = None

    def bill(self, prompt: Prompt, now: float) -> Bill:
        """Read the blocks of the shared prefix the last request cached."""
        alive = self._last is not None and now - self._last <= self._ttl
        read = self._blocks(min(self._cached, prompt.shared_tokens)) if alive else 0
        broken = alive and self._cached > read
        self._cached = self._blocks(prompt.tokens)
        self._last = now
        return Bill(prompt.tokens - read, read, 0, broken)

    def prime(self, tokens: int, now: float) -> None:
        """Hold the first ``tokens`` as the prompt of a request at ``now``."""
        self._cached = self._blocks(tokens)
        self._last = now

    def _blocks(self, tokens: int) -> int:
        """The most of ``tokens`` a cache holds: whole blocks from the minimum on."""
        if tokens < self._minimum or tokens <= 0:
            return 0
        return self._minimum + (tokens - self._minimum) // self._block * self._block
