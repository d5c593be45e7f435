"""Small real runs written by the commands themselves, for the viewer's tests: a score run
(one system named by a hostile file stem), evaluate runs with a judge and a pairwise metric
(one metric with a hostile name, one response with a script payload), an agent run."""

from __future__ import annotations

import json
from pathlib import Path

from _helpers.judge_server import JudgeServer, evaluate_responder
from respeval.cli import main

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2;alert(2)">'
HOSTILE_NAME = '<img src=x onerror="window.__pwned=3;alert(3)">'  # a system and a metric name (no "/")
SPEC = (
    "metrics:\n"
    "  - exact_match\n  - bleu\n"
    "  - GROUNDING\n"
    "  - {pairwise: preference, flip: both}\n"
    f"  - {{metric: json_valid, name: {json.dumps(HOSTILE_NAME)}}}\n"
)


def write_rows(path: Path, n: int, style: str) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            answer = f"city {i % 9}"
            response = f"It is {answer}." if style == "a" else f"The answer is {answer}, I believe."
            if i == 1:
                response += " " + PAYLOAD
            fh.write(
                json.dumps(
                    {
                        "id": f"q{i}",
                        "prompt": f"Which city is number {i % 9}?",
                        "response": response,
                        "reference": answer,
                        "context": f"Policy {i % 4}: city number {i % 9} is {answer}.",
                        "baseline_model_response": f"Maybe {answer}.",
                    }
                )
                + "\n"
            )


def evaluate_run(root: Path, name: str, style: str, n: int = 30) -> Path:
    folder = root / name
    folder.mkdir()
    write_rows(folder / "rows.jsonl", n, style)
    (folder / "spec.yaml").write_text(SPEC)
    with JudgeServer(responder=evaluate_responder) as server:
        args = ["evaluate", "--input", str(folder / "rows.jsonl"), "--spec", str(folder / "spec.yaml")]
        args += ["--model", "openai:judge", "--base-url", server.url, "--id-field", "id", "--quiet"]
        args += [
            "--bootstrap",
            "50",
            "--out",
            str(folder / "rows.parquet"),
            "--summary-out",
            str(folder / "summary.json"),
        ]
        assert main(args) == 0
    return folder


def score_run(root: Path) -> Path:
    """Two systems, one named by a hostile file stem, scored with BLEU and TER."""
    folder = root / "score"
    folder.mkdir()
    refs = folder / "refs.txt"
    refs.write_text("".join(f"the cat number {i} sat on the mat\n" for i in range(20)))
    (folder / "plain.txt").write_text("".join(f"the cat number {i} sat on a mat\n" for i in range(20)))
    (folder / f"{HOSTILE_NAME}.txt").write_text("".join(f"a dog {i} ran off {PAYLOAD}\n" for i in range(20)))
    args = ["score", "--pred", str(folder / "plain.txt"), "--pred", str(folder / f"{HOSTILE_NAME}.txt")]
    args += ["--ref", str(refs), "--metrics", "bleu,ter", "--bootstrap", "50", "--quiet"]
    args += ["--out", str(folder / "rows.parquet"), "--summary-out", str(folder / "summary.json")]
    assert main(args) == 0
    return folder


def agent_run(root: Path) -> Path:
    folder = root / "agent"
    folder.mkdir()
    main(["agent", "--example", "--out", str(folder / "results.json"), "--summary-out", str(folder / "summary.json")])
    return folder
