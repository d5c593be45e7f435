"""What an evaluation computes: every metric entry resolved to one of three kinds.

* :class:`Computed`: a registry metric (``exact_match``, ``bleu``, ``rougeLsum``, the checks...);
* :class:`~respeval.evaluate.custom.CustomMetric`: your Python function;
* a judged metric: :class:`~respeval.judge.methods.templates.PointwiseMetric` (your template,
  or a predefined one such as ``GROUNDING``),
  :class:`~respeval.judge.methods.templates.PairwiseMetric`, or a multi-step one
  (``faithfulness``, ``context_precision``, ... : :data:`respeval.judge.methods.predefined.
  MULTI_STEP`, objects with ``kind == "multi-step"``).

Entries may be names (``"bleu"``, ``"GROUNDING"``, ``"python:module:function"``), objects, or
dicts as a spec file writes them (see :mod:`respeval.evaluate.spec`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.evaluate.custom import CustomMetric, load_function
from respeval.fingerprint import split_version
from respeval.judge.methods.predefined import EMBEDDING_METRICS, MULTI_STEP, PREDEFINED_INFO, multi_step, predefined
from respeval.judge.methods.templates import PairwiseMetric, PointwiseMetric
from respeval.metrics import REGISTRY, MetricOptions

__all__ = ["Computed", "Plan", "judged_fields", "resolve_metrics"]


def is_multi_step(item: Any) -> bool:
    """A whole-run judge metric (the RAG and trajectory metrics): run by its own ``arun``."""
    return getattr(item, "kind", None) == "multi-step" and hasattr(item, "arun")


def judged_fields(metric: Any) -> tuple[str, ...]:
    """The input fields a judged metric reads (a template's columns, a multi-step metric's
    inputs)."""
    fields = getattr(metric, "input_fields", None)
    return tuple(fields) if fields is not None else tuple(metric.template.fields)


@dataclass
class Computed:
    """A registry metric, optionally under another name and with options
    (``Computed("regex", name="has_date", pattern=r"\\d{4}-\\d\\d-\\d\\d")``)."""

    metric: str
    name: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __init__(self, metric: str, name: str | None = None, **options: Any) -> None:
        if metric not in REGISTRY:
            raise ValueError(f"unknown metric {metric!r}; `respeval metrics` lists them")
        self.metric = metric
        self.name = name
        self.options = dict(options)
        if name is not None:
            if "/" in name:
                raise ValueError(f"a metric name must not contain '/', got {name!r}")
            self.options.setdefault("name", name)

    @property
    def output_name(self) -> str:
        return self.name or self.metric


@dataclass
class FamilyUse:
    """One built family and the metric names it answers for (name -> its headline column)."""

    family: Any
    metrics: dict[str, str]
    reference: bool
    options: dict[str, Any] = field(default_factory=dict)
    """The entry's options (some change numbers without showing in the signature: BLEU's max_order)."""


@dataclass
class Plan:
    computed: list[FamilyUse]
    custom: list[CustomMetric]
    judged: list[Any]  # PointwiseMetric | PairwiseMetric | a multi-step metric

    def names(self) -> list[str]:
        out: list[str] = []
        for use in self.computed:
            out.extend(use.metrics)
        for custom in self.custom:
            out.extend(custom.metric_names)
        out.extend(m.name for m in self.judged)
        return out

    def fingerprint_parts(self, unproven: dict[str, str]) -> dict[str, Any]:
        """Each metric's part of a run's resume fingerprint (see
        :class:`respeval.bulk.parts.RunFingerprint`): whatever changes its numbers.  A custom
        metric's code gets a part of its own; code whose sameness cannot be proven is added
        to ``unproven`` with the reason."""
        parts: dict[str, Any] = {}
        for use in self.computed:
            for name in use.metrics:
                parts[f"metric {name!r}"] = [use.family.signature(), use.metrics[name], use.options]
        for custom in self.custom:
            code = custom.code_fingerprint()
            label = f"the code of metric {custom.name!r}"
            parts[label] = code.version if code.version is not None else code.digest
            if not code.proven:
                unproven[label] = (
                    f"{code.reason}; give the metric a version (version: in the spec, CustomMetric(..., version=...) "
                    "or python:module:function@VERSION) and bump it when the code changes"
                )
            parts[f"metric {custom.name!r}"] = {
                "signature": custom.signature(),
                "outputs": custom.outputs,
                "columns": custom.columns,
            }
        for judged in self.judged:
            parts[f"metric {judged.name!r}"] = {
                "signature": judged.signature(),
                "max_tokens": judged.max_tokens,
                "seed": judged.seed,
            }
        return parts

    def signatures(self, stats_parts: Sequence[Mapping[str, Any]] = ()) -> dict[str, str]:
        """Each metric's signature; an MT family's counts the references of the rows it
        scored (``stats_parts``: the run's statistics, with ``f{k}_nrefs``), as sacreBLEU's."""
        out: dict[str, str] = {}
        for k, use in enumerate(self.computed):
            signature = use.family.signature()
            counted = getattr(use.family, "signature_for_run", None)
            if counted is not None and stats_parts and all(f"f{k}_nrefs" in p for p in stats_parts):
                seen = {int(n) for p in stats_parts for n in p[f"f{k}_nrefs"].tolist() if n}
                signature = counted(next(iter(seen)) if len(seen) == 1 else "var")
            for name in use.metrics:
                out[name] = signature
        for custom in self.custom:
            out[custom.name] = custom.signature()
        for judged in self.judged:
            out[judged.name] = judged.signature()
        return out


def _entry(item: Any) -> Any:
    """A name or a dict as an object (objects pass through)."""
    if isinstance(item, (Computed, CustomMetric, PointwiseMetric, PairwiseMetric)) or is_multi_step(item):
        return item
    if isinstance(item, str):
        if item in REGISTRY:
            return Computed(item)
        if item in MULTI_STEP or item in EMBEDDING_METRICS:
            return multi_step(item)
        if item.upper() in PREDEFINED_INFO:
            return predefined(item)
        if item.startswith("python:"):
            target, version = split_version(item[len("python:") :])
            fn = load_function(target)
            return CustomMetric(target.rpartition(":")[2].split(".")[-1], fn, version=version)
        raise ValueError(
            f"unknown metric {item!r}: not a registry metric (respeval metrics), a predefined judge metric "
            f"({', '.join(PREDEFINED_INFO)}), a multi-step judge metric ({', '.join(MULTI_STEP)}) "
            "or python:module:function"
        )
    if isinstance(item, Mapping):
        from respeval.evaluate.spec import metric_from_dict

        return metric_from_dict(item)
    raise TypeError(f"a metric is a name, a dict or a metric object, got {type(item).__name__}")


def _headline(family: Any, name: str) -> str:
    for col in family.headline:
        if col == name or col.startswith(name + "_"):
            return str(col)
    return str(family.headline[0])


def resolve_metrics(items: Sequence[Any], *, tokenizer: str = "rouge", stemmer: bool = False) -> Plan:
    """Metric entries -> a plan (registry names of one family share one family instance)."""
    if isinstance(items, (str, Mapping)) or not items:
        raise ValueError("metrics must be a non-empty list")
    entries = [_entry(item) for item in items]
    plain = [e.metric for e in entries if isinstance(e, Computed) and not e.options]
    options = MetricOptions(tokenizer=tokenizer, stemmer=stemmer)
    computed: list[FamilyUse] = []
    groups: dict[str, list[str]] = {}
    for name in plain:
        groups.setdefault(REGISTRY[name].family, []).append(name)
    for names in groups.values():
        (family,) = REGISTRY.build_families(names, options)
        computed.append(
            FamilyUse(family, {n: _headline(family, n) for n in names}, any(REGISTRY[n].reference for n in names))
        )
    for entry in entries:
        if isinstance(entry, Computed) and entry.options:
            spec = REGISTRY[entry.metric]
            REGISTRY.check_options(entry.metric, entry.options)  # refused naming the options it takes
            family = spec.build(
                [entry.metric],
                MetricOptions(tokenizer=tokenizer, stemmer=stemmer, params={spec.family: entry.options}),
            )
            computed.append(
                FamilyUse(family, {entry.output_name: _headline(family, family.name)}, spec.reference, entry.options)
            )
    custom = [e for e in entries if isinstance(e, CustomMetric)]
    judged = [e for e in entries if isinstance(e, (PointwiseMetric, PairwiseMetric)) or is_multi_step(e)]
    plan = Plan(computed, custom, judged)
    names = plan.names()
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"metric name(s) used twice: {', '.join(dupes)} (give one of them another name)")
    return plan
