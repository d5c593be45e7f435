"""``respeval.align``: from a judge spec and human labels to a frozen, aligned judge spec.

1. The rows are read and checked (every row needs the label field and every column the
   judge's template names; a label must be one of the judge's answers), then split
   (:func:`~respeval.align.split.stratified_split`).
2. The optimiser (:mod:`respeval.align.optimiser`) gets the train rows, and nothing else.
3. The judge as given and the chosen judge each judge the held-out rows; their held-out
   balanced accuracy, balanced F1 (macro F1: the unweighted mean of the per-label F1s) and
   Cohen's kappa come with seeded bootstrap intervals (:mod:`respeval.validate`), and so do
   the bias probes (the verbosity probe; position consistency when ``swap`` names the two
   columns to exchange).
4. The chosen judge is frozen as a spec entry with ``spec_version`` and ``spec_hash``
   (:func:`respeval.evaluate.spec.judge_spec_hash`); the hash is in the judge's template
   version, so in every cache key and in its signature.  ``aligned`` records how it was found.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from respeval._sync import run_sync
from respeval.align.optimiser import UNSCORED, Candidate, JudgeSession, OptimiserOptions, judge_answers, optimise
from respeval.align.split import DEFAULT_HELD_OUT, HeldOutRow, LabelledRow, Split, stratified_split
from respeval.evaluate.spec import judge_spec_hash, metric_from_dict, read_spec_file
from respeval.io import InputError, format_of, read_jsonl
from respeval.io.files import atomic_output
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import EngineOptions
from respeval.judge.methods.templates import LabelSet, PointwiseMetric, ScoreRange
from respeval.judge.models.base import JudgeModel
from respeval.judge.specs import load_model
from respeval.stats import DEFAULT_SEED
from respeval.validate.agreement import agreement
from respeval.validate.columns import load_table
from respeval.validate.resampling import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, interval_from_samples, resample_indices
from respeval.validate.run import MetricValidation, validate_pair

__all__ = ["HEADLINE", "Alignment", "aalign", "align", "load_judge_spec", "spec_entry"]

PathLike = Union[str, "os.PathLike[str]"]

HEADLINE = {
    "balanced_accuracy": "balanced accuracy",
    "macro_f1": "balanced F1 (macro)",
    "cohen_kappa": "Cohen's kappa",
}
"""The held-out numbers reported before and after, with their names (the agreement fields of
:class:`respeval.validate.Agreement`)."""


# --------------------------------------------------------------------------- the judge spec


def load_judge_spec(spec: PathLike | Mapping[str, Any] | PointwiseMetric) -> tuple[PointwiseMetric, dict[str, Any]]:
    """The judge a spec names and its entry: a spec file (``.json``, ``.yaml``, ``.toml``)
    holding one ``pointwise:`` entry (as in an evaluate spec's ``metrics:``, with a label set
    or a score range), the entry itself, or a :class:`PointwiseMetric`."""
    if isinstance(spec, PointwiseMetric):
        return spec, spec_entry(spec)
    base = None
    if isinstance(spec, Mapping):
        entry = dict(spec)
        where = "the judge spec"
    else:
        path = Path(spec)
        data = read_spec_file(path)
        where, base = str(path), path.parent
        if not isinstance(data, dict):
            raise InputError(f"{where}: a judge spec is a mapping with a pointwise: entry")
        entry = dict(data)
    if "pointwise" not in entry:
        raise InputError(
            f"{where}: a judge spec names a pointwise judge ({{pointwise: NAME, template: ..., labels: [...]}}); "
            f"its keys are {', '.join(map(str, entry)) or 'none'}"
        )
    try:
        metric = metric_from_dict(entry, base)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None
    if not isinstance(metric, PointwiseMetric):  # pragma: no cover - a pointwise: entry is one
        raise InputError(f"{where}: not a pointwise judge")
    return metric, entry


def spec_entry(metric: PointwiseMetric) -> dict[str, Any]:
    """A pointwise judge as a spec entry, every text inline (what :func:`metric_from_dict`
    reads back into the same judge)."""
    entry: dict[str, Any] = {"pointwise": metric.name, "template": metric.template.text}
    if metric.system_instruction:
        entry["system_instruction"] = metric.system_instruction
    if metric.criteria:
        entry["criteria"] = dict(metric.criteria)
    if metric.rating_rubric:
        entry["rating_rubric"] = dict(metric.rating_rubric)
    contract = metric.contract
    if isinstance(contract, LabelSet):
        entry["labels"] = list(contract.labels)
        if contract.passing:
            entry["passing"] = list(contract.passing)
    else:
        entry["score_range"] = [contract.low, contract.high]
        entry["threshold"] = metric.threshold
        if metric.pass_when != "at_least":
            entry["pass_when"] = metric.pass_when
    if metric.max_tokens != 512:
        entry["max_tokens"] = metric.max_tokens
    if metric.guidelines:
        entry["guidelines"] = metric.guidelines
    if metric.examples:
        entry["examples"] = [e.to_dict() for e in metric.examples]
    return entry


# --------------------------------------------------------------------------- the rows


def _read_rows(data: PathLike | Sequence[Mapping[str, Any]]) -> tuple[str, list[tuple[str, Mapping[str, Any]]]]:
    if isinstance(data, (str, os.PathLike)):
        path = os.fspath(data)
        if format_of(path) == "jsonl":
            return path, [(f"{path}:{line}", record) for line, record in read_jsonl(path)]
        table = load_table(path)
        n = len(next(iter(table.values()), []))
        return path, [(f"{path}: row {i + 1}", {k: v[i] for k, v in table.items()}) for i in range(n)]
    rows = []
    for i, record in enumerate(data):
        if not isinstance(record, Mapping):
            raise InputError(f"row {i + 1}: expected a mapping, got {type(record).__name__}")
        rows.append((f"row {i + 1}", record))
    return "the rows", rows


def _human_answer(metric: PointwiseMetric, value: Any, where: str, field: str) -> Any:
    """A human label in the judge's terms: a label of its set, or a score in its range."""
    if (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    ):
        raise InputError(f"{where}: field {field!r}: missing (the human label); every row needs one")
    contract = metric.contract
    if isinstance(contract, LabelSet):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        checked = contract.check(value if isinstance(value, str) else str(value))
        if isinstance(checked, str):
            raise InputError(
                f"{where}: field {field!r}: {value!r} is not one of the judge's labels {list(contract.labels)}"
            )
        return checked[0]
    assert isinstance(contract, ScoreRange)
    number = contract.check(value)
    if isinstance(number, str):
        raise InputError(f"{where}: field {field!r}: {number} (the judge's range)")
    return int(number) if float(number).is_integer() else number


