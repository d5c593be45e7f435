"""Efficiency: what each case and the whole run spent -- tokens in and out, model calls, tool
calls, latency, cost -- from ADK sessions and eval sets, traces, and run outputs.

Per case (:class:`~respeval.agents.efficiency.CaseEfficiency`):

=======================  ====================================================================
``tool_calls``           tool calls made
``model_calls``          model (inference) calls made
``tokens_in``            input tokens (prompt, plus ADK's tool-use prompt tokens)
``tokens_out``           output tokens (completion, plus ADK's thoughts tokens)
``tokens_total``         in + out
``latency_s``            wall-clock seconds of the case
``cost_usd``             what the model calls cost: recorded, else tokens times the price of
                         the call's model (:mod:`respeval.judge.prices`; a call whose model has
                         no known price makes the case's cost unknown, never 0)
``tool_call_count``,     ADK 2.13's ``tool_call_count_v1``, ``inference_call_count_v1``,
``inference_call_count`` ``token_usage_v1`` and ``invocation_duration_v1``: per-invocation
``token_usage``,         values and their per-case means, equal to ADK's own evaluators
``invocation_duration``  (:mod:`respeval.agents.efficiency`)
=======================  ====================================================================

Sources (:func:`read_efficiency`, ``kind``):

* ``adk``: session dumps (``*.session.json``: one case per session) and eval sets
  (``*.evalset.json``, ``*.test.json``: one case per eval case, its invocations as the
  run), or directories of them;
* ``traces``: anything ``respeval dataset from-traces`` reads (OTLP, OpenInference, chat
  logs), one case per trace; a trace is one invocation for ADK's names;
* ``rows``: a table of run outputs or of built cases (JSONL, CSV, Parquet), one case per
  row, the fields found under the names in :data:`ROW_FIELDS` (``fields=`` renames).

A value a source did not record is None (n/a), never 0, and the run summary says over how
many cases each statistic is taken.  Run level (:func:`summarize`): per quantity the number of
cases with a value, the exact sum, the mean with a seeded Poisson-bootstrap percentile
interval (:mod:`respeval.stats`), percentiles (p50, p90, p95, p99: linear interpolation,
numpy's default) and the maximum; and ADK's four metrics as the mean of the case values.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval.agents.efficiency import (
    ADK_EFFICIENCY_METRICS,
    DURATION_FIELDS,
    TOKEN_FIELDS,
    CaseEfficiency,
    call_tokens,
    case_efficiency,
)
from respeval.agents.loaders import AgentDataError, Invocation, load_eval_set, load_session
from respeval.stats import DEFAULT_PERCENTILES, DEFAULT_SEED, Interval, bootstrap_means, exact_sum, percentile_interval
from respeval.stats.quantiles import percentiles

__all__ = [
    "KINDS",
    "QUANTITIES",
    "ROW_FIELDS",
    "CaseEfficiency",
    "EfficiencyReport",
    "QuantitySummary",
    "case_from_invocations",
    "case_from_row",
    "case_from_trace",
    "detect_kind",
    "efficiency",
    "read_efficiency",
    "summarize",
]

KINDS = ("auto", "adk", "traces", "rows")
QUANTITIES = ("tool_calls", "model_calls", "tokens_in", "tokens_out", "tokens_total", "latency_s", "cost_usd")

ROW_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "case_id", "trace_id", "eval_id"),
    "tokens_in": ("tokens_in", "input_tokens", "prompt_tokens"),
    "tokens_out": ("tokens_out", "output_tokens", "completion_tokens"),
    "model_calls": ("model_calls", "inference_call_count", "calls"),
    "tool_calls": ("tool_calls", "tool_call_count"),
    "latency_s": ("latency_s", "latency", "duration_s", "seconds"),
    "cost_usd": ("cost_usd", "cost"),
    "model": ("model",),
}
"""Where a row's values are read from: the first of the names present (``fields={"tokens_in":
"usage_in"}`` puts your own name first).  ``tool_calls`` may be a count or the list of calls."""

_ADK_SUFFIXES = (".session.json", ".evalset.json", ".test.json")


# --------------------------------------------------------------------------- prices


def _call_cost(model: str | None, tokens_in: int, tokens_out: int, prices: Mapping[str, Any] | None) -> float | None:
    if not model:
        return None
    from respeval.judge.prices import model_price

    price = model_price(model, model.rpartition("/")[2], table=prices)
    return None if price is None else price.interactive.cost(tokens_in, tokens_out)


def _invocations_cost(invocations: Sequence[Invocation], prices: Mapping[str, Any] | None) -> float | None:
    total, counted = 0.0, False
    for inv in invocations:
        for call in inv.model_calls or ():
            if call.usage is None:
                continue
            tokens = call_tokens(call)
            if tokens["input_tokens"] is None and tokens["output_tokens"] is None:
                continue
            cost = _call_cost(call.model, tokens["input_tokens"] or 0, tokens["output_tokens"] or 0, prices)
            if cost is None:
                return None  # one call of unknown price: the case's cost is unknown
            total += cost
            counted = True
    return total if counted else None


# --------------------------------------------------------------------------- cases


def case_from_invocations(
    case_id: str, invocations: Sequence[Invocation], *, prices: Mapping[str, Any] | None = None
) -> CaseEfficiency:
    """One ADK case (a session, an eval case): ADK's values, respeval's totals and the cost
    of its model calls at ``prices`` (a price table, see :func:`respeval.judge.prices.
    load_price_table`; the built-in table otherwise)."""
    case = case_efficiency(case_id, invocations)
    case.cost_usd = _invocations_cost(invocations, prices)
    return case


def _text_number(value: Any) -> Any:
    """A number written as text (a CSV cell) as the number; an empty cell as None."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return value


