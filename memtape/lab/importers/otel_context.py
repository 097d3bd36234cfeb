"""What of an LLM call's context is new: whether a conversation's calls resend their context,
where a compacted one lines up with the context before it, and the ledger's count of the
tool calls and results each call's own messages bring in."""

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from memtape.lab.importers.otel_calls import Call
from memtape.lab.importers.otel_messages import Message

UNNAMED = "call-without-id."
"""How the reader names a tool call without an id: this and its number."""

TOOL_PARTS = ("tool_call", "tool_call_response")
"""The parts that carry a tool call's id: the call, and its result."""


class Ids:
    """The ledger's count of one conversation's tool calls and results, read from each
    call's own messages (all it sent, and its first reply) apart from what the reader took
    of them as new: when the calls resend the context, an id is in as often as the most
    any one call holds it (a resent message is the same call again); when each sends
    only what is new, every time it occurs. A call or result without an id is counted
    as the reader names it (``call-without-id.N``): the file gives it no other name."""

    def __init__(self, resends: bool) -> None:
        self.resends = resends
        self.most: Counter[tuple[str, str]] = Counter()

    def new(self, call: Call, taken: Sequence[Message]) -> tuple[list[str], list[str]]:
        """The calls and results ``call``'s messages bring in that earlier calls did not."""
        found: Counter[tuple[str, str]] = Counter()
        for message in [*call.sent, *call.outputs[:1]]:
            for part in message.parts:
                if part["type"] in TOOL_PARTS and part.get("id"):
                    found[(part["type"], str(part["id"]))] += 1
        came: list[tuple[str, str]] = []
        for key, count in found.items():
            extra = count - self.most[key] if self.resends else count
            if extra > 0:
                came.extend([key] * extra)
                self.most[key] = max(self.most[key], count)
        came.extend(
            (part["type"], str(part["id"]))
            for message in taken
            for part in message.parts
            if part["type"] in TOOL_PARTS and str(part["id"]).startswith(UNNAMED)
        )
        return (
            [identity for kind, identity in came if kind == "tool_call"],
            [identity for kind, identity in came if kind == "tool_call_response"],
        )


def resends_context(calls: Sequence[Call]) -> bool:
    """Whether the conversation's calls resend the context (any call's input holding a
    message of the context before it), or each sends only what is new."""
    for earlier, later in pairwise(calls):
        before = {m.key for m in earlier.inputs} | {m.key for m in earlier.outputs[:1]}
        if any(message.key in before for message in later.inputs):
            return True
    return False


def kept_run(old: list[str], keys: list[str], head: int) -> tuple[int, int]:
    """The longest run of the old context's last messages found again in the input after
    ``head``: where it starts in the old context and in the input (``len(old)`` when none)."""
    best = (len(old), len(keys))
    if len(old) <= head:
        return best
    # Every such run ends with the old context's last message: extend back from each place the
    # input holds it (linear in the input unless it repeats that message).
    for end in range(head, len(keys)):
        if keys[end] != old[-1]:
            continue
        length = 1
        while (
            end - length >= head
            and len(old) - 1 - length >= head
            and keys[end - length] == old[-1 - length]
        ):
            length += 1
        if len(old) - length < best[0]:
            best = (len(old) - length, end - length + 1)
    return best
