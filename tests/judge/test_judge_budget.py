"""The budget is a hard cap, and what is reported is what was spent (issue 28, point 13).

Every live request reserves its worst case before it is sent (its input bounded from above:
a token is at least one byte of UTF-8, plus each message's framing; its whole max_tokens as
output) and settles on the provider's reported usage; a request whose worst case the budget
cannot cover is never started.  Tested against the local HTTP server speaking OpenAI's and
Anthropic's wire formats, at high concurrency, with latency, so that many calls are in flight.

On main, ``--concurrency 64 --budget-usd 0.70`` started every call the workers could take
(the check came before the call and the cost after it) and then printed "budget reached:
$0.7000 of max $0.7000" whatever had been spent.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from _helpers.judge_server import JudgeServer
from respeval import judge
from respeval.judge import AnthropicModel, Budget, CallableModel, EngineOptions, OpenAIChatModel, Pointwise, Price
from respeval.judge.limits import BudgetTracker
from respeval.judge.methods.sampling import arun_sampled
from respeval.judge.models.base import JudgeRequest, Message, input_token_bound

PRICE = Price(input_per_million=100.0, output_per_million=100.0)  # $0.0001 a token: a call costs cents
CAP = 0.70
FAST = {"backoff_base": 0.001, "backoff_max": 0.005}
PROVIDERS = ("openai", "anthropic")


def items(n: int) -> list[dict]:
    filler = " ".join(f"word{k}" for k in range(60))
    return [
        {"id": i, "prompt": f"Question {i}? {filler}", "reference": f"Answer {i}.", "response": f"Answer {i}. {filler}"}
        for i in range(n)
    ]


def model_for(provider: str, server: JudgeServer):
    if provider == "openai":
        return OpenAIChatModel("m", base_url=server.url)
    return AnthropicModel("claude-test", base_url=server.url.removesuffix("/v1"), structured="none")


def spent_at_the_server(server: JudgeServer) -> float:
    stats = server.stats()
    return PRICE.cost(stats["delivered_prompt_tokens"], stats["delivered_completion_tokens"])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cost_budget_is_never_overrun_at_high_concurrency(provider):
    with JudgeServer(latency=0.05) as server:
        result = judge.run(
            items(300), model_for(provider, server), concurrency=64, budget=Budget(max_cost=CAP), prices=PRICE, **FAST
        )
        calls = server.stats()["requests"]
        at_server = spent_at_the_server(server)
    s = result.summary
    assert result.stop_kind == "budget"
    assert s.cost <= CAP, f"spent ${s.cost:.4f} of a ${CAP} budget in {calls} calls"
    assert s.cost == pytest.approx(at_server, rel=1e-12, abs=1e-12)  # what is reported is what was spent
    assert s.calls == calls and s.scored + s.unscored + len(result.not_run) == 300
    assert s.cost > CAP / 2  # and the budget was used, not refused at the first worst case
    assert f"${s.cost:.4f} of max ${CAP:.4f}" in result.stop_reason, result.stop_reason
    assert "worst case" in result.stop_reason


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_token_budget_is_never_overrun_at_high_concurrency(provider):
    cap = 40_000
    with JudgeServer(latency=0.05) as server:
        result = judge.run(
            items(300), model_for(provider, server), concurrency=64, budget=Budget(max_tokens=cap), **FAST
        )
        stats = server.stats()
    s = result.summary
    spent = s.tokens_in + s.tokens_out
    assert result.stop_kind == "budget" and spent <= cap, spent
    assert (s.tokens_in, s.tokens_out) == (stats["delivered_prompt_tokens"], stats["delivered_completion_tokens"])
    assert spent > cap / 2
    assert f"{spent:,} of max {cap:,} tokens" in result.stop_reason, result.stop_reason


def test_the_cli_budget_reports_the_true_spend(tmp_path, capsys):
    from respeval.cli import main

    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in items(300)), encoding="utf-8")
    with JudgeServer(latency=0.05) as server:
        code = main(
            [
                "judge", "--input", str(data), "--model", "openai:m", "--base-url", server.url,
                "--out", str(tmp_path / "out.jsonl"), "--concurrency", "64", "--budget-usd", str(CAP),
                "--price-in", "100", "--price-out", "100", "--json", "--quiet",
                "--backoff-base", "0.001", "--backoff-max", "0.005",
            ]
        )  # fmt: skip
        at_server = spent_at_the_server(server)
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert code == 4 and summary["cost_usd"] <= CAP
    assert summary["cost_usd"] == pytest.approx(at_server, rel=1e-12, abs=1e-12)
    reported = re.search(r"budget reached: \$([0-9.]+) of max \$0\.7000", summary["stop_reason"])
    assert reported is not None and float(reported.group(1)) == round(summary["cost_usd"], 4)


def test_several_passes_share_one_budget():
    # Majority voting runs passes (3 samples, then one at a time): each pass used to start
    # with the whole budget again.
    def votes(request: JudgeRequest) -> str:
        passed = request.sample_index % 2 == 0  # P F P F P: undecided until the fifth sample
        return json.dumps({"reasoning": "r", "score": float(passed), "pass": passed})

    model = CallableModel(votes, name="alternating")
    options = EngineOptions(concurrency=8, reask=False, budget=Budget(max_calls=70))
    result = asyncio.run(arun_sampled(items(20), model, Pointwise(), samples=5, options=options))
    assert result.stop_kind == "budget" and result.spend.calls <= 70, result.spend.calls


def test_the_rubric_writer_and_the_judge_share_one_budget():
    from respeval.judge.methods.rubrics import arun_adaptive

    def reply(request: JudgeRequest) -> str:
        if request.json_schema is not None and request.json_schema.name == "rubric":  # the writer
            return json.dumps({"criteria": [{"id": "c", "description": "correct", "importance": "HIGH"}]})
        return json.dumps({"verdicts": [{"id": "c", "reasoning": "r", "pass": True}]})

    records = [{"id": i, "prompt": f"Q{i}", "response": f"A{i}"} for i in range(20)]
    options = EngineOptions(concurrency=4, reask=False, budget=Budget(max_calls=30))
    report = asyncio.run(arun_adaptive(records, CallableModel(reply, name="rubrics"), options=options))
    assert report.spend.calls <= 30, report.spend.calls


def test_a_reservation_is_held_while_in_flight_and_settled_on_the_reply():
    tracker = BudgetTracker(Budget(max_cost=1.0))
    first = tracker.reserve(100, 0.6)
    assert not isinstance(first, str)
    assert isinstance(tracker.reserve(100, 0.6), str)  # 0.6 + 0.6 > 1.0 while the first is in flight
    tracker.settle(first, 30, 0.1)  # it cost 0.1
    second = tracker.reserve(100, 0.6)
    assert not isinstance(second, str) and tracker.cost == 0.1 and tracker.calls == 2
    tracker.settle(second, 0, 0.0)
    assert "$0.1000 of max $1.0000" in tracker.stop_reason()


def test_the_input_bound_is_never_below_the_tokens_a_tokenizer_can_make():
    text = "汉字テキスト " * 50 + "ascii words " * 50
    request = JudgeRequest(messages=(Message("system", "s"), Message("user", text)), max_tokens=10)
    bound = input_token_bound(request)
    assert bound >= len(text.encode("utf-8"))  # a token is at least one byte
    assert bound >= len(text)  # and a character at most one token... or more: bytes cover both


def test_a_request_without_max_tokens_cannot_run_under_a_token_budget():
    model = CallableModel(lambda request: '{"reasoning": "r", "score": 1, "pass": true}', name="free")
    method = Pointwise(max_tokens=None)  # type: ignore[arg-type]
    result = judge.run(items(3), model, method=method, budget=Budget(max_tokens=10_000))
    assert result.stop_kind == "budget" and "max tokens" in result.stop_reason and result.summary.calls == 0
