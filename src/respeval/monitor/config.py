"""What a monitor does, besides where it reads and stores: windows, sampling, the gate, the
judge budget, the reference and the drift test.

The spec file of ``respeval monitor`` is an evaluate spec (``metrics``, ``model``,
``judge``, ``columns``; see :mod:`respeval.evaluate.spec`) with one more section::

    monitor:
      window: 1h                 # time windows of trace start times (s, m, h, d; or seconds)
      lateness: 5m               # a window closes once the source has reached its end + this
      sample_rate: 0.1           # sampling as in `dataset from-traces` (seeded trace-id hash)
      seed: 7
      all_failures: true         # every trace that recorded an error, plus sample_rate of the rest
      stratify: model            # (optional) per window: round(rate x n) of each stratum
      per_stratum: 50            # (optional) or N of each stratum
      references: {file: refs.jsonl, key: prompt, field: reference}   # the gate's references
      gate:                      # exact -> lexical -> judge (respeval.gate)
        normalize: squad
        lexical_metric: rouge1
        exact: {accept_at: 1.0}
        lexical: {accept_at: 0.9, reject_below: 0.2}
      judge_budget: 100          # rows sent to the judge per window (gate + judged metrics)
      reference_windows: 1       # the first N windows are the reference of the drift test
      alpha: 0.05                # false-alarm rate over every window ever tested
      min_rows: 30               # a metric is tested with at least this many rows on each side
      proportions: [exact_match] # metrics tested as pass rates (score 1 = pass) besides judged ones
      bootstrap: 1000            # replicates of the bootstrap (intervals, the test of means)
      confidence: 0.95           # the trend report's bands
      scrub_pii: false           # replace PII before anything is judged or stored

Every key is optional; command-line options win over the spec.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from respeval.gate import LEXICAL_METRICS, NORMALIZATIONS, GateConfig, Thresholds
from respeval.stats import DEFAULT_SEED
from respeval.traces.case import CASE_FIELDS, DEFAULT_FEEDBACK_ATTRIBUTES
from respeval.traces.sampling import Sampling

__all__ = ["MONITOR_KEYS", "MonitorConfig", "References", "config_from_spec", "parse_duration"]

MONITOR_KEYS = (
    "window",
    "lateness",
    "sample_rate",
    "seed",
    "all_failures",
    "stratify",
    "per_stratum",
    "references",
    "gate",
    "judge_budget",
    "reference_windows",
    "alpha",
    "min_rows",
    "proportions",
    "bootstrap",
    "confidence",
    "scrub_pii",
    "on_error",
)
_REFERENCE_KEYS = ("file", "key", "field")
_GATE_KEYS = ("normalize", "lexical_metric", "exact", "lexical")
_THRESHOLD_KEYS = ("accept_at", "reject_below")
_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$")


def parse_duration(value: Any, what: str = "duration") -> float:
    """Seconds from ``90``, ``"90s"``, ``"5m"``, ``"1h"``, ``"1d"``, ``"1w"``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value.lower())) and m.group(2) in ("", *_UNITS):
        seconds = float(m.group(1)) * _UNITS.get(m.group(2) or "s", 1.0)
    else:
        raise ValueError(f"{what}: expected a duration such as 90s, 5m, 1h or 1d (or seconds), got {value!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{what}: expected a duration >= 0, got {value!r}")
    return seconds


@dataclass(frozen=True)
class References:
    """Where the gate's references come from: a dataset file (JSONL, CSV, Parquet) whose
    ``key`` column matches a case field (``prompt`` by default, compared with whitespace
    collapsed) and whose ``field`` column holds the reference (a string or a list)."""

    path: str
    key: str = "prompt"
    field: str = "reference"

    def __post_init__(self) -> None:
        if self.key not in CASE_FIELDS:
            raise ValueError(f"references: key {self.key!r} is not a case field (one of {', '.join(CASE_FIELDS)})")


