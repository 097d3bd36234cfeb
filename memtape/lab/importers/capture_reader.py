"""A capture's requests and responses of one endpoint as entries, each distinct message read
once (``memtape.lab.importers.capture_entries`` says what an entry is).

Each request resends the conversation: the entries of a message are kept by its canonical
JSON, so a long capture costs what its distinct messages cost.
"""

from collections.abc import Mapping
from typing import Any

import orjson

from memtape.capture.threads import ANTHROPIC, CHAT, RESPONSES
from memtape.core.errors import BadInput
from memtape.lab.importers import anthropic
from memtape.lab.importers.capture_counts import ids
from memtape.lab.importers.capture_entries import (
    Entry,
    Placed,
    anthropic_entries,
    chat_entry,
    joined,
    responses_entry,
)


class Reader:
    """Reads the requests and responses of one endpoint into entries, each distinct message
    once."""

    def __init__(self, endpoint: str) -> None:
        if endpoint not in (ANTHROPIC, CHAT, RESPONSES):
            raise ValueError(endpoint)
        self.endpoint = endpoint
        self._read: dict[bytes, tuple[Entry, ...]] = {}
        self._ids: dict[bytes, tuple[list[str], list[str]]] = {}
        # A request's messages are read for their entries, then for the ledger's ids: the
        # canonical JSON is made once, under the message object's id (the source holds every
        # body while it is read, so no id is reused meanwhile).
        self._raw: dict[int, bytes] = {}

    def ids(self, body: Mapping[str, Any] | None) -> tuple[list[str], list[str]]:
        """``ids`` of a request or response body, each distinct message read once."""
        if not isinstance(body, Mapping):
            return [], []
        field = "input" if self.endpoint == RESPONSES else "messages"
        listed = body.get(field)
        if not isinstance(listed, list):
            return ids(self.endpoint, body)
        calls: list[str] = []
        results: list[str] = []
        for message in listed:
            raw = self._raw.get(id(message)) or orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
            found = self._ids.get(raw)
            if found is None:
                found = self._ids[raw] = ids(self.endpoint, {field: [message]})
            calls.extend(found[0])
            results.extend(found[1])
        return calls, results

    def request(self, request: Mapping[str, Any], where: str) -> list[Placed]:
        """The entries of a request, in order: its system prompt (when given beside the
        messages), then its messages'."""
        placed: list[Placed] = []
        if self.endpoint == ANTHROPIC:
            if request.get("system") is not None:
                texts = anthropic.system_parts(request["system"], f"{where}: system")
                placed.append(Placed(Entry("system", tuple(texts), head=True), "system"))
            self._messages(request.get("messages"), "messages", where, placed)
        elif self.endpoint == CHAT:
            self._messages(request.get("messages"), "messages", where, placed)
        else:
            instructions = request.get("instructions")
            if instructions is not None:
                if not isinstance(instructions, str):
                    raise BadInput(f"{where}: instructions must be a string")
                placed.append(Placed(Entry("system", (instructions,), head=True), "instructions"))
            given = request.get("input")
            if isinstance(given, str):
                placed.append(Placed(Entry("user", (given,)), "input"))
            else:
                self._items(given, "input", where, placed)
        return placed

    def response(self, response: Mapping[str, Any], where: str) -> tuple[list[Placed], int]:
        """The entries of a response, and how many of its choices were not read (a Chat
        response's other choices)."""
        placed: list[Placed] = []
        if self.endpoint == ANTHROPIC:
            content = response.get("content")
            message = {"role": "assistant", "content": content if content is not None else []}
            self._message(message, "content", where, placed)
            return placed, 0
        if self.endpoint == CHAT:
            choices = response.get("choices")
            if not isinstance(choices, list) or not choices:
                raise BadInput(f"{where}: response: a chat completion needs its choices")
            first = choices[0]
            chosen = first.get("message") if isinstance(first, Mapping) else None
            if not isinstance(chosen, Mapping):
                raise BadInput(f"{where}: response: choices[0] needs its message")
            self._message(chosen, "choices[0].message", where, placed)
            return placed, len(choices) - 1
        self._items(response.get("output"), "output", where, placed)
        return placed, 0

    def _messages(self, given: Any, field: str, where: str, placed: list[Placed]) -> None:
        if given is None:
            return
        if not isinstance(given, list):
            raise BadInput(f"{where}: request: {field} must be a list")
        for index, message in enumerate(given):
            self._message(message, f"{field}[{index}]", where, placed)

    def _message(self, message: Any, at: str, where: str, placed: list[Placed]) -> None:
        raw = orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
        self._raw[id(message)] = raw
        entries = self._read.get(raw)
        if entries is None:
            place = f"{where}: {at}"
            if self.endpoint == ANTHROPIC:
                entries = anthropic_entries(message, place)
            else:
                entries = (chat_entry(message, place),)
            self._read[raw] = entries
        placed.extend(Placed(entry, at) for entry in entries)

    def _items(self, given: Any, field: str, where: str, placed: list[Placed]) -> None:
        """Responses items: one response's consecutive assistant-side items are one entry."""
        if given is None:
            return
        if not isinstance(given, list):
            raise BadInput(f"{where}: {field} must be a list of items")
        run: list[Entry] = []
        run_at = ""
        for index, item in enumerate(given):
            at = f"{field}[{index}]"
            raw = orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
            self._raw[id(item)] = raw
            entries = self._read.get(raw)
            if entries is None:
                entries = (responses_entry(item, f"{where}: {at}"),)
                self._read[raw] = entries
            entry = entries[0]
            if entry.role == "assistant":
                if not run:
                    run_at = at
                run.append(entry)
                continue
            if run:
                placed.append(Placed(joined(run), run_at))
                run = []
            placed.append(Placed(entry, at))
        if run:
            placed.append(Placed(joined(run), run_at))
