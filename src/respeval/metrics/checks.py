"""The checks everyone writes by hand: JSON validity (optionally against a JSON Schema),
regular expressions, required phrases, word and sentence counts within bounds, and the
length ratio to the reference.

Each check is its own family (its options differ), registered under its name; options come
from ``MetricOptions.params[name]`` (``respeval.evaluate`` and the spec file pass them), and
``name`` renames the output column, so one run can hold several checks of one kind::

    REGISTRY.build_families(["regex"], MetricOptions(params={"regex": {"pattern": r"\\d{4}", "name": "has_year"}}))

Pass/fail checks give 1.0 or 0.0 per row in the column named after the check; the corpus
value is the pass rate.  ``length_ratio`` gives the ratio itself (the corpus value is its
mean).  A row a check cannot score (an empty reference for ``length_ratio``) is unscored with
its reason (``ChunkScores.errors``); a failed check is a score of 0, not an unscored row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from respeval.metrics.base import ChunkScores, check_flag, check_options
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.signature import Signature, limit_field

__all__ = [
    "METRICS",
    "BoundedCount",
    "Includes",
    "JsonValid",
    "LengthRatio",
    "RegexMatch",
    "count_sentences",
    "count_words",
]

_WORD = re.compile(r"\S+")
# A sentence ends at ., !, ?, … (or the CJK 。！？) followed by whitespace or the end; quotes
# and closing brackets after the mark belong to the sentence.
_SENTENCE_END = re.compile(r"[.!?…。！？]+[\"'”’)\]]*(?=\s|$)")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)\r?\n?```\s*$", re.S)


def count_words(text: str) -> int:
    """Whitespace-separated tokens."""
    return len(_WORD.findall(text))


def count_sentences(text: str) -> int:
    """Sentences: spans ending at ``.``, ``!``, ``?``, ``…`` (or ``。！？``) before whitespace or
    the end, plus a final span without a mark.  ``3.5`` and ``e.g.x`` do not split;
    ``e.g. this`` does (no abbreviation list: documented, predictable)."""
    stripped = text.strip()
    if not stripped:
        return 0
    ends = list(_SENTENCE_END.finditer(stripped))
    n = len(ends)
    tail = stripped[ends[-1].end() :] if ends else stripped
    return n + (1 if tail.strip() else 0)


def _pass_fail(name: str, passed: np.ndarray, errors: dict[int, str] | None = None) -> ChunkScores:
    values = passed.astype(np.float64)
    return ChunkScores({name: values}, values[:, None] if len(values) else np.zeros((0, 1)), errors or {})


class _Check:
    """What every check shares: one statistic (the per-row value), corpus = its mean."""

    inputs = "text"
    kind = "check"

    def __init__(self, name: str) -> None:
        self.name = name
        self.stat_names: tuple[str, ...] = ("value",)
        self.headline: tuple[str, ...] = (name,)

    def prepare(self, references: list[Any]) -> list[Any]:
        return references

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        n = np.maximum(np.asarray(rows, dtype=np.float64), 1)
        return {self.name: np.asarray(sums, dtype=np.float64)[..., 0] / n}

    def options(self) -> dict[str, Any]:
        """The check's options as signature fields, in order."""
        return {}

    def signature(self) -> str:
        return str(Signature(self.kind, **self.options(), name=self.name))


