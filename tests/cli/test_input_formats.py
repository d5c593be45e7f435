"""Issue 28.22 and 28.23: SQuAD v2 from the command line, and one extension map for every
command (a ``.json`` input was read as plain text, one row per line)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import respeval
from _helpers.cli import run_cli as run
from _helpers.corpora import read_jsonl
from _helpers.paths import shared_data

# the official evaluate-v2.0 / v1.1 scripts on ../shared/data/squad (its README)
OFFICIAL = {
    ("v2", "predictions-v2.0/bert.json"): (78.74168280973637, 81.77528052374727),
    ("v1", "predictions-v1.1/bert.json"): (86.20624408703878, 92.19557978351129),
}
GOLD = {"v1": "dev-1.1-gold.jsonl", "v2": "dev-v2.0-gold.jsonl"}


def library(version: str, pred_file: str) -> tuple[float, float]:
    folder = shared_data("squad")
    golds = read_jsonl(folder / GOLD[version])
    preds = json.loads((folder / pred_file).read_text(encoding="utf-8"))
    res = respeval.squad([preds.get(g["id"]) for g in golds], [g["answers"] for g in golds], version=version)
    return res.exact_match, res.f1


def squad_cli(capsys, pred: Path | str, version: str, *more: str) -> tuple[int, dict, str]:
    gold = shared_data("squad") / GOLD[version]
    code, out, err = run(
        capsys, "score", "--pred", str(pred), "--ref", str(gold), "--ref-field", "answers", "--metrics", "squad",
        "--metric-option", f"squad.version={version}", "--bootstrap", "0", "--quiet", "--json", *more,
    )  # fmt: skip
    return code, (json.loads(out) if code == 0 else {}), err


# --------------------------------------------------------------------------- 22


@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_squad_v2_from_the_cli_scores_the_unanswerable_questions(tmp_path, capsys, on_error):
    """Stopped at the first unanswerable question ("expected a non-empty list"); with
    --on-error skip it dropped 5,945 rows and printed the answerable-only score."""
    folder = shared_data("squad")
    golds = read_jsonl(folder / GOLD["v2"])
    preds = json.loads((folder / "predictions-v2.0/bert.json").read_text(encoding="utf-8"))
    aligned = tmp_path / "bert.jsonl"
    aligned.write_text("".join(json.dumps({"id": g["id"], "response": preds[g["id"]]}) + "\n" for g in golds))
    code, summary, err = squad_cli(capsys, aligned, "v2", "--on-error", on_error)
    assert code == 0, err
    assert summary["rows_scored"] == len(golds) == 11873 and summary["rows_failed"] == 0
    values = summary["systems"][0]["values"]
    assert (values["squad_em"], values["squad_f1"]) == library("v2", "predictions-v2.0/bert.json")
    em, f1 = OFFICIAL[("v2", "predictions-v2.0/bert.json")]
    assert abs(values["squad_em"] - em) <= 1e-12 and abs(values["squad_f1"] - f1) <= 1e-12


def test_squad_v1_still_refuses_an_empty_gold_list(tmp_path, capsys):
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"response": "a", "answers": []}\n')
    code, _, err = run(capsys, "score", "--pred", str(pred), "--ref-field", "answers", "--metrics", "squad", "--quiet")
    assert code == 1 and f"{pred}:1: field 'answers': expected a non-empty list" in err


# --------------------------------------------------------------------------- 23


@pytest.mark.parametrize("version, pred_file", sorted(OFFICIAL))
def test_squad_predictions_json_is_read_as_json_and_joined_by_id(capsys, version, pred_file):
    """A SQuAD predictions file ({id: answer}, in no particular order) was read as 10,572
    lines of text.  It is read as JSON and each reference row gets its id's prediction."""
    code, summary, err = squad_cli(capsys, shared_data("squad") / pred_file, version)
    assert code == 0, err
    values = summary["systems"][0]["values"]
    assert summary["rows_scored"] == (11873 if version == "v2" else 10570)
    assert (values["squad_em"], values["squad_f1"]) == library(version, pred_file)
    em, f1 = OFFICIAL[(version, pred_file)]
    assert abs(values["squad_em"] - em) <= 1e-12 and abs(values["squad_f1"] - f1) <= 1e-12


def test_a_missing_prediction_is_a_named_row(tmp_path, capsys):
    """logistic-regression-baseline.json lacks some ids: each such question is a bad row
    naming the id (never a row paired with another question's answer)."""
    code, _, err = squad_cli(capsys, shared_data("squad") / "predictions-v1.1/logistic-regression-baseline.json", "v1")
    assert code == 1 and "no prediction for id" in err and "logistic-regression-baseline.json" in err, err


