"""respeval: evaluate LLM and agent systems: exact lexical metrics (the numbers of rouge-score,
sacreBLEU and the SQuAD scripts) from a native core, an LLM judge, agents, run/compare, traces.

Where to start (each is also a command: ``respeval COMMAND --help``)::

    score, metrics  respeval.rouge / bleu / chrf / ter / exact_match / squad(preds, refs);
                    respeval.score_files(...) and score_table(...) over files and tables
    judge           respeval.judge: an LLM judge (pointwise, pairwise, rubrics), cached, budgeted
    evaluate        respeval.evaluate(dataset, metrics, model=...): metrics and judge over a table
    run, compare    respeval.run(data, systems, ...) then respeval.compare(responses, ...): a decision
    agents          respeval.agents and respeval.trajectory(...): ADK-compatible agent metrics
    traces, monitor respeval dataset from-traces / respeval monitor (the CLI): traces to cases, drift
    view            respeval view RUN...: a local viewer over any run's outputs (the CLI)

Metrics::

    respeval.rouge(predictions, references, ("rouge1", "rougeL"))   # RougeResult
    respeval.bleu(hypotheses, references).score                     # corpus BLEU
    respeval.chrf(...), respeval.ter(...), respeval.exact_match(...)
    respeval.squad(predictions, gold_answer_lists).f1                # 0-100

Every result has ``columns``, ``res[name]``, ``corpus_scores()``, ``mean()``,
``bootstrap()``, ``to_arrow()`` and ``signature``.  Files and tables::

    respeval.score_files("preds.jsonl", out="rows.parquet")
    respeval.score_table(arrow_table, metrics=["rouge1", "bleu"])

Systems under test (models, agent endpoints, functions) over a dataset, then baseline
against candidate, with paired statistics and a decision::

    respeval.run("questions.jsonl", {"baseline": "openai:gpt-4o-mini", "candidate": "openai:gpt-4.1-mini"},
                 templates="Q: {question}", out="responses.jsonl")

    respeval.compare("responses.jsonl", baseline="baseline", candidate="candidate",
                     metrics=["exact_match", "rouge1"], ref_field="expected").decision

A judge aligned with human labels (few-shot examples chosen on a train split, held-out numbers
before and after, the chosen judge frozen)::

    respeval.align("labelled.jsonl", "judge.json", "openai:gpt-4o-mini", out="judge.aligned.json")

Each metric family (``respeval.rouge``, ``respeval.bleu``, ...), the judge layer (``respeval.judge``),
``respeval.run``, ``respeval.compare`` and ``respeval.align`` are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from respeval._version import __version__
from respeval.metrics import REGISTRY, Interval, MetricFamily, MetricOptions, MetricResult, MetricSpec

if TYPE_CHECKING:
    from respeval import agents, align, compare, evaluate, judge, systems
    from respeval.bulk import RunSummary, score_files, score_table
    from respeval.metrics.bleu import BleuResult, bleu
    from respeval.metrics.chrf import ChrfResult, chrf
    from respeval.metrics.match import ExactMatchResult, SquadResult, exact_match, squad
    from respeval.metrics.rouge import AggregateScore, RougeResult, Score, rouge
    from respeval.metrics.ter import TerResult, ter
    from respeval.metrics.trajectory import TrajectoryResult, response_match_score, trajectory
    from respeval.systems import run

# Loaded on first use: each metric family (a command such as `respeval score` imports the
# package and needs one or two of them), the bulk pipeline (io, threads, Parquet) and the
# judge (httpx, asyncio) cost import time that most calls do not need.
_LAZY = {
    **{name: ("respeval.metrics.bleu", name) for name in ("bleu", "BleuResult")},
    **{name: ("respeval.metrics.chrf", name) for name in ("chrf", "ChrfResult")},
    **{name: ("respeval.metrics.match", name) for name in ("exact_match", "squad", "ExactMatchResult", "SquadResult")},
    **{name: ("respeval.metrics.rouge", name) for name in ("rouge", "RougeResult", "AggregateScore", "Score")},
    **{name: ("respeval.metrics.ter", name) for name in ("ter", "TerResult")},
    **{
        name: ("respeval.metrics.trajectory", name)
        for name in ("trajectory", "TrajectoryResult", "response_match_score")
    },
    "score_files": ("respeval.bulk", "score_files"),
    "score_table": ("respeval.bulk", "score_table"),
    "RunSummary": ("respeval.bulk", "RunSummary"),
    "judge": ("respeval.judge", None),
    "agents": ("respeval.agents", None),
    "evaluate": ("respeval.evaluate", None),  # the package is callable: respeval.evaluate(data, metrics)
    "compare": ("respeval.compare", None),  # the package is callable: respeval.compare(data, ...)
    "align": ("respeval.align", None),  # the package is callable: respeval.align(data, judge, model)
    "run": ("respeval.systems", "run"),
    "systems": ("respeval.systems", None),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'respeval' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(target[0])
    value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "REGISTRY",
    "AggregateScore",
    "BleuResult",
    "ChrfResult",
    "ExactMatchResult",
    "Interval",
    "MetricFamily",
    "MetricOptions",
    "MetricResult",
    "MetricSpec",
    "RougeResult",
    "RunSummary",
    "Score",
    "SquadResult",
    "TerResult",
    "TrajectoryResult",
    "__version__",
    "agents",
    "align",
    "bleu",
    "chrf",
    "compare",
    "evaluate",
    "exact_match",
    "judge",
    "rouge",
    "run",
    "score_files",
    "score_table",
    "squad",
    "systems",
    "response_match_score",
    "ter",
    "trajectory",
]