class JsonValid(_Check):
    """1.0 when the prediction is JSON (and, with ``schema``, valid against that JSON Schema).

    Args:
        schema: a JSON Schema (a mapping, or the path of a .json file); needs the
            ``jsonschema`` package (``pip install 'respeval[evaluate]'``).
        strip_fences: accept JSON wrapped in one Markdown code fence (```json ... ```).
        formats: also check ``format`` keywords (dates, e-mails, ...) where jsonschema can.

    Besides the 0/1 column, ``{name}_error`` says why a row failed (None when it passed).
    """

    kind = "json_valid"

    def __init__(
        self,
        *,
        name: str = "json_valid",
        schema: Mapping[str, Any] | str | None = None,
        strip_fences: bool = False,
        formats: bool = False,
    ) -> None:
        super().__init__(name)
        self.strip_fences = check_flag(strip_fences, "strip_fences", name)
        self.schema = _load_schema(schema) if schema is not None else None
        self.formats = check_flag(formats, "formats", name)
        self._validator = _validator(self.schema, self.formats) if self.schema is not None else None

    def options(self) -> dict[str, Any]:
        digest = "none"
        if self.schema is not None:
            import hashlib

            digest = hashlib.sha256(json.dumps(self.schema, sort_keys=True).encode()).hexdigest()[:12]
        return {"schema": digest, "fences": self.strip_fences, "formats": self.formats}

    def check(self, text: str) -> str | None:
        """None when ``text`` passes, else the reason it does not."""
        return self.read(text)[1]

    def read(self, text: str) -> tuple[Any, str | None]:
        """``(value, None)`` when ``text`` passes (its JSON value), else ``(None, reason)``."""
        if self.strip_fences:
            fenced = _FENCE.match(text)
            if fenced is not None:
                text = fenced.group(1)
        try:
            value = json.loads(text)
        except ValueError as exc:
            return None, f"not JSON: {exc}"
        if self._validator is None:
            return value, None
        from jsonschema.exceptions import best_match

        error = best_match(self._validator.iter_errors(value))
        if error is None:
            return value, None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return None, f"schema: at {where}: {error.message}"[:500]

    def score(self, prepared: Any, predictions: list[str]) -> ChunkScores:
        reasons = [self.check(p) for p in predictions]
        out = _pass_fail(self.name, np.array([r is None for r in reasons], dtype=bool))
        out.columns[f"{self.name}_error"] = np.array(reasons, dtype=object)
        return out


def _load_schema(schema: Mapping[str, Any] | str) -> dict[str, Any]:
    if isinstance(schema, Mapping):
        return dict(schema)
    if isinstance(schema, (str, Path)):
        path = Path(schema)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"json_valid: cannot read the schema {path}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise ValueError(f"json_valid: the schema {path} is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"json_valid: the schema {path} must be a JSON object")
        return data
    raise TypeError(f"json_valid: schema must be a mapping or a file path, got {type(schema).__name__}")


def _validator(schema: dict[str, Any], formats: bool) -> Any:
    try:
        import jsonschema
    except ImportError:
        raise ValueError(
            "json_valid with a schema needs the jsonschema package: pip install 'respeval[evaluate]'"
        ) from None
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise ValueError(f"json_valid: the schema is not a valid JSON Schema: {exc.message}") from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER if formats else None)


_MODES = ("search", "full", "match")


class RegexMatch(_Check):
    """1.0 when ``pattern`` matches the prediction: anywhere (``mode="search"``, a partial
    match, the default), the whole text (``full``) or at its start (``match``).

    Python's ``re`` syntax; ``ignore_case``, ``multiline`` and ``dotall`` set the flags;
    ``negate`` passes rows that do *not* match ("no URL in the answer").
    """

    kind = "regex"

    def __init__(
        self,
        *,
        pattern: str | None = None,
        name: str = "regex",
        mode: str = "search",
        ignore_case: bool = False,
        multiline: bool = False,
        dotall: bool = False,
        negate: bool = False,
    ) -> None:
        super().__init__(name)
        if not isinstance(pattern, str):
            raise ValueError(f"{name}: give the regular expression as the option 'pattern'")
        if mode not in _MODES:
            raise ValueError(f"{name}: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        ignore_case, multiline, dotall = (
            check_flag(v, k, name)
            for k, v in (("ignore_case", ignore_case), ("multiline", multiline), ("dotall", dotall))
        )
        flags = (re.I if ignore_case else 0) | (re.M if multiline else 0) | (re.S if dotall else 0)
        try:
            self.regex = re.compile(pattern, flags)
        except re.error as exc:
            raise ValueError(f"{name}: bad regular expression {pattern!r}: {exc}") from None
        self.mode = mode
        self.negate = check_flag(negate, "negate", name)
        self._find = {"search": self.regex.search, "full": self.regex.fullmatch, "match": self.regex.match}[mode]

    def options(self) -> dict[str, Any]:
        return {
            "pattern": repr(self.regex.pattern),
            "flags": self.regex.flags,
            "mode": self.mode,
            "negate": self.negate,
        }

    def score(self, prepared: Any, predictions: list[str]) -> ChunkScores:
        find = self._find
        hits = np.fromiter(((find(p) is not None) != self.negate for p in predictions), bool, len(predictions))
        return _pass_fail(self.name, hits)