def _labelled_rows(
    metric: PointwiseMetric, rows: Sequence[tuple[str, Mapping[str, Any]]], label_field: str
) -> tuple[list[HeldOutRow], list[Any]]:
    out, labels = [], []
    for i, (where, record) in enumerate(rows):
        if label_field not in record:
            raise InputError(
                f"{where}: field {label_field!r}: missing (the human label); give --label-field if it has another name"
            )
        labels.append(_human_answer(metric, record[label_field], where, label_field))
        try:
            metric.item(record)
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None
        out.append(HeldOutRow(i, where, {k: v for k, v in record.items() if k != label_field}))
    return out, labels


def make_split(
    metric: PointwiseMetric,
    data: PathLike | Sequence[Mapping[str, Any]],
    *,
    label_field: str,
    held_out: float,
    seed: int,
) -> Split:
    """The checked rows of ``data``, split (see the module docstring)."""
    source, raw = _read_rows(data)
    rows, labels = _labelled_rows(metric, raw, label_field)
    train_idx, held_idx = stratified_split(
        labels, held_out=held_out, seed=seed, where=[r.where for r in rows], source=source
    )
    train = tuple(LabelledRow(rows[i].row, rows[i].where, rows[i].record, labels[i]) for i in train_idx)
    return Split(seed, held_out, train, tuple(rows[i] for i in held_idx), [labels[i] for i in held_idx])


# --------------------------------------------------------------------------- the result