def _count(value: Any, what: str) -> int | None:
    value = _text_number(value)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"field {what!r}: {value!r} is not a count")
    if value != int(value):
        raise ValueError(f"field {what!r}: {value!r} is not a whole number")
    return int(value)


def _amount(value: Any, what: str) -> float | None:
    value = _text_number(value)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"field {what!r}: {value!r} is not a non-negative number")
    return float(value)


def _tool_calls(value: Any, what: str) -> int | None:
    if isinstance(value, str) and value[:1] == "[":  # a list as JSON text (CSV, Parquet text columns)
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"field {what!r}: not a JSON list of calls") from None
    if isinstance(value, (list, tuple)):
        return len(value)
    return _count(value, what)


def _single_invocation(case: CaseEfficiency) -> CaseEfficiency:
    """ADK's names for a case that is one invocation (a trace, a row)."""
    case.tool_call_count = None if case.tool_calls is None else float(case.tool_calls)
    case.inference_call_count = None if case.model_calls is None else float(case.model_calls)
    usage: dict[str, float | None] = dict.fromkeys(TOKEN_FIELDS)
    usage["input_tokens"], usage["output_tokens"] = case.tokens_in, case.tokens_out
    usage["total_tokens"] = case.tokens_total
    case.token_usage = usage
    duration: dict[str, float | None] = dict.fromkeys(DURATION_FIELDS)
    duration["total_seconds"] = case.latency_s
    case.invocation_duration = duration
    return case


def _totals(case: CaseEfficiency) -> CaseEfficiency:
    if case.tokens_in is not None or case.tokens_out is not None:
        case.tokens_total = (case.tokens_in or 0) + (case.tokens_out or 0)
    return _single_invocation(case)


def case_from_trace(case: Any) -> CaseEfficiency:
    """One trace case (a :class:`respeval.traces.Case` or its row)."""
    get = case.get if isinstance(case, Mapping) else lambda name: getattr(case, name, None)
    tool_calls = get("tool_calls")
    out = CaseEfficiency(
        str(get("trace_id")),
        source="trace",
        tool_calls=len(tool_calls) if isinstance(tool_calls, list) else None,
        model_calls=_count(get("model_calls"), "model_calls"),
        tokens_in=_count(get("input_tokens"), "input_tokens"),
        tokens_out=_count(get("output_tokens"), "output_tokens"),
        latency_s=_amount(get("latency_s"), "latency_s"),
        cost_usd=_amount(get("cost_usd"), "cost_usd"),
    )
    model = get("model")
    out.models = (model,) if isinstance(model, str) and model else ()
    return _totals(out)


