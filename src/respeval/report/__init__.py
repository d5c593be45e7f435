"""One self-contained HTML report of a run, rendered from a run summary.

``schema`` (the run summary: builders, loading, checking, merging), ``svg`` (the plots) and
``html`` (sections and the page).  See ``respeval.report.schema`` for the summary's format.
"""

from respeval.report.html import ORDERS, SECTIONS, present_sections, render_html, write_report
from respeval.report.runs import (
    RowDigest,
    add_score_rows,
    compare_run_summary,
    evaluate_run_summary,
    gate_run_summary,
    judge_run_summary,
    score_inputs,
    score_run_summary,
    score_texts,
    texts_of,
    to_run_summary,
    write_run_outputs,
)
from respeval.report.schema import (
    LIST_KEYS,
    SCHEMA,
    check_summary,
    correlation_entry,
    distribution_entry,
    load_summaries,
    merge_summaries,
    new_summary,
    runs_of,
    system_table,
    validation_summary,
)

__all__ = [
    "LIST_KEYS",
    "ORDERS",
    "SCHEMA",
    "SECTIONS",
    "RowDigest",
    "add_score_rows",
    "check_summary",
    "compare_run_summary",
    "correlation_entry",
    "distribution_entry",
    "evaluate_run_summary",
    "gate_run_summary",
    "judge_run_summary",
    "load_summaries",
    "merge_summaries",
    "new_summary",
    "present_sections",
    "render_html",
    "runs_of",
    "score_inputs",
    "score_run_summary",
    "score_texts",
    "system_table",
    "texts_of",
    "to_run_summary",
    "validation_summary",
    "write_report",
    "write_run_outputs",
]
