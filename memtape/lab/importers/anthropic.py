"""Anthropic Messages as turns.

The file is a request object ``{"system": ..., "messages": [...]}``, a JSON
array of messages, or JSONL of them (a response object, ``{"role":
"assistant", "content": [...], ...}``, is a message too). ``system`` (a
string, or text blocks) is the first turn, a ``system`` one: the one
``--pin system`` pins.

A message's ``content`` is a string or a list of blocks:

- an ``assistant`` message is one ``assistant`` turn: ``text`` blocks
  verbatim, ``thinking`` as ``[thinking] TEXT``, ``redacted_thinking`` as
  ``[redacted thinking]`` (its data is encrypted), and each ``tool_use`` as
  ``call NAME(INPUT)`` with its ``id`` among the turn's ``calls``, one block a
  line, in order.
- a ``user`` message's ``tool_result`` blocks are one ``tool`` turn each,
  answering their ``tool_use_id``: the result's content (a string, or text
  and image blocks) is the turn's text, headed ``[error]`` when
  ``is_error``. One turn per result, as OpenAI has one message per result:
  each result is its own unit of size and salience, and a policy that
  clears one result clears no other. The message's other blocks (``text``,
  ``image``, ``document``) form a ``user`` turn, after the results before
  them; blocks keep their order.
- ``image`` and ``document`` blocks read as notes of what they were:
  ``[image: image/png]``, ``[document: TITLE]``.

Other keys of a message (``id``, ``model``, ``usage``, ``cache_control``...)
are metadata and do not import; a block of another type (a server tool's,
say) is refused, named.
"""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.ledger import every_record
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import call_text, image_note, marked, noted
from memtape.lab.importers.transcript import Transcript, Turns

FORMAT = "anthropic"
"""The name ``--format`` gives this format."""

ASSISTANT_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use")
"""The block types an assistant message's content imports."""

USER_BLOCKS = ("text", "image", "document", "tool_result")
"""The block types a user message's content imports."""


def read(source: Source) -> Transcript:
    """The turns of an Anthropic Messages transcript."""
    turns = Turns(source.path)
    document = source.document
    if document is not None and document.get("system") is not None:
        where = f"{source.path}: system"
        turns.add("system", system_parts(document["system"], where), where)
    for record in source.records:
        data = record.data
        if not isinstance(data, dict):
            raise BadInput(f"{record.where}: a message is an object with role and content")
        role = data.get("role")
        if role not in ("user", "assistant"):
            raise BadInput(
                f"{record.where}: role must be user or assistant (the system prompt is the "
                f"request's system), got {role!r}"
            )
        if "content" not in data:
            raise BadInput(f"{record.where}: a message needs content (a string or blocks)")
        message(role, data["content"], record.where, turns)
    return turns.transcript(FORMAT, tally=every_record(source, ids))


