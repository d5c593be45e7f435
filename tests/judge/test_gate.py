"""The escalation gate: two-sided thresholds, calibration, SQuAD v2 end to end with a
scripted judge (only undecided rows are judged; the report adds up), --fail-under, --junit."""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from _helpers.paths import SHARED_DATA
from respeval.cli import main as gate_main
from respeval.gate import GateConfig, Thresholds, calibrate, fit_thresholds, run_gate, stage_scores
from respeval.judge import EngineOptions, FakeModel
from respeval.metrics.match import squad

SQUAD = SHARED_DATA / "squad"
BLOCK = re.compile(r"\[(REFERENCE|CANDIDATE) \w+\]\n(.*?)\n\[/\1 \w+\]", re.S)


def scripted_judge(request) -> str:
    """Passes when the candidate's SQuAD F1 against any listed reference is at least 0.5."""
    blocks = dict(BLOCK.findall(request.messages[-1].content))
    refs = blocks["REFERENCE"].split(" OR ")
    f1 = float(squad([blocks["CANDIDATE"]], [refs], version="v2")["squad_f1"][0])
    return json.dumps({"reasoning": "scripted", "score": round(f1, 3), "pass": f1 >= 0.5})


def test_thresholds_are_two_sided():
    t = Thresholds(accept_at=0.8, reject_below=0.3)
    assert [t.decide(x) for x in (0.9, 0.8, 0.5, 0.3, 0.1)] == ["accept", "accept", None, None, "reject"]
    assert Thresholds().decide(1.0) is None
    with pytest.raises(ValueError):
        Thresholds(accept_at=0.2, reject_below=0.5)


def test_fit_thresholds_reaches_target_or_switches_off():
    scores = np.array([0.0] * 30 + [0.5] * 30 + [1.0] * 30)
    labels = np.array([False] * 30 + [True, False] * 15 + [True] * 30)
    t = fit_thresholds(scores, labels, target_precision=0.98, min_support=10)
    assert t.accept_at == 1.0 and t.reject_below == 0.5
    noisy = fit_thresholds(scores, np.array([True, False] * 45), target_precision=0.98, min_support=10)
    assert noisy == Thresholds(None, None)


def records(n: int = 6) -> list[dict]:
    out = [
        {"id": "same", "reference": "Paris", "response": "paris."},
        {"id": "near", "reference": "the city of Paris", "response": "Paris city"},
        {"id": "far", "reference": "Paris", "response": "Berlin"},
        {"id": "list", "reference": ["Denver Broncos", "Broncos"], "response": "the Broncos"},
    ]
    return out[:n]


def test_manual_gate_without_judge_reports_undecided():
    config = GateConfig(lexical=Thresholds(accept_at=0.99, reject_below=0.2))
    report = run_gate(records(), config)
    assert [r.decision for r in report.rows] == ["accept", "undecided", "reject", "accept"]
    assert [r.stage for r in report.rows] == ["exact", "", "lexical", "exact"]
    assert report.judge_skipped and "skipped: no --model" in report.format()


def test_unscored_judge_rows_do_not_pass():
    report = run_gate(records(), GateConfig(), model=FakeModel("not a verdict"), options=EngineOptions(reask=False))
    assert [r.decision for r in report.rows] == ["accept", "unscored", "unscored", "accept"]
    assert report.pass_rate == 0.5


def test_judge_limit_sends_the_first_rows_and_names_the_rest():
    rows = [{"id": f"r{i}", "reference": "Paris", "response": f"Lyon {i}"} for i in range(5)]
    judge = FakeModel()
    report = run_gate(rows, GateConfig(), model=judge, judge_limit=2)
    assert [r.decision for r in report.rows] == ["accept", "accept", "unscored", "unscored", "unscored"]
    assert [r.reason for r in report.rows[2:]] == ["over the judge limit"] * 3
    assert judge.calls == 2 and report.judged == 2 and report.over_limit == 3
    assert "+ 3 over the judge limit = 5 of 5 rows" in report.format()
    assert report.to_json()["over_judge_limit"] == 3
    assert run_gate(rows, GateConfig(), model=FakeModel(), judge_limit=0).judged == 0