def _field_names(fields: Mapping[str, str] | None) -> dict[str, tuple[str, ...]]:
    names = dict(ROW_FIELDS)
    for key, name in (fields or {}).items():
        if key not in names:
            raise ValueError(f"unknown efficiency field {key!r}; one of {', '.join(ROW_FIELDS)}")
        names[key] = (name,) + tuple(n for n in names[key] if n != name)
    return names


def case_from_row(
    row: Mapping[str, Any],
    *,
    fields: Mapping[str, str] | None = None,
    prices: Mapping[str, Any] | None = None,
    default_id: str = "",
) -> CaseEfficiency:
    """One row of run outputs or built cases (see :data:`ROW_FIELDS`); a cost not recorded is
    priced from the row's model and tokens when the model's price is known.  Raises
    ValueError naming the field."""
    names = _field_names(fields)

    def pick(key: str) -> tuple[Any, str]:
        for name in names[key]:
            if name in row and row[name] is not None:
                return row[name], name
        return None, names[key][0]

    case_id, _ = pick("id")
    tool_calls, tool_name = pick("tool_calls")
    values = {key: pick(key) for key in ("tokens_in", "tokens_out", "model_calls", "latency_s", "cost_usd", "model")}
    out = CaseEfficiency(
        str(case_id) if case_id is not None else default_id,
        source="row",
        tool_calls=_tool_calls(tool_calls, tool_name),
        model_calls=_count(*values["model_calls"]),
        tokens_in=_count(*values["tokens_in"]),
        tokens_out=_count(*values["tokens_out"]),
        latency_s=_amount(*values["latency_s"]),
        cost_usd=_amount(*values["cost_usd"]),
    )
    model = values["model"][0]
    out.models = (model,) if isinstance(model, str) and model else ()
    if out.cost_usd is None and out.models and (out.tokens_in is not None or out.tokens_out is not None):
        out.cost_usd = _call_cost(out.models[0], out.tokens_in or 0, out.tokens_out or 0, prices)
    return _totals(out)


# --------------------------------------------------------------------------- reading


def detect_kind(path: str | os.PathLike[str]) -> str:
    """``adk``, ``traces`` or ``rows`` for one input (see the module docstring)."""
    p = Path(path)
    if p.is_dir():
        for sub in sorted(p.rglob("*")):
            if sub.name.lower().endswith(_ADK_SUFFIXES):
                return "adk"
        return "traces"
    name = p.name.lower()
    if name.endswith(_ADK_SUFFIXES):
        return "adk"
    if name.endswith((".csv", ".parquet", ".pq")):
        return "rows"
    if name.endswith((".jsonl", ".ndjson")):
        try:
            with open(p, encoding="utf-8") as fh:
                first = next((line for line in fh if line.strip()), "")
            obj = json.loads(first) if first else None
        except (OSError, ValueError):
            return "rows"  # the row reader names the file and line
        if isinstance(obj, Mapping) and (
            "resourceSpans" in obj or "resourceLogs" in obj or ("request" in obj and "response" in obj)
        ):
            return "traces"
        return "rows"
    return "traces"


def _adk_files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(_ADK_SUFFIXES))


def _adk_cases(path: Path, prices: Mapping[str, Any] | None) -> Iterator[CaseEfficiency]:
    for file in _adk_files(path):
        if file.name.lower().endswith(".session.json"):
            session = load_session(file)
            if not session.events and file.name == "initial.session.json":
                continue  # an eval set's initial session, not a run
            yield case_from_invocations(
                session.session_id or file.name[: -len(".session.json")], session.invocations, prices=prices
            )
            continue
        evalset = load_eval_set(file)
        for case in evalset.cases:
            if case.invocations is None:
                continue  # a conversation scenario: nothing ran
            yield case_from_invocations(case.eval_id, case.invocations, prices=prices)


def _row_cases(
    path: str, fields: Mapping[str, str] | None, prices: Mapping[str, Any] | None
) -> Iterator[CaseEfficiency]:
    from respeval.evaluate.inputs import open_dataset

    dataset = open_dataset(path)  # on_error="fail": a bad record raises, naming its file and line
    for chunk in dataset.chunks(10_000):
        for row_number, record in zip(chunk.records, chunk.dicts()):
            try:
                yield case_from_row(record, fields=fields, prices=prices, default_id=str(row_number))
            except ValueError as exc:
                raise ValueError(f"{path}: row {row_number}: {exc}") from None


