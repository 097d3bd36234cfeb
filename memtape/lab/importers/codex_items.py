"""The Responses items of a Codex CLI rollout as a turn's texts: the roles, the call and
output items, and how each reads (``memtape.lab.importers.codex`` says what imports)."""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.openai_responses import content_texts, reasoning_text
from memtape.lab.importers.texts import call_text, json_text, marked, noted

ROLES = {"user": "user", "developer": "system", "system": "system", "assistant": "assistant"}
"""Each message role and the turn role it becomes."""

CALLS = {
    "function_call": "arguments",
    "custom_tool_call": "input",
    "local_shell_call": "action",
    "tool_search_call": "arguments",
}
"""The call items, and the field that holds each one's arguments."""

OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
"""The items that carry a call's result."""

NAMED = {"local_shell_call": "local_shell", "tool_search_call": "tool_search"}
"""The call items that name no tool, and the name their call reads with."""

UNNAMED = ("tool_search_call", "tool_search_output")
"""The call and output items that may have no ``call_id``: without one, they are left out."""


def message_role(item: Mapping[str, Any], where: str) -> str:
    """A message item's role, one of ``ROLES``, or refused naming ``where``."""
    role = item.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise BadInput(f"{where}: a message's role is one of {', '.join(ROLES)}, got {role!r}")
    return str(role)


def call_id(item: Mapping[str, Any], where: str) -> str:
    """The id a call item makes or an output item answers (a ``local_shell_call`` without a
    ``call_id`` goes by its ``id``), or refused naming ``where``."""
    call = item.get("call_id")
    if call is None and item.get("type") == "local_shell_call":
        call = item.get("id")
    if not isinstance(call, str) or not call:
        raise BadInput(f"{where}: a {item.get('type')} item needs a call_id, got {call!r}")
    return call


def call_name(item: Mapping[str, Any]) -> Any:
    """The tool a call item names (``NAMED`` for those that name none)."""
    kind = item.get("type")
    return NAMED[kind] if kind in NAMED else item.get("name")


def tools_found(tools: Any) -> str:
    """A tool search's result: the names of the tools it found."""
    if not isinstance(tools, list):
        return json_text(tools)
    names = [t.get("name") if isinstance(t, Mapping) else None for t in tools]
    if all(isinstance(name, str) for name in names):
        return f"{len(names)} tools found: {', '.join(str(name) for name in names)}"
    return json_text(tools)


def web_search(item: Mapping[str, Any]) -> str:
    """A web search call as its turn shows it: ``[web search] QUERY``."""
    action = item.get("action")
    if not isinstance(action, Mapping):
        return marked("web search", "")
    detail = action.get("query") or action.get("url") or action.get("pattern")
    return marked("web search", json_text(detail))


def output_texts(output: Any, where: str) -> list[str]:
    """A call's output: a string, a list of parts, or ``{"content", "success"}``."""
    if isinstance(output, Mapping) and isinstance(output.get("content"), str):
        text = output["content"]
        return [marked("error", text) if output.get("success") is False else text]
    return content_texts(output, where, "output")


def history_text(item: Any, where: str) -> str:
    """One item of a compaction's replacement history, as the summary's text shows it: as a
    turn would show it, but with no call made or answered (the summary only mentions them)."""
    if not isinstance(item, Mapping):
        raise BadInput(f"{where}: an item is an object with a type")
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise BadInput(f"{where}: an item's type must be a string, got {kind!r}")
    if kind == "message":
        return "\n".join(content_texts(item.get("content"), where, "content"))
    if kind == "compaction":
        return noted("compaction", "encrypted")
    if kind == "reasoning":
        return reasoning_text(item, where)
    if kind in CALLS:
        return call_text(call_name(item), item.get(CALLS[kind]), where)
    if kind in OUTPUTS:
        return "\n".join(output_texts(item.get("output"), where))
    return noted(str(kind))
