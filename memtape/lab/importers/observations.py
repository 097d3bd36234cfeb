"""Observations where agents put them: a user message after an action, read as its result.

An agent in text mode (SWE-agent without function calling, mini-swe-agent)
writes its action in its message's text (a command in a code block) and the
harness answers with a *user* message holding what the command printed.
Imported as written, that output is a user turn: chatter, the first thing
``tiered`` drops, though it is the agent's evidence. Read with
``user-after-action``, each assistant message that makes no tool call and is
followed directly by a user message is an action: it is given a call id,
``action.N`` (N its message's number in the file, from 1), and the user
message after it becomes a tool turn answering that id, salient under the
default rule and paired with the action as a unit.

``--observations`` takes ``auto`` (the default: ``user-after-action`` for
the formats whose text mode writes observations so, SWE-agent and
mini-swe-agent, when no message of the file makes a tool call; as written
otherwise), ``as-written`` or ``user-after-action``.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.choices import OBSERVATIONS

MODES = OBSERVATIONS
"""What ``--observations`` takes."""

PAIRED = "user-after-action"
"""The mode that reads a user message after an action as its observation."""


@attrs.frozen
class Pairs:
    """The actions found (a message's index: the call id it is given) and the observations
    answering them (a message's index: the call id it answers)."""

    actions: Mapping[int, str] = attrs.Factory(dict)
    observations: Mapping[int, str] = attrs.Factory(dict)

    def ids(self, index: int) -> tuple[list[str], list[str]]:
        """The call and the result the message at ``index`` is given by the pairing."""
        calls = [self.actions[index]] if index in self.actions else []
        results = [self.observations[index]] if index in self.observations else []
        return calls, results


def check_mode(mode: str) -> str:
    """``mode``, refused unless one of ``MODES``."""
    if mode not in MODES:
        raise BadInput(f"--observations {mode!r}: write one of {', '.join(MODES)}")
    return mode


def pairs(messages: Sequence[Any], mode: str, *, text_mode_pairs: bool) -> Pairs:
    """The actions and observations among chat ``messages`` under ``mode``; ``auto`` pairs
    them when ``text_mode_pairs`` (the format writes observations as user messages) and no
    message makes a tool call."""
    check_mode(mode)
    paired = mode == PAIRED or (mode == "auto" and text_mode_pairs and _text_mode(messages))
    if not paired:
        return Pairs()
    actions: dict[int, str] = {}
    observations: dict[int, str] = {}
    for index in range(len(messages) - 1):
        if _action(messages[index]) and _role(messages[index + 1]) == "user":
            call = f"action.{index + 1}"
            actions[index] = call
            observations[index + 1] = call
    return Pairs(actions, observations)


def note(found: Pairs) -> list[str]:
    """The note saying how many user messages were read as observations (none when none)."""
    count = len(found.observations)
    if not count:
        return []
    return [
        f"{count} user messages after an action read as its observation: tool turns answering "
        "action.N (--observations as-written keeps them user turns)"
    ]


def _action(message: Any) -> bool:
    return (
        _role(message) == "assistant"
        and not message.get("tool_calls")
        and message.get("function_call") is None
    )


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, Mapping) else None


def _text_mode(messages: Sequence[Any]) -> bool:
    """Whether no message makes a tool call or carries a tool's result."""
    return not any(
        isinstance(m, Mapping)
        and (m.get("tool_calls") or m.get("function_call") or m.get("role") in ("tool", "function"))
        for m in messages
    )
