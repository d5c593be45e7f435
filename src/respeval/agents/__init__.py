"""Agent evaluation: ADK eval sets and sessions, ADK-compatible scores, and respeval's own
analyses (argument partial credit, graded alignment, pass@k, paired comparison, reports).

The trajectory metrics themselves (Vertex AI's six, ADK's per-invocation score, F1, ...)
live in :mod:`respeval.metrics.trajectory` (``trajectory()``); this package reads agent
files and scores eval cases the way ADK does.
"""

from respeval.agents.adk import (
    DEFAULT_CRITERIA,
    CaseOutcome,
    Criterion,
    MetricOutcome,
    evaluate_case,
    load_eval_config,
    response_match_scores,
    tool_trajectory_scores,
)
from respeval.agents.analysis import Comparison, PassAtKSummary, compare, pass_at_k, pass_hat_k, summarize_runs
from respeval.agents.arguments import Alignment, ArgumentMatcher, ArgumentScore, Rules, align
from respeval.agents.evaluation import AgentReport, evaluate_agent, read_actual, tool_trajectory_scores_from_files
from respeval.agents.loaders import (
    AgentDataError,
    EvalCase,
    EvalSet,
    EvalSetToolUses,
    Invocation,
    Session,
    invocations_from_events,
    load_eval_set,
    load_session,
    parse_invocations,
    read_tool_uses,
)
from respeval.agents.report import agent_section, trajectory_section

__all__ = [
    "DEFAULT_CRITERIA",
    "AgentDataError",
    "AgentReport",
    "Alignment",
    "ArgumentMatcher",
    "ArgumentScore",
    "CaseOutcome",
    "Comparison",
    "Criterion",
    "EvalCase",
    "EvalSet",
    "EvalSetToolUses",
    "Invocation",
    "MetricOutcome",
    "Rules",
    "PassAtKSummary",
    "Session",
    "agent_section",
    "align",
    "compare",
    "evaluate_agent",
    "evaluate_case",
    "invocations_from_events",
    "load_eval_config",
    "load_eval_set",
    "load_session",
    "parse_invocations",
    "read_tool_uses",
    "pass_at_k",
    "pass_hat_k",
    "read_actual",
    "response_match_scores",
    "summarize_runs",
    "tool_trajectory_scores",
    "tool_trajectory_scores_from_files",
    "trajectory_section",
]


def __getattr__(name: str) -> object:
    # the pass@k summary was called RunSummary, one name with the judge's and bulk's run summaries
    if name == "RunSummary":
        import warnings

        warnings.warn(
            "respeval.agents.RunSummary is now respeval.agents.PassAtKSummary", DeprecationWarning, stacklevel=2
        )
        return PassAtKSummary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
