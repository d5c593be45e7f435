"""OpenTelemetry OTLP JSON: spans and log records, read from the JSON text itself.

Two shapes of the same messages (``opentelemetry-proto``'s ``ExportTraceServiceRequest``
and ``ExportLogsServiceRequest``):

* the collector's file exporter: one request per line (JSON lines);
* OTLP/HTTP JSON payloads: one request per file, possibly pretty-printed.

Both follow the protobuf JSON mapping with OTLP's rules: lowerCamelCase keys (the proto's
snake_case names are accepted too), 64-bit integers as strings or numbers, enums as
integers or their names (``SPAN_KIND_CLIENT``, ``STATUS_CODE_ERROR``), and ``AnyValue``
variants (``stringValue``, ``boolValue``, ``intValue``, ``doubleValue``, ``arrayValue``,
``kvlistValue``, ``bytesValue``).  Trace and span ids are hex, as OTLP/JSON writes them;
base64 (what protobuf's ``json_format`` writes for ``bytes`` fields, e.g. the SDK's encoder
followed by ``MessageToJson``) is read too: the lengths tell them apart (32 hex characters or
24 base64 ones for a trace id, 16 or 12 for a span id).  Ids come out as lowercase hex.

The older ``instrumentationLibrarySpans`` / ``instrumentationLibraryLogs`` keys are read as
``scopeSpans`` / ``scopeLogs``.  Unknown fields are ignored, as OTLP/JSON receivers must.

A span or log record that cannot be read (no trace id, an id of the wrong length, a time
that is not an integer, an attribute value that is not an ``AnyValue``) is reported with the
JSON path of the field, and the others of its request are still read.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from respeval.errors import RespevalError

__all__ = [
    "SPAN_KINDS",
    "STATUS_CODES",
    "LogEvent",
    "Span",
    "SpanEvent",
    "any_value",
    "attributes",
    "hex_id",
    "payload_records",
]

SPAN_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
STATUS_ERROR = 2


@dataclass
class SpanEvent:
    """An event: a span event (``attributes`` only) or a log record (``body`` too)."""

    name: str
    time_ns: int
    attributes: dict[str, Any]
    body: Any = None


@dataclass
class Span:
    """One span, its attributes decoded to Python values (see :func:`any_value`)."""

    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int  # 0 unset, 1 ok, 2 error
    status_message: str
    attributes: dict[str, Any]
    events: list[SpanEvent] = field(default_factory=list)
    service: str | None = None  # the resource's service.name
    source: str = ""  # "path:line" or "path" of the request it came in


@dataclass
class LogEvent:
    """A log record that names an event (``eventName`` or the ``event.name`` attribute) and
    belongs to a span: how GenAI instrumentations following semantic conventions 1.28-1.36
    record messages (``gen_ai.user.message``, ``gen_ai.choice``, ...)."""

    trace_id: str
    span_id: str
    event: SpanEvent
    service: str | None = None
    source: str = ""


class BadField(RespevalError, ValueError):
    """A field of a request that cannot be read: ``field`` is its JSON path."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


_HEX = frozenset("0123456789abcdefABCDEF")