@pytest.fixture(scope="module")
def squad_rows():
    gold_path = SQUAD / "dev-v2.0-gold.jsonl"
    if not gold_path.exists():
        pytest.skip(f"SQuAD data not available: {gold_path} (expected ../shared/data beside the project)")
    golds = [json.loads(line) for line in gold_path.read_text().splitlines()]
    preds = json.loads((SQUAD / "predictions-v2.0" / "bert.json").read_text())
    rows = [
        {"id": g["id"], "prompt": g["question"], "reference": g["answers"], "response": preds[g["id"]]} for g in golds
    ]
    # Stand-in for human labels on a deterministic third of the rows: correct = SQuAD F1 >= 0.5.
    f1 = squad([r["response"] for r in rows], [r["reference"] for r in rows], version="v2")["squad_f1"]
    labels = {
        r["id"]: bool(x >= 0.5)
        for r, x in zip(rows, f1)
        if int(hashlib.sha256(r["id"].encode()).hexdigest(), 16) % 3 == 0
    }
    return rows, labels


def test_squad_v2_calibrated_gate(squad_rows):
    rows, labels = squad_rows
    scores = stage_scores(rows, GateConfig())
    config = calibrate(rows, labels, target_precision=0.98, scores=scores)
    assert config.exact.accept_at == 1.0 and config.lexical.accept_at is not None
    undecided = {
        r["id"]
        for i, r in enumerate(rows)
        if config.exact.decide(scores["exact"][i]) is None and config.lexical.decide(scores["lexical"][i]) is None
    }
    model = FakeModel(scripted_judge)
    report = run_gate(rows, config, model=model, labels=labels, scores=scores)
    judged = {r.id for r in report.rows if r.stage == "judge"}
    assert judged == undecided and model.calls == len(undecided) > 0
    stages = {s.name: s for s in report.stages}
    assert stages["exact"].settled + stages["lexical"].settled + report.judged == len(rows) == 11873
    assert stages["lexical"].reached == len(rows) - stages["exact"].settled
    # in-sample precision of each calibrated stage on the labelled rows meets the target
    assert stages["exact"].precision >= 0.98 and stages["lexical"].precision >= 0.98
    savings = report.savings()
    assert savings["calls_saved"] == len(rows) - len(undecided) and savings["fraction_saved"] > 0.9
    assert report.accepted + sum(r.decision == "reject" for r in report.rows) == len(rows)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_fail_under_and_junit(tmp_path, capsys):
    data = write_jsonl(tmp_path / "rows.jsonl", records())
    junit = tmp_path / "gate.xml"
    out = tmp_path / "decisions.jsonl"
    args = [
        "gate",
        "--input",
        str(data),
        "--lexical-accept",
        "0.99",
        "--lexical-reject",
        "0.2",
        "--model",
        "fake:score=1.0",
        "--junit",
        str(junit),
        "--out",
        str(out),
    ]
    assert gate_main([*args, "--fail-under", "0.7"]) == 0
    assert "settled by cheap stages + 1 sent to the judge = 4 of 4 rows" in capsys.readouterr().out
    assert gate_main([*args, "--fail-under", "0.8"]) == 2
    assert "below --fail-under" in capsys.readouterr().err
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "4" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["far"].find("failure") is not None and cases["near"].get("classname") == "respeval.gate.judge"
    assert [json.loads(line)["decision"] for line in out.read_text().splitlines()] == [
        "accept",
        "accept",
        "reject",
        "accept",
    ]


def test_cli_undecided_rows_are_junit_errors(tmp_path, capsys):
    data = write_jsonl(tmp_path / "rows.jsonl", records())
    junit = tmp_path / "gate.xml"
    assert gate_main(["gate", "--input", str(data), "--junit", str(junit), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decisions"]["undecided"] == 2
    assert ET.parse(junit).getroot().get("errors") == "2"


def test_cli_calibrate(tmp_path, capsys):
    rows = [
        {"id": i, "reference": "alpha beta gamma", "response": resp}
        for i, resp in enumerate(["alpha beta gamma"] * 25 + ["alpha beta"] * 25 + ["delta"] * 25)
    ]
    labels = [{"id": r["id"], "label": r["response"] != "delta"} for r in rows]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    lab = write_jsonl(tmp_path / "labels.jsonl", labels)
    assert (
        gate_main(["gate", "--input", str(data), "--calibrate", str(lab), "--target-precision", "0.98", "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["decisions"] == {"accept": 50, "reject": 25, "unscored": 0, "undecided": 0}
    assert [s["precision_on_labelled"] for s in report["stages"][:2]] == [1.0, 1.0]
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": 0, "label": "yes"}])
    assert gate_main(["gate", "--input", str(data), "--calibrate", str(bad)]) == 1
