"""The ``respeval score`` command, run as a user would (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from respeval.bulk import EXAMPLE
from respeval.metrics.rouge import rouge


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "respeval", *args], capture_output=True, text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _example_rows() -> list[dict]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


def test_example_json_equals_library_call():
    summary = json.loads(run("score", "--example", "--json").stdout)
    rows = _example_rows()
    types = ("rouge1", "rouge2", "rougeL", "rougeLsum")
    lib = rouge([r["response"] for r in rows], [r["reference"] for r in rows], types)
    assert summary["rows_scored"] == summary["rows_total"] == len(rows) == 24
    assert summary["rows_failed"] == 0
    (system,) = summary["systems"]
    for t in types:
        for x in "prf":
            assert system["values"][f"{t}_{x}"] == lib.mean()[t]["prf".index(x)]
        low, high = system["intervals"][f"{t}_f"]
        assert low <= system["values"][f"{t}_f"] <= high
    assert summary["signatures"]["rouge"].startswith("rouge1+rouge2+rougeL+rougeLsum|tok:rouge|stem:no")


def test_example_table_on_stdout():
    out = run("score", "--example").stdout
    assert "24 rows scored" in out
    for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert t in out
    assert "signature:" in out


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_text_files_and_per_row_output(tmp_path: Path, ext: str):
    preds = ["the cat sat on the mat", "a dog barked", "", "Running quickly home"]
    refs = ["the cat is on the mat", "the dog barked loudly", "nothing here", "he runs home quickly"]
    (tmp_path / "p.txt").write_text("\n".join(preds) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    out = tmp_path / f"rows.{ext}"
    summary = json.loads(
        run(
            "score",
            "--pred",
            str(tmp_path / "p.txt"),
            "--ref",
            str(tmp_path / "r.txt"),
            "--metrics",
            "rouge1,rougeL",
            "--stem",
            "--out",
            str(out),
            "--json",
            "--quiet",
        ).stdout
    )
    lib = rouge(preds, refs, ["rouge1", "rougeL"], stemmer=True)
    if ext == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(out).to_pydict()
    elif ext == "jsonl":
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        table = {k: [row[k] for row in lines] for k in lines[0]}
    else:
        import csv

        with out.open() as fh:
            rows = list(csv.DictReader(fh))
        table = {k: [float(r[k]) if k != "row" else int(r[k]) for r in rows] for k in rows[0]}
    assert table["row"] == [0, 1, 2, 3]
    for col in ("rouge1_p", "rouge1_r", "rouge1_f", "rougeL_f"):
        assert np.array_equal(np.array(table[col], dtype=float), lib[col]), col
    assert summary["systems"][0]["values"]["rougeL_f"] == lib.mean()["rougeL"].fmeasure
    assert summary["signatures"]["rouge"].split("|")[2] == "stem:porter"


def test_one_jsonl_with_both_fields_and_ids(tmp_path: Path):
    src = tmp_path / "run.jsonl"
    src.write_text(
        "\n".join(
            json.dumps({"uid": f"u{i}", "response": p, "reference": r})
            for i, (p, r) in enumerate([("a b c", "a b"), ("x y", ["q", "x y"])])
        )
        + "\n"
    )
    out = tmp_path / "rows.jsonl"
    run("score", "--pred", str(src), "--id-field", "uid", "--metrics", "rouge1", "--out", str(out), "--quiet")
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["uid"] for r in rows] == ["u0", "u1"]
    assert rows[1]["rouge1_f"] == 1.0  # the second reference of row 1 wins


@pytest.mark.parametrize(
    "setup, expected",
    [
        ("missing", "cannot read"),
        ("lengths", "has more rows than"),
        ("missing-ref", "cannot read"),
        ("field", "r.jsonl:2: field 'reference'"),
        ("none", "r.jsonl:1: field 'reference'"),
    ],
)
def test_bad_input_is_named(tmp_path: Path, setup: str, expected: str):
    pred = tmp_path / "p.txt"
    pred.write_text("a\nb\n")
    ref = tmp_path / "r.txt"
    if setup == "missing":
        pred = tmp_path / "nope.txt"
        ref.write_text("a\n")
    elif setup == "missing-ref":
        pass
    elif setup == "lengths":
        ref.write_text("a\nb\nc\n")
    elif setup == "field":
        ref = tmp_path / "r.jsonl"
        ref.write_text('{"reference": "a"}\n{"other": "b"}\n')
    elif setup == "none":
        ref = tmp_path / "r.jsonl"
        ref.write_text('{"reference": null}\n{"reference": "b"}\n')
    proc = run("score", "--pred", str(pred), "--ref", str(ref), "--quiet", check=False)
    assert proc.returncode == 1
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_explains_and_unknown_metric_is_rejected():
    help_text = run("score", "--help").stdout
    for word in ("--input", "--references", "--metric", "--stem", "--out", "--json", "--example", "examples:"):
        assert word in help_text
    proc = run("score", "--example", "--metrics", "rouge1,blue", check=False)
    assert proc.returncode == 1  # usage errors are bad options (1); 2 means a failed gate
    assert "unknown metric(s) blue" in proc.stderr


def test_every_command_is_wired():
    top = run("--help").stdout
    for command in ("score", "judge", "gate", "validate", "report"):
        assert command in top
    example = run("judge", "--example").stdout
    assert "consistency" in example and "agreement with the human label" in example
    assert "--fail-under" in run("gate", "--help").stdout


def test_metrics_lists_the_registry():
    from respeval.metrics import REGISTRY

    listed = json.loads(run("metrics", "--json").stdout)
    assert [m["name"] for m in listed if m["kind"] == "computed"] == REGISTRY.names()
    text = run("metrics").stdout
    assert all(name in text for name in REGISTRY.names())


def test_one_parser_one_dispatch_table():
    from respeval.cli import COMMANDS, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == [name.rsplit(".", 1)[1] for name in COMMANDS]
    for module_name in COMMANDS:
        module = __import__(module_name, fromlist=["run"])
        assert callable(module.run) and callable(module.add_arguments) and module.HELP


def test_an_internal_error_prints_a_scrubbed_traceback(monkeypatch, capsys):
    """A bug's traceback may quote a request; the key in it never reaches stderr."""
    from respeval.cli import main
    from respeval.cli import metrics as metrics_command
    from respeval.redact import register_secret

    key = "sk-test-0123456789abcdefghijklmnop"
    register_secret(key)

    def broken(args):
        raise RuntimeError(f"unexpected state while calling https://api.example/v1?key={key}")

    monkeypatch.setattr(metrics_command, "run", broken)
    assert main(["metrics"]) == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "internal error" in err
    assert key not in err and "[REDACTED]" in err


