"""Metric families and the one registry of metric names.

To add a metric: write ``respeval/metrics/<family>.py`` with a family class (see
``base.MetricFamily``) and a ``METRICS`` tuple of ``registry.MetricSpec``, then add the
module's name to ``FAMILY_MODULES`` below.  The CLI, the bulk pipeline, the gate, Dask and
``respeval.evaluate`` pick it up from here.
"""

from respeval.metrics.base import ChunkScores, MetricFamily, MetricResult, RowValueError
from respeval.metrics.registry import MetricOptions, MetricSpec, Registry, UnknownMetricError, UnknownOptionError
from respeval.stats.intervals import Interval

FAMILY_MODULES = (
    "respeval.metrics.rouge",
    "respeval.metrics.bleu",
    "respeval.metrics.chrf",
    "respeval.metrics.ter",
    "respeval.metrics.match",
    "respeval.metrics.trajectory",
    "respeval.metrics.tool_correctness",
    "respeval.metrics.checks",
)

REGISTRY = Registry(FAMILY_MODULES)


def build_families(names, options: MetricOptions | None = None) -> list[MetricFamily]:
    """Metric names -> the families that compute them (names of one family share one instance)."""
    return REGISTRY.build_families(names, options)


def metric_names() -> list[str]:
    return REGISTRY.names()


__all__ = [
    "FAMILY_MODULES",
    "REGISTRY",
    "ChunkScores",
    "Interval",
    "MetricFamily",
    "MetricOptions",
    "MetricResult",
    "MetricSpec",
    "Registry",
    "RowValueError",
    "UnknownMetricError",
    "UnknownOptionError",
    "build_families",
    "metric_names",
]