def test_a_json_array_of_objects_is_rows(tmp_path, capsys):
    rows = [{"response": "the cat sat", "reference": "the cat sat"}, {"response": "a dog", "reference": "the dog"}]
    (tmp_path / "p.json").write_text(json.dumps(rows, indent=2))
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = {}
    for name in ("p.json", "p.jsonl"):
        code, out, err = run(capsys, "score", "--pred", str(tmp_path / name), "--metrics", "rouge1", "--bootstrap",
                             "0", "--quiet", "--json")  # fmt: skip
        assert code == 0, err
        got[name] = json.loads(out)["systems"][0]["values"]
    assert got["p.json"] == got["p.jsonl"]
    code, _, err = run(capsys, "evaluate", "--input", str(tmp_path / "p.json"), "--metric", "exact_match", "--quiet")
    assert code == 0, err


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("rows.de", '{"response": "a"}\n{"response": "b"}\n', "name it .jsonl"),
        ("rows.hyp", '[\n  {"response": "a"}\n]\n', "name it .json"),
        ("rows.dat", "PAR1\x00\x00", "name it .parquet"),
        ("rows.gz", "\x1f\x8b\x08\x00", "decompress"),
        ("rows.json", '{"a": "x"}\n{"b": "y"}\n', "name it .jsonl"),
        ("rows.json", '{"a": {"b": 1}}', "is an array of objects"),
    ],
)
def test_a_mismatched_extension_is_refused_naming_the_right_one(tmp_path, capsys, name, content, says):
    path = tmp_path / name
    path.write_bytes(content.encode("latin-1"))
    code, _, err = run(capsys, "score", "--pred", str(path), "--metrics", "rouge1", "--quiet")
    assert code == 1 and str(path) in err and says in err, err


