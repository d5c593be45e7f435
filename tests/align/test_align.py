"""respeval.align (issue 33, point 1): the seeded stratified split, the optimiser that sees the
train rows only, held-out numbers before/after with intervals, the frozen judge spec whose hash
is in the cache key and the signature, the bias probes; through a deterministic toy judge that
learns from its prompt's examples, as a Python callable and behind a real 127.0.0.1 server."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import respeval
from _helpers.cli import run_cli
from _helpers.judge_server import JudgeServer
from _helpers.paths import shared_data
from respeval.align import run as align_run
from respeval.align import stratified_split
from respeval.align.example import dataset_path, nearest_example_judge, openai_body_reply, spec_path
from respeval.io import InputError
from respeval.judge import CallableModel, FakeModel, OpenAIChatModel
from respeval.judge.cache import KeyMaker
from respeval.judge.methods.templates import PointwiseMetric
from respeval.judge.models.base import Capabilities

TOY = "python:respeval.align.example:nearest_example_judge"


def _rows() -> list[dict[str, Any]]:
    with open(dataset_path(), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


# --------------------------------------------------------------------------- the split


def test_the_split_is_seeded_stratified_and_disjoint():
    labels = ["a"] * 10 + ["b"] * 6 + ["c"] * 3
    train, held = stratified_split(labels, held_out=0.5, seed=7)
    assert sorted(train + held) == list(range(len(labels)))
    assert not set(train) & set(held)
    for label, n in (("a", 10), ("b", 6), ("c", 3)):
        on_held = sum(labels[i] == label for i in held)
        assert on_held == min(n - 1, max(1, round(n * 0.5)))
        assert on_held >= 1 and n - on_held >= 1
    assert stratified_split(labels, held_out=0.5, seed=7) == (train, held)
    others = {tuple(stratified_split(labels, held_out=0.5, seed=s)[1]) for s in range(8)}
    assert len(others) > 1  # the seed matters


def test_a_label_with_one_row_is_refused_naming_it_and_its_row():
    with pytest.raises(InputError, match=r"label 'TIE' has 1 row \(labels\.jsonl:3\).*at least 2 rows"):
        stratified_split(["A", "B", "TIE", "A", "B"], where=[f"labels.jsonl:{i}" for i in range(1, 6)], source="x")


def test_bad_rows_are_refused_naming_file_line_and_field(tmp_path):
    rows = _rows()[:6]
    path = tmp_path / "labelled.jsonl"

    def write(rs: Sequence[dict[str, Any]]) -> None:
        path.write_text("".join(json.dumps(r) + "\n" for r in rs), encoding="utf-8")

    broken = [dict(r) for r in rows]
    del broken[3]["label"]
    write(broken)
    with pytest.raises(InputError, match=r"labelled\.jsonl:4: field 'label': missing"):
        respeval.align(path, spec_path(), TOY)
    broken = [dict(r) for r in rows]
    broken[2]["label"] = 3
    write(broken)
    with pytest.raises(InputError, match=r"labelled\.jsonl:3: field 'label': 3 is not one of the judge's labels"):
        respeval.align(path, spec_path(), TOY)
    broken = [dict(r) for r in rows]
    del broken[4]["output_2"]
    write(broken)
    with pytest.raises(InputError, match=r"labelled\.jsonl:5: field 'output_2': missing"):
        respeval.align(path, spec_path(), TOY)
    one = [dict(r, label=1) for r in rows]
    one[0]["label"] = 2
    write(one)
    with pytest.raises(InputError, match=r"labelled\.jsonl: label '2' has 1 row \(.*labelled\.jsonl:1\)"):
        respeval.align(path, spec_path(), TOY)


# --------------------------------------------------------------------------- the toy judge


def test_the_toy_judge_answers_from_its_examples_only():
    rows = _rows()
    metric, _ = respeval.align.load_judge_spec(spec_path())
    model = CallableModel(nearest_example_judge)
    plain = respeval.judge.run(rows[:10], model, method=metric)
    assert [r.verdict["label"] for r in plain.rows] == ["1"] * 10  # no examples: the first label

    def example(row: dict[str, Any], answer: str) -> dict[str, Any]:
        return {"values": {k: row[k] for k in ("input", "output_1", "output_2")}, "answer": answer}

    shown = PointwiseMetric(
        metric.name, metric.template, criteria=metric.criteria, labels=["1", "2"], examples=[example(rows[0], "2")]
    )
    one = respeval.judge.run(rows[:10], model, method=shown)
    assert [r.verdict["label"] for r in one.rows] == ["2"] * 10  # one example: its grade, always
    # the row itself as an example, among others: its own grade comes back
    many = PointwiseMetric(
        metric.name,
        metric.template,
        labels=["1", "2"],
        examples=[example(rows[i], str(3 - rows[i]["label"])) for i in range(4)],
    )
    got = respeval.judge.run(rows[:4], model, method=many)
    assert [r.verdict["label"] for r in got.rows] == [str(3 - rows[i]["label"]) for i in range(4)]


# --------------------------------------------------------------------------- held-out labels


class _Poisoned(Sequence[Any]):
    """The held-out labels, which raise on any read while ``armed``."""

    def __init__(self, labels: Sequence[Any]) -> None:
        self.labels = list(labels)
        self.armed = True
        self.reads = 0

    def _check(self) -> None:
        if self.armed:
            raise AssertionError("a held-out label was read before the optimiser finished")
        self.reads += 1

    def __getitem__(self, i: Any) -> Any:
        self._check()
        return self.labels[i]

    def __len__(self) -> int:
        self._check()
        return len(self.labels)

    def __iter__(self) -> Any:
        self._check()
        return iter(self.labels)


def test_the_optimiser_never_reads_the_held_out_labels(monkeypatch):
    rows = _rows()
    seen: dict[str, Any] = {"requests": []}
    real_split, real_optimise = align_run.make_split, align_run.optimise

    def split(*args: Any, **kwargs: Any) -> Any:
        s = real_split(*args, **kwargs)
        poisoned = _Poisoned(s.held_out_labels)
        seen["poison"], seen["split"] = poisoned, s
        return type(s)(s.seed, s.held_out_fraction, s.train, s.held_out, poisoned)

    async def optimise(metric: Any, train: Any, model: Any, **kwargs: Any) -> Any:
        seen["train"] = [r.row for r in train]
        seen["optimising"] = True
        try:
            return await real_optimise(metric, train, model, **kwargs)
        finally:
            seen["optimising"] = False
            seen["poison"].armed = False  # scoring the judges on the held-out rows may read them now

    def judge(request: Any) -> dict[str, Any]:
        if seen.get("optimising"):
            seen["requests"].append("\n".join(m.content for m in request.messages))
        return nearest_example_judge(request)

    monkeypatch.setattr(align_run, "make_split", split)
    monkeypatch.setattr(align_run, "optimise", optimise)
    result = respeval.align(rows, spec_path(), CallableModel(judge, version="1"), n_boot=50)
    held = [r.row for r in seen["split"].held_out]
    assert seen["train"] and held and not set(seen["train"]) & set(held)
    assert seen["poison"].reads > 0  # read afterwards, to score the held-out rows
    # the held-out rows reach the optimiser in no form: no prompt it sent holds one of their texts
    assert seen["requests"]
    held_texts = [rows[i]["output_1"] for i in held if len(rows[i]["output_1"]) > 40]
    train_texts = {rows[i]["output_1"] for i in seen["train"]}
    assert held_texts
    for text in held_texts:
        if text in train_texts:  # the same output under two instructions
            continue
        assert not any(text in prompt for prompt in seen["requests"]), text[:60]
    assert all(c.example_rows == () or set(c.example_rows) <= set(seen["train"]) for c in result.candidates)
    # a held-out row carries no label field at all
    assert all("label" not in r.record for r in seen["split"].held_out)


# --------------------------------------------------------------------------- real data


def test_alignment_on_llmbar_held_out_before_and_after_with_intervals(tmp_path):
    data = shared_data("judge", "llmbar", "Dataset", "LLMBar", "Adversarial", "Neighbor", "dataset.json")
    out = tmp_path / "aligned.json"
    result = respeval.align(data, spec_path(), TOY, seed=0, swap=("output_1", "output_2"), out=out)
    assert len(result.split.train) + len(result.split.held_out) == 134
    numbers = result.held_out()
    before, after = numbers["before"], numbers["after"]
    # the judge as given answers "1" every time: chance, no agreement beyond it
    assert before["balanced_accuracy"]["value"] == 0.5 and before["cohen_kappa"]["value"] == 0.0
    # the examples chosen on the train split carry over to the held-out rows
    assert after["balanced_accuracy"]["value"] > 0.75
    assert after["balanced_accuracy"]["low"] > 0.6 and after["cohen_kappa"]["low"] > 0.2
    for side in (before, after):
        for v in side.values():
            assert v["low"] <= v["value"] <= v["high"] and v["confidence"] == 0.95
    # the paired difference: the same resampled rows score both judges
    for name, d in result.difference.items():
        assert d["value"] == pytest.approx(after[name]["value"] - before[name]["value"], abs=1e-12)
        assert d["low"] <= d["value"] <= d["high"]
    assert result.difference["balanced_accuracy"]["low"] > 0  # an improvement beyond the resampling noise
    # balanced F1 is the macro F1, kappa is Cohen's, both as scikit-learn computes them
    sklearn = pytest.importorskip("sklearn.metrics")
    ag = result.after.agreement
    assert ag is not None
    human, judged = [], []
    for i, h in enumerate(ag.labels):
        for j, jl in enumerate(ag.labels):
            human += [h] * int(ag.confusion.matrix[i, j])
            judged += [jl] * int(ag.confusion.matrix[i, j])
    assert ag.cohen_kappa == pytest.approx(sklearn.cohen_kappa_score(human, judged), abs=1e-12)
    assert ag.macro_f1 == pytest.approx(sklearn.f1_score(human, judged, average="macro"), abs=1e-12)
    assert ag.balanced_accuracy == pytest.approx(sklearn.balanced_accuracy_score(human, judged), abs=1e-12)
    # the bias probes ran on both judges
    assert result.before.pairwise is not None and result.after.pairwise is not None
    assert result.after.verbosity is not None
    # the frozen spec is what was scored, and a rerun finds the same
    frozen = json.loads(out.read_text())
    assert frozen["spec_hash"] == result.spec_hash and frozen["spec_version"] == 1
    assert len(frozen["examples"]) == len(result.chosen.metric.examples) > 0
    assert frozen["aligned"]["held_out"] == json.loads(json.dumps(numbers))
    again = respeval.align(data, spec_path(), TOY, seed=0, swap=("output_1", "output_2"))
    assert again.spec_hash == result.spec_hash and again.held_out() == numbers


# --------------------------------------------------------------------------- the frozen spec


def test_the_frozen_spec_hash_is_in_the_cache_key_and_the_signature(tmp_path):
    out = tmp_path / "aligned.json"
    result = respeval.align(dataset_path(), spec_path(), TOY, n_boot=0, out=out)
    metric, entry = respeval.align.load_judge_spec(out)
    assert metric.spec_hash == result.spec_hash == entry["spec_hash"]
    assert f"spec:{result.spec_hash}" in metric.signature()
    assert f"+spec:{result.spec_hash}" in metric.template_version
    row = _rows()[0]
    caps = Capabilities(temperature=True, seed=True, json_schema=True)
    request = metric.build(metric.item(row), caps)
    assert request.template_version == metric.template_version
    unfrozen = {k: v for k, v in entry.items() if k not in ("spec_hash", "aligned")}
    same_prompt, _ = respeval.align.load_judge_spec(unfrozen)
    other = same_prompt.build(same_prompt.item(row), caps)
    assert other.messages == request.messages  # the same prompt ...
    keys = KeyMaker({"provider": "test"})
    assert keys(other) != keys(request)  # ... keyed apart: the hash is in the key
    # aligning the frozen judge again bumps the version
    again = respeval.align(dataset_path(), out, TOY, n_boot=0, candidates=2)
    assert again.spec["spec_version"] == 2
    # a frozen judge edited by hand is refused, naming what to do
    entry["examples"][0]["answer"] = "2" if entry["examples"][0]["answer"] == "1" else "1"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(entry), encoding="utf-8")
    with pytest.raises(InputError, match="spec_hash .* does not match its content"):
        respeval.align.load_judge_spec(edited)


# --------------------------------------------------------------------------- guideline rewriting


def test_guidelines_rewritten_from_train_disagreements_only(tmp_path):
    rows = _rows()
    asked: list[str] = []

    def rewriter(request: Any) -> dict[str, Any]:
        asked.append(request.messages[-1].content)
        return {"reasoning": "the people prefer the output that does what was asked", "guidelines": "- Prefer X."}

    result = respeval.align(rows, spec_path(), TOY, rewriter=FakeModel(rewriter), candidates=3, n_boot=0, seed=3)
    rewrites = [c for c in result.candidates if c.origin == "rewrite"]
    assert len(asked) == 1 and len(rewrites) == 1
    assert rewrites[0].metric.guidelines == "- Prefer X."
    assert rewrites[0].score is not None  # scored on the train split like every candidate
    train_ids = {r.record["id"] for r in result.split.train}
    held_ids = {r.record["id"] for r in result.split.held_out}
    by_id = {r["id"]: r for r in rows}
    for i in held_ids - train_ids:
        assert by_id[i]["output_2"] not in asked[0]
    assert any(by_id[i]["output_2"] in asked[0] for i in train_ids)


# --------------------------------------------------------------------------- a real HTTP server


def test_alignment_through_a_local_server_in_openai_wire_format():
    direct = respeval.align(dataset_path(), spec_path(), TOY, swap=("output_1", "output_2"), n_boot=200)
    with JudgeServer(responder=openai_body_reply) as server:
        model = OpenAIChatModel("toy-judge", base_url=server.url, api_key_env="RESPEVAL_NO_SUCH_KEY")
        served = respeval.align(dataset_path(), spec_path(), model, swap=("output_1", "output_2"), n_boot=200)
        bodies = [r.body for r in server.records if r.status == 200 and isinstance(r.body, dict)]
    assert served.held_out() == direct.held_out()
    assert served.spec_hash == direct.spec_hash
    assert [c.score for c in served.candidates] == [c.score for c in direct.candidates]
    assert len(bodies) >= sum(c.score.rows for c in served.candidates if c.score)
    assert all(b["model"] == "toy-judge" and b["messages"][0]["role"] == "system" for b in bodies)


# --------------------------------------------------------------------------- the command line


def test_the_command_runs_the_shipped_example(capsys, tmp_path):
    code, out, err = run_cli(capsys, "align", "--example", "--bootstrap", "200")
    assert code == 0, err
    assert "held out (20 rows, 95% bootstrap intervals)" in out
    assert "balanced accuracy" in out and "Cohen's kappa" in out and "position consistency" in out
    target = tmp_path / "aligned.json"
    code, out, err = run_cli(capsys, "align", "--example", "--json", "--bootstrap", "0", "--out", str(target))
    assert code == 0, err
    data = json.loads(out)
    assert data["spec_hash"] == json.loads(target.read_text())["spec_hash"]
    assert set(data["held_out_scores"]) == {"before", "after"}


def test_the_command_names_what_is_missing_and_bad_input(capsys, tmp_path):
    code, _, err = run_cli(capsys, "align", "--input", dataset_path(), "--spec", spec_path(), "--model", TOY)
    assert code == 1 and "give --out" in err
    labelled = tmp_path / "rows.jsonl"
    rows = _rows()[:5]
    del rows[1]["label"]
    labelled.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run_cli(
        capsys,
        "align",
        "--input",
        str(labelled),
        "--spec",
        spec_path(),
        "--model",
        TOY,
        "--out",
        str(tmp_path / "o.json"),
    )
    assert code == 1 and "rows.jsonl:2: field 'label': missing" in err
    assert not (tmp_path / "o.json").exists()


def test_a_score_judge_aligns_too():
    rng = np.random.default_rng(0)
    rows = [
        {"prompt": f"question {i}", "response": " ".join(["word"] * int(n)), "rating": int(min(5, 1 + n // 4))}
        for i, n in enumerate(rng.integers(1, 20, size=40))
    ]
    spec = {"pointwise": "length", "template": "Q: {prompt}\nA: {response}", "score_range": [1, 5]}
    result = respeval.align(rows, spec, TOY, label_field="rating", n_boot=100)
    assert result.before.agreement is not None and result.after.agreement is not None
    assert result.after.agreement.balanced_accuracy >= result.before.agreement.balanced_accuracy
    assert result.spec["score_range"] == [1, 5]


def test_a_stopped_judge_reports_nothing_and_a_rerun_resumes_from_the_cache(capsys, tmp_path):
    cache = tmp_path / "align.sqlite"
    out = tmp_path / "aligned.json"
    args = ["align", "--example", "--bootstrap", "0", "--cache", str(cache), "--out", str(out)]
    code, stdout, err = run_cli(capsys, *args, "--budget-calls", "30")
    assert code == 4 and "stopped" in err and "rerun with the same --cache" in err
    assert stdout == "" and not out.exists()
    code, stdout, err = run_cli(capsys, *args)
    assert code == 0, err
    first = json.loads(out.read_text())
    code, _, err = run_cli(capsys, *args, "--replay-only")  # every answer is in the cache now
    assert code == 0, err
    assert json.loads(out.read_text())["spec_hash"] == first["spec_hash"]
