"""The judge options every judging command shares (``judge``, ``gate``, ``evaluate``,
``agent``): :func:`add_judge_arguments` adds them, :meth:`JudgeConfig.from_args` reads them
back as typed objects (the model, :class:`~respeval.judge.EngineOptions`, the cache path,
:class:`~respeval.judge.batch.BatchOptions`), with one set of defaults (the library's) and
one set of checks.  The argparse Namespace stops here: what the commands hand to the library
is a :class:`JudgeConfig`'s parts.

``prefix`` spells them ``--PREFIX-...``; no command does any more (``agent``'s old
``--judge-*`` spellings are hidden aliases: :mod:`respeval.cli.vocabulary`).  ``evaluate`` reads its spec file's ``model:`` and ``judge:`` keys
under the options: an option given on the command line wins, then the spec, then the default.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from respeval.cli.batching import add_batch_arguments, batch_options
from respeval.cli.common import (
    advanced,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    unit_interval,
)
from respeval.errors import RespevalError
from respeval.judge.batch import BatchOptions
from respeval.judge.engine import EngineOptions
from respeval.judge.limits import Budget, Price
from respeval.judge.models.base import JudgeModel

__all__ = [
    "GROUPS",
    "STRUCTURED_CHOICES",
    "InputFileError",
    "JudgeConfig",
    "add_judge_arguments",
]

GROUPS = ("model", "verdict", "engine", "cache", "budget", "batch")
"""The option groups: the model and how to reach it; the verdict's threshold, reply limit and
seed; the engine (concurrency, retries, timeouts, rate limits, re-asks); the cache
(``--cache``, ``--no-cache``, ``--replay-only``); the budget and prices; provider batches."""

STRUCTURED_CHOICES = ("response_format", "guided_json", "structured_outputs", "detect", "tool", "none")
DEFAULTS = EngineOptions()
DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_TOKENS = 512


_GROUP_OPTIONS = {
    "model": ("base-url", "api-key-env", "no-json-schema", "structured"),
    "verdict": ("threshold", "max-tokens", "seed"),
    "engine": ("concurrency", "max-retries", "timeout", "rpm", "tpm", "backoff-base", "backoff-max", "no-reask"),
    "cache": ("cache", "no-cache", "replay-only"),
    "budget": ("budget-usd", "budget-calls", "budget-tokens", "price-in", "price-out"),
}


class InputFileError(RespevalError, ValueError):
    """Bad input or options: the message says which and what to do (exit status 1)."""


def _names(prefix: str) -> tuple[Any, Any]:
    def flag(name: str) -> str:
        return f"--{prefix}-{name}" if prefix else f"--{name}"

    def dest(name: str) -> str:
        return f"{prefix}_{name}".replace("-", "_") if prefix else name.replace("-", "_")

    return flag, dest


def add_judge_arguments(
    parser: argparse.ArgumentParser,
    *,
    prefix: str = "",
    groups: Collection[str] = GROUPS,
    no_cache: bool = True,
    default_cache: str = "none",
    title: str = "judge",
) -> None:
    """Add the judge options of ``groups`` to ``parser`` (each group its own section of
    ``--help``); ``prefix`` names them ``--PREFIX-...`` and the model ``--PREFIX``.
    ``no_cache``: offer ``--no-cache``; ``default_cache``: what ``--help`` says the cache is
    without ``--cache``.  Every default is None here, so that a command can tell an option
    given from one left out; :meth:`JudgeConfig.from_args` fills in the library's defaults."""
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise ValueError(f"unknown judge option group(s) {sorted(unknown)}")
    flag, _ = _names(prefix)
    model_flag = f"--{prefix}" if prefix else "--model"
    if "model" in groups:
        g = parser.add_argument_group(f"{title}: model")
        g.add_argument(
            model_flag,
            metavar="SPEC",
            help="judge model: openai:MODEL, anthropic:MODEL, python:module:function or fake:...",
        )
        g.add_argument(
            flag("base-url"),
            metavar="URL",
            help="API root for openai:/anthropic: models, e.g. http://localhost:8000/v1",
        )
        g.add_argument(
            flag("api-key-env"),
            metavar="NAME",
            help="environment variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)",
        )
        g.add_argument(
            flag("no-json-schema"),
            action="store_true",
            help="do not send response_format (servers without structured output)",
        )
        g.add_argument(
            flag("structured"),
            choices=STRUCTURED_CHOICES,
            default=None,
            help="how the verdict schema is sent: openai: response_format (default), guided_json or structured_outputs "
            "(vLLM), detect (ask the server); anthropic: tool (default: a forced tool call); none: prompt only",
        )
    if "verdict" in groups:
        g = parser.add_argument_group(f"{title}: verdict")
        g.add_argument(
            flag("threshold"),
            metavar="T",
            type=unit_interval,
            default=None,
            help=f"a row passes when the judge says pass and score >= T (default {DEFAULT_THRESHOLD})",
        )
        g.add_argument(
            flag("max-tokens"),
            metavar="N",
            type=positive_int,
            default=None,
            help=f"reply limit per call (default {DEFAULT_MAX_TOKENS})",
        )
        g.add_argument(
            flag("seed"), metavar="N", type=int, default=None, help="sampling seed, for models that support one"
        )
    if "engine" in groups:
        g = advanced(parser.add_argument_group(f"{title}: engine"))
        g.add_argument(
            flag("concurrency"),
            metavar="N",
            type=positive_int,
            default=None,
            help=f"calls in flight (default {DEFAULTS.concurrency})",
        )
        g.add_argument(
            flag("max-retries"),
            metavar="N",
            type=non_negative_int,
            default=None,
            help=f"retries per call on 429/5xx/timeouts/connection errors (default {DEFAULTS.max_retries})",
        )
        g.add_argument(
            flag("timeout"),
            metavar="S",
            type=positive_float,
            default=None,
            help=f"seconds per call (default {DEFAULTS.timeout:g})",
        )
        g.add_argument(flag("rpm"), metavar="N", type=positive_float, default=None, help="max requests per minute")
        g.add_argument(flag("tpm"), metavar="N", type=positive_float, default=None, help="max tokens per minute")
        g.add_argument(
            flag("backoff-base"),
            metavar="S",
            type=non_negative_float,
            default=None,
            help=f"first retry delay in seconds, doubled per retry, with jitter (default {DEFAULTS.backoff_base:g})",
        )
        g.add_argument(
            flag("backoff-max"),
            metavar="S",
            type=non_negative_float,
            default=None,
            help=f"longest retry delay in seconds (default {DEFAULTS.backoff_max:g}); Retry-After is honoured",
        )
        g.add_argument(flag("no-reask"), action="store_true", help="do not re-ask once when a reply cannot be parsed")
    if "cache" in groups:
        g = parser.add_argument_group(f"{title}: cache")
        g.add_argument(flag("cache"), metavar="FILE", help=f"answer cache, SQLite (default: {default_cache})")
        if no_cache:
            g.add_argument(flag("no-cache"), action="store_true", help="do not cache answers (no resuming)")
        g.add_argument(
            flag("replay-only"),
            action="store_true",
            help="answer from the cache only; stop with an error on a miss (for CI)",
        )
    if "budget" in groups:
        g = advanced(parser.add_argument_group(f"{title}: budget and prices"))
        g.add_argument(
            flag("budget-usd"),
            metavar="USD",
            type=non_negative_float,
            default=None,
            help=f"stop once this much is spent (needs {flag('price-in')}/{flag('price-out')})",
        )
        g.add_argument(
            flag("budget-calls"), metavar="N", type=non_negative_int, default=None, help="stop after this many calls"
        )
        g.add_argument(
            flag("budget-tokens"),
            metavar="N",
            type=non_negative_int,
            default=None,
            help="stop once this many tokens (in + out) are used",
        )
        g.add_argument(
            flag("price-in"), type=non_negative_float, default=None, metavar="USD", help="USD per million input tokens"
        )
        g.add_argument(
            flag("price-out"),
            type=non_negative_float,
            default=None,
            metavar="USD",
            help="USD per million output tokens",
        )
    if "batch" in groups:
        if prefix:
            raise ValueError("the --batch options have no prefixed form")
        add_batch_arguments(parser)
    # what was added, for from_args: a command's own option may share a name (evaluate's --seed)
    parser.set_defaults(**{_groups_dest(prefix): tuple(groups)})


