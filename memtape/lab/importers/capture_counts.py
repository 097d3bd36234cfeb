"""What a captured exchange's raw bodies count, apart from its entries: the usage a response
says it was billed, and the ids of the tool calls and results a body holds (the ledger's
count)."""

from collections.abc import Mapping
from typing import Any

from memtape.capture.threads import ANTHROPIC, CHAT, RESPONSES
from memtape.lab.importers import anthropic, openai_responses
from memtape.lab.importers.fields import anthropic_usage, inclusive_usage, token_count
from memtape.scenarios.usage import Usage


def usage(endpoint: str, response: Mapping[str, Any], where: str) -> Usage | None:
    """What a response (of the exchange at ``where``) says it was billed, as a turn's usage
    (``input`` the uncached prompt); None when it says nothing. A count that is no count
    is warned of (``fields.token_count``)."""
    where = f"{where}: response.usage"
    given = response.get("usage")
    if not isinstance(given, Mapping):
        return None
    if endpoint == ANTHROPIC:
        return anthropic_usage(given, where)
    prompt_key, output_key, details = (
        ("prompt_tokens", "completion_tokens", "prompt_tokens_details")
        if endpoint == CHAT
        else ("input_tokens", "output_tokens", "input_tokens_details")
    )
    prompt = token_count(given.get(prompt_key), f"{where}.{prompt_key}")
    output = token_count(given.get(output_key), f"{where}.{output_key}")
    detail = given.get(details)
    cached = (
        token_count(detail.get("cached_tokens"), f"{where}.{details}.cached_tokens")
        if isinstance(detail, Mapping)
        else None
    )
    if prompt is None and output is None:
        return None
    return inclusive_usage(prompt, output, cached)


def ids(endpoint: str, body: Mapping[str, Any] | None) -> tuple[list[str], list[str]]:
    """The ids of the tool calls a request or response body holds, and of the calls its
    results answer, read from the raw body (the ledger's count, apart from the entries)."""
    calls: list[str] = []
    results: list[str] = []
    if not isinstance(body, Mapping):
        return calls, results
    if endpoint == RESPONSES:
        for field in ("input", "output"):
            items = body.get(field)
            for item in items if isinstance(items, list) else ():
                kind = item.get("type") if isinstance(item, Mapping) else None
                if not isinstance(kind, str):
                    continue
                if kind in openai_responses.CALLS:
                    calls.append(str(item.get("call_id")))
                elif kind in openai_responses.OUTPUTS:
                    results.append(str(item.get("call_id")))
        return calls, results
    if endpoint == CHAT:
        messages = body.get("messages")
        if not isinstance(messages, list):
            choices = body.get("choices")
            first = choices[0] if isinstance(choices, list) and choices else None
            message = first.get("message") if isinstance(first, Mapping) else None
            messages = [message] if isinstance(message, Mapping) else []
        for message in messages:
            if not isinstance(message, Mapping):
                continue
            # A failed reply's body is read here alone (it makes no turn): anything goes.
            made = message.get("tool_calls")
            for call in made if isinstance(made, list) else ():
                if isinstance(call, Mapping):
                    calls.append(str(call.get("id")))
            if message.get("role") == "tool":
                results.append(str(message.get("tool_call_id")))
        return calls, results
    messages = body.get("messages")
    if not isinstance(messages, list):
        messages = [{"content": body.get("content")}]
    for message in messages:
        found_calls, found_results = anthropic.ids(message)
        calls.extend(found_calls)
        results.extend(found_results)
    return calls, results
