"""Static and adaptive rubrics: weighted scores, a missing criterion leaves the row
unscored, one frozen rubric per prompt, export/edit/import, the local server, the CLI."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from _helpers.judge_server import JudgeServer
from respeval.cli import main as methods_main
from respeval.judge import EngineOptions, FakeModel, JudgeCache, OpenAIChatModel
from respeval.judge.methods.rubrics import (
    Criterion,
    Rubric,
    RubricGenerator,
    arun_adaptive,
    export_rubrics,
    load_criteria,
    load_rubrics,
    run_rubric,
)

OPTIONS = EngineOptions(concurrency=4, backoff_base=0.001, backoff_max=0.005)
CRITERIA = [
    {"id": "correct", "description": "Names the right capital.", "importance": "HIGH"},
    {"id": "brief", "description": "One sentence.", "importance": "LOW"},
]


def criterion_ids(text: str) -> list[str]:
    return re.findall(r"^- (\S+) \[", text, re.M)


def verdicts(passing: dict[str, bool]) -> str:
    return json.dumps({"verdicts": [{"id": k, "reasoning": "r", "pass": v} for k, v in passing.items()]})


def records(prompts=("Capital of France?",), responses=("Paris.", "It is Lyon.")) -> list[dict]:
    return [
        {"id": f"{i}-{j}", "prompt": p, "response": r} for i, p in enumerate(prompts) for j, r in enumerate(responses)
    ]


def test_criterion_validation():
    assert Criterion("a", "x", "HIGH").effective_weight == 3.0
    assert Criterion("a", "x", "LOW", weight=5).effective_weight == 5.0
    with pytest.raises(ValueError):
        Criterion("a", "x", "URGENT")
    with pytest.raises(ValueError):
        Rubric([CRITERIA[0], CRITERIA[0]])


def test_weighted_score():
    report = run_rubric(
        records(responses=("Paris.",)),
        FakeModel(verdicts({"correct": True, "brief": False})),
        Rubric(CRITERIA),
        options=OPTIONS,
    )
    row = report.rows[0]
    assert row.verdict["score"] == 0.75 and row.verdict["pass"] is True  # 3 / (3 + 1)
    assert row.verdict["pass_rate"] == 0.5 and row.verdict["failed"] == ["brief"]
    assert report.to_json()["criterion_pass_rates"] == {"correct": 1.0, "brief": 0.0}


@pytest.mark.parametrize(
    "reply,reason",
    [
        (verdicts({"correct": True}), "criterion missing from the verdicts: 'brief'"),
        (verdicts({"correct": True, "brief": True, "tone": True}), "unknown criterion 'tone'"),
        (
            json.dumps(
                {
                    "verdicts": [
                        {"id": "correct", "pass": True},
                        {"id": "correct", "pass": False},
                        {"id": "brief", "pass": True},
                    ]
                }
            ),
            "two different verdicts",
        ),
        (json.dumps({"verdicts": [{"id": "correct", "pass": "maybe"}, {"id": "brief", "pass": True}]}), "pass must be"),
    ],
)
def test_incomplete_or_contradictory_verdicts_are_unscored(reply, reason):
    model = FakeModel(reply)
    report = run_rubric(records(responses=("Paris.",)), model, Rubric(CRITERIA), options=OPTIONS)
    row = report.rows[0]
    assert row.status == "unscored" and reason in row.unscored_reason
    assert model.calls == 2  # the one re-ask, then unscored: never scored on the rest


def test_load_criteria(tmp_path):
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps({"criteria": CRITERIA}))
    assert [c.id for c in load_criteria(path)] == ["correct", "brief"]
    path.write_text("[]")
    with pytest.raises(ValueError):
        load_criteria(path)


def adaptive_judge(request):
    user = request.messages[-1].content
    if request.template_version.startswith("rubric-generation"):
        prompt = re.search(r"\[PROMPT \w+\]\n(.*?)\n\[/PROMPT", user, re.S).group(1)
        slug = re.sub(r"\W+", "_", prompt.lower()).strip("_")[:20]
        return {
            "criteria": [
                {"id": f"{slug}_answer", "description": "Answers it.", "importance": "HIGH"},
                {"id": "no_advice", "description": "No financial advice.", "importance": "MEDIUM"},
            ]
        }
    ids = criterion_ids(user)
    return {"verdicts": [{"id": i, "reasoning": "r", "pass": "Lyon" not in user} for i in ids]}


def test_adaptive_rubric_once_per_prompt_and_frozen(tmp_path):
    model = FakeModel(adaptive_judge)
    generator = RubricGenerator("INSTRUCTION_FOLLOWING", "must not give financial advice")
    report = asyncio.run(
        arun_adaptive(
            records(
                prompts=("Capital of France?", "Capital of Spain?"), responses=("Paris.", "It is Lyon.", "Madrid.")
            ),
            model,
            generator=generator,
            options=OPTIONS,
        )
    )
    generation = [r for r in model.requests if r.template_version.startswith("rubric-generation")]
    assert len(generation) == 2
    assert "must not give financial advice" in generation[0].messages[0].content
    assert "explicit constraint" in generation[0].messages[0].content  # the preset's focus
    judged = [r for r in model.requests if r.template_version.startswith("rubric-verdicts")]
    ids_per_prompt = {}
    for request in judged:
        prompt = re.search(r"\[PROMPT \w+\]\n(.*?)\n", request.messages[-1].content).group(1)
        ids_per_prompt.setdefault(prompt, set()).add(tuple(criterion_ids(request.messages[-1].content)))
    assert all(len(v) == 1 for v in ids_per_prompt.values())  # the same rubric for every candidate
    assert [r.verdict["score"] for r in report.rows] == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    assert set(report.rubrics) == {"Capital of France?", "Capital of Spain?"}

    # export, edit by hand (drop a criterion), feed back: no generation, the edited rubric
    path = tmp_path / "rubrics.json"
    export_rubrics(path, report.rubrics)
    edited = json.loads(path.read_text())
    for entry in edited:
        entry["criteria"] = entry["criteria"][:1]
    path.write_text(json.dumps(edited))
    again = FakeModel(adaptive_judge)
    report2 = asyncio.run(arun_adaptive(records(), again, rubrics=load_rubrics(path), options=OPTIONS))
    assert all(r.template_version.startswith("rubric-verdicts") for r in again.requests)
    assert all(len(r.verdict["criteria"]) == 1 for r in report2.rows)


def test_adaptive_rubric_generation_is_cached(tmp_path):
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        asyncio.run(arun_adaptive(records(), FakeModel(adaptive_judge, name="ad"), cache=cache, options=OPTIONS))
        again = FakeModel(adaptive_judge, name="ad")
        report = asyncio.run(arun_adaptive(records(), again, cache=cache, options=OPTIONS))
        assert again.calls == 0 and report.to_json()["scored"] == 2


def test_failed_rubric_generation_leaves_rows_unscored():
    model = FakeModel(
        lambda r: "I'd rather not." if r.template_version.startswith("rubric-generation") else verdicts({})
    )
    report = asyncio.run(arun_adaptive(records(), model, options=OPTIONS))
    assert all(r.status == "unscored" and r.unscored_reason.startswith("no rubric:") for r in report.rows)
    assert len(report.rubric_failures) == 1


def test_preset_must_exist():
    with pytest.raises(ValueError):
        RubricGenerator("VIBES")


def responder(body) -> str:
    return json.dumps(
        adaptive_judge(
            type(
                "R",
                (),
                {
                    "messages": [type("M", (), {"content": m["content"]}) for m in body["messages"]],
                    "template_version": "rubric-generation"
                    if "You write grading rubrics" in body["messages"][0]["content"]
                    else "rubric-verdicts",
                },
            )()
        )
    )


def test_adaptive_rubric_against_local_server():
    with JudgeServer(responder=responder) as server:
        model = OpenAIChatModel("m", base_url=server.url, api_key_env="RESPEVAL_TEST_NO_KEY")
        report = asyncio.run(arun_adaptive(records(), model, options=OPTIONS))
        names = {r.body["response_format"]["json_schema"]["name"] for r in server.records}
    assert names == {"rubric", "rubric_verdicts"}
    assert [r.verdict["pass"] for r in report.rows] == [True, False]


def test_cli_rubric_and_adaptive(tmp_path, capsys):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records()))
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps(CRITERIA))
    with JudgeServer(responder=responder) as server:
        common = ["--input", str(data), "--model", "openai:m", "--base-url", server.url, "--quiet"]
        out = tmp_path / "out.jsonl"
        assert (
            methods_main(
                [
                    "judge",
                    "--method",
                    "adaptive-rubric",
                    *common,
                    "--out",
                    str(out),
                    "--rubrics-out",
                    str(tmp_path / "r.json"),
                    "--cache",
                    str(tmp_path / "c.sqlite"),
                ]
            )
            == 0
        )
        assert "adaptive-rubric" in capsys.readouterr().out
        assert [json.loads(line)["pass"] for line in out.read_text().splitlines()] == [True, False]
        assert load_rubrics(tmp_path / "r.json")
        assert methods_main(["judge", "--method", "rubric", "--rubric", str(rubric), *common, "--no-cache"]) == 0
        assert (
            methods_main(
                [
                    "judge",
                    "--method",
                    "rubric",
                    "--rubric",
                    str(rubric),
                    *common,
                    "--no-cache",
                    "--json",
                    "--samples",
                    "3",
                ]
            )
            == 0
        )
        assert '"criterion_pass_rates"' in capsys.readouterr().out
    assert methods_main(["judge", "--method", "rubric", "--input", str(data), "--model", "fake:"]) == 1


@pytest.mark.parametrize("samples", [1, 3])
def test_adaptive_rows_are_handed_on_once_when_final_and_as_the_report_holds_them(samples):
    """Rows without a rubric (no prompt here) when the rubrics are written, the others as
    their verdicts are; each once, with its row number in the input, as the report has it."""
    seen = []
    rows = records(prompts=("Capital of France?", "Capital of Spain?"), responses=("Paris.", "It is Lyon."))
    rows.insert(1, {"id": "no-prompt", "response": "x"})
    report = asyncio.run(
        arun_adaptive(rows, FakeModel(adaptive_judge), samples=samples, options=OPTIONS, on_row=seen.append)
    )
    assert sorted(r.row for r in seen) == list(range(len(rows)))
    assert {r.row: r for r in seen} == {r.row: r for r in report.rows}
    assert seen[0].row == 1 and seen[0].unscored_reason == "no rubric: the record has no prompt"
