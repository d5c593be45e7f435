"""``{metric}/judge_calls``: every judged row keeps what the judge was asked and answered (the
messages, the raw reply, the sample, the order of a pairwise call), scrubbed of secrets, so
``respeval view`` can show a row's judge prompt, raw reply and both orders of a pairwise call."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from _helpers.judge_server import JudgeServer, evaluate_responder
from respeval.cli import main

SECRET = "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2


def test_evaluate_keeps_each_judge_call(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    with rows.open("w") as fh:
        for i in range(6):
            fh.write(
                json.dumps(
                    {
                        "id": f"q{i}",
                        "prompt": f"What is {i} + {i}?",
                        "context": f"{i} + {i} = {2 * i}",
                        "response": f"It is {2 * i}." + (f" my key {SECRET}" if i == 1 else ""),
                        "reference": str(2 * i),
                        "baseline_model_response": f"{2 * i}",
                    }
                )
                + "\n"
            )
    spec = tmp_path / "spec.yaml"
    spec.write_text("metrics:\n  - GROUNDING\n  - {pairwise: preference, flip: both}\n  - exact_match\n")
    out = tmp_path / "rows.parquet"
    with JudgeServer(responder=evaluate_responder) as server:
        args = ["evaluate", "--input", str(rows), "--spec", str(spec), "--model", "openai:judge"]
        args += ["--base-url", server.url, "--quiet", "--bootstrap", "0", "--out", str(out), "--id-field", "id"]
        assert main(args) == 0
    capsys.readouterr()
    table = pq.read_table(out).to_pylist()
    assert "exact_match/judge_calls" not in table[0]  # a computed metric asks no judge
    for record in table:
        (call,) = json.loads(record["GROUNDING/judge_calls"])
        prompt = "\n".join(m["content"] for m in call["messages"])
        assert record["context"] in prompt and call["messages"][0]["role"] == "system"
        reply = json.loads(call["reply"])  # the raw reply, as the server sent it
        assert reply["score"] == record["GROUNDING/score"] and call["sample"] == 0
        ab, ba = json.loads(record["preference/judge_calls"])  # both orders of the pair
        assert (ab["order"], ab["flipped"], ba["order"], ba["flipped"]) == ("ab", False, "ba", True)
        label = {"A": "BASELINE", "B": "CANDIDATE", "TIE": "TIE"}
        assert label[json.loads(ab["reply"])["winner"]] == record["preference/pairwise_choice"]
    calls = [r[c] for r in table for c in ("GROUNDING/judge_calls", "preference/judge_calls")]
    assert all(SECRET not in text for text in calls)  # a key pasted into a response stays out of the calls
    assert "my key" in table[1]["GROUNDING/judge_calls"]