def test_text_under_a_language_extension_is_still_text(tmp_path, capsys):
    (tmp_path / "hyp.de").write_text("[laut] ein Hund\n{Klammer} zwei\n", encoding="utf-8")
    (tmp_path / "ref.de").write_text("ein Hund\nzwei\n", encoding="utf-8")
    code, out, err = run(capsys, "score", "--pred", str(tmp_path / "hyp.de"), "--ref", str(tmp_path / "ref.de"),
                         "--metrics", "rouge1", "--bootstrap", "0", "--quiet", "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["rows_scored"] == 2, err


@pytest.mark.parametrize("command", ["gate", "judge"])
def test_commands_refuse_a_format_they_do_not_read(tmp_path, capsys, command):
    """gate read a .csv (or a .json) line by line as JSON lines; now it reads CSV, and a
    format it does not read is refused naming the ones it does."""
    path = tmp_path / "rows.json"
    path.write_text('[{"response": "a", "reference": "a"}]\n')
    argv = {
        "gate": ["gate", "--input", str(path)],
        "judge": ["judge", "--input", str(path), "--model", "fake:", "--quiet"],
    }[command]
    code, _, err = run(capsys, *argv)
    assert code == 1 and str(path) in err and ".jsonl, .csv or .parquet" in err and "malformed JSON" not in err, err


# --------------------------------------------------------------------------- 32.3: every command reads JSONL, CSV, Parquet

ROWS = [
    {
        "id": f"q{i}",
        "prompt": f"Question {i}?",
        "reference": f"Answer {i}.",
        "response": f"Answer {i}{'.' if i % 2 else ' maybe'}",
    }
    for i in range(6)
]


def write_all_formats(tmp_path: Path, rows: list[dict]) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp_path.mkdir(exist_ok=True)
    paths = {fmt: tmp_path / f"rows.{fmt}" for fmt in ("jsonl", "csv", "parquet")}
    paths["jsonl"].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with open(paths["csv"], "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    pq.write_table(pa.Table.from_pylist(rows), paths["parquet"])
    return paths


def output_rows(path: Path, drop: tuple[str, ...] = ()) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


@pytest.mark.parametrize(
    "method",
    [
        ["--model", "fake:score=1"],
        ["--model", "fake:", "--method", "pairwise", "--field", "a=response", "--field", "b=reference"],
    ],
)
def test_judge_reads_csv_and_parquet_as_it_reads_jsonl(tmp_path, capsys, method):
    paths = write_all_formats(tmp_path, ROWS)
    got = {}
    for fmt, path in paths.items():
        out = tmp_path / f"out-{fmt}.jsonl"
        code, _, err = run(capsys, "judge", "--input", str(path), *method, "--out", str(out), "--no-cache", "--quiet")
        assert code == 0, err
        got[fmt] = output_rows(out, drop=("latency_s", "elapsed_s"))
    assert len(got["jsonl"]) == len(ROWS) and [r["id"] for r in got["jsonl"]] == [r["id"] for r in ROWS]
    assert got["csv"] == got["jsonl"] and got["parquet"] == got["jsonl"]


def test_gate_reads_csv_and_parquet_as_it_reads_jsonl(tmp_path, capsys):
    paths = write_all_formats(tmp_path, ROWS)
    got = {}
    for fmt, path in paths.items():
        out = tmp_path / f"gate-{fmt}.jsonl"
        code, _, err = run(capsys, "gate", "--input", str(path), "--lexical-accept", "0.6", "--out", str(out), "--json")
        assert code == 0, err
        got[fmt] = output_rows(out)
    assert len(got["jsonl"]) == len(ROWS)
    assert got["csv"] == got["jsonl"] and got["parquet"] == got["jsonl"]


def test_gate_calibrates_on_csv_labels_as_on_jsonl_labels(tmp_path, capsys):
    """A CSV cell is text: its true/false (or 1/0) is the label JSONL writes as a boolean."""
    rows = [
        {"id": f"r{i}", "reference": "alpha beta gamma", "response": resp}
        for i, resp in enumerate(["alpha beta gamma"] * 25 + ["alpha beta"] * 25 + ["delta"] * 25)
    ]
    labels = [{"id": r["id"], "label": r["response"] != "delta"} for r in rows]
    inputs, marks = write_all_formats(tmp_path, rows), write_all_formats(tmp_path / "labels", labels)
    reports = {}
    for fmt in ("jsonl", "csv"):
        argv = ["gate", "--input", str(inputs[fmt]), "--calibrate", str(marks[fmt]), "--target-precision", "0.98"]
        code, out, err = run(capsys, *argv, "--json")
        assert code == 0, err
        reports[fmt] = json.loads(out)
    assert reports["jsonl"]["decisions"] == {"accept": 50, "reject": 25, "unscored": 0, "undecided": 0}
    assert reports["csv"]["decisions"] == reports["jsonl"]["decisions"]
    assert reports["csv"]["stages"] == reports["jsonl"]["stages"]


def test_a_bad_csv_or_parquet_row_is_named_by_file_row_and_field(tmp_path, capsys):
    paths = write_all_formats(
        tmp_path, [{**r, "reference": None if i == 2 else r["reference"]} for i, r in enumerate(ROWS)]
    )
    # a CSV cell is always text: a column it lacks is what goes wrong (the header is line 1)
    paths["csv"].write_text("id,response\n" + "".join(f"q{i},a\n" for i in range(4)), encoding="utf-8")
    for fmt, where in (("csv", "rows.csv:2"), ("parquet", "rows.parquet:row 2")):
        code, _, err = run(capsys, "judge", "--input", str(paths[fmt]), "--model", "fake:", "--quiet")
        assert code == 1 and f"{where}: field 'reference'" in err, err


# --------------------------------------------------------------------------- 25


@pytest.mark.parametrize(
    "refs, nrefs",
    [(["the cat sat", "a dog ran"], "1"), ([["the cat sat", "a cat sat"], ["a dog", "the dog"]], "2"),
     ([["the cat sat"], ["a dog", "the dog"]], "var")],
)  # fmt: skip
def test_mt_signatures_count_the_references_given(tmp_path, capsys, refs, nrefs):
    """The CLI's BLEU/chrF/TER signatures said nrefs:var with one reference file; the library
    and sacreBLEU say nrefs:1.  The signature counts the references of the rows scored, on a
    resumed run too."""
    hyps = ["the cat sat", "a dog ran"]
    (tmp_path / "h.txt").write_text("\n".join(hyps) + "\n")
    if isinstance(refs[0], str):
        ref = tmp_path / "r.txt"
        ref.write_text("\n".join(refs) + "\n")
        ref_field = []
    else:
        ref = tmp_path / "r.jsonl"
        ref.write_text("".join(json.dumps({"refs": r}) + "\n" for r in refs))
        ref_field = ["--ref-field", "refs"]
    for extra in ([], ["--out", str(tmp_path / "o.jsonl"), "--chunk-size", "1"]):
        code, out, err = run(capsys, "score", "--pred", str(tmp_path / "h.txt"), "--ref", str(ref), *ref_field,
                             "--metrics", "bleu,chrf,ter", "--bootstrap", "0", "--quiet", "--json", *extra)  # fmt: skip
        assert code == 0, err
        signatures = json.loads(out)["signatures"]
        for name in ("bleu", "chrf", "ter"):
            assert f"nrefs:{nrefs}|" in signatures[name], signatures
    lib = respeval.bleu(hyps, refs).signature
    assert lib.startswith(f"nrefs:{nrefs}|")


def test_evaluate_mt_signatures_count_the_references_given(tmp_path, capsys):
    data = tmp_path / "mt.jsonl"
    data.write_text(
        '{"response": "the cat sat", "reference": "the cat sat"}\n{"response": "a dog", "reference": "the dog"}\n'
    )
    summary = tmp_path / "s.json"
    code, _, err = run(capsys, "evaluate", "--input", str(data), "--metric", "bleu", "--metric", "ter", "--metric",
                       "chrf", "--summary-out", str(summary), "--quiet")  # fmt: skip
    assert code == 0, err
    signatures = json.loads(summary.read_text())["signatures"]
    assert all("nrefs:1|" in signatures[m] for m in ("bleu", "ter", "chrf")), signatures


def test_chunk_stats_keep_the_reference_counts_through_a_parts_file():
    import numpy as np

    from respeval.bulk.chunks import ChunkStats

    stats = ChunkStats([("s", None, np.array([0, 1]), {"bleu": np.zeros((2, 10))})], {2})
    assert ChunkStats.from_arrays(stats.to_arrays()).nrefs == {2}
