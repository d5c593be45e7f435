"""File-to-results scoring: read predictions and references in chunks, score each
chunk, write per-row results as they are produced, aggregate at the end."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from respeval.io import Chunk, InputError, ResultWriter, count_rows, read_columns
from respeval.metrics.rouge import AggregateScore, Score, rouge, validate_types
from respeval.stats import DEFAULT_SEED

EXAMPLE = Path(__file__).with_name("data") / "example.jsonl"
DEFAULT_PRED_FIELD = "response"
DEFAULT_REF_FIELD = "reference"


@dataclass
class MetricSummary:
    """Corpus figures of one metric: the row mean and a seeded bootstrap interval."""

    mean: Score
    interval: AggregateScore | None


@dataclass
class Summary:
    """What a scoring run produced."""

    rows: int
    metrics: dict[str, MetricSummary]
    signature: str
    seconds: float
    output: str | None = None
    confidence: float = 0.95
    bootstrap_samples: int = 0
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        def score(s: Score) -> dict[str, float]:
            return {"precision": s.precision, "recall": s.recall, "fmeasure": s.fmeasure}

        metrics = {}
        for name, m in self.metrics.items():
            entry: dict[str, Any] = {"mean": score(m.mean)}
            if m.interval is not None:
                entry["bootstrap"] = {k: score(getattr(m.interval, k)) for k in ("low", "mid", "high")}
            metrics[name] = entry
        return {"rows": self.rows, "metrics": metrics, "signature": self.signature,
                "confidence": self.confidence, "bootstrap_samples": self.bootstrap_samples,
                "seed": self.seed, "seconds": round(self.seconds, 3), "output": self.output}


def _is_text(path: str) -> bool:
    return Path(path).suffix.lower() in (".txt", ".text")


def _field_for(path: str, given: str | None, default: str) -> str:
    return "text" if _is_text(path) else (given or default)


def _paired_chunks(pred: str, ref: str | None, pred_field: str, ref_field: str,
                   chunk_size: int) -> Iterator[tuple[Chunk, list[str], list[Any], list[Any] | None]]:
    """(chunk, predictions, references, ids) per chunk, reading one file or two in lockstep."""
    if ref is None or Path(ref) == Path(pred):
        if pred_field == ref_field:
            raise ValueError(f"--pred-field and --ref-field are both {pred_field!r} in {pred}")
        for chunk in read_columns(pred, [pred_field, ref_field], chunk_size=chunk_size,
                                  allow_list_fields=(ref_field,)):
            yield chunk, chunk.columns[pred_field], chunk.columns[ref_field], None
        return
    preds = read_columns(pred, [pred_field], chunk_size=chunk_size)
    refs = read_columns(ref, [ref_field], chunk_size=chunk_size, allow_list_fields=(ref_field,))
    seen = 0
    for p_chunk in preds:
        r_chunk = next(refs, None)
        if r_chunk is None or len(r_chunk) != len(p_chunk):
            got = seen + (0 if r_chunk is None else len(r_chunk))
            raise InputError(f"{pred} has more rows than {ref} ({ref} ends after {got} rows)")
        seen += len(p_chunk)
        yield p_chunk, p_chunk.columns[pred_field], r_chunk.columns[ref_field], None
    if next(refs, None) is not None:
        raise InputError(f"{ref} has more rows than {pred} ({pred} ends after {seen} rows)")


def score_files(pred: str, ref: str | None = None, *, metrics: Sequence[str] = ("rouge1", "rouge2", "rougeL"),
                pred_field: str | None = None, ref_field: str | None = None, id_field: str | None = None,
                stemmer: bool = False, tokenizer: str = "rouge", out: str | None = None,
                threads: int | None = None, chunk_size: int = 50_000, bootstrap: int = 1000,
                confidence: float = 0.95, seed: int | None = DEFAULT_SEED,
                progress: Callable[[int], None] | None = None) -> Summary:
    """Score a predictions file against a references file (or two fields of one file).

    Per-row results go to ``out`` (.parquet, .jsonl or .csv) chunk by chunk, each
    row keyed by ``row`` (0-based input row) and, with ``id_field``, the input id.
    """
    started = time.perf_counter()
    types = validate_types(metrics)
    pred_f = _field_for(pred, pred_field, DEFAULT_PRED_FIELD)
    ref_f = _field_for(ref or pred, ref_field, DEFAULT_REF_FIELD)
    columns: dict[str, list[np.ndarray]] = {f"{t}_{x}": [] for t in types for x in "prf"}
    writer = ResultWriter(out) if out else None
    rows = 0
    signature = ""
    # ids always come from the predictions file
    ids_reader = read_columns(pred, [id_field], chunk_size=chunk_size) if id_field else None
    try:
        for chunk, preds, refs, _ in _paired_chunks(pred, ref, pred_f, ref_f, chunk_size):
            result = rouge(preds, refs, types, tokenizer=tokenizer, stemmer=stemmer, threads=threads)
            signature = result.signature
            for name in columns:
                columns[name].append(result[name])
            if writer is not None:
                table: dict[str, Any] = {"row": np.arange(rows, rows + len(preds), dtype=np.int64)}
                if ids_reader is not None:
                    table[id_field] = next(ids_reader).columns[id_field]
                table.update({k: v for k, v in result.columns.items() if not k.endswith("_ref")})
                writer.write(table)
            rows += len(preds)
            if progress is not None:
                progress(len(preds))
    finally:
        if writer is not None:
            writer.close()
    merged = {k: np.concatenate(v) if v else np.zeros(0) for k, v in columns.items()}
    summary_metrics = {}
    if rows:
        from respeval.metrics.rouge import RougeResult

        res = RougeResult(types, merged, signature, "", np.zeros(rows, np.int64), {})
        intervals = res.bootstrap(n=bootstrap, ci=confidence, seed=seed) if bootstrap > 0 else {}
        for t, mean in res.mean().items():
            summary_metrics[t] = MetricSummary(mean, intervals.get(t))
    else:
        for t in types:
            summary_metrics[t] = MetricSummary(Score(0.0, 0.0, 0.0), None)
    return Summary(rows, summary_metrics, signature, time.perf_counter() - started, out,
                   confidence, bootstrap if rows else 0, seed)


def total_rows(path: str) -> int | None:
    """Rows in ``path`` for a progress bar, or None when counting is not possible."""
    try:
        return count_rows(path)
    except (OSError, ValueError):
        return None
