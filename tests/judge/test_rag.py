"""RAG metrics end to end against a real HTTP server on 127.0.0.1 in OpenAI's wire format
(chat completions and embeddings), with a deterministic word-overlap judge
(``_helpers.rag_judge``) whose verdicts are worked out by hand below; malformed verdicts
unscored with their reasons; faults retried to the same numbers; the cache paying for
nothing twice; evaluate's spec and ``respeval judge`` running them."""

from __future__ import annotations

import json
import math

import pytest

from _helpers import rag_judge
from _helpers.judge_server import FaultPlan, JudgeServer
from respeval import judge
from respeval.judge import OpenAIChatModel
from respeval.judge.cache import JudgeCache
from respeval.judge.embeddings import EmbeddingOptions, OpenAIEmbeddings, cosine
from respeval.judge.methods import METHODS
from respeval.judge.methods.rag import (
    AnswerRelevance,
    CitationCheck,
    ContextPrecision,
    ContextRecall,
    Faithfulness,
    average_precision,
    contexts_of,
    find_citations,
)

EIFFEL = {
    "id": "eiffel",
    "prompt": "Where is the Eiffel Tower and when was it finished?",
    "response": "The Eiffel Tower stands in Paris. It was finished in 1889 [2]. It is painted green [2].",
    "reference": "The Eiffel Tower stands in Paris. Construction finished in 1889.",
    "context": [
        {"id": "1", "text": "Berlin is the capital of Germany."},
        {"id": "2", "text": "The Eiffel Tower stands in Paris; construction finished in 1889 and it is painted brown."},
    ],
}
MOON = {
    "id": "moon",
    "prompt": "Who first walked on the Moon?",
    "response": "Neil Armstrong walked on the Moon in 1969 [a]. Buzz Aldrin followed him [b].",
    "reference": "Neil Armstrong was first, in July 1969.",
    "context": ["Neil Armstrong walked on the Moon in 1969.", "Apollo 11 carried three astronauts."],
}
BROKEN = {
    "id": "broken",
    "prompt": "Anything?",
    "response": "[[malformed]] Paris has many museums [1].",
    "reference": "[[malformed]] Paris has museums.",
    "context": ["Paris has many museums."],
}
ROWS = [EIFFEL, MOON, BROKEN]


# --------------------------------------------------------------------------- pieces


def test_contexts_of_every_shape():
    assert contexts_of("one chunk") == [contexts_of(["one chunk"])[0]]
    assert [c.id for c in contexts_of(["a", "b"])] == ["1", "2"]
    assert [(c.id, c.text) for c in contexts_of([{"doc_id": "d7", "page_content": "x"}])] == [("d7", "x")]
    assert [c.id for c in contexts_of(json.dumps([{"id": 3, "text": "t"}]))] == ["3"]
    with pytest.raises(ValueError, match="chunk 0 has no text"):
        contexts_of([{"id": 1}])
    with pytest.raises(ValueError, match="appears twice"):
        contexts_of([{"id": 1, "text": "a"}, {"id": "1", "text": "b"}])
    with pytest.raises(ValueError, match="field 'context'"):
        contexts_of(42)


def test_citation_markers():
    assert find_citations("a [1] b [2, 3] c [^4] d [doc-5]; [1]") == ["1", "2", "3", "4", "doc-5"]
    assert find_citations("a [link](http://x) and [[wiki]] and [two words]") == []


def test_average_precision_is_ragas_formula():
    # ragas: sum_k(P@k * v_k) / (sum v + 1e-10)
    for verdicts in ([1, 0, 1], [0, 1], [1, 1, 1], [0, 0], [0, 0, 1, 1, 0, 1]):
        want = sum((sum(verdicts[: i + 1]) / (i + 1)) * verdicts[i] for i in range(len(verdicts))) / (
            sum(verdicts) + 1e-10
        )
        assert average_precision([bool(v) for v in verdicts]) == want
    assert average_precision([True, False, True], epsilon=0) == (1 + 2 / 3) / 2
    assert average_precision([False, False], epsilon=0) == 0.0


def test_methods_are_registered():
    for name in ("faithfulness", "context_precision", "context_recall", "answer_relevance", "citation_check"):
        assert METHODS[name].kind == "multi-step"


# --------------------------------------------------------------------------- the server


@pytest.fixture(scope="module")
def server():
    with JudgeServer(responder=rag_judge.respond, embedder=rag_judge.embed) as s:
        yield s


def _model(server) -> OpenAIChatModel:
    return OpenAIChatModel("judge-m", base_url=server.url)


def _embeddings(server) -> OpenAIEmbeddings:
    return OpenAIEmbeddings("embed-m", base_url=server.url)


def _by_id(report):
    return {r.id: r for r in report.rows}


