"""The spans of an OTLP JSON trace file, their attributes as plain values.

An OTLP JSON file (what the OpenTelemetry Collector's file exporter writes,
or an ``ExportTraceServiceRequest`` sent over HTTP) is one object, or JSONL
of them, each ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``.
A span has ``traceId``, ``spanId``, ``parentSpanId``, ``name``,
``startTimeUnixNano`` (a string, as the protobuf JSON mapping writes 64-bit
integers, or a number) and ``attributes``, a list of ``{"key": ..., "value":
ANYVALUE}``, where an AnyValue is one of ``stringValue``, ``boolValue``,
``intValue`` (a string or a number), ``doubleValue``, ``bytesValue``,
``arrayValue: {"values": [...]}`` or ``kvlistValue: {"values": [{"key",
"value"}]}``. Each span is named by where it is:
``FILE:LINE: resourceSpans[I].scopeSpans[J].spans[K]``.
"""

from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers.fields import listed
from memtape.lab.importers.records import Source


@attrs.frozen
class Span:
    """One span: its place in the file, its ids, when it started, and its attributes."""

    where: str
    trace: str
    id: str
    parent: str | None
    name: str
    start: int
    attributes: dict[str, Any]


def spans(source: Source) -> list[Span]:
    """Every span of the trace file ``source``, in file order."""
    found: list[Span] = []
    for record in source.records:
        data = record.data
        if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
            raise BadInput(f"{record.where}: an OTLP JSON trace is an object with resourceSpans")
        for i, resource in enumerate(data["resourceSpans"]):
            for j, scope in enumerate(listed(resource, "scopeSpans", f"{record.where}: [{i}]")):
                place = f"{record.where}: resourceSpans[{i}].scopeSpans[{j}]"
                for k, span in enumerate(listed(scope, "spans", place)):
                    found.append(_span(span, f"{place}.spans[{k}]"))
    return found


def _span(data: Any, where: str) -> Span:
    if not isinstance(data, dict):
        raise BadInput(f"{where}: a span is an object")
    trace, identity = data.get("traceId"), data.get("spanId")
    if not isinstance(trace, str) or not isinstance(identity, str) or not identity:
        raise BadInput(f"{where}: a span needs its traceId and spanId strings")
    parent = data.get("parentSpanId")
    start = data.get("startTimeUnixNano", 0)
    try:
        started = int(start)
    except (TypeError, ValueError):
        raise BadInput(f"{where}: startTimeUnixNano is not an integer: {start!r}") from None
    attributes = {}
    for number, pair in enumerate(listed(data, "attributes", where)):
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise BadInput(f"{where}: attribute {number} is not a {{key, value}} object")
        attributes[pair["key"]] = value(pair.get("value"), f"{where}: attribute {pair['key']!r}")
    name = data.get("name")
    return Span(
        where,
        trace,
        identity,
        parent if isinstance(parent, str) and parent else None,
        name if isinstance(name, str) else "",
        started,
        attributes,
    )


def value(data: Any, where: str) -> Any:
    """An AnyValue as a plain value: a string, a bool, an int, a float, a list or a dict."""
    if data is None or data == {}:
        return None
    if not isinstance(data, dict) or len(data) != 1:
        raise BadInput(f"{where}: an attribute value is an AnyValue object, got {data!r}")
    ((kind, given),) = data.items()
    if kind in ("stringValue", "bytesValue") and isinstance(given, str):
        return given
    if kind == "boolValue" and isinstance(given, bool):
        return given
    if kind == "intValue" and isinstance(given, int | str) and not isinstance(given, bool):
        try:
            return int(given)
        except ValueError:
            raise BadInput(f"{where}: intValue {given!r} is not an integer") from None
    if kind == "doubleValue" and isinstance(given, int | float | str):
        try:
            return float(given)
        except ValueError:
            raise BadInput(f"{where}: doubleValue {given!r} is not a number") from None
    if kind == "arrayValue" and isinstance(given, dict):
        return [value(item, where) for item in listed(given, "values", where)]
    if kind == "kvlistValue" and isinstance(given, dict):
        pairs = listed(given, "values", where)
        if not all(isinstance(pair, dict) and isinstance(pair.get("key"), str) for pair in pairs):
            raise BadInput(f"{where}: a kvlistValue holds {{key, value}} objects")
        return {pair["key"]: value(pair.get("value"), where) for pair in pairs}
    raise BadInput(f"{where}: an attribute value of kind {kind!r} holding {given!r}")