def _groups_dest(prefix: str) -> str:
    return f"judge_option_groups_{prefix or 'plain'}"


@dataclass(frozen=True)
class JudgeConfig:
    """What a command's judge options say, typed (see the module docstring).

    Attributes:
        model: the judge model, loaded (None: no model given).
        model_spec: the model string it was loaded from.
        engine: the engine's options (concurrency, retries, timeouts, budget, prices, ...).
        cache: the answer cache's path (None: no cache).
        batch: batch mode's options (None: no ``--batch``).
        threshold, max_tokens, seed: the verdict options (their defaults without that group).
    """

    model: JudgeModel | None = None
    model_spec: str | None = None
    engine: EngineOptions = DEFAULTS
    cache: str | None = None
    batch: BatchOptions | None = None
    threshold: float = DEFAULT_THRESHOLD
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None

    @classmethod
    def from_args(
        cls,
        args: argparse.Namespace,
        *,
        prefix: str = "",
        out: str | None = None,
        cache_beside_out: bool = False,
        spec: Mapping[str, Any] | None = None,
    ) -> JudgeConfig:
        """The config the parsed options ask for.  ``cache_beside_out``: without ``--cache``
        the cache is ``OUT.cache.sqlite`` beside ``out`` (else: none).  ``spec``: an
        evaluate spec file's ``model``/``base_url``/``api_key_env`` and ``judge`` keys, read
        under the options.  Raises :class:`InputFileError` on contradictory options."""
        flag, dest = _names(prefix)
        model_dest = prefix or "model"
        spec = spec or {}
        from_spec = dict(spec.get("judge") or {})

        groups = getattr(args, _groups_dest(prefix), None)
        if groups is None:
            raise ValueError(f"the parser has no judge options{f' with prefix {prefix!r}' if prefix else ''}")
        added = {name for group in groups for name in _GROUP_OPTIONS.get(group, ())}

        def given(name: str, spec_key: str | None = None) -> Any:
            value = getattr(args, dest(name), None) if name in added else None
            if value is None and spec_key is not None:
                value = from_spec.get(spec_key)
            return value

        engine = _engine_options(given, flag, batch="batch" in groups and bool(args.batch), spec=from_spec)
        cache = _cache_path(
            given("cache", "cache"),
            no_cache=bool(given("no-cache")),
            replay_only=engine.replay_only,
            default=f"{out}.cache.sqlite" if cache_beside_out and out else None,
            beside_out=cache_beside_out,
            flag=flag,
        )
        spec_model = (getattr(args, model_dest, None) if "model" in groups else None) or spec.get("model")
        model = None
        if isinstance(spec_model, str):
            from respeval.judge.specs import load_model

            model = load_model(
                spec_model,
                base_url=given("base-url") or spec.get("base_url"),
                api_key_env=given("api-key-env") or spec.get("api_key_env"),
                json_schema=not given("no-json-schema"),
                structured=given("structured"),
                timeout=engine.timeout,
            )
        batch = batch_options(args, model) if "batch" in groups else None
        if batch is not None and cache is None:
            where = "a cache (--cache FILE, or --out)" if cache_beside_out else "--cache FILE"
            raise InputFileError(
                f"--batch needs {where}: batch answers and batch state are kept there, so a rerun resumes"
            )
        threshold = given("threshold")
        max_tokens = given("max-tokens")
        return cls(
            model=model,
            model_spec=spec_model if isinstance(spec_model, str) else None,
            engine=engine,
            cache=cache,
            batch=batch,
            threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
            max_tokens=DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
            seed=given("seed"),
        )

    def with_engine(self, **changes: Any) -> JudgeConfig:
        """This config with some engine options changed."""
        return dataclasses.replace(self, engine=dataclasses.replace(self.engine, **changes))


