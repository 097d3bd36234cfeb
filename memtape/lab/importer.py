"""Importing real transcripts: JSONL of OpenAI chat messages into a scenario file.

Each line is one message ``{"role", "content"}``; the content is a string,
a list of text parts, or null for an assistant message that only calls tools
(its calls become its text). Each message becomes one turn. Which turns are
salient is a rule: ``tool`` (the default: tool results), ``all``, ``none``,
or a comma-separated list of roles, each of which some message must have (a
typo would otherwise leave every turn chatter, silently). A system prompt is
chatter unless the rule names ``system``: under tiered compaction it is the
first thing dropped once it leaves HOT.
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from memtape.core.commands import ROLES
from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.lab.probes import planted
from memtape.lab.scenario_file import DEFAULT_BUDGET, DEFAULT_HOT_N, header
from memtape.scenarios.writer import Value, scenario_file

OPENAI_ROLES: dict[str, str] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
"""Each OpenAI chat role and the turn role it becomes (``memtape.core.commands.ROLES``):
a ``developer`` message instructs as a system prompt does, a ``function`` message
is the older form of a tool result."""

DEFAULT_SALIENT = "tool"
"""The salience rule when none is given: tool results are salient, nothing else."""


def salient_roles(rule: str) -> frozenset[str] | None:
    """The roles a ``--salient`` rule makes salient; None for ``all``."""
    text = rule.strip()
    if text == "all":
        return None
    if text == "none":
        return frozenset()
    roles = [role.strip() for role in text.split(",")]
    if not all(role in ROLES for role in roles):
        raise BadInput(
            f"--salient {rule!r}: write tool, all, none, or roles separated by commas "
            f"(of {', '.join(ROLES)})"
        )
    return frozenset(roles)


def _check_roles(
    roles: frozenset[str], messages: list[tuple[str, str]], path: Path, rule: str
) -> None:
    """Refuse a rule naming a role no message has, saying which roles the file has."""
    present = {role for role, _ in messages}
    missing = sorted(roles - present)
    if missing:
        named = ("the role " if len(missing) == 1 else "the roles ") + ", ".join(
            repr(role) for role in missing
        )
        raise BadInput(
            f"{path}: --salient {rule!r}: no message has {named} "
            f"(the file's roles: {', '.join(sorted(present))})"
        )


def read_chat(path: Path) -> list[tuple[str, str]]:
    """The ``(role, text)`` of each message of a chat JSONL file; a bad line names file:line."""
    raw = read_regular(path, "transcript")
    messages = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            raise BadInput(f"{where}: not a JSON message: {error}") from None
        messages.append(_message(data, where))
    if not messages:
        raise BadInput(f"{path}: no messages (one JSON object per line)")
    return messages


def _message(data: Any, where: str) -> tuple[str, str]:
    if not isinstance(data, dict):
        raise BadInput(f"{where}: a message is an object with role and content")
    given = data.get("role")
    role = OPENAI_ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        known = ", ".join(OPENAI_ROLES)
        raise BadInput(f"{where}: role must be one of {known}, got {given!r}")
    if "content" not in data:
        raise BadInput(f"{where}: a message needs content (a string, text parts, or null)")
    # orjson refuses unpaired surrogate escapes, so every text can be written as UTF-8.
    return role, _text(data["content"], data.get("tool_calls"), where)


def _text(content: Any, calls: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for number, part in enumerate(content, start=1):
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else part
                raise BadInput(
                    f"{where}: content part {number} is {kind!r}; only text parts import"
                )
            if not isinstance(part.get("text"), str):
                raise BadInput(f"{where}: content part {number} has no text string")
            texts.append(part["text"])
        return "\n".join(texts)
    if content is None and isinstance(calls, list) and calls:
        return "; ".join(_call(call, where) for call in calls)
    raise BadInput(f"{where}: content must be a string, text parts, or null with tool_calls")


def _call(call: Any, where: str) -> str:
    function = call.get("function") if isinstance(call, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str) or not isinstance(function, Mapping):
        raise BadInput(f"{where}: a tool call needs a function with a name")
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return f"call {name}({arguments})"


def import_chat(
    path: Path,
    salient: str | None = None,
    *,
    budget: int = DEFAULT_BUDGET,
    hot_n: int = DEFAULT_HOT_N,
    probes: str | None = None,
) -> str:
    """A scenario file's text with one turn per message of the chat file at ``path``.

    ``salient`` is the rule (None: ``DEFAULT_SALIENT``, which holds for a file
    without tool results too); a role the rule names must occur in the file.
    ``probes`` is ``--probes``: None plants none, ``auto`` plants them by the rule
    of ``memtape.lab.probes``, anything else names a probes file.
    """
    rule = DEFAULT_SALIENT if salient is None else salient
    policies = header(budget, hot_n)
    roles = salient_roles(rule)
    messages = read_chat(path)
    if salient is not None and roles:
        _check_roles(roles, messages, path, rule)
    steps: list[dict[str, Value]] = []
    for role, text in messages:
        step: dict[str, Value] = {"turn": role, "text": text}
        flag = roles is None or role in roles
        if flag != (role == "tool"):
            step["salient"] = flag
        steps.append(step)
    tables = planted(probes, messages)
    comment = f"Imported from {path.name}: {len(messages)} messages, salient: {rule.strip()}."
    if probes is not None:
        comment += f"\nProbes: {len(tables)} ({probes})."
    info: dict[str, Value] = {
        "name": path.stem,
        "about": f"A transcript imported from {path.name}.",
    }
    return scenario_file(comment, info, policies, steps, tables)
