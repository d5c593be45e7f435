"""Continuous evaluation of live traffic: ``respeval monitor``.

A monitor reads a growing source of traces (a directory of OTLP JSON files, files a
collector appends to; :mod:`respeval.traces` reads them), puts each trace in a time window
by its start, and when a window closes scores a seeded sample of it: the escalation gate
(exact -> lexical -> judge, :mod:`respeval.gate`) against references, so that most rows need
no judge call, within a judge budget per window, and the metrics of an evaluate spec
(:mod:`respeval.evaluate`), each with its interval.  Each window is then tested against the
reference windows (a two-proportion test for pass rates, a bootstrap for means; alpha
spending over the windows holds the false-alarm rate over all of them, see
:mod:`respeval.monitor.drift`).  Everything is kept in one SQLite store, the checkpoint
included, so a trace is scored once and none is skipped across restarts and kills.

::

    from respeval.monitor import Monitor, MonitorConfig, References, monitor

    config = MonitorConfig(window=3600, sampling=Sampling(rate=0.1, seed=7),
                           references=References("refs.jsonl"), judge_budget=100)
    report = monitor(["otel/"], "monitor.sqlite", config, metrics=["rougeL"])
    report.regressed                    # the windows scored now that regressed
    trend_summary("monitor.sqlite")     # the metrics over windows, as a run summary
"""

from respeval.monitor.config import MonitorConfig, References, config_from_spec, parse_duration
from respeval.monitor.drift import DriftTest, MetricValues, WindowDrift, check_window, drift_series
from respeval.monitor.report import format_trend, trend_summary
from respeval.monitor.run import Monitor, MonitorReport, monitor
from respeval.monitor.score import Judge
from respeval.monitor.store import Store, StoreError

__all__ = [
    "DriftTest",
    "Judge",
    "MetricValues",
    "Monitor",
    "MonitorConfig",
    "MonitorReport",
    "References",
    "Store",
    "StoreError",
    "WindowDrift",
    "check_window",
    "config_from_spec",
    "drift_series",
    "format_trend",
    "monitor",
    "parse_duration",
    "trend_summary",
]
