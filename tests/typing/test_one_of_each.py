"""One of each (issue 29): one run-summary base both run summaries derive from, one ``Interval``,
one Wilson interval, one ``Spend``, one set of row states and stop kinds, each defined once in
``src/respeval`` (the package's source is read, so a second definition anywhere fails here)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

import respeval
from respeval import _run_summary
from respeval._run_summary import RunSummaryBase
from respeval._spend import Spend
from respeval.bulk import summary as bulk_summary
from respeval.judge import results as judge_results

SRC = Path(respeval.__file__).resolve().parent
STATE_NAMES = {"SCORED", "UNSCORED", *(n for n in _run_summary.__all__ if n.startswith("STOP_"))}


def _definitions() -> dict[str, list[str]]:
    """Module-level names (classes, functions, assigned constants) -> the files defining them."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names: list[str] = []
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    elements = target.elts if isinstance(target, ast.Tuple) else [target]
                    names += [e.id for e in elements if isinstance(e, ast.Name)]
            for name in names:
                found.setdefault(name, []).append(str(path.relative_to(SRC)))
    return found


# a name that means something else there: the optimiser's marker of a missing answer, "<unscored>"
OTHER_MEANINGS = {"UNSCORED": ["align/optimiser.py"]}


def test_the_state_names_and_the_shared_classes_are_defined_once():
    found = _definitions()
    for name in sorted(STATE_NAMES):
        assert found.get(name) == ["_run_summary.py", *OTHER_MEANINGS.get(name, [])], (name, found.get(name))
    assert found["Spend"] == ["_spend.py"]
    assert found["Interval"] == ["stats/intervals.py"]
    assert found["wilson_interval"] == ["stats/intervals.py"]
    assert found["RunSummaryBase"] == ["_run_summary.py"]


def test_a_second_definition_is_caught(tmp_path, monkeypatch):
    """What ``evaluate/run.py`` held before: its own ``SCORED, UNSCORED = "scored", "unscored"``."""
    monkeypatch.setattr(f"{__name__}.SRC", tmp_path)
    (tmp_path / "_run_summary.py").write_text('SCORED = "scored"\n')
    (tmp_path / "run.py").write_text('SCORED, UNSCORED = "scored", "unscored"\n')
    assert _definitions()["SCORED"] == ["_run_summary.py", "run.py"]


@pytest.mark.parametrize(
    ("summary", "old_name"),
    [
        (bulk_summary.ScoringRunSummary, bulk_summary.RunSummary),
        (judge_results.JudgeRunSummary, judge_results.RunSummary),
    ],
)
def test_both_run_summaries_derive_from_the_one_base(summary, old_name):
    assert old_name is summary and issubclass(summary, RunSummaryBase)
    assert not getattr(summary, "__abstractmethods__", None)  # to_json and format both written
    assert respeval.RunSummary is bulk_summary.ScoringRunSummary


def test_the_judge_summary_and_spend_settle_a_batch_by_the_one_rule():
    report = SimpleNamespace(
        tokens_in=10, live_tokens_in=2, tokens_out=5, live_tokens_out=1, total_cost=0.25, stop_reason=None
    )
    summary = judge_results.JudgeRunSummary("pointwise", "s", "m", tokens_in=99, cost=9.0)
    summary.attach_batch(report)
    spend = Spend(tokens_in=99, cost=9.0)
    spend.settle_batch(report)
    assert (summary.tokens_in, summary.tokens_out, summary.cost) == (12, 6, 0.25)
    assert (spend.tokens_in, spend.tokens_out, spend.cost) == (12, 6, 0.25)
