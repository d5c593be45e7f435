"""The spec file: a whole evaluation declared once (YAML, JSON or TOML).

::

    input: rows.jsonl                  # optional; --input wins
    model: openai:gpt-4o-mini          # the judge (--model wins); base_url, api_key_env too
    columns: {response: answer, reference: gold, baseline: baseline_model_response, id: id}
    judge: {concurrency: 16, cache: judge.sqlite, samples: 1, max_tokens: 512}
    metrics:
      - exact_match                    # registry names (respeval metrics lists them)
      - bleu
      - {metric: json_valid, name: valid_json, schema: {type: object, required: [answer]}}
      - {custom: checks:has_fields, isolation: process, timeout: 5}      # python module:function
      - {custom: checks:length, version: 2}   # bump to stop resuming/reusing results of older code
      - {pointwise: claims, template: "Policy: {context}\\nAnswer: {response}",
         system_instruction: "You are an expert claims auditor.",
         criteria: {accuracy: ...}, rating_rubric: {"5": ..., "1": ...}}
      - GROUNDING                      # predefined judge metrics, by name
      - {predefined: SAFETY, name: safe, threshold: 5}
      - {pairwise: preference, template_file: pairwise.txt, flip: both}
      - faithfulness                   # multi-step judge metrics, by name
      - {rag: context_precision, use: response, context: retrieved}   # context: the chunks' column
      - {rag: answer_relevance, embeddings: openai:text-embedding-3-small, strictness: 3}
      - {rag: citation_check, pattern: "\\[(\\d+)\\]"}
      - {embedding: semantic_similarity, embeddings: openai:text-embedding-3-small, threshold: 0.8}

``template_file`` and ``system_instruction_file`` are read relative to the spec file;
``system_instruction: "@file.txt"`` works too.  Unknown keys are errors, naming the entry, and
so is a value of the wrong type: ``network: "false"`` (a quoted YAML value, a JSON or TOML
string) is refused, naming ``network``, never read as the truthy string it is.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from respeval.evaluate.custom import CustomMetric, load_function
from respeval.fingerprint import split_version
from respeval.judge.methods.predefined import multi_step, predefined
from respeval.judge.methods.prompts import read_text_option
from respeval.judge.methods.templates import PairwiseMetric, PointwiseMetric
from respeval.metrics.base import describe_value

__all__ = ["SPEC_KEYS", "judge_spec_hash", "load_spec", "metric_from_dict", "read_spec_file", "read_text_option"]

SPEC_KEYS = ("input", "model", "base_url", "api_key_env", "columns", "judge", "metrics", "title", "out", "report")
COLUMN_KEYS = ("response", "reference", "baseline", "prompt", "id")
JUDGE_KEYS = (
    "concurrency",
    "cache",
    "samples",
    "timeout",
    "max_retries",
    "price_in",
    "price_out",
    "budget_usd",
)
_CUSTOM_KEYS = (
    "custom",
    "name",
    "batch",
    "outputs",
    "columns",
    "isolation",
    "timeout",
    "memory_mb",
    "network",
    "env",
    "read",
    "workers",
    "higher_is_better",
    "version",
)
_POINTWISE_KEYS = (
    "pointwise",
    "template",
    "template_file",
    "system_instruction",
    "system_instruction_file",
    "criteria",
    "rating_rubric",
    "score_range",
    "labels",
    "passing",
    "threshold",
    "pass_when",
    "max_tokens",
    "examples",
    "guidelines",
    "spec_version",
    "spec_hash",
    "aligned",
)
# What a frozen (aligned) judge spec adds to a pointwise entry, and which of it is not the judge:
# the version and the hash name the judge; ``aligned`` records how it was found.
_FROZEN_KEYS = ("spec_version", "spec_hash", "aligned")
_PAIRWISE_KEYS = (
    "pairwise",
    "template",
    "template_file",
    "system_instruction",
    "system_instruction_file",
    "criteria",
    "rating_rubric",
    "flip",
    "allow_tie",
    "max_tokens",
)
_PREDEFINED_KEYS = ("predefined", "name", "threshold", "system_instruction", "system_instruction_file", "max_tokens")
_EMBEDDING_KEYS = (
    "embedding",
    "name",
    "threshold",
    "embeddings",
    "embeddings_base_url",
    "embeddings_api_key_env",
    "embeddings_dimensions",
    "batch_size",
)
_RAG_KEYS = (
    "rag",
    "name",
    "threshold",
    "max_tokens",
    "context",
    "use",
    "epsilon",
    "strictness",
    "embeddings",
    "embeddings_base_url",
    "embeddings_api_key_env",
    "embeddings_dimensions",
    "pattern",
)


def judge_spec_hash(entry: Mapping[str, Any]) -> str:
    """The hash of a judge spec entry: SHA-256 (16 hex digits) of the canonical JSON of every
    key that defines the judge (all but ``spec_hash`` and ``aligned``, the version included),
    so a frozen spec names its judge, and an edit after freezing shows."""
    judge = {k: v for k, v in entry.items() if k not in ("spec_hash", "aligned")}
    blob = json.dumps(judge, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _check_keys(entry: Mapping[str, Any], allowed: tuple[str, ...], what: str) -> None:
    unknown = sorted(set(entry) - set(allowed))
    if unknown:
        raise ValueError(f"{what}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


Check = tuple[Callable[[Any], bool], str]
_STR: Check = (lambda v: isinstance(v, str), "a string")
_BOOL: Check = (lambda v: isinstance(v, bool), "true or false")
_POSITIVE_INT: Check = (lambda v: _whole(v) and v > 0, "a positive whole number")
_COUNT: Check = (lambda v: _whole(v) and v >= 0, "a whole number, 0 or more")
_NUMBER: Check = (_number, "a number")
_PRICE: Check = (lambda v: _number(v) and v >= 0, "a number, 0 or more")
_SECONDS: Check = (lambda v: _number(v) and v > 0, "a positive number of seconds")
_SECONDS_OR_NULL: Check = (lambda v: v is None or (_number(v) and v > 0), "a positive number of seconds, or null")
_MB_OR_NULL: Check = (lambda v: v is None or (_whole(v) and v > 0), "a positive whole number of MB, or null")
_NAMES: Check = (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings")
_TEXTS: Check = (
    lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "a mapping of names to texts",
)
_RANGE: Check = (lambda v: isinstance(v, list) and len(v) == 2 and all(map(_number, v)), "a list of two numbers")
_TEXT_KEYS = {"template": _STR, "template_file": _STR, "system_instruction": _STR, "system_instruction_file": _STR}
_JUDGED = {**_TEXT_KEYS, "criteria": _TEXTS, "rating_rubric": _TEXTS, "max_tokens": _POSITIVE_INT, "name": _STR}
_TYPES: dict[str, dict[str, Check]] = {
    "spec": {k: _STR for k in ("input", "model", "base_url", "api_key_env", "title", "out", "report")},
    "judge": {
        "concurrency": _POSITIVE_INT,
        "cache": _STR,
        "samples": _POSITIVE_INT,
        "timeout": _SECONDS,
        "max_retries": _COUNT,
        "price_in": _PRICE,
        "price_out": _PRICE,
        "budget_usd": _PRICE,
    },
    "metric": {"metric": _STR, "name": _STR},
    "custom": {
        "custom": _STR,
        "name": _STR,
        "batch": _BOOL,
        "outputs": _NAMES,
        "columns": _NAMES,
        "isolation": _STR,
        "timeout": _SECONDS_OR_NULL,
        "memory_mb": _MB_OR_NULL,
        "network": _BOOL,
        "env": _NAMES,
        "read": _NAMES,
        "workers": _POSITIVE_INT,
        "higher_is_better": _BOOL,
    },
    "pointwise": {
        **_JUDGED,
        "pointwise": _STR,
        "score_range": _RANGE,
        "labels": _NAMES,
        "passing": _NAMES,
        "threshold": _NUMBER,
        "pass_when": _STR,
        "examples": (lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v), "a list of mappings"),
        "guidelines": _STR,
        "spec_version": _POSITIVE_INT,
        "spec_hash": _STR,
        "aligned": (lambda v: isinstance(v, dict), "a mapping"),
    },
    "pairwise": {**_JUDGED, "pairwise": _STR, "flip": _STR, "allow_tie": _BOOL},
    "predefined": {**_JUDGED, "predefined": _STR, "threshold": _NUMBER},
    "rag": {
        "rag": _STR,
        "name": _STR,
        "threshold": _NUMBER,
        "max_tokens": _POSITIVE_INT,
        "context": _STR,
        "use": _STR,
        "epsilon": _NUMBER,
        "strictness": _POSITIVE_INT,
        "embeddings": _STR,
        "embeddings_base_url": _STR,
        "embeddings_api_key_env": _STR,
        "embeddings_dimensions": _POSITIVE_INT,
        "pattern": _STR,
    },
    "embedding": {
        "embedding": _STR,
        "name": _STR,
        "threshold": _NUMBER,
        "embeddings": _STR,
        "embeddings_base_url": _STR,
        "embeddings_api_key_env": _STR,
        "embeddings_dimensions": _POSITIVE_INT,
        "batch_size": _POSITIVE_INT,
    },
}


def _check_types(entry: Mapping[str, Any], kind: str, what: str) -> None:
    """Every known key of ``entry`` holds a value of its type; the first that does not is an
    error naming the key (YAML, JSON and TOML each have booleans and numbers: a quoted one is a
    string, and a string where a boolean belongs would be truthy)."""
    for key, (ok, expected) in _TYPES[kind].items():
        if key in entry and not ok(entry[key]):
            raise ValueError(f"{what}: {key} must be {expected}, got {describe_value(entry[key])}")


def _texts(entry: Mapping[str, Any], base: Path | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("template", "system_instruction"):
        file_key = f"{key}_file"
        if key in entry and file_key in entry:
            raise ValueError(f"give {key} or {file_key}, not both")
        if file_key in entry:
            out[key] = read_text_option("@" + str(entry[file_key]), base)
        elif key in entry:
            out[key] = read_text_option(entry[key], base)
    return out


def _rag_options(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A ``rag:`` entry's options as the metric's keywords (``context`` is the column of the
    chunks; ``embeddings*`` build the embedding model)."""
    options = {k: v for k, v in entry.items() if k not in ("rag", "context")}
    if "context" in entry:
        options["context_field"] = entry["context"]
    return options