def test_faithfulness_claim_by_claim(server, tmp_path):
    before = len(server.records)
    report = judge.run(ROWS, _model(server), method=Faithfulness(), cache=tmp_path / "c.sqlite")
    rows = _by_id(report)
    eiffel = rows["eiffel"]
    # claims = the three sentences; "painted green" has "green", in no chunk
    assert [d["supported"] for d in eiffel.details] == [True, True, False]
    assert [d["claim"] for d in eiffel.details][2] == "It is painted green [2]."
    assert all(d["reason"] == "word overlap" for d in eiffel.details)
    assert eiffel.score == 2 / 3 and eiffel.passed is True
    moon = rows["moon"]
    assert [d["supported"] for d in moon.details] == [True, False] and moon.score == 0.5
    broken = rows["broken"]
    assert broken.status == "unscored" and broken.score is None
    assert broken.unscored_reason.startswith("claim extraction: unparseable")
    assert "after one re-ask" in broken.unscored_reason
    sent = server.records[before:]
    bodies = [r.body for r in sent]
    assert all(b["response_format"]["type"] == "json_schema" for b in bodies)  # structured verdicts
    assert {b["response_format"]["json_schema"]["name"] for b in bodies} == {"claims", "claim_verdicts"}
    # the cache: a rerun sends nothing
    again = judge.run(ROWS, _model(server), method=Faithfulness(), cache=tmp_path / "c.sqlite")
    assert len(server.records) == before + len(sent)
    assert [r.to_json() for r in again.rows] == [r.to_json() for r in report.rows]
    assert again.spend.cache_hits > 0 and again.spend.calls == 0


def test_a_verdict_missing_for_a_claim_is_unscored(server):
    row = {
        **MOON,
        "id": "half",
        "response": "Neil Armstrong walked on the Moon. [[malformed-verify]] Buzz Aldrin followed.",
    }
    (got,) = judge.run([row], _model(server), method=Faithfulness()).rows
    assert got.status == "unscored"
    assert got.unscored_reason.startswith("claim verification: unparseable")
    assert "no verdict for claim(s) 1 of 2" in got.unscored_reason
    assert [d["claim"] for d in got.details] == [
        "Neil Armstrong walked on the Moon.",
        "[[malformed-verify]] Buzz Aldrin followed.",
    ]
    assert all(d["supported"] is None for d in got.details)


def test_context_precision_both_uses(server):
    rows = _by_id(judge.run(ROWS, _model(server), method=ContextPrecision()))
    eiffel = rows["eiffel"]
    assert [d["useful"] for d in eiffel.details] == [False, True]  # Berlin shares nothing with the reference
    assert eiffel.score == (1 / 2) / (1 + 1e-10)
    assert [d["precision_at_rank"] for d in eiffel.details] == [0.0, 0.5]
    moon = rows["moon"]
    assert [d["useful"] for d in moon.details] == [True, False] and moon.score == 1 / (1 + 1e-10)
    broken = rows["broken"]
    assert broken.status == "unscored" and broken.unscored_reason.startswith("chunk 1: unparseable")
    exact = _by_id(judge.run(ROWS, _model(server), method=ContextPrecision(use="response", epsilon=0)))
    assert exact["eiffel"].score == 0.5 and exact["moon"].score == 1.0


def test_context_recall(server):
    rows = _by_id(judge.run(ROWS, _model(server), method=ContextRecall()))
    assert [d["attributed"] for d in rows["eiffel"].details] == [True, True] and rows["eiffel"].score == 1.0
    # "July" is in no chunk
    assert [d["attributed"] for d in rows["moon"].details] == [False] and rows["moon"].score == 0.0
    assert rows["broken"].score == 1.0  # bracketed text is no claim for this judge: paris, museums


def test_citation_check(server):
    rows = _by_id(judge.run(ROWS, _model(server), method=CitationCheck()))
    eiffel = rows["eiffel"]
    assert [(d["id"], d["exists"], d["supported"]) for d in eiffel.details] == [("2", True, True), ("2", True, False)]
    assert eiffel.score == 0.5
    moon = rows["moon"]  # ids a and b are not in the context (its chunks are 1 and 2)
    assert [(d["id"], d["exists"], d["supported"]) for d in moon.details] == [("a", False, False), ("b", False, False)]
    assert moon.score == 0.0 and "not in the context: a, b" in moon.explanation
    broken = rows["broken"]  # the judge leaves its one citation without a verdict
    assert broken.status == "unscored" and broken.unscored_reason.startswith("citation support: unparseable")
    (none,) = judge.run([{**MOON, "response": "No citation here."}], _model(server), method=CitationCheck()).rows
    assert none.status == "unscored" and none.unscored_reason == "the response cites nothing"