class Includes(_Check):
    """1.0 when the prediction contains ``any`` (the default) or ``all`` of ``values``.

    ``case_sensitive`` (default False) and ``whole_word`` (default False: substrings count;
    True: a value must stand between word boundaries).  ``{name}_found`` counts the values found.
    """

    kind = "includes"

    def __init__(
        self,
        *,
        values: Sequence[str] | None = None,
        name: str = "includes",
        mode: str = "any",
        case_sensitive: bool = False,
        whole_word: bool = False,
    ) -> None:
        super().__init__(name)
        if isinstance(values, str) or not values or not all(isinstance(v, str) and v for v in values):
            raise ValueError(f"{name}: give 'values', a non-empty list of non-empty strings")
        if mode not in ("any", "all"):
            raise ValueError(f"{name}: mode must be 'any' or 'all', got {mode!r}")
        self.values = tuple(values)
        self.mode = mode
        self.case_sensitive = check_flag(case_sensitive, "case_sensitive", name)
        self.whole_word = check_flag(whole_word, "whole_word", name)
        flags = 0 if self.case_sensitive else re.I
        if self.whole_word:
            self._patterns = [re.compile(rf"(?<!\w){re.escape(v)}(?!\w)", flags) for v in self.values]
        else:
            self._patterns = [re.compile(re.escape(v), flags) for v in self.values]

    def options(self) -> dict[str, Any]:
        return {
            "values": json.dumps(self.values),
            "mode": self.mode,
            "case": self.case_sensitive,
            "word": self.whole_word,
        }

    def score(self, prepared: Any, predictions: list[str]) -> ChunkScores:
        found = np.array([sum(p.search(text) is not None for p in self._patterns) for text in predictions], np.int64)
        need = 1 if self.mode == "any" else len(self.values)
        out = _pass_fail(self.name, found >= need)
        out.columns[f"{self.name}_found"] = found
        return out


class BoundedCount(_Check):
    """1.0 when the prediction's word (or sentence) count is within bounds: ``exactly``, or
    ``min`` and/or ``max`` (inclusive).  ``{name}_n`` holds the count itself."""

    def __init__(
        self,
        kind: str,
        *,
        name: str | None = None,
        min: int | None = None,  # noqa: A002 - the spec file's option names
        max: int | None = None,  # noqa: A002
        exactly: int | None = None,
    ) -> None:
        super().__init__(name or kind)
        self.kind = kind
        self.count = count_words if kind == "word_count" else count_sentences
        if exactly is not None and (min is not None or max is not None):
            raise ValueError(f"{self.name}: give 'exactly' or 'min'/'max', not both")
        if exactly is None and min is None and max is None:
            raise ValueError(f"{self.name}: give the bounds: 'exactly', or 'min' and/or 'max'")
        lo, hi = (exactly, exactly) if exactly is not None else (min, max)
        for label, bound in (("min", lo), ("max", hi)):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < 0):
                raise ValueError(f"{self.name}: {label} must be a non-negative integer, got {bound!r}")
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"{self.name}: min {lo} is above max {hi}")
        self.low, self.high = lo, hi

    def options(self) -> dict[str, Any]:
        return {"min": limit_field(self.low), "max": limit_field(self.high)}

    def score(self, prepared: Any, predictions: list[str]) -> ChunkScores:
        counts = np.fromiter((self.count(p) for p in predictions), np.int64, len(predictions))
        ok = np.ones(len(counts), dtype=bool)
        if self.low is not None:
            ok &= counts >= self.low
        if self.high is not None:
            ok &= counts <= self.high
        out = _pass_fail(self.name, ok)
        out.columns[f"{self.name}_n"] = counts
        return out