@dataclass(frozen=True)
class MonitorConfig:
    """A monitor's settings (see the module docstring for each)."""

    window: float = 3600.0
    lateness: float = 300.0
    sampling: Sampling = field(default_factory=lambda: Sampling(rate=1.0, seed=DEFAULT_SEED))
    references: References | None = None
    gate: GateConfig = field(default_factory=GateConfig)
    judge_budget: int | None = 100
    reference_windows: int = 1
    alpha: float = 0.05
    min_rows: int = 30
    proportions: tuple[str, ...] = ()
    bootstrap: int = 1000
    confidence: float = 0.95
    scrub_pii: bool = False
    pii_key: bytes | None = None
    on_error: str = "skip"
    feedback_attributes: tuple[str, ...] = DEFAULT_FEEDBACK_ATTRIBUTES

    def __post_init__(self) -> None:
        if not self.window > 0:
            raise ValueError(f"window must be a positive duration, got {self.window}")
        if self.lateness < 0:
            raise ValueError(f"lateness must be >= 0, got {self.lateness}")
        if self.judge_budget is not None and self.judge_budget < 0:
            raise ValueError(f"judge_budget must be >= 0 rows, got {self.judge_budget}")
        if self.reference_windows < 1:
            raise ValueError(f"reference_windows must be at least 1, got {self.reference_windows}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.min_rows < 2:
            raise ValueError(f"min_rows must be at least 2, got {self.min_rows}")
        if self.bootstrap < 100:
            raise ValueError(f"bootstrap must be at least 100 replicates, got {self.bootstrap}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
        if self.on_error not in ("skip", "record", "fail"):
            raise ValueError(f"on_error must be skip, record or fail, got {self.on_error!r}")
        if self.scrub_pii and self.pii_key is None:
            raise ValueError(
                "scrub_pii needs a fixed key (--pii-key-file or RESPEVAL_PII_KEY): placeholders must stay the same "
                "across the monitor's restarts"
            )

    @property
    def window_ns(self) -> int:
        return round(self.window * 1e9)

    @property
    def lateness_ns(self) -> int:
        return round(self.lateness * 1e9)

    def window_of(self, start_ns: int) -> int:
        return start_ns // self.window_ns

    def closed(self, window: int, watermark_ns: int) -> bool:
        """Whether ``window`` is closed once the source has reached ``watermark_ns``."""
        return (window + 1) * self.window_ns + self.lateness_ns <= watermark_ns

    def last_closed(self, watermark_ns: int) -> int:
        """The last window closed at ``watermark_ns``."""
        return (watermark_ns - self.lateness_ns) // self.window_ns - 1

    def fingerprint_parts(self) -> dict[str, Any]:
        """Everything here that changes a number, for the store's resume check."""
        s = self.sampling
        g = self.gate
        return {
            "the window": self.window,
            "the lateness": self.lateness,
            "the sampling": [s.rate, s.seed, s.keep_errors, s.stratify, s.per_stratum, s.min_per_stratum],
            "the gate": [
                g.normalize,
                g.lexical_metric,
                [g.exact.accept_at, g.exact.reject_below],
                [g.lexical.accept_at, g.lexical.reject_below],
            ],
            "the judge budget": self.judge_budget,
            "the reference windows": self.reference_windows,
            "alpha": self.alpha,
            "min_rows": self.min_rows,
            "the proportions": sorted(self.proportions),
            "the bootstrap": [self.bootstrap, self.confidence],
            "PII scrubbing": [self.scrub_pii, None if self.pii_key is None else _digest(self.pii_key)],
            "the feedback attributes": list(self.feedback_attributes),
            "the references' columns": None
            if self.references is None
            else [self.references.key, self.references.field],
        }


def _digest(key: bytes) -> str:
    import hashlib

    return hashlib.sha256(b"respeval-monitor-pii-key" + key).hexdigest()[:16]


def _check(section: Mapping[str, Any], allowed: tuple[str, ...], what: str) -> None:
    if not isinstance(section, Mapping):
        raise ValueError(f"{what}: expected a mapping, got {type(section).__name__}")
    unknown = sorted(set(section) - set(allowed))
    if unknown:
        raise ValueError(f"{what}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")


def _number(value: Any, what: str, *, whole: bool = False, low: float | None = None, high: float | None = None) -> Any:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and whole:
        ok = float(value).is_integer()
    if ok and low is not None:
        ok = value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        kind = "a whole number" if whole else "a number"
        bounds = (
            f" in [{low}, {high}]" if low is not None and high is not None else f" >= {low}" if low is not None else ""
        )
        raise ValueError(f"{what} must be {kind}{bounds}, got {value!r}")
    return int(value) if whole else float(value)


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be true or false, got {value!r}")
    return value


def _thresholds(value: Any, what: str) -> Thresholds:
    _check(value, _THRESHOLD_KEYS, what)
    got = {k: None if value.get(k) is None else _number(value[k], f"{what}.{k}") for k in _THRESHOLD_KEYS}
    return Thresholds(got["accept_at"], got["reject_below"])


def config_from_spec(
    section: Mapping[str, Any] | None, *, base: Any = None, overrides: Mapping[str, Any] | None = None
) -> MonitorConfig:
    """A :class:`MonitorConfig` from a spec's ``monitor:`` section (``base``: the spec's
    folder, for the references file) with ``overrides`` (the command line's options, by key:
    None = not given) on top."""
    from pathlib import Path

    where = "monitor"
    section = dict(section or {})
    _check(section, MONITOR_KEYS, where)
    merged = {**section, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    kwargs: dict[str, Any] = {}
    if "window" in merged:
        kwargs["window"] = parse_duration(merged["window"], f"{where}.window")
    if "lateness" in merged:
        kwargs["lateness"] = parse_duration(merged["lateness"], f"{where}.lateness")
    sampling: dict[str, Any] = {"rate": 1.0, "seed": DEFAULT_SEED}
    if "sample_rate" in merged:
        sampling["rate"] = _number(merged["sample_rate"], f"{where}.sample_rate", low=0, high=1)
    if "seed" in merged:
        sampling["seed"] = _number(merged["seed"], f"{where}.seed", whole=True, low=0)
    if "all_failures" in merged:
        sampling["keep_errors"] = _bool(merged["all_failures"], f"{where}.all_failures")
    if merged.get("stratify") is not None:
        if merged["stratify"] not in CASE_FIELDS:
            raise ValueError(f"{where}.stratify: {merged['stratify']!r} is not a case field ({', '.join(CASE_FIELDS)})")
        sampling["stratify"] = merged["stratify"]
    if merged.get("per_stratum") is not None:
        sampling["per_stratum"] = _number(merged["per_stratum"], f"{where}.per_stratum", whole=True, low=0)
    kwargs["sampling"] = Sampling(**sampling)
    refs = merged.get("references")
    if refs is not None:
        if isinstance(refs, str):
            refs = {"file": refs}
        _check(refs, _REFERENCE_KEYS, f"{where}.references")
        if not isinstance(refs.get("file"), str):
            raise ValueError(f"{where}.references: file (the dataset of references) is required")
        path = Path(refs["file"])
        if base is not None and not path.is_absolute() and not (overrides or {}).get("references"):
            path = Path(base) / path
        kwargs["references"] = References(
            str(path), str(refs.get("key", "prompt")), str(refs.get("field", "reference"))
        )
    gate = merged.get("gate")
    if gate is not None:
        _check(gate, _GATE_KEYS, f"{where}.gate")
        normalize = gate.get("normalize", "squad")
        lexical_metric = gate.get("lexical_metric", "rouge1")
        if normalize not in NORMALIZATIONS:
            raise ValueError(f"{where}.gate.normalize must be one of {', '.join(NORMALIZATIONS)}, got {normalize!r}")
        if lexical_metric not in LEXICAL_METRICS:
            raise ValueError(
                f"{where}.gate.lexical_metric must be one of {', '.join(LEXICAL_METRICS)}, got {lexical_metric!r}"
            )
        kwargs["gate"] = GateConfig(
            exact=_thresholds(gate["exact"], f"{where}.gate.exact") if "exact" in gate else Thresholds(accept_at=1.0),
            lexical=_thresholds(gate["lexical"], f"{where}.gate.lexical") if "lexical" in gate else Thresholds(),
            normalize=normalize,
            lexical_metric=lexical_metric,
        )
    if "judge_budget" in merged:
        budget = merged["judge_budget"]
        kwargs["judge_budget"] = None if budget is None else _number(budget, f"{where}.judge_budget", whole=True, low=0)
    if "reference_windows" in merged:
        kwargs["reference_windows"] = _number(
            merged["reference_windows"], f"{where}.reference_windows", whole=True, low=1
        )
    if "alpha" in merged:
        kwargs["alpha"] = _number(merged["alpha"], f"{where}.alpha", low=0, high=1)
    if "min_rows" in merged:
        kwargs["min_rows"] = _number(merged["min_rows"], f"{where}.min_rows", whole=True, low=2)
    if "proportions" in merged:
        props = merged["proportions"]
        if not isinstance(props, (list, tuple)) or not all(isinstance(p, str) for p in props):
            raise ValueError(f"{where}.proportions must be a list of metric names, got {props!r}")
        kwargs["proportions"] = tuple(props)
    if "bootstrap" in merged:
        kwargs["bootstrap"] = _number(merged["bootstrap"], f"{where}.bootstrap", whole=True, low=100)
    if "confidence" in merged:
        kwargs["confidence"] = _number(merged["confidence"], f"{where}.confidence", low=0, high=1)
    if "scrub_pii" in merged:
        kwargs["scrub_pii"] = _bool(merged["scrub_pii"], f"{where}.scrub_pii")
    if "pii_key" in merged:
        kwargs["pii_key"] = merged["pii_key"]
    if "on_error" in merged:
        kwargs["on_error"] = merged["on_error"]
    if "feedback_attributes" in merged:
        kwargs["feedback_attributes"] = tuple(merged["feedback_attributes"])
    return MonitorConfig(**kwargs)
