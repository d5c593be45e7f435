"""One rule for every mean (issue 28, point 28): the exactly rounded sum divided by the count
(``math.fsum(values) / n``), the rule ``score`` follows, in the judge's summaries (plain,
sampled, rubric), over the local HTTP server too, in ``evaluate``'s summary, a report's system
table and the scoring adapter.

On main the judge summed scores one float at a time: ``fake:score=0.7`` over 100 rows gave
a mean of 0.7000000000000013; numpy's pairwise ``mean()`` gave 0.7000000000000002 elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import math
import random

import pytest

from respeval import judge
from respeval.judge import CallableModel, Pointwise

N = 100
EXACT = math.fsum([0.7] * N) / N  # 0.7; a running float sum gives 0.7000000000000013


def rows(n: int = N) -> list[dict]:
    return [{"id": i, "prompt": f"q{i}", "reference": "r", "response": f"c{i} [[score=0.7]]"} for i in range(n)]


def test_the_judge_summary_mean_is_exactly_rounded():
    result = judge.run(rows(), "fake:score=0.7")
    assert result.summary.scored == N
    assert result.summary.mean_score == EXACT == 0.7
    assert result.summary.to_json()["mean_score"] == 0.7
    assert "mean score  0.7000" in result.summary.format()


def test_the_judge_summary_mean_over_the_real_server_is_exactly_rounded():
    from _helpers.judge_server import JudgeServer
    from respeval.judge import OpenAIChatModel

    with JudgeServer() as server:  # the server's judge answers the [[score=S]] tag
        result = judge.run(rows(), OpenAIChatModel("m", base_url=server.url), concurrency=8)
    assert result.summary.scored == N and result.summary.mean_score == EXACT


def test_a_batch_mode_summary_merged_over_passes_keeps_the_exact_mean():
    from respeval.judge.results import RunSummary

    first, second = RunSummary("pointwise", "s", "m"), RunSummary("pointwise", "s", "m")
    for summary, n in ((first, 37), (second, N - 37)):
        for i in range(n):
            summary.add(judge.RowResult(row=i, id=i, status="scored", verdict={"score": 0.7, "pass": True}))
    first.merge(second)
    assert first.scored == N and first.mean_score == EXACT


def test_the_sampled_and_rubric_summaries_mean_is_exactly_rounded():
    from respeval.judge.methods.rubrics import Criterion, Rubric, arun_rubric
    from respeval.judge.methods.sampling import arun_sampled

    seven = CallableModel(lambda request: '{"reasoning": "r", "score": 0.7, "pass": true}', name="seven")
    sampled = asyncio.run(arun_sampled(rows(), seven, Pointwise(), samples=1))
    assert sampled.to_json()["mean_score"] == EXACT

    criteria = [Criterion(f"c{k}", f"criterion {k}", "HIGH") for k in range(10)]

    def verdicts(request):  # 7 of 10 criteria pass: a row scores 0.7
        return json.dumps({"verdicts": [{"id": f"c{k}", "reasoning": "r", "pass": k < 7} for k in range(10)]})

    report = asyncio.run(arun_rubric(rows(), CallableModel(verdicts, name="rubric"), Rubric(criteria, weighted=False)))
    assert [r.verdict["score"] for r in report.rows] == [0.7] * N
    assert report.to_json()["mean_score"] == EXACT


def test_evaluate_summary_mean_is_exactly_rounded():
    import respeval
    from respeval.evaluate import CustomMetric

    result = respeval.evaluate(rows(1000), metrics=[CustomMetric("seven", lambda row: 0.7)])
    assert result.summary_metrics["seven/mean"] == math.fsum([0.7] * 1000) / 1000 == 0.7


def test_a_report_system_table_mean_is_exactly_rounded():
    from respeval.report.schema import system_table

    table = system_table("m", [0.7] * 1000, ["a"] * 1000, n_boot=0)
    assert table["rows"][0]["mean"] == 0.7


def test_the_scoring_adapter_mean_is_exactly_rounded():
    from respeval._adapters.scoring import score_rows

    rng = random.Random(0)
    words = "the cat sat on a mat dog ran far away".split()
    for _ in range(3):  # the third draw is one where numpy's pairwise mean is off by one ulp
        preds = [" ".join(rng.choice(words) for _ in range(5)) for _ in range(40)]
        refs = [" ".join(rng.choice(words) for _ in range(5)) for _ in range(40)]
    got = score_rows("rouge1", preds, refs)
    values = [v for v in got["scores"] if v is not None]
    assert got["mean"] == math.fsum(values) / len(values) == 0.35500000000000004


@pytest.mark.parametrize("command", ["judge"])
def test_the_cli_judge_summary_mean_is_exactly_rounded(tmp_path, capsys, command):
    from respeval.cli import main

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    code = main(
        [command, "--input", str(data), "--model", "fake:score=0.7", "--out", str(tmp_path / "o.jsonl"), "--json"]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mean_score"] == 0.7, summary