def _interval(validation: MetricValidation, name: str) -> dict[str, Any]:
    ag = validation.agreement
    value = getattr(ag, name) if ag is not None else None
    iv = validation.agreement_intervals.get(name)
    clean = lambda x: None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)  # noqa: E731
    return {
        "value": clean(value),
        "low": clean(iv.low) if iv else None,
        "high": clean(iv.high) if iv else None,
        "confidence": iv.confidence if iv else None,
    }


@dataclass
class Alignment:
    """What :func:`align` found: the split, every candidate tried (with its train score), the
    chosen one, the held-out validation of the judge as given (``before``) and of the chosen
    judge (``after``), and the frozen spec (``spec``, ``spec_hash``; written to ``out``)."""

    name: str
    source: str
    label_field: str
    split: Split
    candidates: list[Candidate]
    chosen: Candidate
    before: MetricValidation
    after: MetricValidation
    spec: dict[str, Any]
    spec_hash: str
    out: str | None = None
    difference: dict[str, dict[str, Any]] = field(default_factory=dict)
    """After minus before on the held-out rows both judges scored, per headline number:
    ``{value, low, high, confidence}`` (paired: both judges on the same resampled rows)."""

    def held_out(self) -> dict[str, dict[str, Any]]:
        """The headline numbers, before and after, each ``{value, low, high, confidence}``."""
        return {
            side: {name: _interval(v, name) for name in HEADLINE}
            for side, v in (("before", self.before), ("after", self.after))
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what ``respeval align --json`` prints)."""
        return {
            "judge": self.name,
            "data": self.source,
            "label_field": self.label_field,
            "split": {
                "seed": self.split.seed,
                "held_out_fraction": self.split.held_out_fraction,
                "train": len(self.split.train),
                "held_out": len(self.split.held_out),
                "counts": self.split.counts(),
            },
            "candidates": [c.to_dict() for c in self.candidates],
            "chosen": self.chosen.index,
            "held_out_scores": self.held_out(),
            "held_out_difference": self.difference,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "spec_hash": self.spec_hash,
            "spec_version": self.spec.get("spec_version"),
            "out": self.out,
        }

    def format(self) -> str:
        """The report as text: the split, the candidates, the held-out numbers, the probes."""
        counts = self.split.counts()
        lines = [
            f"judge {self.name!r} aligned on {self.source} (human labels: {self.label_field})",
            f"split (seed {self.split.seed}): {len(self.split.train)} train {counts['train']}, "
            f"{len(self.split.held_out)} held out {counts['held_out']}",
            "",
            "candidates, scored on the train split only (balanced accuracy, kappa; rows judged):",
        ]
        for c in self.candidates:
            s = c.score
            assert s is not None
            kappa = "nan" if math.isnan(s.cohen_kappa) else f"{s.cohen_kappa:.4f}"
            what = {
                "spec": "the judge as given",
                "few-shot": f"{len(c.metric.examples)} examples",
                "rewrite": "rewritten guidelines",
            }[c.origin]
            mark = "  <- chosen" if c is self.chosen else ""
            lines.append(f"  {c.index:>2} {what:<22} {s.balanced_accuracy:.4f}  {kappa:>7}  ({s.rows} rows){mark}")
        scores = self.held_out()
        ci = next((v["confidence"] for v in scores["before"].values() if v["confidence"]), None)
        lines += [
            "",
            f"held out ({len(self.split.held_out)} rows"
            + (f", {round(100 * ci)}% bootstrap intervals):" if ci else "):"),
        ]
        diff = self.difference
        lines.append(f"  {'':<22} {'before':<26} {'after':<26}" + (" after - before (paired)" if diff else ""))
        for name, label in HEADLINE.items():
            row = f"  {label:<22} {_fmt(scores['before'][name]):<26} {_fmt(scores['after'][name]):<26}"
            if name in diff:
                row += " " + _fmt(diff[name], signed=True)
            lines.append(row.rstrip())
        for side, v in (("before", self.before), ("after", self.after)):
            dropped = v.dropped.get("judge_missing", 0)
            if dropped:
                lines.append(f"  {side}: {dropped} held-out rows unscored by the judge (left out)")
        lines += ["", "bias probes on the held-out rows:"]
        lines += _probes(self.before, "before") + _probes(self.after, "after")
        lines += ["", f"frozen judge: spec_version {self.spec.get('spec_version')}, spec_hash {self.spec_hash}"]
        if self.out:
            lines.append(f"written to {self.out} (use it as a pointwise entry of an evaluate spec, or align it again)")
        return "\n".join(lines)


def _fmt(v: Mapping[str, Any], signed: bool = False) -> str:
    if v["value"] is None:
        return "-"
    number = "{:+.4f}" if signed else "{:.4f}"
    if v["low"] is None:
        return number.format(v["value"])
    return f"{number.format(v['value'])} [{number.format(v['low'])}, {number.format(v['high'])}]"


def paired_difference(
    before: Sequence[Any],
    after: Sequence[Any],
    labels: Sequence[Any],
    *,
    n_boot: int,
    seed: int | None,
    confidence: float,
) -> dict[str, dict[str, Any]]:
    """After minus before of each headline number on the rows both judges scored, with a
    paired percentile bootstrap: the same resampled rows score both judges
    (:func:`respeval.validate.resampling.resample_indices`, seeded); a resample where a
    number is undefined for either judge is left out of its interval."""
    keep = [i for i, (b, a) in enumerate(zip(before, after)) if b != UNSCORED and a != UNSCORED]
    if not keep:
        return {}
    b = [str(before[i]) for i in keep]
    a = [str(after[i]) for i in keep]
    h = [str(labels[i]) for i in keep]
    order = sorted(set(a) | set(b) | set(h))

    def numbers(idx: Sequence[int]) -> dict[str, float]:
        x = agreement([b[i] for i in idx], [h[i] for i in idx], labels=order)
        y = agreement([a[i] for i in idx], [h[i] for i in idx], labels=order)
        return {name: getattr(y, name) - getattr(x, name) for name in HEADLINE}

    point = numbers(range(len(keep)))
    samples: dict[str, list[float]] = {name: [] for name in HEADLINE}
    if n_boot:
        for _, block in resample_indices(len(keep), n_boot, seed):
            for idx in block:
                for name, drawn in numbers(idx.tolist()).items():
                    samples[name].append(drawn)
    out: dict[str, dict[str, Any]] = {}
    for name in HEADLINE:
        value = None if math.isnan(point[name]) else float(point[name])
        if not n_boot:
            out[name] = {"value": value, "low": None, "high": None, "confidence": None}
            continue
        iv = interval_from_samples(point[name], np.asarray(samples[name]), confidence)
        clean = lambda x: None if math.isnan(x) else float(x)  # noqa: E731
        out[name] = {"value": value, "low": clean(iv.low), "high": clean(iv.high), "confidence": confidence}
    return out


def _probes(v: MetricValidation, side: str) -> list[str]:
    out = []
    if v.pairwise is not None:
        p = v.pairwise
        out.append(
            f"  {side}: position consistency {p.consistency:.4f}, flip rate {p.flip_rate:.4f} ({p.n} rows, swapped order)"
        )
    if v.verbosity is not None:
        probe = v.verbosity
        what = "picks the longer output" if probe.kind == "pairwise" else "Spearman with length"
        human = "-" if probe.human is None else f"{probe.human:.4f}"
        excess = "-" if probe.excess is None else f"{probe.excess:+.4f}"
        out.append(f"  {side}: verbosity ({what}): judge {probe.judge:.4f}, humans {human}, excess {excess}")
    if not out:
        out.append(
            f"  {side}: none applies (position consistency needs swap columns; verbosity, pairwise labels or numeric scores of a response column)"
        )
    return out


# --------------------------------------------------------------------------- align


def _swapped(row: HeldOutRow, swap: tuple[str, str]) -> HeldOutRow:
    a, b = swap
    record = dict(row.record)
    record[a], record[b] = row.record.get(b), row.record.get(a)
    return HeldOutRow(row.row, row.where, record)


def _validate(
    metric: PointwiseMetric,
    answers: Sequence[Any],
    labels: Sequence[Any],
    rows: Sequence[HeldOutRow],
    swapped: Sequence[Any] | None,
    *,
    n_boot: int,
    seed: int | None,
    confidence: float,
) -> MetricValidation:
    fix = lambda xs: [None if a == UNSCORED else a for a in xs]  # noqa: E731
    texts = {name: [r.record.get(name) for r in rows] for name in metric.fields}
    return validate_pair(
        fix(answers),
        list(labels),
        name=metric.name,
        kind="pairwise" if swapped is not None else "pointwise",
        judge_column=f"{metric.name}/{metric.answer_key}",
        human_column="human label",
        swapped=fix(swapped) if swapped is not None else None,
        texts=texts,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
    )


async def aalign(
    data: PathLike | Sequence[Mapping[str, Any]],
    judge: PathLike | Mapping[str, Any] | PointwiseMetric,
    model: JudgeModel | str,
    *,
    label_field: str = "label",
    held_out: float = DEFAULT_HELD_OUT,
    seed: int = 0,
    candidates: int = 8,
    shots: int = 4,
    rewriter: JudgeModel | str | None = None,
    rewrite_rounds: int = 1,
    swap: tuple[str, str] | None = None,
    swap_labels: Mapping[str, str] | None = None,
    cache: JudgeCache | PathLike | None = None,
    options: EngineOptions | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    out: PathLike | None = None,
) -> Alignment:
    """:func:`align` inside a running event loop."""
    metric, entry = load_judge_spec(judge)
    judge_model = load_model(model) if isinstance(model, str) else model
    rewrite_model = load_model(rewriter) if isinstance(rewriter, str) else rewriter
    swap_map = _swap_map(metric, swap, swap_labels)
    split = make_split(metric, data, label_field=label_field, held_out=held_out, seed=seed)
    own_cache = cache is not None and not isinstance(cache, JudgeCache)
    judge_cache = cache if cache is None or isinstance(cache, JudgeCache) else JudgeCache(cache)
    session = JudgeSession(judge_cache, options)
    try:
        search = OptimiserOptions(candidates=candidates, shots=shots, rewrite_rounds=rewrite_rounds, seed=seed)
        chosen, tried = await optimise(
            metric, split.train, judge_model, options=search, rewriter=rewrite_model, session=session
        )
        frozen = _frozen_entry(entry, chosen.metric)
        spec_hash = frozen["spec_hash"]
        aligned_metric = metric_from_dict(frozen)  # the judge as it is written (the hash in its version)
        sides, held_answers = [], []
        for m in (metric, aligned_metric):
            answers, _ = await judge_answers(m, split.held_out, judge_model, session)
            held_answers.append(answers)
            swapped = None
            if swap is not None:
                flipped = [_swapped(r, swap) for r in split.held_out]
                raw, _ = await judge_answers(m, flipped, judge_model, session)
                swapped = [swap_map.get(str(a), a) if a != UNSCORED else a for a in raw]
            # the held-out labels are read here, and only here: after the optimiser is done
            sides.append(
                _validate(
                    m,
                    answers,
                    split.held_out_labels,
                    split.held_out,
                    swapped,
                    n_boot=n_boot,
                    seed=bootstrap_seed,
                    confidence=confidence,
                )
            )
    finally:
        if own_cache and judge_cache is not None:
            judge_cache.close()
    source = str(data) if isinstance(data, (str, os.PathLike)) else "the rows"
    result = Alignment(metric.name, source, label_field, split, tried, chosen, sides[0], sides[1], frozen, spec_hash)
    result.difference = paired_difference(
        held_answers[0],
        held_answers[1],
        split.held_out_labels,
        n_boot=n_boot,
        seed=bootstrap_seed,
        confidence=confidence,
    )
    frozen["aligned"] = _provenance(result, judge_model, search, entry)
    if out is not None:
        result.out = os.fspath(out)
        with atomic_output(result.out) as fh:
            fh.write(json.dumps(frozen, indent=2, ensure_ascii=False) + "\n")
    return result


def align(
    data: PathLike | Sequence[Mapping[str, Any]],
    judge: PathLike | Mapping[str, Any] | PointwiseMetric,
    model: JudgeModel | str,
    *,
    label_field: str = "label",
    held_out: float = DEFAULT_HELD_OUT,
    seed: int = 0,
    candidates: int = 8,
    shots: int = 4,
    rewriter: JudgeModel | str | None = None,
    rewrite_rounds: int = 1,
    swap: tuple[str, str] | None = None,
    swap_labels: Mapping[str, str] | None = None,
    cache: JudgeCache | PathLike | None = None,
    options: EngineOptions | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    out: PathLike | None = None,
) -> Alignment:
    """Align a judge with human labels (see the module docstring).

    Args:
        data: the human-labelled rows: a file (``.jsonl``, ``.json``, ``.csv``, ``.parquet``)
            or a list of mappings, each with the columns the judge's template names and
            ``label_field``.
        judge: the judge spec: a file holding one ``pointwise:`` entry, the entry, or a
            :class:`~respeval.judge.methods.templates.PointwiseMetric`.
        model: the judge model (a model string such as ``openai:gpt-4o-mini``, or a model).
        held_out: the share of every label's rows held out; ``seed`` seeds the split and the
            few-shot draws.
        candidates, shots: few-shot sets tried, and examples per set.
        rewriter, rewrite_rounds: a model that rewrites the guidelines from the train
            disagreements (None: no rewriting), and how many rewrites to try.
        swap, swap_labels: two columns to exchange for the position probe (``("output_1",
            "output_2")``) and how answers map back (default: a two-label judge's labels
            trade places).
        cache, options: the answer cache and the engine's options (as :func:`respeval.judge.run`).
        n_boot, bootstrap_seed, confidence: the held-out intervals.
        out: where to write the frozen judge spec (JSON).

    >>> result = align("labelled.jsonl", "judge.json", "openai:gpt-4o-mini", out="aligned.json")  # doctest: +SKIP
    >>> result.held_out()["after"]["balanced_accuracy"]  # doctest: +SKIP
    """
    return run_sync(
        aalign(
            data,
            judge,
            model,
            label_field=label_field,
            held_out=held_out,
            seed=seed,
            candidates=candidates,
            shots=shots,
            rewriter=rewriter,
            rewrite_rounds=rewrite_rounds,
            swap=swap,
            swap_labels=swap_labels,
            cache=cache,
            options=options,
            n_boot=n_boot,
            bootstrap_seed=bootstrap_seed,
            confidence=confidence,
            out=out,
        )
    )


def _swap_map(
    metric: PointwiseMetric, swap: tuple[str, str] | None, swap_labels: Mapping[str, str] | None
) -> dict[str, str]:
    if swap is None:
        if swap_labels:
            raise InputError("swap_labels needs swap (the two columns to exchange)")
        return {}
    if len(swap) != 2 or swap[0] == swap[1]:
        raise InputError(f"swap names two different columns, got {swap!r}")
    missing = [c for c in swap if c not in metric.fields]
    if missing:
        raise InputError(
            f"swap: the judge's template names no column {', '.join(map(repr, missing))} (it names {list(metric.fields)})"
        )
    if swap_labels is not None:
        return {str(k): str(v) for k, v in swap_labels.items()}
    contract = metric.contract
    if isinstance(contract, LabelSet) and len(contract.labels) == 2:
        a, b = contract.labels
        return {a: b, b: a}
    raise InputError("swap: give swap_labels (how an answer maps back when the columns are exchanged)")


def _frozen_entry(given: Mapping[str, Any], chosen: PointwiseMetric) -> dict[str, Any]:
    entry = spec_entry(chosen)
    if given.get("name"):
        entry["name"] = given["name"]
    version = given.get("spec_version")
    entry["spec_version"] = (version + 1) if isinstance(version, int) and not isinstance(version, bool) else 1
    entry["spec_hash"] = judge_spec_hash(entry)
    return entry


def _provenance(
    result: Alignment, model: JudgeModel, search: OptimiserOptions, given: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "from_spec_hash": given.get("spec_hash") or judge_spec_hash(given),
        "data": result.source,
        "label_field": result.label_field,
        "model": getattr(model, "name", str(model)),
        "split": {
            "seed": result.split.seed,
            "held_out_fraction": result.split.held_out_fraction,
            "counts": result.split.counts(),
            "held_out_rows": [r.row for r in result.split.held_out],
        },
        "optimiser": {
            "candidates": search.candidates,
            "shots": search.shots,
            "rewrite_rounds": search.rewrite_rounds,
            "chosen": result.chosen.to_dict(),
        },
        "held_out": result.held_out(),
        "held_out_difference": result.difference,
    }