class LengthRatio(_Check):
    """The prediction's length over the reference's, in words (``unit="words"``, the default)
    or characters (``chars``); with several references, the one closest in length counts.
    ``min``/``max`` add a 0/1 column ``{name}_pass``.  A row whose reference is empty is
    unscored (the ratio is undefined)."""

    kind = "length_ratio"

    def __init__(
        self,
        *,
        name: str = "length_ratio",
        unit: str = "words",
        min: float | None = None,  # noqa: A002
        max: float | None = None,  # noqa: A002
    ) -> None:
        super().__init__(name)
        if unit not in ("words", "chars"):
            raise ValueError(f"{name}: unit must be 'words' or 'chars', got {unit!r}")
        self.unit = unit
        self.low, self.high = min, max
        self._length = count_words if unit == "words" else len

    def options(self) -> dict[str, Any]:
        return {"unit": self.unit, "min": limit_field(self.low), "max": limit_field(self.high)}

    def score(self, prepared: list[Any], predictions: list[str]) -> ChunkScores:
        ratios = np.full(len(predictions), np.nan)
        errors: dict[int, str] = {}
        length = self._length
        for i, (pred, refs) in enumerate(zip(predictions, prepared)):
            ref_lengths = [length(r) for r in ([refs] if isinstance(refs, str) else refs)]
            ref_lengths = [n for n in ref_lengths if n > 0]
            if not ref_lengths:
                errors[i] = f"length_ratio: the reference is empty (no {self.unit}): the ratio is undefined"
                continue
            p = length(pred)
            closest = min(ref_lengths, key=lambda n: (abs(n - p), n))
            ratios[i] = p / closest
        stats = np.where(np.isnan(ratios), 0.0, ratios)
        out = ChunkScores({self.name: ratios}, stats[:, None] if len(stats) else np.zeros((0, 1)), errors)
        if self.low is not None or self.high is not None:
            ok = ~np.isnan(ratios)
            if self.low is not None:
                ok &= ratios >= self.low
            if self.high is not None:
                ok &= ratios <= self.high
            out.columns[f"{self.name}_pass"] = np.where(np.isnan(ratios), np.nan, ok.astype(np.float64))
        return out


_OPTIONS = {
    "json_valid": ("name", "schema", "strip_fences", "formats"),
    "regex": ("name", "pattern", "mode", "ignore_case", "multiline", "dotall", "negate"),
    "includes": ("name", "values", "mode", "case_sensitive", "whole_word"),
    "word_count": ("name", "min", "max", "exactly"),
    "sentence_count": ("name", "min", "max", "exactly"),
    "length_ratio": ("name", "unit", "min", "max"),
}


def _builder(kind: str) -> Any:
    def build(names: Sequence[str], options: MetricOptions) -> _Check:
        params = options.for_family(kind, *names)
        check_options(kind, params, _OPTIONS[kind])
        if kind == "json_valid":
            return JsonValid(**params)
        if kind == "regex":
            return RegexMatch(**params)
        if kind == "includes":
            return Includes(**params)
        if kind in ("word_count", "sentence_count"):
            return BoundedCount(kind, **params)
        return LengthRatio(**params)

    return build


_OPTION_HELP = {
    "name": "the column name (a renamed check)",
    "schema": "a JSON Schema the response must satisfy",
    "strip_fences": "true: read JSON inside a ``` fence",
    "formats": "true: check the schema's formats",
    "pattern": "the regular expression",
    "mode": "search | full | match (regex); any | all (includes)",
    "ignore_case": "true: case-insensitive",
    "multiline": "true: ^ and $ at every line",
    "dotall": "true: . matches a newline",
    "negate": "true: 1 when it does not match",
    "values": "the strings to look for",
    "case_sensitive": "true: match case",
    "whole_word": "true: whole words only",
    "min": "the lower bound",
    "max": "the upper bound",
    "exactly": "the exact count",
    "unit": "words | chars",
}


def _described(kind: str) -> dict[str, str]:
    return {o: _OPTION_HELP.get(o, "") for o in _OPTIONS[kind]}


METRICS = (
    MetricSpec(
        "json_valid",
        "json_valid",
        "1 if the response is JSON (schema: valid against a JSON Schema; strip_fences)",
        _builder("json_valid"),
        options=_described("json_valid"),
        reference=False,
    ),
    MetricSpec(
        "regex",
        "regex",
        "1 if pattern matches (mode: search=partial | full | match; ignore_case; negate)",
        _builder("regex"),
        options=_described("regex"),
        reference=False,
    ),
    MetricSpec(
        "includes",
        "includes",
        "1 if the response contains any/all of values (case_sensitive, whole_word)",
        _builder("includes"),
        options=_described("includes"),
        reference=False,
    ),
    MetricSpec(
        "word_count",
        "word_count",
        "1 if the word count is within bounds (exactly, or min/max); count in word_count_n",
        _builder("word_count"),
        options=_described("word_count"),
        reference=False,
    ),
    MetricSpec(
        "sentence_count",
        "sentence_count",
        "1 if the sentence count is within bounds (exactly, or min/max); count in sentence_count_n",
        _builder("sentence_count"),
        options=_described("sentence_count"),
        reference=False,
    ),
    MetricSpec(
        "length_ratio",
        "length_ratio",
        "response length / reference length (unit: words|chars; closest reference); min/max add _pass",
        _builder("length_ratio"),
        options=_described("length_ratio"),
    ),
)
