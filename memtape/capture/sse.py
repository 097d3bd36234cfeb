"""Server-sent events: the ``text/event-stream`` body a streamed response is, read back
into its events (the WHATWG rules: ``event:`` and ``data:`` fields, a blank line ends
an event, comments and other fields ignored)."""

import re

import attrs

_LINE_END = re.compile(r"\r\n|\r|\n")


@attrs.frozen
class ServerSentEvent:
    """One event of a stream: its type (``"message"`` when the stream named none) and
    its data (its ``data:`` lines joined by newlines)."""

    event: str
    data: str


def sse_events(body: bytes) -> list[ServerSentEvent]:
    """The events of a whole ``text/event-stream`` body, in order; an event the body
    ends inside (no blank line after it) is left out, as a browser leaves it."""
    events: list[ServerSentEvent] = []
    name = ""
    data: list[str] = []
    # What follows the last line end is a line not yet ended: no part of an event.
    for line in _LINE_END.split(body.decode("utf-8", "replace"))[:-1]:
        if not line:
            if data:
                events.append(ServerSentEvent(name or "message", "\n".join(data)))
            name, data = "", []
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return events