def test_score_collects_cyclic_garbage_rarely_while_rows_stream_and_puts_the_setting_back(monkeypatch, tmp_path):
    """JSON inputs are many small containers the cyclic collector would walk again and
    again: `respeval score` raises its threshold for the run, and restores it after a run
    that completes and after one that fails."""
    import gc

    import respeval.bulk

    seen = []
    real = respeval.bulk.score_files

    def spying(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(respeval.bulk, "score_files", spying)
    before = gc.get_threshold()
    from respeval.cli.app import main

    assert main(["score", "--example", "--quiet", "--out", str(tmp_path / "out.jsonl")]) == 0
    assert seen[-1][0] == 100_000 and before[0] != 100_000
    assert gc.get_threshold() == before
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response": "a", "reference": "b"}\n{not json\n', encoding="utf-8")
    assert main(["score", "--pred", str(bad), "--quiet"]) == 1
    assert seen[-1][0] == 100_000 and gc.get_threshold() == before


def test_score_out_sentence_bleu_is_sacrebleus_to_the_last_bit(tmp_path: Path):
    """Issue 28.14: the per-row BLEU that ``score --out`` writes is sacreBLEU's
    ``sentence_bleu`` (==), on WMT17 lines where the numpy path differed in the last bit."""
    sacrebleu = pytest.importorskip("sacrebleu")
    from _helpers.corpora import load_wmt17
    from _helpers.paths import shared_data

    reference, systems = load_wmt17(shared_data())
    hyps, refs = systems[sorted(systems)[0]][:600], reference[:600]
    (tmp_path / "p.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    out = tmp_path / "rows.jsonl"
    run(
        "score",
        "--pred",
        str(tmp_path / "p.txt"),
        "--ref",
        str(tmp_path / "r.txt"),
        "--metrics",
        "bleu",
        "--out",
        str(out),
        "--bootstrap",
        "0",
        "--quiet",
        "--json",
    )
    got = [json.loads(line)["bleu"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert got == [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps, refs)]