def _trace_cases(path: str) -> Iterator[CaseEfficiency]:
    from respeval.traces import read_cases

    for case in read_cases([path]):
        yield case_from_trace(case)


def read_efficiency(
    inputs: Iterable[str | os.PathLike[str]],
    *,
    kind: str = "auto",
    fields: Mapping[str, str] | None = None,
    prices: Mapping[str, Any] | None = None,
) -> list[CaseEfficiency]:
    """Every case of ``inputs`` (files or directories), in input order.  ``kind``: ``auto``
    (by name and content, :func:`detect_kind`), ``adk``, ``traces`` or ``rows``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    cases: list[CaseEfficiency] = []
    for raw in inputs:
        path = os.fspath(raw)
        if not os.path.exists(path):
            raise ValueError(f"{path}: no such file or directory")
        which = detect_kind(path) if kind == "auto" else kind
        try:
            if which == "adk":
                cases.extend(_adk_cases(Path(path), prices))
            elif which == "rows":
                cases.extend(_row_cases(path, fields, prices))
            else:
                cases.extend(_trace_cases(path))
        except AgentDataError as exc:
            raise ValueError(str(exc)) from None
    return cases


# --------------------------------------------------------------------------- the run


@dataclass
class QuantitySummary:
    """One quantity over the run's cases that recorded it."""

    name: str
    cases: int
    total: float | None
    mean: Interval | None
    percentiles: dict[str, float]
    max: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "total": self.total,
            "mean": None if self.mean is None else self.mean.to_dict(),
            "percentiles": {k: (None if math.isnan(v) else v) for k, v in self.percentiles.items()},
            "max": self.max,
        }


@dataclass
class EfficiencyReport:
    """Every case and the run's summary (see the module docstring)."""

    cases: list[CaseEfficiency]
    quantities: dict[str, QuantitySummary]
    adk: dict[str, float | None]
    seed: int = DEFAULT_SEED
    n_bootstrap: int = 1000
    confidence: float = 0.95
    sources: dict[str, int] = field(default_factory=dict)

    def to_dict(self, *, invocations: bool = True) -> dict[str, Any]:
        return {
            "cases": len(self.cases),
            "sources": dict(self.sources),
            "quantities": {k: q.to_dict() for k, q in self.quantities.items()},
            "adk": dict(self.adk),
            "bootstrap": {"n": self.n_bootstrap, "confidence": self.confidence, "seed": self.seed},
            "per_case": [c.to_dict(invocations=invocations) for c in self.cases],
        }

    to_json = to_dict

    def columns(self) -> dict[str, list[Any]]:
        """One row per case (``--out``): the totals, then ADK's values as
        ``token_usage/total_tokens``, ``invocation_duration/total_seconds``, ..."""
        out: dict[str, list[Any]] = {"case_id": [], "source": []}
        for name in QUANTITIES:
            out[name] = []
        out["tool_call_count"], out["inference_call_count"] = [], []
        for name in TOKEN_FIELDS:
            out[f"token_usage/{name}"] = []
        for name in DURATION_FIELDS:
            out[f"invocation_duration/{name}"] = []
        out["invocations"] = []
        for c in self.cases:
            out["case_id"].append(c.case_id)
            out["source"].append(c.source)
            for name in QUANTITIES:
                value = getattr(c, name)
                out[name].append(
                    None if value is None else float(value) if name in ("latency_s", "cost_usd") else int(value)
                )
            out["tool_call_count"].append(c.tool_call_count)
            out["inference_call_count"].append(c.inference_call_count)
            for name in TOKEN_FIELDS:
                v = c.token_usage.get(name)
                out[f"token_usage/{name}"].append(None if v is None else float(v))
            for name in DURATION_FIELDS:
                v = c.invocation_duration.get(name)
                out[f"invocation_duration/{name}"].append(None if v is None else float(v))
            out["invocations"].append(len(c.invocations) if c.invocations else (1 if c.source != "adk" else 0))
        return out

    def format(self) -> str:
        lines = [f"{len(self.cases)} case(s)" + "".join(f", {n} from {k}" for k, n in self.sources.items())]
        header = f"{'quantity':<13}{'cases':>6}{'total':>14}{'mean':>12}  {'95% CI':<22}"
        labels = [f"p{q:g}" for q in DEFAULT_PERCENTILES]
        header += "".join(f"{label:>11}" for label in labels) + f"{'max':>11}"
        lines += ["", header]

        def fmt(v: float | None, name: str) -> str:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                return "n/a"
            if name == "cost_usd":
                return f"{v:.4g}"
            if name == "latency_s":
                return f"{v:.3f}"
            return f"{v:.1f}" if v != int(v) else f"{int(v)}"

        for name, q in self.quantities.items():
            if q.mean is None:
                ci = "n/a"
                mean = "n/a"
            else:
                mean = fmt(q.mean.mid, name) if name in ("cost_usd", "latency_s") else f"{q.mean.mid:.2f}"
                ci = "n/a" if math.isnan(q.mean.low) else f"[{q.mean.low:.4g}, {q.mean.high:.4g}]"
            row = f"{name:<13}{q.cases:>6}{fmt(q.total, name):>14}{mean:>12}  {ci:<22}"
            row += "".join(f"{fmt(q.percentiles.get(label), name):>11}" for label in labels) + f"{fmt(q.max, name):>11}"
            lines.append(row)
        lines.append("")
        lines.append(
            "ADK (per-invocation means, averaged over cases): "
            + ", ".join(f"{k}={'n/a' if v is None else f'{v:.4g}'}" for k, v in self.adk.items())
        )
        return "\n".join(lines)


