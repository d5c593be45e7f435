"""The metric registry: every metric name respeval knows, and the family that computes it.

The CLI (``--metric``), the bulk pipeline, the gate, Dask and ``respeval.evaluate`` all
resolve names here.  A family module declares its metrics in a module-level ``METRICS``
tuple of ``MetricSpec``; ``respeval.metrics.FAMILY_MODULES`` lists the modules.  Adding a
metric is one module and one line there.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.errors import RespevalError
from respeval.metrics.base import INPUT_KINDS, MetricFamily

# Two facts about a score every report and comparison needs: which metrics are better low
# (a positive TER difference is a regression), and which corpus values come from summed
# statistics rather than a mean of row scores (corpus BLEU is not the mean of sentence BLEU).
LOWER_IS_BETTER = frozenset({"ter"})
CORPUS_LEVEL = frozenset({"bleu", "chrf", "chrf++", "ter"})


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` (a name or a score field: ``ter``, ``rouge2_f``) is better."""
    return metric not in LOWER_IS_BETTER


def corpus_level(metric: str) -> bool:
    """Whether ``metric``'s corpus value comes from summed statistics (BLEU, chrF, TER), not a mean."""
    return metric in CORPUS_LEVEL


@dataclass(frozen=True)
class MetricOptions:
    """Options shared by every family; a family takes what applies to it.

    ``params`` holds family-specific options by metric name or family name, e.g.
    ``{"trajectory_single_tool_use": {"tool_name": "search"}}`` or ``{"bleu": {"tokenizer": "intl"}}``.
    """

    tokenizer: str = "rouge"
    stemmer: bool = False
    threads: int | None = None
    implementation: str | None = None
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def for_family(self, *keys: str) -> dict[str, Any]:
        """The family-specific options given under any of ``keys`` (later keys win)."""
        out: dict[str, Any] = {}
        for key in keys:
            out.update(self.params.get(key, {}))
        return out


# A builder gets the requested names of its family (in request order) and the options.
FamilyBuilder = Callable[[Sequence[str], MetricOptions], MetricFamily]


@dataclass(frozen=True)
class MetricSpec:
    """One metric name: what it is and how to build the family that computes it.

    Names with the same ``family`` are computed by one family instance (e.g. rouge1,
    rouge2 and rougeL share one tokenization and one kernel pass).
    """

    name: str
    family: str
    help: str
    build: FamilyBuilder
    inputs: str = "text"
    reference: bool = True  # whether the metric needs a reference field
    # the options the metric takes (``--metric-option NAME.KEY=VALUE``, a spec's entry
    # options): option -> what it does; anything else is refused, naming these
    options: Mapping[str, str] = field(default_factory=dict)
    # an option's old spelling -> its name now (still taken, the family warns once)
    renamed_options: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.inputs not in INPUT_KINDS:
            raise ValueError(f"{self.name}: inputs must be one of {INPUT_KINDS}, not {self.inputs!r}")


class UnknownMetricError(RespevalError, ValueError):
    """A metric name the registry does not know."""


class UnknownOptionError(RespevalError, ValueError, TypeError):
    """An option a metric does not take (the message names the ones it does); a TypeError
    too, as the unexpected keyword it stands for."""


class Registry:
    """Name -> ``MetricSpec``, filled lazily from the family modules."""

    def __init__(self, modules: Sequence[str]) -> None:
        self._modules = tuple(modules)
        self._specs: dict[str, MetricSpec] = {}
        self._loaded = 0  # the modules imported so far, in order

    def _load(self, wanted: Iterable[object] | None = None) -> dict[str, MetricSpec]:
        """The specs, the family modules imported in order until every name of ``wanted`` is
        known (all of them for None, or for a name no module has): a command that scores
        ROUGE imports the ROUGE family alone."""
        missing = None if wanted is None else set(wanted)
        while self._loaded < len(self._modules) and (missing is None or not missing <= self._specs.keys()):
            module = self._modules[self._loaded]
            for spec in importlib.import_module(module).METRICS:
                if spec.name in self._specs:
                    raise RuntimeError(f"metric {spec.name!r} is registered twice ({module})")
                self._specs[spec.name] = spec
            self._loaded += 1
        return self._specs

    def register(self, spec: MetricSpec, *, replace: bool = False) -> None:
        """Add a metric at run time (plug-ins, user code)."""
        specs = self._load()
        if spec.name in specs and not replace:
            raise ValueError(f"metric {spec.name!r} is already registered (pass replace=True to override it)")
        specs[spec.name] = spec

    def names(self) -> list[str]:
        return list(self._load())

    def __contains__(self, name: object) -> bool:
        return name in self._load([name])

    def __getitem__(self, name: str) -> MetricSpec:
        specs = self._load([name])
        try:
            return specs[name]
        except KeyError:
            raise UnknownMetricError(f"unknown metric {name!r}; available: {', '.join(specs)}") from None

    def specs(self) -> list[MetricSpec]:
        return list(self._load().values())

    def check_options(self, key: str, given: Mapping[str, Any]) -> None:
        """Refuse an option the metric (or every metric of the family) ``key`` does not take,
        naming those it does: the one check, for the CLI's ``--metric-option`` and a spec's
        entry options alike."""
        specs = self._load([key])
        own = [specs[key]] if key in specs else [s for s in specs.values() if s.family == key]
        if not own:
            raise UnknownMetricError(f"unknown metric {key!r}; available: {', '.join(specs)}")
        allowed = list(dict.fromkeys(o for s in own for o in s.options))
        renamed = {old for s in own for old in s.renamed_options}
        unknown = [k for k in given if k not in allowed and k not in renamed]
        if unknown:
            bad = ", ".join(f"{key}.{k}" for k in unknown)
            takes = f"{key} takes: {', '.join(allowed)}" if allowed else f"{key} takes no options"
            raise UnknownOptionError(f"unknown metric option {bad}; {takes} (respeval metrics lists them)")

    def build_families(self, names: Sequence[str], options: MetricOptions | None = None) -> list[MetricFamily]:
        """Metric names -> families, one per family key, in the order first requested."""
        options = options or MetricOptions()
        names = list(names)
        if not names:
            raise ValueError("no metric given")
        specs = self._load(names)
        unknown = [n for n in names if n not in specs]
        if unknown:
            raise UnknownMetricError(f"unknown metric(s) {', '.join(unknown)}; available: {', '.join(specs)}")
        for key, given in options.params.items():
            self.check_options(key, given)
        seen = set()
        for n in names:
            if n in seen:
                raise ValueError(f"metric {n!r} is named twice in {names}")
            seen.add(n)
        groups: dict[str, list[str]] = {}
        for n in names:
            groups.setdefault(specs[n].family, []).append(n)
        return [specs[group[0]].build(group, options) for group in groups.values()]

    def describe(self, width: int = 100, *, options: bool = False) -> str:
        """One line per metric (for ``--help`` and ``respeval metrics``); with ``options``,
        one more line per option it takes."""
        specs = list(self._load().values())
        pad = max(len(s.name) for s in specs) + 2
        lines = []
        for i, s in enumerate(specs):
            lines.append(f"  {s.name.ljust(pad)}{s.help}"[:width])
            last_of_family = i + 1 == len(specs) or specs[i + 1].family != s.family
            if options and s.options and last_of_family:  # once per family: its metrics share them
                lines.append(f"  {'':{pad}}options: {', '.join(s.options)}")
        return "\n".join(lines)
