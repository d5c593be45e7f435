"""The runs the viewer tests share (written once per session by the commands themselves) and
the headless browser (one per module)."""

from __future__ import annotations

import pytest

from _helpers.browser import DevTools, chromium
from _helpers.view_runs import agent_run, evaluate_run, score_run

pytest.importorskip("duckdb", reason="respeval view needs duckdb (pip install 'respeval[view]')")


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """{name: folder} of the shared runs."""
    root = tmp_path_factory.mktemp("view-runs")
    return {
        "score": score_run(root),
        "eval_a": evaluate_run(root, "eval_a", "a"),
        "eval_b": evaluate_run(root, "eval_b", "b"),
        "agent": agent_run(root),
    }


@pytest.fixture(scope="module")
def browser():
    devtools = DevTools(chromium())
    try:
        yield devtools
    finally:
        devtools.close()