def _summary(name: str, values: Sequence[float], n_bootstrap: int, confidence: float, seed: int) -> QuantitySummary:
    if not values:
        return QuantitySummary(name, 0, None, None, percentiles([], DEFAULT_PERCENTILES), None)
    x = np.asarray(values, dtype=np.float64)
    total = exact_sum(x)
    mean = total / x.size
    if x.size > 1 and n_bootstrap:
        low, _, high = percentile_interval(bootstrap_means(x[:, None], n_bootstrap, seed), confidence)[:, 0]
        interval = Interval(float(low), mean, float(high), confidence, "poisson bootstrap percentile")
    else:
        interval = Interval(math.nan, mean, math.nan, confidence, "poisson bootstrap percentile")
    return QuantitySummary(name, int(x.size), total, interval, percentiles(x, DEFAULT_PERCENTILES), float(x.max()))


def summarize(
    cases: Sequence[CaseEfficiency],
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> EfficiencyReport:
    """The run summary of ``cases`` (see the module docstring)."""
    quantities = {}
    for name in QUANTITIES:
        values = [float(getattr(c, name)) for c in cases if getattr(c, name) is not None]
        quantities[name] = _summary(name, values, n_bootstrap, confidence, seed)
    adk: dict[str, float | None] = {}
    for name in ADK_EFFICIENCY_METRICS:
        got: list[float] = []
        for c in cases:
            if name == "token_usage":
                v = c.token_usage.get("total_tokens")
            elif name == "invocation_duration":
                v = c.invocation_duration.get("total_seconds")
            else:
                v = getattr(c, name)
            if v is not None:
                got.append(float(v))
        adk[name] = exact_sum(np.asarray(got)) / len(got) if got else None
    sources: dict[str, int] = {}
    for c in cases:
        sources[c.source] = sources.get(c.source, 0) + 1
    return EfficiencyReport(list(cases), quantities, adk, seed, n_bootstrap, confidence, sources)


def efficiency(
    inputs: Iterable[str | os.PathLike[str]],
    *,
    kind: str = "auto",
    fields: Mapping[str, str] | None = None,
    prices: Mapping[str, Any] | None = None,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> EfficiencyReport:
    """:func:`read_efficiency` then :func:`summarize`: ``respeval efficiency`` in Python."""
    cases = read_efficiency(inputs, kind=kind, fields=fields, prices=prices)
    return summarize(cases, n_bootstrap=n_bootstrap, confidence=confidence, seed=seed)
