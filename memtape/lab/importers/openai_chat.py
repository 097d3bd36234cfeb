"""OpenAI Chat Completions messages as turns.

The file is JSONL of messages, a JSON array of them, or a request object
``{"messages": [...]}``. Each message is one turn:

- ``role``: ``system``, ``user``, ``assistant`` and ``tool`` as they are; a
  ``developer`` message instructs as a system prompt does (``system``), a
  ``function`` message is the older form of a tool result (``tool``).
- ``content``: a string (``""`` included), null, or parts: ``text`` parts
  verbatim, ``refusal`` parts as ``[refusal] TEXT``, ``image_url``,
  ``input_audio`` and ``file`` parts as notes of what they were, one part a
  line. A message's ``refusal`` and ``audio`` are kept the same way.
- ``tool_calls``: kept whatever the content is (a string, ``""`` or null);
  the turn's ``calls`` are their ids in order, and each reads
  ``call NAME(ARGUMENTS)`` on a line of its own after the content
  (``custom`` tool calls too, their ``input`` as the arguments).
- a ``tool`` message's ``tool_call_id`` is the call it answers; a
  ``function`` message answers the oldest unanswered ``function_call`` (the
  older, single-call form, whose calls have no ids: each is named after the
  turn that makes it, ``function_call.N``).
- ``name`` heads the text as ``NAME: ``.

Other keys of a message (``id``, ``annotations``...) are metadata and do not
import; a part or call of another shape is refused, named.
"""

from collections import deque
from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.fields import listed
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.observations import note, pairs
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import call_text, image_note, json_text, marked, named, noted
from memtape.lab.importers.transcript import Transcript, Turns

FORMAT = "openai-chat"
"""The name ``--format`` gives this format."""

ROLES: dict[str, str] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
"""Each OpenAI chat role and the turn role it becomes (``memtape.core.commands.ROLES``)."""


def read(source: Source, *, observations: str = "auto") -> Transcript:
    """The turns of an OpenAI chat transcript, one per message; ``observations`` is
    ``--observations`` (``memtape.lab.importers.observations``: ``auto`` reads the
    messages as written)."""
    turns = Turns(source.path)
    legacy: deque[str] = deque()
    found = pairs([r.data for r in source.records], observations, text_mode_pairs=False)
    for index, record in enumerate(source.records):
        action, observed = found.actions.get(index), found.observations.get(index)
        message(record.data, record.where, turns, legacy, action=action, observed=observed)
    tally = Tally(source)
    ids = Ids()
    for index, record in enumerate(source.records):
        calls, results = ids(record.data)
        more_calls, more_results = found.ids(index)
        tally.took(record.where, calls=calls + more_calls, results=results + more_results)
    return turns.transcript(FORMAT, notes=note(found), tally=tally)


class Ids:
    """The ledger's count of one message's ids, read from its raw data: ``tool_calls``'
    ids, a ``tool`` message's ``tool_call_id``; a legacy ``function_call`` is the id the
    reader names it by (``function_call.N``, N its message's number), and a ``function``
    message answers the oldest one not yet answered."""

    def __init__(self) -> None:
        self.messages = 0
        self.legacy: deque[str] = deque()

    def __call__(self, data: Any) -> tuple[list[str], list[str]]:
        self.messages += 1
        # Counted before the message is read: what is not a list of calls is refused there.
        listed = data.get("tool_calls")
        calls = [
            str(call.get("id"))
            for call in (listed if isinstance(listed, list) else ())
            if isinstance(call, dict)
        ]
        if data.get("function_call") is not None:
            calls.append(f"function_call.{self.messages}")
            self.legacy.append(calls[-1])
        results: list[str] = []
        if data.get("role") == "tool":
            results.append(str(data.get("tool_call_id")))
        elif data.get("role") == "function" and self.legacy:
            results.append(self.legacy.popleft())
        return calls, results


