"""docs/rag.md shows every RAG step's prompt exactly as the code sends it, and names every
multi-step metric the registry has."""

from __future__ import annotations

from _helpers.paths import ROOT
from respeval.judge.methods import METHODS
from respeval.judge.methods.predefined import EMBEDDING_METRICS, MULTI_STEP
from respeval.judge.methods.rag import STEPS, prompts

DOC = (ROOT / "docs" / "rag.md").read_text(encoding="utf-8")


def test_every_prompt_is_documented_verbatim():
    shown = prompts()
    assert set(shown) == {cls.template_version for cls in STEPS.values()}
    for version, text in shown.items():
        assert f"### `{version}`\n\n```text\n{text}\n```" in DOC, version


def test_every_metric_is_documented_and_registered():
    for name in (*MULTI_STEP, *EMBEDDING_METRICS):
        assert f"`{name}`" in DOC, name
    for method in MULTI_STEP.values():
        assert method in METHODS
