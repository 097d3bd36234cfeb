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

A ``compaction`` block (the API's server-side compaction, in an assistant
message: the API summarised the conversation and went on from the summary,
and drops every block before it from later requests) is no turn: it is a
``Compaction`` before the next turn, its ``content`` the summary, which the
``recorded`` policy applies where it happened. The message's blocks after it
are the assistant turn, those before it (if any) a turn of their own. A block
whose content is null is a compaction that failed, which the API treats as
none: it is noted, and nothing is recorded.

A server tool's blocks in an assistant message (``server_tool_use``,
``web_search_tool_result``, ``mcp_tool_use``..., any type ending ``_tool_use`` or
``_tool_result``: the provider ran the tool inside its reply) are notes in the turn,
``[server_tool_use: web_search]``, and no call: nothing is sent back for them.

Other keys of a message (``id``, ``model``, ``usage``, ``cache_control``...)
are metadata and do not import; a block of another type is refused, named.
"""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.compactions import Compactions
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

COMPACTION = "compaction"
"""The block type of a server-side compaction, in an assistant message."""


def read(source: Source) -> Transcript:
    """The turns of an Anthropic Messages transcript."""
    turns = Turns(source.path)
    compactions = Compactions(turns)
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
        message(role, data["content"], record.where, turns, compactions)
    recorded, notes = compactions.recorded()
    return turns.transcript(FORMAT, recorded, notes, tally=every_record(source, ids))


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


def message(
    role: str, content: Any, where: str, turns: Turns, compactions: Compactions | None = None
) -> None:
    """Add the turns of one message: one for an assistant, one per result and one for the
    rest for a user. With ``compactions``, an assistant's ``compaction`` block is met there
    (without, it is refused as any block the format does not import)."""
    if isinstance(content, str):
        turns.add(role, [content], where)
        return
    if not isinstance(content, list):
        raise BadInput(f"{where}: content must be a string or a list of blocks, got {content!r}")
    if role == "assistant":
        parts: list[str] = []
        calls: list[str] = []
        compacted = False
        for number, block in enumerate(content, start=1):
            place = f"{where}: block {number}"
            if compactions is not None and _is_compaction(block):
                if parts:
                    turns.add("assistant", parts, where, calls=calls)
                    parts, calls = [], []
                compaction_block(block, place, compactions)
                compacted = True
                continue
            text, call = assistant_block(block, place)
            parts.append(text)
            if call is not None:
                calls.append(call)
        if parts or not compacted:
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


def compaction_block(block: Mapping[str, Any], where: str, compactions: Compactions) -> None:
    """Meet a ``compaction`` block: its content is the summary the API went on from."""
    summary = block.get("content")
    if summary is None:
        compactions.notes.append(
            f"the compaction block at {where} has no content (a compaction that failed, which "
            "the API treats as none): nothing recorded"
        )
        return
    if not isinstance(summary, str):
        raise BadInput(
            f"{where}: a compaction block's content is a string or null, got {summary!r}"
        )
    compactions.met(summary, where)


def _is_compaction(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == COMPACTION


def server_tool(kind: Any) -> bool:
    """Whether an assistant block of type ``kind`` is a server tool's call or result (web
    search, web fetch, code execution, MCP...): the provider ran the tool inside its reply,
    so the block is the model's act, with no result for the agent to send back."""
    return isinstance(kind, str) and kind.endswith(("_tool_use", "_tool_result"))


def assistant_block(block: Any, where: str) -> tuple[str, str | None]:
    """An assistant block's text, and the id of the call it makes (None for none); a server
    tool's block is a note of its type and name."""
    if isinstance(block, Mapping) and server_tool(block.get("type")):
        return noted(str(block["type"]), block.get("name")), None
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