def metric_from_dict(entry: Mapping[str, Any], base: Path | None = None) -> Any:
    """One ``metrics:`` entry of a spec as a metric object (see the module docstring)."""
    from respeval.evaluate.plan import Computed

    kinds = [k for k in ("metric", "custom", "pointwise", "pairwise", "predefined", "rag", "embedding") if k in entry]
    if len(kinds) != 1:
        raise ValueError(
            f"metric entry {dict(entry)!r}: name exactly one of metric:, custom:, pointwise:, pairwise:, predefined:, "
            "rag:, embedding:"
        )
    kind = kinds[0]
    what = f"metric entry {entry[kind]!r}"
    _check_types(entry, kind, what)
    try:
        if kind == "metric":
            options = {k: v for k, v in entry.items() if k not in ("metric", "name")}
            if isinstance(options.get("schema"), str) and base is not None:
                schema_path = Path(options["schema"])
                options["schema"] = str(schema_path if schema_path.is_absolute() else base / schema_path)
            return Computed(entry["metric"], entry.get("name"), **options)
        if kind == "custom":
            _check_keys(entry, _CUSTOM_KEYS, what)
            target, at_version = split_version(str(entry["custom"]))
            if base is not None and ".py:" in target and not Path(target.split(":")[0]).is_absolute():
                target = str(base / target)
            fn = load_function(target)
            name = entry.get("name") or target.rpartition(":")[2].split(".")[-1]
            options = {k: v for k, v in entry.items() if k not in ("custom", "name")}
            if at_version is not None:
                if "version" in options:
                    raise ValueError(f"{what}: give the version as @VERSION or version:, not both")
                options["version"] = at_version
            if isinstance(options.get("version"), (int, float)) and not isinstance(options["version"], bool):
                options["version"] = str(options["version"])  # version: 2 in YAML/TOML is a number
            if base is not None and "read" in options:  # paths the workers may read, relative to the spec
                options["read"] = [str(base / r) for r in options["read"]]
            return CustomMetric(name, fn, **options)
        if kind == "pointwise":
            _check_keys(entry, _POINTWISE_KEYS, what)
            options = {k: v for k, v in entry.items() if k not in _POINTWISE_KEYS[:5] and k not in _FROZEN_KEYS}
            if "spec_hash" in entry:
                found = judge_spec_hash(entry)
                if entry["spec_hash"] != found:
                    raise ValueError(
                        f"{what}: spec_hash {entry['spec_hash']} does not match its content (hash {found}): the frozen "
                        "judge was edited; re-run respeval align, or delete spec_hash to use it as a new judge"
                    )
                options["spec_hash"] = found
            if "score_range" in options:
                options["score_range"] = tuple(options["score_range"])
            return PointwiseMetric(str(entry["pointwise"]), **_texts(entry, base), **options)
        if kind == "pairwise":
            _check_keys(entry, _PAIRWISE_KEYS, what)
            options = {k: v for k, v in entry.items() if k not in _PAIRWISE_KEYS[:5]}
            return PairwiseMetric(str(entry["pairwise"]), **_texts(entry, base), **options)
        if kind == "rag":
            _check_keys(entry, _RAG_KEYS, what)
            return multi_step(str(entry["rag"]), **_rag_options(entry))
        if kind == "embedding":
            _check_keys(entry, _EMBEDDING_KEYS, what)
            return multi_step(str(entry["embedding"]), **{k: v for k, v in entry.items() if k != "embedding"})
        _check_keys(entry, _PREDEFINED_KEYS, what)
        texts = _texts(entry, base)
        options = {k: v for k, v in entry.items() if k in ("threshold", "max_tokens")}
        return predefined(
            str(entry["predefined"]),
            alias=entry.get("name"),
            system_instruction=texts.get("system_instruction"),
            **options,
        )
    except TypeError as exc:
        raise ValueError(f"{what}: {exc}") from None


