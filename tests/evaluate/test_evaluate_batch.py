"""``respeval evaluate --batch``: the judged metrics' requests go out as provider batches
before the chunks are scored; the table is the one an interactive run writes, and a rerun
sends nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from _helpers.batch_api import BatchAPI
from _helpers.judge_server import JudgeServer, evaluate_responder
from respeval.cli import main

SPEC = """\
metrics:
  - exact_match
  - pointwise: claims
    template: "Check the answer.\\nQuestion: {prompt}\\nAnswer: {response}"
    system_instruction: "You are an expert claims auditor."
    rating_rubric: {"5": "right", "1": "wrong"}
  - pairwise: preference
    template: "Question: {prompt}\\nFirst: {baseline_model_response}\\nSecond: {response}\\nWhich is better?"
"""


def write(tmp_path: Path, n: int) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    with open(tmp_path / "rows.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n):
            row = {"id": i, "prompt": f"Which city is {i % 9}?", "response": f"city {i % 9}",
                   "reference": f"city {i % 9}", "baseline_model_response": f"maybe city {i}"}  # fmt: skip
            fh.write(json.dumps(row) + "\n")


def args(tmp_path: Path, url: str, out: str, *extra: str) -> list[str]:
    return ["evaluate", "--input", str(tmp_path / "rows.jsonl"), "--spec", str(tmp_path / "spec.yaml"),
            "--model", "openai:gpt-4o-mini", "--base-url", url, "--id-field", "id", "--bootstrap", "0",
            "--chunk-size", "25", "--out", str(tmp_path / out), "--quiet", *extra]  # fmt: skip


def test_evaluate_batch_gives_the_interactive_table_and_reruns_for_free(tmp_path, capsys):
    write(tmp_path, 60)
    api = BatchAPI(responder=evaluate_responder, error_rate=0.05, seed=5)
    with JudgeServer(responder=evaluate_responder, batch_api=api) as server:
        assert main(args(tmp_path, server.url, "interactive.parquet")) == 0
        # a call retried on this loaded machine (a timeout) is one request: the batch sends it once
        interactive_calls = server.stats()["distinct_requests"]
        interactive_sent = server.stats()["requests"]
        capsys.readouterr()
        batch = args(tmp_path, server.url, "batch.parquet", "--batch", "--batch-poll", "0.02", "--json",
                     "--cache", str(tmp_path / "batch.sqlite"))  # fmt: skip
        assert main(batch) == 0
        summary = json.loads(capsys.readouterr().out)
        assert server.stats()["requests"] == interactive_sent  # nothing interactive in batch mode
        batches = len(api.submissions)
        assert main(batch) == 0
        again = json.loads(capsys.readouterr().out)
        assert len(api.submissions) == batches  # the rerun sent nothing
    report = summary["batch"]
    # every distinct request the interactive run made, once; all chunks' requests in one first round
    assert report["succeeded"] == interactive_calls and report["rounds"] >= 2 + (report["resubmitted"] > 0)
    assert report["failed"] == report["resubmitted"] + report["gave_up"] and report["cost"] > 0
    assert api.submissions[0]["custom_ids"] and len(api.submissions[0]["custom_ids"]) == interactive_calls
    assert again["batch"]["requests_submitted"] == 0
    judged = [c for c in pq.read_table(tmp_path / "interactive.parquet").column_names if "/" in c]
    assert (
        pq.read_table(tmp_path / "batch.parquet")
        .select(judged)
        .equals(pq.read_table(tmp_path / "interactive.parquet").select(judged))
    )