def hex_id(value: Any, size: int) -> str | None:
    """An id of ``size`` bytes as lowercase hex, from hex or base64 text; ``""`` for an empty
    one; None when it is neither."""
    if not isinstance(value, str):
        return None
    n = len(value)
    if n == 0:
        return ""
    if n == 2 * size and _HEX.issuperset(value):
        return value.lower()
    if n == 4 * ((size + 2) // 3):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(raw) == size:
            return raw.hex()
    return None


def _int(value: Any) -> int | None:
    if type(value) is int:
        return value
    if type(value) is str:
        try:
            return int(value)
        except ValueError:
            return None
    if type(value) is float and value.is_integer():
        return int(value)
    return None


_DOUBLE_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_SNAKE = {
    "string_value": "stringValue",
    "bool_value": "boolValue",
    "int_value": "intValue",
    "double_value": "doubleValue",
    "array_value": "arrayValue",
    "kvlist_value": "kvlistValue",
    "bytes_value": "bytesValue",
}


def any_value(value: Any, where: str) -> Any:
    """An ``AnyValue`` as a Python value: str, bool, int, float, list, dict (kvlist), the
    base64 text of ``bytesValue``, or None for an empty value.  Raises :class:`BadField`."""
    if type(value) is not dict:
        raise BadField(where, f"expected an AnyValue object, got {type(value).__name__}")
    if "stringValue" in value:
        s = value["stringValue"]
        if type(s) is not str:
            raise BadField(where + ".stringValue", f"expected a string, got {type(s).__name__}")
        return s
    if "intValue" in value:
        i = _int(value["intValue"])
        if i is None:
            raise BadField(where + ".intValue", f"expected an integer, got {value['intValue']!r}")
        return i
    if "doubleValue" in value:
        d = value["doubleValue"]
        if type(d) in (int, float) and type(d) is not bool:
            return float(d)
        if isinstance(d, str) and d in _DOUBLE_WORDS:
            return _DOUBLE_WORDS[d]
        try:
            return float(d)
        except (TypeError, ValueError):
            raise BadField(where + ".doubleValue", f"expected a number, got {d!r}") from None
    if "boolValue" in value:
        b = value["boolValue"]
        if type(b) is not bool:
            raise BadField(where + ".boolValue", f"expected true or false, got {b!r}")
        return b
    if "arrayValue" in value:
        arr = value["arrayValue"] or {}
        values = (arr.get("values") or []) if type(arr) is dict else None
        if type(values) is not list:
            raise BadField(where + ".arrayValue", "expected {values: [AnyValue, ...]}")
        return [any_value(v, f"{where}.arrayValue.values[{i}]") for i, v in enumerate(values)]
    if "kvlistValue" in value:
        kv = value["kvlistValue"] or {}
        values = (kv.get("values") or []) if type(kv) is dict else None
        if type(values) is not list:
            raise BadField(where + ".kvlistValue", "expected {values: [{key, value}, ...]}")
        return attributes(values, where + ".kvlistValue.values")
    if "bytesValue" in value:
        return value["bytesValue"]
    if not value:
        return None
    snake = {_SNAKE.get(k, k): v for k, v in value.items()}
    if snake.keys() != value.keys():
        return any_value(snake, where)
    raise BadField(where, f"not an AnyValue (keys: {', '.join(sorted(value)[:6])})")


def attributes(items: Any, where: str) -> dict[str, Any]:
    """A ``KeyValue`` list as a dict (a repeated key: the last wins)."""
    if items is None:
        return {}
    if type(items) is not list:
        raise BadField(where, f"expected a list of {{key, value}}, got {type(items).__name__}")
    out: dict[str, Any] = {}
    for i, kv in enumerate(items):
        if type(kv) is not dict:
            raise BadField(f"{where}[{i}]", f"expected {{key, value}}, got {type(kv).__name__}")
        key = kv.get("key")
        if type(key) is not str:
            raise BadField(f"{where}[{i}].key", "missing" if key is None else f"expected a string, got {key!r}")
        value = kv.get("value")
        out[key] = None if value is None else any_value(value, f"{where}[{i}].value")
    return out


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _list(obj: dict[str, Any], camel: str, snake: str, where: str, *, old: tuple[str, str] | None = None) -> list:
    value = _get(obj, camel, snake)
    if value is None and old is not None:
        value = _get(obj, *old)
    if value is None:
        return []
    if type(value) is not list:
        raise BadField(f"{where}.{camel}", f"expected a list, got {type(value).__name__}")
    return value


def _enum(value: Any, names: dict[str, int], where: str) -> int:
    if value is None:
        return 0
    if type(value) is int:
        return value
    if type(value) is str and value in names:
        return names[value]
    raise BadField(where, f"unknown value {value!r} (expected an integer or one of {', '.join(names)})")


def _time(obj: dict[str, Any], camel: str, snake: str, where: str) -> int:
    value = _get(obj, camel, snake)
    if value is None:
        return 0
    t = _int(value)
    if t is None or t < 0:
        raise BadField(f"{where}.{camel}", f"expected a non-negative integer of nanoseconds, got {value!r}")
    return t


def _ids(obj: dict[str, Any], where: str, *, required: bool) -> tuple[str, str]:
    raw_trace = _get(obj, "traceId", "trace_id")
    trace = hex_id(raw_trace if raw_trace is not None else "", 16)
    if trace is None:
        raise BadField(f"{where}.traceId", f"not a 16-byte id in hex or base64: {raw_trace!r}")
    if not trace and required:
        raise BadField(f"{where}.traceId", "missing")
    if trace and trace.strip("0") == "":
        raise BadField(f"{where}.traceId", "all zeros (an invalid trace id)")
    raw_span = _get(obj, "spanId", "span_id")
    span = hex_id(raw_span if raw_span is not None else "", 8)
    if span is None:
        raise BadField(f"{where}.spanId", f"not an 8-byte id in hex or base64: {raw_span!r}")
    if not span and required:
        raise BadField(f"{where}.spanId", "missing")
    return trace, span


def _events(items: list, where: str) -> list[SpanEvent]:
    out = []
    for i, ev in enumerate(items):
        at = f"{where}[{i}]"
        if type(ev) is not dict:
            raise BadField(at, f"expected an event object, got {type(ev).__name__}")
        name = ev.get("name") or ""
        if type(name) is not str:
            raise BadField(at + ".name", f"expected a string, got {name!r}")
        out.append(
            SpanEvent(
                name,
                _time(ev, "timeUnixNano", "time_unix_nano", at),
                attributes(ev.get("attributes"), at + ".attributes"),
            )
        )
    return out


def _span(obj: Any, where: str, service: str | None, source: str) -> Span:
    if type(obj) is not dict:
        raise BadField(where, f"expected a span object, got {type(obj).__name__}")
    trace, span_id = _ids(obj, where, required=True)
    raw_parent = _get(obj, "parentSpanId", "parent_span_id")
    parent = hex_id(raw_parent if raw_parent is not None else "", 8)
    if parent is None:
        raise BadField(f"{where}.parentSpanId", f"not an 8-byte id in hex or base64: {raw_parent!r}")
    name = obj.get("name") or ""
    if type(name) is not str:
        raise BadField(f"{where}.name", f"expected a string, got {type(name).__name__}")
    status = obj.get("status") or {}
    if type(status) is not dict:
        raise BadField(f"{where}.status", f"expected an object, got {type(status).__name__}")
    message = status.get("message") or ""
    if type(message) is not str:
        raise BadField(f"{where}.status.message", f"expected a string, got {type(message).__name__}")
    start = _time(obj, "startTimeUnixNano", "start_time_unix_nano", where)
    end = _time(obj, "endTimeUnixNano", "end_time_unix_nano", where)
    return Span(
        trace_id=trace,
        span_id=span_id,
        parent_id="" if parent.strip("0") == "" else parent,
        name=name,
        kind=_enum(obj.get("kind"), SPAN_KINDS, f"{where}.kind"),
        start_ns=start,
        end_ns=max(end, start),
        status_code=_enum(status.get("code"), STATUS_CODES, f"{where}.status.code"),
        status_message=message,
        attributes=attributes(obj.get("attributes"), f"{where}.attributes"),
        events=_events(_list(obj, "events", "events", where), f"{where}.events"),
        service=service,
        source=source,
    )


def _log(obj: Any, where: str, service: str | None, source: str) -> LogEvent | None:
    if type(obj) is not dict:
        raise BadField(where, f"expected a log record object, got {type(obj).__name__}")
    attrs = attributes(obj.get("attributes"), f"{where}.attributes")
    name = _get(obj, "eventName", "event_name") or attrs.get("event.name")
    trace, span_id = _ids(obj, where, required=False)
    if not name or not trace:
        return None  # a plain log line, or one outside any trace: not a GenAI event of a span
    if type(name) is not str:
        raise BadField(f"{where}.eventName", f"expected a string, got {type(name).__name__}")
    body = obj.get("body")
    time = _time(obj, "timeUnixNano", "time_unix_nano", where) or _time(
        obj, "observedTimeUnixNano", "observed_time_unix_nano", where
    )
    event = SpanEvent(name, time, attrs, None if body is None else any_value(body, f"{where}.body"))
    return LogEvent(trace, span_id, event, service, source)


def _service(resource: Any, where: str) -> str | None:
    if resource is None:
        return None
    if type(resource) is not dict:
        raise BadField(where, f"expected an object, got {type(resource).__name__}")
    for i, kv in enumerate(resource.get("attributes") or ()):
        if type(kv) is dict and kv.get("key") == "service.name":
            value = any_value(kv.get("value") or {}, f"{where}.attributes[{i}].value")
            return None if value is None else str(value)
    return None


@dataclass(frozen=True)
class _Signal:
    """Where one OTLP signal keeps its items: ``resource<Kind>`` -> ``scope<Kind>`` -> items,
    each key in its JSON (camelCase) and protobuf-JSON (snake_case) spelling, with the
    pre-1.0 ``instrumentationLibrary<Kind>`` names still read."""

    resources: tuple[str, str]
    scopes: tuple[str, str]
    old_scopes: tuple[str, str]
    items: tuple[str, str]
    read: Callable[[Any, str, str | None, str], Span | LogEvent | None]


_SPANS = _Signal(
    ("resourceSpans", "resource_spans"),
    ("scopeSpans", "scope_spans"),
    ("instrumentationLibrarySpans", "instrumentation_library_spans"),
    ("spans", "spans"),
    _span,
)
_LOGS = _Signal(
    ("resourceLogs", "resource_logs"),
    ("scopeLogs", "scope_logs"),
    ("instrumentationLibraryLogs", "instrumentation_library_logs"),
    ("logRecords", "log_records"),
    _log,
)


def payload_records(payload: dict[str, Any], source: str, bad: Callable[[str, str], None]) -> Iterator[Span | LogEvent]:
    """The spans and GenAI log events of one ``ExportTraceServiceRequest`` or
    ``ExportLogsServiceRequest``.  A bad span or log record calls ``bad(field, reason)`` and
    the rest are still read; a request whose structure is wrong (``resourceSpans`` not a
    list) calls it once for the whole request."""
    try:
        resources = [(signal, _list(payload, *signal.resources, "")) for signal in (_SPANS, _LOGS)]
    except BadField as exc:
        bad(exc.field.lstrip("."), exc.reason)
        return
    for signal, items in resources:
        yield from _signal_records(signal, items, source, bad)


def _signal_records(
    signal: _Signal, resources: list[Any], source: str, bad: Callable[[str, str], None]
) -> Iterator[Span | LogEvent]:
    for r, resource in enumerate(resources):
        where = f"{signal.resources[0]}[{r}]"
        try:
            if type(resource) is not dict:
                raise BadField(where, f"expected an object, got {type(resource).__name__}")
            service = _service(resource.get("resource"), f"{where}.resource")
            scopes = _list(resource, *signal.scopes, where, old=signal.old_scopes)
        except BadField as exc:
            bad(exc.field, exc.reason)
            continue
        for s, scope in enumerate(scopes):
            at = f"{where}.{signal.scopes[0]}[{s}]"
            try:
                if type(scope) is not dict:
                    raise BadField(at, f"expected an object, got {type(scope).__name__}")
                items = _list(scope, *signal.items, at)
            except BadField as exc:
                bad(exc.field, exc.reason)
                continue
            for k, obj in enumerate(items):
                try:
                    record = signal.read(obj, f"{at}.{signal.items[0]}[{k}]", service, source)
                except BadField as exc:
                    bad(exc.field, exc.reason)
                    continue
                if record is not None:
                    yield record


def is_payload(obj: Any) -> bool:
    """Whether a JSON value looks like an OTLP export request."""
    return type(obj) is dict and any(
        k in obj for k in ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs")
    )
