"""Custom function metrics: your own Python logic per row (or per Arrow batch).

``CustomMetric(name, fn)``: ``fn(row)`` gets the whole record as a dict and returns a number,
a bool (1.0 / 0.0) or a dict of named numbers (declare the names with ``outputs=``; an
``"explanation"`` string may come along).  ``batch=True``: ``fn(batch)`` gets a
``pyarrow.RecordBatch`` of the chunk and returns an array (or list) of numbers, one per row,
or a dict of such arrays; NaN in a batch result marks a row unscored (reason: "returned NaN").

A row whose function raises (``SystemExit`` and every other exception, even one whose message
cannot be read), times out, runs out of memory or returns something that is not a finite number
(a string, None, NaN, infinity, an integer too large for a float) is **unscored with its
reason**; the other rows and the run go on.  What the function prints goes to stderr, never to
the stream a command writes its result to.  Isolation (:mod:`respeval.evaluate.isolation`):
``"none"`` runs ``fn`` in this process (fastest; no limits: it can do anything this process can,
``os._exit`` included), ``"process"`` in sandboxed worker processes with a time limit, a memory
limit and no network.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval._sandbox import call, stdout_to_stderr
from respeval._targets import load_target
from respeval.evaluate.isolation import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT,
    Limits,
    WorkerPool,
    describe_plan,
    function_ref,
    sandbox_plan,
)
from respeval.fingerprint import CodeFingerprint, code_fingerprint
from respeval.metrics.base import check_flag, describe_value
from respeval.metrics.signature import Signature, limit_field
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
    """A returned (plain) value as a float, or why it is not one."""
    if isinstance(value, (bool, np.bool_)):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            number = float(value)
        except OverflowError:
            return "returned a number too large for a float"
        if math.isnan(number):
            return "returned NaN"
        if math.isinf(number):
            return "returned an infinite number"
        return number
    shown = "None" if value is None else type(value).__name__
    if isinstance(value, str):
        shown = f"str {value[:40]!r}"
    return f"returned {shown}, expected a number, a bool or a dict of numbers"


def _names(value: Any, option: str, owner: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{owner}: {option} must be a list of names, got {describe_value(value)}")
    return tuple(value)


def _positive(value: Any, option: str, owner: str, *, integer: bool) -> Any:
    number: Any = value
    kinds: tuple[type, ...] = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, kinds):
        what = "a positive whole number" if integer else "a positive number of seconds"
        raise TypeError(f"{owner}: {option} must be {what} (or null for no limit), got {describe_value(value)}")
    if not number > 0 or (not integer and not math.isfinite(number)):
        raise ValueError(f"{owner}: {option} must be positive, got {number}")
    return int(number) if integer else float(number)


class CustomMetric:
    """A metric computed by your function (see the module docstring).

    Args:
        name: output columns ``{name}/score`` (or ``{name}.{output}/score`` per declared output).
        fn: ``row dict -> number | bool | dict``, or with ``batch=True`` ``RecordBatch -> array | dict``.
        outputs: the names a dict-returning function returns (each becomes its own metric).
        columns: the input columns ``fn`` needs (default: all); fewer columns are cheaper to
            send to worker processes.
        isolation: ``"none"`` (in process) or ``"process"`` (sandboxed workers; ``fn`` must then be
            a module-level function, see :mod:`respeval.evaluate.isolation`).
        timeout: seconds per row (per call for batch functions), with ``isolation="process"``.
        memory_mb: address space ``fn`` may add, with ``isolation="process"``.
        network: allow network access in the workers (default False).
        env: names of environment variables the workers get (they get no others but the locale's).
        read: files or folders the workers may read besides the code (with Landlock, Linux).
        workers: worker processes (default 2).
        higher_is_better: for reports; a metric where lower is better says so.
        version: stands for the code in resume fingerprints: bump it when the function's
            results change.  Without one, respeval fingerprints the function's module and
            the project files it imports (:mod:`respeval.fingerprint`); a resume refuses
            when it cannot (a built-in, source not in a file).

    Every argument is type-checked: ``network="false"`` (a string, as a quoted YAML value gives
    it) is an error naming ``network``, never a truthy value.
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
        env: Sequence[str] = (),
        read: Sequence[str] = (),
        workers: int = 2,
        higher_is_better: bool = True,
        description: str | None = None,
        version: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"a metric name must be a non-empty string without '/', got {name!r}")
        if not callable(fn):
            raise TypeError(f"{name}: fn must be callable, got {type(fn).__name__}")
        if not isinstance(isolation, str) or isolation not in ISOLATION:
            raise ValueError(f"{name}: isolation must be one of {', '.join(ISOLATION)}, got {isolation!r}")
        self.outputs = _names(outputs, "outputs", name)
        if self.outputs is not None and not self.outputs:
            raise ValueError(f"{name}: outputs must be a non-empty list of names")
        if version is not None and (not isinstance(version, str) or not version):
            raise ValueError(f"{name}: version must be a non-empty string, got {version!r}")
        self.columns = _names(columns, "columns", name)
        self.name = name
        self.fn = fn
        self.version = version
        self.batch = check_flag(batch, "batch", name)
        self.isolation = isolation
        self.limits = Limits(
            timeout=None if timeout is None else _positive(timeout, "timeout", name, integer=False),
            memory_mb=None if memory_mb is None else _positive(memory_mb, "memory_mb", name, integer=True),
            network=check_flag(network, "network", name),
            env=_names(env, "env", name) or (),
            read=_names(read, "read", name) or (),
        )
        self.workers = _positive(workers, "workers", name, integer=True)
        self.higher_is_better = check_flag(higher_is_better, "higher_is_better", name)
        if description is not None and not isinstance(description, str):
            raise TypeError(f"{name}: description must be a string, got {describe_value(description)}")
        self.description = description or (inspect.getdoc(fn) or "").split("\n")[0] or f"custom: {name}"
        self._pool: WorkerPool | None = None
        self._code: CodeFingerprint | None = None
        self._sandbox = "none"
        if isolation == "process":
            # refused now, not at the first chunk: a function a fresh process cannot import, or
            # network: false where nothing can enforce it
            function_ref(fn)
            self._sandbox = describe_plan(sandbox_plan(self.limits))

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
        limits: dict[str, Any] = {}
        if self.isolation == "process":
            limits = {
                "timeout": limit_field(self.limits.timeout),
                "memory_mb": limit_field(self.limits.memory_mb),
                "network": "allowed" if self.limits.network else "blocked",
                "sandbox": self._sandbox,
                "env": ",".join(self.limits.env) or None,
            }
        signature = Signature(custom=code.target, code=code.token, batch=self.batch, isolation=self.isolation, **limits)
        return str(signature)

    # ------------------------------------------------------------------ running

    @property
    def network_guard(self) -> str:
        """How the workers are cut off the network: ``seccomp`` (``seccomp+netns`` once a worker
        reported its own network namespace), ``none`` when the network is allowed, ``in-process``
        without isolation."""
        if self.isolation != "process":
            return "in-process"
        if self.limits.network:
            return "none"
        return self._pool.network_guard if self._pool is not None else "seccomp"

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _call_many(self, payloads: Sequence[Any]) -> list[tuple[bool, Any]]:
        """``(True, plain value)`` or ``(False, reason)`` per payload (see :func:`respeval._sandbox.call`)."""
        if self.isolation == "process":
            if self._pool is None:
                self._pool = WorkerPool(self.fn, self.limits, workers=self.workers, batch=1 if self.batch else 32)
            return self._pool.map(payloads)
        with stdout_to_stderr():
            return [call(self.fn, payload, arrays=self.batch, in_process=True) for payload in payloads]

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
            try:
                explanations[i] = redact(text if isinstance(text, str) else str(text))
            except ValueError:  # an integer too long to show
                explanations[i] = f"(an explanation of type {type(text).__name__} that cannot be shown)"
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
            except OverflowError:
                for i in range(n):
                    errors[i] = f"{key}: returned a number too large for a float"
                return
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
    fn: Callable[..., Any] = load_target(
        target, repr(target), expected="module:function (or file.py:function)", files=True
    )
    return fn
