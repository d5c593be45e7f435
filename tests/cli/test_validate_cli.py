"""``respeval validate`` and ``respeval report`` on the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from respeval import validate as val
from respeval.cli import main

ROWS = [
    {
        "id": i,
        "prompt": f"question {i}",
        "response": "word " * (3 + i % 7),
        "baseline_model_response": "w " * 5,
        "quality/score": s,
        "pref/pairwise_choice": p,
        "pref/pairwise_choice_swapped": q,
    }
    for i, (s, p, q) in enumerate(
        [
            (5, "CANDIDATE", "CANDIDATE"),
            (4, "BASELINE", "CANDIDATE"),
            (1, "TIE", "TIE"),
            (2, "CANDIDATE", "CANDIDATE"),
            (None, "BASELINE", "BASELINE"),
            (3, "CANDIDATE", "BASELINE"),
            (4, "BASELINE", "BASELINE"),
            (5, "CANDIDATE", "CANDIDATE"),
            (2, None, None),
            (1, "TIE", "CANDIDATE"),
        ]
    )
]
HUMAN = [
    {"id": i, "quality/human_rating": h, "pref/human_pairwise_choice": c}
    for i, (h, c) in enumerate(
        [
            (5, "CANDIDATE"),
            (3, "BASELINE"),
            (1, "TIE"),
            (3, "CANDIDATE"),
            (2, "BASELINE"),
            (3, "BASELINE"),
            (4, "BASELINE"),
            (4, "CANDIDATE"),
            (2, "TIE"),
            (None, "TIE"),
        ]
    )
]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_one_file_json_equals_the_library(tmp_path, capsys):
    both = _write_jsonl(tmp_path / "both.jsonl", [{**r, **h} for r, h in zip(ROWS, HUMAN)])
    status, out, _ = _run(capsys, "validate", "--results", str(both), "--json", "--bootstrap", "200", "--seed", "3")
    assert status == 0
    summary = json.loads(out)
    assert summary["schema"] == "respeval.run-summary/1"
    by_name = {v["metric"]: v for v in summary["validation"]}
    assert set(by_name) == {"quality", "pref"}
    quality = by_name["quality"]
    assert quality["rows"] == 10 and quality["used"] == 8
    assert quality["dropped"] == {"judge_missing": 1, "human_missing": 1, "both_missing": 0, "total": 2}
    keep = [
        i for i in range(10) if ROWS[i]["quality/score"] is not None and HUMAN[i]["quality/human_rating"] is not None
    ]
    lib = val.agreement([ROWS[i]["quality/score"] for i in keep], [HUMAN[i]["quality/human_rating"] for i in keep])
    for name in val.AGREEMENT_FIELDS:
        assert quality["agreement"][name] == pytest.approx(getattr(lib, name), abs=1e-12)
    assert quality["agreement"]["intervals"]["accuracy"] == lib.bootstrap(200, seed=3)["accuracy"].to_dict()
    assert quality["correlation"]["n"] == 8
    pref = by_name["pref"]
    assert pref["kind"] == "pairwise" and pref["used"] == 9 and pref["pairwise"]["n"] == 9
    assert pref["pairwise"]["consistency"] == pytest.approx(6 / 9)


def test_two_files_matched_on_id_and_text_tables(tmp_path, capsys):
    results = _write_jsonl(tmp_path / "results.jsonl", ROWS)
    labels = _write_jsonl(tmp_path / "labels.jsonl", list(reversed(HUMAN)))
    status, out, _ = _run(
        capsys,
        "validate",
        "--results",
        str(results),
        "--labels",
        str(labels),
        "--id-field",
        "id",
        "--metric",
        "quality",
        "--bootstrap",
        "50",
    )
    assert status == 0
    assert "quality (pointwise): 8 of 10 rows used, 2 dropped" in out
    for name in (
        "support-weighted F1",
        "balanced accuracy",
        "Cohen's kappa, quadratic weights",
        "confusion (rows: human, columns: judge)",
        "Kendall tau-b",
        "verbosity",
    ):
        assert name in out
    assert "pref" not in out


def test_explicit_fields_and_system_level_correlation(tmp_path, capsys):
    rows = [
        {"system": s, "scores": {"metric": m, "human": h}}
        for s, m, h in [
            ("a", 0.1, 1.0),
            ("a", 0.2, 2.0),
            ("b", 0.4, 2.5),
            ("b", 0.3, 3.0),
            ("c", 0.9, 4.0),
            ("c", 0.7, 5.0),
        ]
    ]
    path = _write_jsonl(tmp_path / "scored.jsonl", rows)
    summary_path = tmp_path / "run" / "summary.json"
    status, out, _ = _run(
        capsys,
        "validate",
        "--results",
        str(path),
        "--judge-field",
        "scores.metric",
        "--human-field",
        "scores.human",
        "--system-field",
        "system",
        "--level",
        "system",
        "--name",
        "toy",
        "--bootstrap",
        "0",
        "--summary-out",
        str(summary_path),
    )
    assert status == 0
    assert "system-level correlation over 3 units" in out
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    (corr,) = summary["correlations"]
    assert corr["level"] == "system" and corr["n"] == 3 and corr["kendall_tau_b"] == 1.0
    assert [p["unit"] for p in corr["points"]] == ["a", "b", "c"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--results", "missing.jsonl"], "No such file"),
        (["--results", "{plain}"], "no metric with both a judge and a human column"),
        (["--results", "{plain}", "--judge-field", "x"], "--judge-field and --human-field go together"),
        (["--results", "{both}", "--metric", "nope"], "no judge and human columns for metric(s) nope"),
        (["--results", "{both}", "--level", "system"], "--level system needs --system-field"),
    ],
)
def test_input_errors_are_one_line(tmp_path, capsys, argv, message):
    plain = _write_jsonl(tmp_path / "plain.jsonl", [{"a": 1}])
    both = _write_jsonl(tmp_path / "both.jsonl", [{**r, **h} for r, h in zip(ROWS, HUMAN)])
    argv = [a.format(plain=plain, both=both) for a in argv]
    status, out, err = _run(capsys, "validate", *argv, "--bootstrap", "0")
    assert status == 1 and out == ""
    assert err.startswith("respeval validate: error: ") and message in err and err.count("\n") == 1


def test_runs_as_a_module(tmp_path):
    both = _write_jsonl(tmp_path / "both.jsonl", [{**r, **h} for r, h in zip(ROWS, HUMAN)])
    report = tmp_path / "report.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "respeval",
            "validate",
            "--results",
            str(both),
            "--bootstrap",
            "100",
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"report: {report.resolve()}" in proc.stdout
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    help_ = subprocess.run(
        [sys.executable, "-m", "respeval", "validate", "--help"], capture_output=True, text=True, timeout=60
    )
    assert "{metric}/human_pairwise_choice" in help_.stdout


# --------------------------------------------------------------------------- 32.3: one label set

PAIRWISE_JUDGE = '''
import re

def judge(request):
    """Prefers the output with more words, a tie when equal; a "biased" prompt gets the
    output shown first (so its two orders disagree)."""
    user = request.messages[-1].content
    texts = dict(re.findall(r"\\[(OUTPUT \\([ab]\\)) [0-9a-f]{10}\\]\\n(.*?)\\n\\[/", user, re.S))
    if "biased" in user:
        return {"reasoning": "first", "winner": "a"}
    a, b = len(texts["OUTPUT (a)"].split()), len(texts["OUTPUT (b)"].split())
    return {"reasoning": "longer", "winner": "a" if a > b else "b" if b > a else "tie"}
'''

# (baseline words, candidate words, biased, human)
PAIRS = [(1, 3, False, "CANDIDATE"), (4, 2, False, "BASELINE"), (2, 2, False, "TIE"), (1, 5, False, "BASELINE"),
         (3, 1, True, "BASELINE"), (2, 6, False, "CANDIDATE"), (5, 5, True, "TIE"), (6, 1, False, "BASELINE")]  # fmt: skip


def test_validate_reads_judge_pairwise_output_as_it_is(tmp_path, capsys, monkeypatch):
    """`judge --method pairwise` writes Vertex's pairwise_choice columns in evaluate's and
    validate's labels (it wrote A/B/tie), so validate reads its output without flags."""
    (tmp_path / "pairwise_judge_fixture.py").write_text(PAIRWISE_JUDGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = [
        {"id": f"p{i}", "prompt": f"question {i}" + (" (biased)" if biased else ""),
         "baseline_model_response": " ".join(["base"] * nb), "response": " ".join(["cand"] * nc)}
        for i, (nb, nc, biased, _) in enumerate(PAIRS)
    ]  # fmt: skip
    humans = [{"id": f"p{i}", "pairwise/human_pairwise_choice": h} for i, (*_, h) in enumerate(PAIRS)]
    judged = tmp_path / "judged.jsonl"
    argv = ["judge", "--method", "pairwise", "--input", str(_write_jsonl(tmp_path / "pairs.jsonl", rows)),
            "--model", "python:pairwise_judge_fixture:judge", "--out", str(judged), "--no-cache", "--quiet"]  # fmt: skip
    status, _, err = _run(capsys, *argv)
    assert status == 0, err
    written = [json.loads(line) for line in judged.read_text(encoding="utf-8").splitlines()]
    assert {r["outcome"] for r in written} == {"CANDIDATE", "BASELINE", "TIE", "INCONSISTENT"}

    def by_length(nb: int, nc: int) -> str:
        return "CANDIDATE" if nc > nb else "BASELINE" if nb > nc else "TIE"

    first = ["BASELINE" if biased else by_length(nb, nc) for nb, nc, biased, _ in PAIRS]  # baseline shown first
    swapped = ["CANDIDATE" if biased else by_length(nb, nc) for nb, nc, biased, _ in PAIRS]
    assert [r["pairwise/pairwise_choice"] for r in written] == first
    assert [r["pairwise/pairwise_choice_swapped"] for r in written] == swapped

    labels = _write_jsonl(tmp_path / "humans.jsonl", humans)
    status, out, err = _run(capsys, "validate", "--input", str(judged), "--labels", str(labels), "--id-field", "id",
                            "--json", "--bootstrap", "0")  # fmt: skip
    assert status == 0, err
    (found,) = json.loads(out)["validation"]
    assert found["metric"] == "pairwise" and found["kind"] == "pairwise" and found["used"] == len(PAIRS)
    lib = val.agreement(first, [h for *_, h in PAIRS])
    for name in val.AGREEMENT_FIELDS:
        assert found["agreement"][name] == pytest.approx(getattr(lib, name), abs=1e-12)
    assert found["pairwise"]["n"] == len(PAIRS)
    assert found["pairwise"]["consistency"] == pytest.approx(6 / 8)  # the two biased pairs flip


def test_a_judge_summary_written_with_the_old_labels_still_reports(tmp_path):
    """A pairwise judge summary written before the one label set (outcomes A/B/tie/...)."""
    from respeval.report import judge_run_summary

    old = {
        "method": "pairwise",
        "model": "m",
        "pairs": 4,
        "scored": 4,
        "outcomes": {"A": 1, "B": 2, "tie": 1, "inconsistent": 0},
    }
    new = {**old, "outcomes": {"BASELINE": 1, "CANDIDATE": 2, "TIE": 1, "INCONSISTENT": 0}}
    got = [judge_run_summary(data)["distributions"][0] for data in (old, new)]
    assert got[0] == got[1]
    assert got[0]["labels"] == ["CANDIDATE", "BASELINE", "TIE", "INCONSISTENT"]
    assert got[0]["series"][0]["counts"] == [2, 1, 1, 0]