def test_answer_relevance_with_the_servers_embeddings(server, tmp_path):
    before = len(server.records)
    metric = AnswerRelevance(embeddings=_embeddings(server), strictness=2)
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        report = judge.run(ROWS, _model(server), method=metric, cache=cache)
    rows = _by_id(report)
    eiffel = rows["eiffel"]
    words = [w for w in rag_judge._WORD.findall(EIFFEL["response"].lower()) if len(w) >= 4]
    questions = [f"What about {' '.join(words[k : k + 3])}?" for k in range(2)]
    assert [d["question"] for d in eiffel.details[:2]] == questions
    q = [rag_judge.embed_one(EIFFEL["prompt"])] * 2
    want = cosine(q, [rag_judge.embed_one(x) for x in questions])
    assert [d["cosine"] for d in eiffel.details[:2]] == pytest.approx(list(want), abs=1e-12)
    assert eiffel.score == pytest.approx(float(want.mean()), abs=1e-12) and eiffel.details[2] == {"noncommittal": False}
    assert rows["broken"].unscored_reason.startswith("question generation: unparseable")
    embed_calls = [r for r in server.records[before:] if r.body and "input" in r.body]
    assert len(embed_calls) == 1 and len(embed_calls[0].body["input"]) == 2 * 3  # one batch: questions and prompts
    assert report.embeddings["unique"] == 6 and report.embeddings["cache_hits"] == 0
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        again = judge.run(ROWS, _model(server), method=metric, cache=cache)
    assert again.embeddings["cache_hits"] == 6 and again.embeddings["calls"] == 0
    assert [r.score for r in again.rows] == [r.score for r in report.rows]
    noncommittal = {**MOON, "id": "nc", "response": "I am not sure about that."}
    (nc,) = judge.run([noncommittal], _model(server), method=metric).rows
    assert nc.score == 0.0 and nc.details[-1] == {"noncommittal": True}


def test_faults_are_retried_to_the_same_numbers():
    plan = FaultPlan(rate=0.35, seed=3, kinds=("429", "500", "503", "drop", "malformed-body"))
    with JudgeServer(plan, responder=rag_judge.respond, embedder=rag_judge.embed) as faulty:
        model = OpenAIChatModel("judge-m", base_url=faulty.url)
        options = {"backoff_base": 0.001, "backoff_max": 0.01, "max_retries": 8}
        faithful = judge.run(ROWS, model, method=Faithfulness(), **options)
        metric = AnswerRelevance(embeddings=OpenAIEmbeddings("e", base_url=faulty.url), strictness=2)
        metric.embedding_options = EmbeddingOptions(backoff_base=0.001, backoff_max=0.01, max_retries=8, batch_size=2)
        relevant = judge.run(ROWS, model, method=metric, **options)
        assert any(r.fault for r in faulty.records)  # faults happened
    assert [r.score for r in faithful.rows] == [2 / 3, 0.5, None]
    assert relevant.embeddings["retries"] >= 0 and relevant.rows[0].score is not None
    assert faithful.spend.retries > 0 or relevant.spend.retries > 0 or relevant.embeddings["retries"] > 0


def test_evaluate_spec_runs_them(server, tmp_path):
    from respeval.evaluate import evaluate, load_spec

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({**r, "chunks": r["context"]}) + "\n" for r in ROWS))
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "metrics": [
                    "faithfulness",
                    {
                        "rag": "context_precision",
                        "name": "precision_vs_response",
                        "use": "response",
                        "context": "chunks",
                    },
                    {"rag": "citation_check"},
                    {
                        "rag": "answer_relevance",
                        "embeddings": "openai:embed-m",
                        "embeddings_base_url": server.url,
                        "strictness": 2,
                    },
                ]
            }
        )  # fmt: skip
    )
    loaded = load_spec(spec)
    result = evaluate(rows, loaded["metrics"], model=_model(server), id_column="id")
    table = {r["id"]: r for r in result.table.to_pylist()}
    assert table["eiffel"]["faithfulness/score"] == 2 / 3
    assert [d["supported"] for d in json.loads(table["eiffel"]["faithfulness/details"])] == [True, True, False]
    assert table["broken"]["faithfulness/status"] == "unscored"
    assert table["broken"]["faithfulness/unscored_reason"].startswith("claim extraction: unparseable")
    assert table["moon"]["precision_vs_response/score"] == 1 / (1 + 1e-10)
    assert table["eiffel"]["citation_check/score"] == 0.5
    assert not math.isnan(table["eiffel"]["answer_relevance/score"])
    assert result.summary_metrics["faithfulness/scored"] == 2
    assert "chunks" in result.table.column_names  # the column the metric read is kept
    with pytest.raises(ValueError, match="unknown key"):
        from respeval.evaluate.spec import metric_from_dict

        metric_from_dict({"rag": "faithfulness", "colour": "red"})
    with pytest.raises(ValueError, match="needs an embedding model"):
        metric_from_dict({"rag": "answer_relevance"})


def test_the_judge_command(server, tmp_path, capsys):
    from respeval.cli.app import main

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "out.jsonl"
    argv = ["judge", "--method", "faithfulness", "--input", str(rows), "--model", "openai:judge-m"]
    status = main([*argv, "--base-url", server.url, "--out", str(out), "--json"])
    assert status == 0, capsys.readouterr().err
    summary = json.loads(capsys.readouterr().out)
    assert summary["scored"] == 2 and summary["unscored_reasons"] == {"claim extraction": 1}
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["score"] == 2 / 3 and lines[0]["details"][2]["supported"] is False
