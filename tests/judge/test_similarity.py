"""Semantic similarity through a real OpenAI-compatible ``/v1/embeddings`` server on 127.0.0.1
and through a Python callable: cosines against numpy's, the corpus mean and its seeded
interval against respeval.stats, batching, deduplication, the judge cache, faults retried,
malformed replies, and ``respeval evaluate``'s ``embedding:`` entries."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from _helpers import rag_judge
from _helpers.judge_server import FaultPlan, JudgeServer, default_embedder
from respeval.judge.cache import JudgeCache
from respeval.judge.embeddings import CallableEmbeddings, EmbeddingOptions, OpenAIEmbeddings, embed
from respeval.judge.errors import TransientError
from respeval.judge.similarity import semantic_similarity
from respeval.stats import bootstrap_means, percentile_interval

PREDS = ["the cat sat on the mat", "a dog ran home", "the cat sat on the mat", "rain in oslo", None, "sunny days"]
REFS = ["a cat was on the mat", ["dogs run", "a dog ran to its home"], "a cat was on the mat", "oslo rain", "x", ""]


def _cos(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _want():
    out = []
    for p, r in zip(PREDS, REFS):
        if not isinstance(p, str) or not (r if isinstance(r, str) else any(r)):
            out.append(math.nan)
            continue
        refs = [r] if isinstance(r, str) else r
        (pv,) = default_embedder([p])
        out.append(max(_cos(pv, v) for v in default_embedder(refs)))
    return np.array(out)


@pytest.fixture
def server():
    with JudgeServer() as s:
        yield s


def test_cosines_mean_and_interval(server, tmp_path):
    model = OpenAIEmbeddings("embed-m", base_url=server.url)
    result = semantic_similarity(PREDS, REFS, model, options=EmbeddingOptions(batch_size=2), seed=7)
    want = _want()
    assert np.allclose(result.scores, want, atol=1e-12, equal_nan=True)
    assert result.best_reference[1] == 1  # the closer of the two references
    assert result.reasons == {4: "predictions[4]: missing", 5: "references[5]: empty"}
    good = want[~np.isnan(want)]
    assert result.mean.mid == math.fsum(good) / good.size
    low, _, high = percentile_interval(bootstrap_means(good[:, None], 1000, 7), 0.95)[:, 0]
    assert (result.mean.low, result.mean.high) == (low, high)
    again = semantic_similarity(PREDS, REFS, OpenAIEmbeddings("embed-m", base_url=server.url), seed=7)
    assert again.mean == result.mean  # seeded
    # repeated texts went out once, in batches of 2, in OpenAI's wire format
    bodies = [r.body for r in server.records[: result.embeddings.calls]]
    sent = [t for b in bodies for t in b["input"]]
    assert len(sent) == len(set(sent)) == result.embeddings.unique == 7
    assert all(len(b["input"]) <= 2 and b["encoding_format"] == "float" and b["model"] == "embed-m" for b in bodies)


def test_the_cache_pays_for_nothing_twice(server, tmp_path):
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        first = semantic_similarity(PREDS, REFS, OpenAIEmbeddings("e", base_url=server.url), cache=cache)
        n = len(server.records)
        second = semantic_similarity(PREDS, REFS, OpenAIEmbeddings("e", base_url=server.url), cache=cache)
        assert len(server.records) == n and second.embeddings.cache_hits == 7 and second.embeddings.calls == 0
        assert np.array_equal(first.scores, second.scores, equal_nan=True)  # bit for bit from the cache
        other = semantic_similarity(PREDS, REFS, OpenAIEmbeddings("e", base_url=server.url, dimensions=8), cache=cache)
        assert len(server.records) > n and other.embeddings.cache_hits == 0  # another identity, another key


def test_faults_are_retried_and_malformed_replies_named():
    plan = FaultPlan(rate=0.5, seed=1, kinds=("429", "500", "drop", "malformed-body", "bad-judge-json"))
    with JudgeServer(plan) as faulty:
        options = EmbeddingOptions(batch_size=1, max_retries=10, backoff_base=0.001, backoff_max=0.01)
        got = semantic_similarity(PREDS, REFS, OpenAIEmbeddings("e", base_url=faulty.url), options=options)
        assert got.embeddings.retries > 0
    assert np.allclose(got.scores, _want(), atol=1e-12, equal_nan=True)
    with JudgeServer() as server:
        model = OpenAIEmbeddings("e", base_url=server.url)
        quick = EmbeddingOptions(max_retries=1, backoff_base=0.001, backoff_max=0.001)
        with pytest.raises(TransientError, match="malformed embeddings response.*expected 1 items"):
            embed(["always short [[fault=bad-judge-json]]"], model, options=quick)


def test_a_python_callable_embedder():
    model = CallableEmbeddings(rag_judge.embed, version="1")
    result = semantic_similarity(["a b c"], ["a b d"], model, n_bootstrap=0)
    want = _cos(rag_judge.embed_one("a b c"), rag_judge.embed_one("a b d"))
    assert result.scores[0] == pytest.approx(want, abs=1e-12) and math.isnan(result.mean.low)

    def bad(texts):
        return [[1.0]] * (len(texts) + 1)

    with pytest.raises(Exception, match="returned shape"):
        semantic_similarity(["x"], ["y"], CallableEmbeddings(bad, version="1"))


def test_evaluate_embedding_entries(server, tmp_path):
    from respeval.evaluate import evaluate, load_spec

    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": i, "response": p, "reference": r}) + "\n" for i, (p, r) in enumerate(zip(PREDS, REFS))
        )
    )
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"metrics": [{"embedding": "semantic_similarity", "embeddings": "openai:e",
                                             "embeddings_base_url": server.url, "threshold": 0.5}]}))  # fmt: skip
    result = evaluate(rows, load_spec(spec)["metrics"], id_column="id")  # no judge model needed
    table = result.table.to_pylist()
    want = _want()
    for row, w in zip(table, want):
        if math.isnan(w):
            assert row["semantic_similarity/status"] == "unscored" and row["semantic_similarity/unscored_reason"]
        else:
            assert row["semantic_similarity/score"] == pytest.approx(w, abs=1e-12)
            assert row["semantic_similarity/pass"] == (w >= 0.5)
    assert result.summary_metrics["semantic_similarity/scored"] == 4
    assert result.summary_metrics["semantic_similarity/mean"] == pytest.approx(float(np.nanmean(want)), abs=1e-12)
