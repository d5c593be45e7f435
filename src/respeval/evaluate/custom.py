"""Custom function metrics: your own Python logic per row (or per Arrow batch).

``CustomMetric(name, fn)``: ``fn(row)`` gets the whole record as a dict and returns a number,
a bool (1.0 / 0.0) or a dict of named numbers (declare the names with ``outputs=``; an
``"explanation"`` string may come along).  ``batch=True``: ``fn(batch)`` gets a
``pyarrow.RecordBatch`` of the chunk and returns an array (or list) of numbers, one per row,
or a dict of such arrays; NaN in a batch result marks a row unscored (reason: "returned NaN").

A row whose function raises, times out, runs out of memory or returns something that is
not a number (a string, None, NaN, infinity) is **unscored with its reason**; the other rows
and the run go on.  Isolation (:mod:`respeval.evaluate.isolation`): ``"none"`` runs ``fn`` in
this process (fastest; no limits), ``"process"`` in worker processes with a time limit, a
memory limit and no network.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval.evaluate.isolation import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, Limits, WorkerPool, describe_exception
from respeval.fingerprint import CodeFingerprint, code_fingerprint
from respeval.redact import redact

__all__ = ["ISOLATION", "CustomMetric", "CustomScores", "load_function"]

ISOLATION = ("none", "process")


@dataclass
class CustomScores:
    """One chunk of a custom metric: a float column per output (NaN where unscored), the
    explanation (or None), and the reason per unscored row."""

    columns: dict[str, np.ndarray]
    explanations: list[str | None] | None
    errors: dict[int, str] = field(default_factory=dict)


def _as_number(value: Any) -> float | str:
    """A returned value as a float, or why it is not one."""
    if isinstance(value, (bool, np.bool_)):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        if math.isnan(number):
            return "returned NaN"
        if math.isinf(number):
            return "returned an infinite number"
        return number
    shown = "None" if value is None else type(value).__name__
    if isinstance(value, str):
        shown = f"str {value[:40]!r}"
    return f"returned {shown}, expected a number, a bool or a dict of numbers"


class CustomMetric:
    """A metric computed by your function (see the module docstring).

    Args:
        name: output columns ``{name}/score`` (or ``{name}.{output}/score`` per declared output).
        fn: ``row dict -> number | bool | dict``, or with ``batch=True`` ``RecordBatch -> array | dict``.
        outputs: the names a dict-returning function returns (each becomes its own metric).
        columns: the input columns ``fn`` needs (default: all); fewer columns are cheaper to
            send to worker processes.
        isolation: ``"none"`` (in process) or ``"process"``.
        timeout: seconds per row (per call for batch functions), with ``isolation="process"``.
        memory_mb: address space ``fn`` may add, with ``isolation="process"``.
        network: allow network access in the workers (default False).
        workers: worker processes (default 2).
        higher_is_better: for reports; a metric where lower is better says so.
        version: stands for the code in resume fingerprints: bump it when the function's
            results change.  Without one, respeval fingerprints the function's module and
            the project files it imports (:mod:`respeval.fingerprint`); a resume refuses
            when it cannot (a built-in, source not in a file).
    """

    kind = "custom"

    def __init__(
        self,
        name: str,
        fn: Callable[[Any], Any],
        *,
        batch: bool = False,
        outputs: Sequence[str] | None = None,
        columns: Sequence[str] | None = None,
        isolation: str = "none",
        timeout: float | None = DEFAULT_TIMEOUT,
        memory_mb: int | None = DEFAULT_MEMORY_MB,
        network: bool = False,
        workers: int = 2,
        higher_is_better: bool = True,
        description: str | None = None,
        version: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"a metric name must be a non-empty string without '/', got {name!r}")
        if not callable(fn):
            raise TypeError(f"{name}: fn must be callable, got {type(fn).__name__}")
        if isolation not in ISOLATION:
            raise ValueError(f"{name}: isolation must be one of {', '.join(ISOLATION)}, got {isolation!r}")
        if outputs is not None and (isinstance(outputs, str) or not outputs):
            raise ValueError(f"{name}: outputs must be a non-empty list of names")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"{name}: timeout must be positive, got {timeout}")
        if version is not None and (not isinstance(version, str) or not version):
            raise ValueError(f"{name}: version must be a non-empty string, got {version!r}")
        self.name = name
        self.fn = fn
        self.version = version
        self.batch = bool(batch)
        self.outputs = tuple(outputs) if outputs is not None else None
        self.columns = tuple(columns) if columns is not None else None
        self.isolation = isolation
        self.limits = Limits(timeout=timeout, memory_mb=memory_mb, network=network)
        self.workers = workers
        self.higher_is_better = higher_is_better
        self.description = description or (inspect.getdoc(fn) or "").split("\n")[0] or f"custom: {name}"
        self._pool: WorkerPool | None = None
        self._code: CodeFingerprint | None = None
        self._guard = "on" if network else "off"  # after a run: how the workers were cut off (netns, audit-hook)

    @property
    def metric_names(self) -> list[str]:
        """The metrics this function yields: its name, or ``name.output`` per declared output."""
        if self.outputs is None:
            return [self.name]
        return [f"{self.name}.{o}" for o in self.outputs]

    def code_fingerprint(self) -> CodeFingerprint:
        """What the function's results depend on (its module, the project files it imports,
        the packages' versions), or its ``version`` (:mod:`respeval.fingerprint`)."""
        if self._code is None:
            self._code = code_fingerprint(self.fn, version=self.version)
        return self._code

    def signature(self) -> str:
        code = self.code_fingerprint()
        guard = self._pool.network_guard if self._pool is not None else self._guard
        limits = ""
        if self.isolation == "process":
            limits = f"|timeout:{self.limits.timeout}|memory_mb:{self.limits.memory_mb}|network:{guard}"
        return f"custom:{code.target}|{code.token}|batch:{self.batch}|isolation:{self.isolation}{limits}"

    # ------------------------------------------------------------------ running

    def close(self) -> None:
        if self._pool is not None:
            self._guard = self._pool.network_guard
            self._pool.close()
            self._pool = None

    def _call_many(self, payloads: Sequence[Any]) -> list[tuple[bool, Any]]:
        if self.isolation == "process":
            if self._pool is None:
                self._pool = WorkerPool(self.fn, self.limits, workers=self.workers, batch=1 if self.batch else 32)
            return self._pool.map(payloads)
        out: list[tuple[bool, Any]] = []
        for payload in payloads:
            try:
                out.append((True, self.fn(payload)))
            except Exception as exc:  # noqa: BLE001 - every failure becomes the row's reason
                out.append((False, describe_exception(exc)))
        return out

    def score_rows(self, records: Sequence[Mapping[str, Any]], batch: Any = None) -> CustomScores:
        """Scores of one chunk: ``records`` (dicts) for row functions, ``batch`` (a RecordBatch
        of the same rows) for batch functions."""
        n = len(records) if batch is None else batch.num_rows
        names = list(self.outputs) if self.outputs is not None else ["score"]
        columns = {o: np.full(n, np.nan) for o in names}
        explanations: list[str | None] = [None] * n
        errors: dict[int, str] = {}
        if n == 0:
            return CustomScores(columns, None, errors)
        if self.batch:
            self._score_batch(batch, columns, errors)
            return CustomScores(columns, None, errors)
        payloads: Sequence[Any] = records
        if self.columns is not None:
            payloads = [{c: r.get(c) for c in self.columns} for r in records]
        for i, (ok, value) in enumerate(self._call_many(payloads)):
            if not ok:
                errors[i] = redact(str(value))
                continue
            if isinstance(value, Mapping):
                reason = self._take_dict(value, i, columns, explanations)
                if reason:
                    errors[i] = reason
                continue
            if self.outputs is not None:
                errors[i] = f"returned {type(value).__name__}, expected a dict with {', '.join(self.outputs)}"
                continue
            number = _as_number(value)
            if isinstance(number, str):
                errors[i] = number
            else:
                columns["score"][i] = number
        for i in errors:
            for col in columns.values():
                col[i] = np.nan
        has_text = any(e is not None for e in explanations)
        return CustomScores(columns, explanations if has_text else None, errors)

    def _take_dict(
        self, value: Mapping[str, Any], i: int, columns: dict[str, np.ndarray], explanations: list[str | None]
    ) -> str | None:
        if self.outputs is None:
            numbers = [k for k in value if k != "explanation"]
            if list(numbers) == ["score"]:
                target = {"score": value["score"]}
            else:
                raise ValueError(
                    f"custom metric {self.name!r} returned a dict with {', '.join(map(str, numbers))}: "
                    f"declare them with CustomMetric(..., outputs=[...]) (or outputs: in the spec)"
                )
        else:
            missing = [o for o in self.outputs if o not in value]
            if missing:
                return f"returned a dict without {', '.join(missing)}"
            target = {o: value[o] for o in self.outputs}
        for key, raw in target.items():
            number = _as_number(raw)
            if isinstance(number, str):
                return f"{key}: {number}"
            columns[key][i] = number
        text = value.get("explanation")
        if text is not None:
            explanations[i] = redact(str(text))
        return None

    def _score_batch(self, batch: Any, columns: dict[str, np.ndarray], errors: dict[int, str]) -> None:
        n = batch.num_rows
        if self.columns is not None:
            batch = batch.select(list(self.columns))
        ((ok, value),) = self._call_many([batch])
        if not ok:
            reason = redact(str(value))
            for i in range(n):
                errors[i] = reason
            return
        arrays = value if isinstance(value, Mapping) else {"score": value}
        if self.outputs is None and set(arrays) != {"score"}:
            raise ValueError(
                f"custom metric {self.name!r} returned {', '.join(map(str, arrays))}: declare them with outputs=[...]"
            )
        for key in columns:
            if key not in arrays:
                for i in range(n):
                    errors[i] = f"returned no {key!r} array"
                return
            try:
                arr = np.asarray(
                    arrays[key].to_numpy(zero_copy_only=False) if hasattr(arrays[key], "to_numpy") else arrays[key],
                    dtype=np.float64,
                )
            except (TypeError, ValueError) as exc:
                for i in range(n):
                    errors[i] = f"returned values that are not numbers: {exc}"[:300]
                return
            if arr.shape != (n,):
                for i in range(n):
                    errors[i] = f"returned {arr.size} values for a batch of {n} rows"
                return
            columns[key][:] = arr
            bad = ~np.isfinite(arr)
            for j in np.flatnonzero(bad).tolist():
                errors.setdefault(j, f"{key}: returned NaN" if np.isnan(arr[j]) else f"{key}: returned infinity")
        for i in errors:
            for col in columns.values():
                col[i] = np.nan


def load_function(target: str) -> Callable[..., Any]:
    """``module:function`` (or ``path/to/file.py:function``) -> the function."""
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{target!r}: expected module:function (or file.py:function)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        if module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(os.path.basename(module_name)[:-3], module_name)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {module_name}")
            module: Any = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except (ImportError, OSError) as exc:
        raise ValueError(f"{target!r}: cannot import {module_name}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{target!r}: {module_name} has no attribute {attr}") from None
    if not callable(obj):
        raise ValueError(f"{target!r}: {attr} is not callable")
    return obj