def ids(data: Any) -> tuple[list[str], list[str]]:
    """The ids of a message's ``tool_use`` blocks and of the calls its ``tool_result``
    blocks answer, read from its raw content (the ledger's count)."""
    content = data.get("content") if isinstance(data, dict) else None
    blocks = (
        [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    )
    calls = [str(block.get("id")) for block in blocks if block.get("type") == "tool_use"]
    results = [
        str(block.get("tool_use_id")) for block in blocks if block.get("type") == "tool_result"
    ]
    return calls, results


def system_parts(system: Any, where: str) -> list[str]:
    """The texts of a request's ``system``: a string, or a list of text blocks."""
    if isinstance(system, str):
        return [system]
    if not isinstance(system, list):
        raise BadInput(f"{where}: system must be a string or text blocks, got {system!r}")
    texts = []
    for number, block in enumerate(system, start=1):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise BadInput(f"{where}: block {number} is not a text block")
        texts.append(_string(block, "text", f"{where}: block {number}"))
    return texts


def message(role: str, content: Any, where: str, turns: Turns) -> None:
    """Add the turns of one message: one for an assistant, one per result and one for the
    rest for a user."""
    if isinstance(content, str):
        turns.add(role, [content], where)
        return
    if not isinstance(content, list):
        raise BadInput(f"{where}: content must be a string or a list of blocks, got {content!r}")
    if role == "assistant":
        parts, calls = [], []
        for number, block in enumerate(content, start=1):
            text, call = assistant_block(block, f"{where}: block {number}")
            parts.append(text)
            if call is not None:
                calls.append(call)
        turns.add("assistant", parts, where, calls=calls)
        return
    pending: list[str] = []
    for number, block in enumerate(content, start=1):
        place = f"{where}: block {number}"
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if pending:
                turns.add("user", pending, where)
                pending = []
            answer, text = tool_result(block, place)
            turns.add("tool", [text], place, answers=(answer,))
        else:
            pending.append(user_block(block, place))
    if pending or not content:
        turns.add("user", pending, where)


def assistant_block(block: Any, where: str) -> tuple[str, str | None]:
    """An assistant block's text, and the id of the call it makes (None for none)."""
    kind = _type(block, ASSISTANT_BLOCKS, where)
    if kind == "text":
        return _string(block, "text", where), None
    if kind == "thinking":
        return marked("thinking", _string(block, "thinking", where)), None
    if kind == "redacted_thinking":
        return noted("redacted thinking"), None
    call = block.get("id")
    if not isinstance(call, str) or not call:
        raise BadInput(f"{where}: a tool_use block needs an id, got {call!r}")
    return call_text(block.get("name"), block.get("input"), where), call


def user_block(block: Any, where: str) -> str:
    """A user block's text (a tool result is a turn of its own: ``tool_result``)."""
    kind = _type(block, ("text", "image", "document"), where)
    if kind == "text":
        return _string(block, "text", where)
    if kind == "image":
        return image_block(block)
    title = block.get("title")
    source = block.get("source")
    detail = title if isinstance(title, str) else None
    if detail is None and isinstance(source, Mapping):
        detail = source.get("media_type") or source.get("url") or source.get("type")
    return noted("document", detail)


def image_block(block: Mapping[str, Any]) -> str:
    """An image block as a note: its media type, or its URL."""
    source = block.get("source")
    if isinstance(source, Mapping):
        if isinstance(source.get("media_type"), str):
            return noted("image", source["media_type"])
        return image_note(source.get("url") or source.get("file_id"))
    return noted("image")


def tool_result(block: Mapping[str, Any], where: str) -> tuple[str, str]:
    """A ``tool_result`` block's call id and text (headed ``[error]`` when it is one)."""
    answer = block.get("tool_use_id")
    if not isinstance(answer, str) or not answer:
        raise BadInput(f"{where}: a tool_result block needs a tool_use_id, got {answer!r}")
    content = block.get("content", "")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = []
        for number, inner in enumerate(content, start=1):
            place = f"{where}: content block {number}"
            kind = _type(inner, ("text", "image", "document"), place)
            texts.append(
                _string(inner, "text", place) if kind == "text" else user_block(inner, place)
            )
        text = "\n".join(texts)
    elif content is None:
        text = ""
    else:
        raise BadInput(f"{where}: a tool_result's content must be a string or blocks")
    is_error = block.get("is_error", False)
    if not isinstance(is_error, bool):
        raise BadInput(f"{where}: is_error must be true or false, got {is_error!r}")
    return answer, marked("error", text) if is_error else text


def _type(block: Any, known: tuple[str, ...], where: str) -> str:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind not in known:
        shown = kind if kind is not None else block
        raise BadInput(f"{where} is {shown!r}; this place takes {', '.join(known)} blocks")
    return str(kind)


def _string(block: Mapping[str, Any], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise BadInput(f"{where}: a {block.get('type')} block needs a {key} string")
    return value