def message(
    data: Any,
    where: str,
    turns: Turns,
    legacy: deque[str],
    *,
    action: str | None = None,
    observed: str | None = None,
) -> None:
    """Add the turn of one chat message; ``legacy`` holds the unanswered ``function_call``
    ids. ``action`` is the call id an assistant message written as an action is given, and
    ``observed`` the action a user message answers as its observation (a tool turn)."""
    if not isinstance(data, dict):
        raise BadInput(f"{where}: a message is an object with role and content")
    given = data.get("role")
    role = ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        raise BadInput(f"{where}: role must be one of {', '.join(ROLES)}, got {given!r}")
    parts = content_parts(data.get("content"), where)
    refusal = data.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(marked("refusal", refusal))
    audio = data.get("audio")
    if isinstance(audio, Mapping):
        parts.append(noted("audio", audio.get("id")))
    calls = []
    for number, call in enumerate(listed(data, "tool_calls", where), start=1):
        call_id, text = tool_call(call, f"{where}: tool call {number}")
        calls.append(call_id)
        parts.append(text)
    function_call = data.get("function_call")
    if function_call is not None:
        call_id, text = _legacy_call(function_call, where, len(turns))
        calls.append(call_id)
        legacy.append(call_id)
        parts.append(text)
    if "content" not in data and not calls:
        raise BadInput(f"{where}: a message needs content (a string, parts, or null)")
    if data.get("content") is None and not parts and not calls:
        raise BadInput(f"{where}: content must be a string, parts, or null with tool_calls")
    answers = _answers(str(given), data, where, legacy)
    if action is not None:
        calls.append(action)
    if observed is not None:
        role, answers = "tool", (observed,)
    head = named(data.get("name"), where)
    turns.add(role, parts, where, calls=calls, answers=answers, head=head)


def content_parts(content: Any, where: str) -> list[str]:
    """The texts of a message's content: a string, null, or a list of parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise BadInput(f"{where}: content must be a string, parts, or null, got {content!r}")
    return [_part(part, f"{where}: content part {n}") for n, part in enumerate(content, start=1)]


def _part(part: Any, where: str) -> str:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return _string(part, "text", where)
    if kind == "refusal":
        return marked("refusal", _string(part, "refusal", where))
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if not isinstance(url, str):
            raise BadInput(f"{where}: an image_url part needs image_url.url")
        return image_note(url)
    if kind == "input_audio":
        audio = part.get("input_audio")
        form = audio.get("format") if isinstance(audio, Mapping) else None
        return noted("audio", form)
    if kind == "file":
        file = part.get("file")
        detail = file.get("filename") or file.get("file_id") if isinstance(file, Mapping) else None
        return noted("file", detail)
    shown = kind if kind is not None else part
    raise BadInput(f"{where} is {shown!r}; a part is text, refusal, image_url, input_audio or file")


def tool_call(call: Any, where: str) -> tuple[str, str]:
    """A ``tool_calls`` entry's id and its text: a ``function`` or a ``custom`` call."""
    if not isinstance(call, dict):
        raise BadInput(f"{where}: a tool call is an object with an id and a function")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise BadInput(f"{where}: a tool call needs an id, got {call_id!r}")
    custom = call.get("custom")
    if call.get("type") == "custom" and isinstance(custom, Mapping):
        return call_id, call_text(custom.get("name"), custom.get("input"), where)
    function = call.get("function")
    if not isinstance(function, Mapping):
        raise BadInput(f"{where}: a tool call needs a function with a name")
    return call_id, call_text(function.get("name"), function.get("arguments"), where)


def _legacy_call(call: Any, where: str, turn: int) -> tuple[str, str]:
    if not isinstance(call, Mapping):
        raise BadInput(f"{where}: function_call must be an object with a name")
    call_id = f"function_call.{turn + 1}"
    return call_id, call_text(call.get("name"), json_text(call.get("arguments")), where)


def _answers(given: str, data: dict[str, Any], where: str, legacy: deque[str]) -> tuple[str, ...]:
    if given == "tool":
        answer = data.get("tool_call_id")
        if not isinstance(answer, str) or not answer:
            raise BadInput(f"{where}: a tool message needs the tool_call_id it answers")
        return (answer,)
    if given == "function":
        if not legacy:
            raise BadInput(
                f"{where}: a function message, but no earlier function_call is unanswered"
            )
        return (legacy.popleft(),)
    return ()


def _string(part: Mapping[str, Any], key: str, where: str) -> str:
    value = part.get(key)
    if not isinstance(value, str):
        raise BadInput(f"{where}: a {part.get('type')} part needs a {key} string")
    return value