def read_spec_file(path: str | Path) -> Any:
    """The data of a spec file (``.yaml``/``.yml``, ``.json`` or ``.toml``), as parsed; raises
    ValueError naming the file when it cannot be read or parsed."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the spec {p}: {exc.strerror or exc}") from exc
    suffix = p.suffix.lower()
    if suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ValueError(
                f"{p}: YAML specs need PyYAML (pip install 'respeval[evaluate]'), or write the spec as JSON"
            ) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"{p}: not valid YAML: {exc}") from None
    elif suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{p}: not valid JSON: {exc}") from None
    elif suffix == ".toml":
        import importlib

        try:  # the standard library from Python 3.11; its backport before
            toml: Any = importlib.import_module("tomllib")
        except ModuleNotFoundError:
            try:
                toml = importlib.import_module("tomli")
            except ModuleNotFoundError:
                raise ValueError(f"{p}: TOML specs need Python 3.11+ or `pip install tomli`") from None
        try:
            data = toml.loads(text)
        except toml.TOMLDecodeError as exc:
            raise ValueError(f"{p}: not valid TOML: {exc}") from None
    else:
        raise ValueError(f"{p}: a spec is .yaml, .yml, .json or .toml")
    return data


def load_spec(path: str | Path, *, sections: tuple[str, ...] = ()) -> dict[str, Any]:
    """A spec file (``.yaml``/``.yml``, ``.json`` or ``.toml``) as a dict whose ``metrics`` are
    metric objects; relative file names in it are read relative to the spec's folder.
    ``sections``: more top-level keys the caller reads itself (``respeval monitor``'s
    ``monitor:``), returned as written; any other unknown key is an error."""
    p = Path(path)
    data = read_spec_file(p)
    if not isinstance(data, dict):
        raise ValueError(f"{p}: a spec is a mapping with a 'metrics' list")
    _check_keys(data, SPEC_KEYS + tuple(sections), str(p))
    _check_types(data, "spec", str(p))
    if not isinstance(data.get("metrics"), list) or not data["metrics"]:
        raise ValueError(f"{p}: 'metrics' must be a non-empty list")
    columns = data.get("columns") or {}
    if not isinstance(columns, dict):
        raise ValueError(f"{p}: 'columns' must be a mapping")
    _check_keys(columns, COLUMN_KEYS, f"{p}: columns")
    for key, value in columns.items():
        if not isinstance(value, str):
            raise ValueError(f"{p}: columns: {key} must be a column name (a string), got {describe_value(value)}")
    judge = data.get("judge") or {}
    if not isinstance(judge, dict):
        raise ValueError(f"{p}: 'judge' must be a mapping")
    _check_keys(judge, JUDGE_KEYS, f"{p}: judge")
    _check_types(judge, "judge", f"{p}: judge")
    base = p.parent
    metrics = []
    for i, item in enumerate(data["metrics"]):
        if not isinstance(item, (dict, str)):
            raise ValueError(f"{p}: metrics[{i}]: a metric is a name or a mapping, got {describe_value(item)}")
        try:
            metrics.append(metric_from_dict(item, base) if isinstance(item, dict) else item)
        except ValueError as exc:
            raise ValueError(f"{p}: metrics[{i}]: {exc}") from None
    out = dict(data)
    out["metrics"] = metrics
    if isinstance(out.get("input"), str) and not Path(out["input"]).is_absolute():
        out["input"] = str(base / out["input"])
    if isinstance(judge.get("cache"), str) and not Path(judge["cache"]).is_absolute():
        judge = {**judge, "cache": str(base / judge["cache"])}
    out["judge"] = judge
    out["columns"] = columns
    return out
