"""The real offline demonstration: LLMBar's recorded judge verdicts replayed through
respeval's pairwise method reproduce LLMBar's published statistics exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from _helpers.paths import SHARED_DATA
from respeval.cli import main as methods_main
from respeval.judge import EngineOptions
from respeval.judge.methods.llmbar import (
    EXAMPLE_PATH,
    example_instances,
    llmbar_statistics,
    load_instances,
    load_statistics,
    replay_model,
    to_pairs,
)
from respeval.judge.methods.pairwise import run_pairwise

LLMBAR = SHARED_DATA / "judge" / "llmbar" / "Dataset"
OPTIONS = EngineOptions(reask=False, concurrency=16)


def evaluator_dirs() -> list[Path]:
    if not LLMBAR.exists():
        return []
    return sorted(p.parent for p in LLMBAR.glob("**/evaluators/*/*/result.json"))


def replay(path: Path):
    instances = load_instances(path / "result.json")
    pairs = to_pairs(instances)
    report = run_pairwise(pairs, replay_model(instances, str(path)), options=OPTIONS)
    return instances, pairs, report


def test_shipped_sample_and_licence():
    instances = example_instances()
    assert len(instances) == 40 and EXAMPLE_PATH.stat().st_size < 100_000
    licence = (EXAMPLE_PATH.parent / "LICENSE.LLMBar").read_text()
    assert "MIT License" in licence and "Princeton Natural Language Processing" in licence


def test_shipped_sample_replays_the_recorded_winners():
    instances = example_instances()
    pairs = to_pairs(instances)
    report = run_pairwise(pairs, replay_model(instances, "sample"), options=OPTIONS)
    for inst, pair in zip(instances, report.pairs):
        for orientation in ("ab", "ba"):
            assert {"A": "1", "B": "2"}.get(pair.winners[orientation]) == inst.winners[orientation]
    assert report.spend.calls == 80
    assert report.to_json()["position_consistency"]["n"] == 40


def test_every_evaluator_reproduces_its_statistics():
    dirs = evaluator_dirs()
    if not dirs:
        pytest.skip(f"LLMBar data not available: {LLMBAR} (expected ../shared/data beside the project)")
    assert len(dirs) >= 28
    for path in dirs:
        instances, pairs, report = replay(path)
        published = load_statistics(path / "statistics.json")
        ours = llmbar_statistics(report, [p["label"] for p in pairs])
        for key, value in ours.items():
            assert value == published[key], (path, key, value, published[key])


def test_unparseable_recorded_replies_are_unscored_not_guessed():
    path = LLMBAR / "Processed" / "LLMEval^2" / "evaluators" / "GPT-4" / "Vanilla_NoRules"
    if not path.exists():
        pytest.skip(f"LLMBar data not available: {path}")
    instances, pairs, report = replay(path)
    empty = [i for i, inst in enumerate(instances) if None in inst.winners.values()]
    assert len(empty) == 6
    for i in empty:
        assert report.pairs[i].status == "unscored"
        assert "empty judge output" in report.pairs[i].unscored_reason
    assert report.to_json()["scored"] == 194


def test_cli_example(capsys):
    assert methods_main(["judge", "--example"]) == 0
    out = capsys.readouterr().out
    assert "40 pairs, 40 scored" in out and "consistency     0.9500" in out
    assert methods_main(["judge", "--example", "--flip", "half", "--json"]) == 0
    assert '"flip": "half"' in capsys.readouterr().out
