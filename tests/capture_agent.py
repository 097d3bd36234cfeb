"""The agent the capture tests run under ``memtape record`` (``SOURCE``, written into
the test's folder as agent.py): the real ``openai`` and ``anthropic`` SDKs, each call's
raw response body written to ``received/NN.bin`` (the bytes the agent got), and what
the typed calls read to ``summary.json``.

It reads its base URLs from the environment, as any SDK app does; its key is
``CANARY``, which no capture may hold.
"""

CANARY = "sk-canary-7f3e9a1b2c4d"
"""The API key the agent sends; the capture tests search the capture for it."""

CALLS = 11
"""The requests the agent makes, in order (each has its NN.bin)."""

TYPED = (3, 9)
"""The calls made through the SDKs' typed streams: their bytes are not kept (b"")."""

SOURCE = """
import json
import sys
from pathlib import Path

import anthropic
import openai

CANARY = "@CANARY@"
TOOLS_OPENAI = [{"type": "function", "function": {"name": "lookup", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
TOOLS_ANTHROPIC = [{"name": "lookup", "input_schema": {
    "type": "object", "properties": {"city": {"type": "string"}}}}]
CHAT = [
    {"role": "system", "content": "You answer capitals."},
    {"role": "user", "content": "Capital of France?"},
]
ASK = [{"role": "user", "content": "Capital of France?"}]


def main(out):
    received = out / "received"
    received.mkdir(parents=True)
    summary = {}
    oai = openai.OpenAI(api_key=CANARY, max_retries=0)
    ant = anthropic.Anthropic(api_key=CANARY, max_retries=0)
    bodies = []

    def raw(make):
        with make() as response:
            bodies.append(b"".join(response.iter_bytes()))

    chat = oai.chat.completions.with_streaming_response
    raw(lambda: chat.create(model="gpt-x", messages=CHAT))
    raw(lambda: chat.create(model="gpt-x", messages=CHAT, tools=TOOLS_OPENAI, stream=True,
                            stream_options={"include_usage": True}))
    stream = oai.chat.completions.create(model="gpt-x", messages=CHAT, stream=True)
    summary["chat_text"] = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    bodies.append(b"")

    responses = oai.responses.with_streaming_response
    raw(lambda: responses.create(model="gpt-x", instructions="Be brief.", input="Capital?"))
    first_id = json.loads(bodies[-1])["id"]
    raw(lambda: responses.create(model="gpt-x", input="And Spain?", stream=True))
    raw(lambda: responses.create(model="gpt-x", input="Italy?", previous_response_id=first_id))

    messages = ant.messages.with_streaming_response
    raw(lambda: messages.create(model="claude-x", max_tokens=100, system="You answer capitals.",
                                messages=ASK, metadata={"user_id": "session-42"}))
    raw(lambda: messages.create(model="claude-x", max_tokens=100, messages=ASK,
                                tools=TOOLS_ANTHROPIC, stream=True))
    with ant.messages.stream(model="claude-x", max_tokens=100, messages=ASK) as typed:
        summary["anthropic_text"] = typed.get_final_message().content[0].text
    bodies.append(b"")

    try:
        oai.chat.completions.create(model="fail", messages=CHAT)
    except openai.APIStatusError as error:
        summary["fail_status"] = error.status_code
        bodies.append(error.response.content)

    pieces = []
    try:
        with messages.create(model="drop", max_tokens=100, messages=ASK, stream=True) as response:
            for piece in response.iter_bytes():
                pieces.append(piece)
    except Exception as error:
        summary["drop_error"] = type(error).__name__
    bodies.append(b"".join(pieces))

    for number, body in enumerate(bodies, start=1):
        (received / f"{number:02d}.bin").write_bytes(body)
    (out / "summary.json").write_text(json.dumps(summary))


main(Path(sys.argv[1]))
""".replace("@CANARY@", CANARY)
"""The agent's source."""