def _engine_options(given: Any, flag: Any, *, batch: bool, spec: Mapping[str, Any]) -> EngineOptions:
    if ("price_in" in spec) != ("price_out" in spec):
        raise InputFileError("judge: give both price_in and price_out (USD per million tokens)")
    price_in, price_out = given("price-in", "price_in"), given("price-out", "price_out")
    prices = None
    if price_in is not None or price_out is not None:
        if price_in is None or price_out is None:
            raise InputFileError(f"give both {flag('price-in')} and {flag('price-out')} (USD per million tokens)")
        prices = Price(float(price_in), float(price_out))
    budget_usd = given("budget-usd", "budget_usd")
    if budget_usd is not None and prices is None and not batch:
        raise InputFileError(
            f"{flag('budget-usd')} needs {flag('price-in')} and {flag('price-out')} (USD per million tokens)"
        )
    seed = given("seed")
    values: dict[str, Any] = {
        "concurrency": given("concurrency", "concurrency"),
        "max_retries": given("max-retries", "max_retries"),
        "timeout": given("timeout", "timeout"),
        "backoff_base": given("backoff-base"),
        "backoff_max": given("backoff-max"),
        "requests_per_minute": given("rpm"),
        "tokens_per_minute": given("tpm"),
    }
    options = {k: v for k, v in values.items() if v is not None}
    try:
        return EngineOptions(
            **options,
            budget=Budget(
                max_calls=given("budget-calls"),
                max_tokens=given("budget-tokens"),
                max_cost=None if budget_usd is None else float(budget_usd),
            ),
            prices=prices,
            reask=not given("no-reask"),
            replay_only=bool(given("replay-only")),
            seed=seed or 0,
        )
    except (TypeError, ValueError) as exc:  # a spec file's value of the wrong kind
        raise InputFileError(f"judge options: {exc}") from None


def _cache_path(
    path: str | None, *, no_cache: bool, replay_only: bool, default: str | None, beside_out: bool, flag: Any
) -> str | None:
    if no_cache:
        if path or replay_only:
            raise InputFileError(f"{flag('no-cache')} contradicts {flag('cache')}/{flag('replay-only')}")
        return None
    path = path or default
    if replay_only:
        if path is None:
            raise InputFileError(
                f"{flag('replay-only')} needs {flag('cache')} FILE"
                + (" (or --out, whose default cache it reads)" if beside_out else "")
            )
        if not os.path.exists(path):
            raise InputFileError(f"{flag('replay-only')}: no cache at {path}")
    return os.fspath(path) if path is not None else None


def prompt_inputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """The prompt files a run reads (``--template FILE``, ``--system-instruction @FILE``), for
    the input/output guard."""
    instruction = getattr(args, "system_instruction", None)
    return [
        ("--template", getattr(args, "template", None)),
        (
            "--system-instruction",
            instruction[1:] if isinstance(instruction, str) and instruction.startswith("@") else None,
        ),
    ]
