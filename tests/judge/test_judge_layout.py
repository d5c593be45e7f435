"""The judge layer's front door and rooms: ``respeval.judge.__all__`` is pinned, the
sub-packages re-export what they own, and no module imports another's private names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import respeval.judge as judge

JUDGE_DIR = Path(judge.__file__).parent

EXPECTED = {
    "AnthropicModel",
    "BaseJudgeModel",
    "BatchOptions",
    "BatchReport",
    "Budget",
    "CacheMissError",
    "CallableModel",
    "Capabilities",
    "Completion",
    "EngineOptions",
    "FakeModel",
    "FatalError",
    "JsonSchema",
    "JudgeCache",
    "JudgeEngine",
    "JudgeError",
    "JudgeMethod",
    "JudgeModel",
    "JudgeRequest",
    "JudgeRunSummary",  # RunSummary is its old name
    "LoopbackTransport",
    "Message",
    "ModelPrice",
    "OpenAIChatModel",
    "ParseFailure",
    "Parsed",
    "Pointwise",
    "PointwiseVerdict",
    "Price",
    "RateLimiter",
    "ReplayModel",
    "RowResult",
    "RunResult",
    "RunSummary",
    "ShardedTransport",
    "TransientError",
    "arun",
    "cache_key",
    "get_method",
    "load_model",
    "run",
    "wilson_interval",
}


def test_public_names_are_pinned():
    assert set(judge.__all__) == EXPECTED
    missing = [name for name in judge.__all__ if name not in vars(judge)]
    assert missing == [], "in __all__ but not defined"
    foreign = [
        name
        for name in judge.__all__
        if not getattr(vars(judge)[name], "__module__", "respeval").startswith("respeval")
    ]
    assert foreign == [], "exported, but not respeval's own"


def test_sub_packages_export_their_rooms():
    models = importlib.import_module("respeval.judge.models")
    methods = importlib.import_module("respeval.judge.methods")
    for name in models.__all__:
        assert getattr(models, name) is getattr(judge, name, getattr(models, name))
    assert models.FakeModel is judge.FakeModel and models.OpenAIChatModel is judge.OpenAIChatModel
    assert methods.get_method("pointwise").name == "pointwise"
    assert set(dir(models)) >= {"FakeModel", "ReplayModel", "JudgeRequest"}


def _modules() -> list[Path]:
    return sorted(p for p in JUDGE_DIR.rglob("*.py"))


def test_no_private_imports_across_modules():
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("respeval"):
                for alias in node.names:
                    if alias.name.startswith("_"):
                        offenders.append(f"{path.relative_to(JUDGE_DIR)}: from {node.module} import {alias.name}")
    assert not offenders, offenders
