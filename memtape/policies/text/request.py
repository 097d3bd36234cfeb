"""The window as the chat request a policy would send: one message per part, oldest first.

The COLD gist and the WARM items come first, as one system message each
(what the model is told of the turns it no longer sees verbatim), then the
recall tier (the turns a recall brought back, verbatim) as one system message
while it holds any, then each HOT turn as a message of its role. A
``tool`` turn becomes a ``user`` message that says it is a tool's result: the
window keeps a call's id but not the call's arguments in the form the Chat
Completions API pairs with a ``tool`` message, and a request with a ``tool``
message whose call it cannot see is refused by the major servers.
"""

from memtape.core.state import Window

Message = dict[str, str]
"""A Chat Completions message: its ``role`` and its ``content``."""

GIST_HEADING = "Earlier turns, summarized:"
WARM_HEADING = "Earlier turns, in short:"
TOOL_PREFIX = "Tool result: "
RECALL_HEADING = "Earlier turns, recalled:"


def chat_messages(window: Window) -> list[Message]:
    """The window as Chat Completions messages (see the module's docstring)."""
    messages: list[Message] = []
    if window.gist:
        messages.append({"role": "system", "content": f"{GIST_HEADING}\n{window.gist}"})
    if window.warm:
        items = "\n".join(item.text for item in window.warm)
        messages.append({"role": "system", "content": f"{WARM_HEADING}\n{items}"})
    if window.recalled:
        items = "\n".join(item.text for item in window.recalled)
        messages.append({"role": "system", "content": f"{RECALL_HEADING}\n{items}"})
    for turn in window.hot:
        if turn.role == "tool":
            messages.append({"role": "user", "content": f"{TOOL_PREFIX}{turn.text}"})
        else:
            messages.append({"role": turn.role, "content": turn.text})
    return messages
