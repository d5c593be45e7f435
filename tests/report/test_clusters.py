"""Failure clusters: deterministic for a seed, the native core and its twin giving the same
clusters, every link a confirmed similarity, clear-cut groups found exactly, the baseline vs
candidate counts, failing rows picked from judge and evaluate outputs, naming by a model
over the local OpenAI-wire server, and ``respeval clusters``."""

from __future__ import annotations

import json
import random
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.judge_server import JudgeServer
from respeval import _backend
from respeval.clusters import (
    Failure,
    _band_keys,
    _signatures,
    cluster_failures,
    cluster_texts,
    compare_clusters,
    failures_of,
    name_clusters,
)

TEMPLATES = [
    "the answer misses the date of the {x} event",
    "the response gives the wrong unit for {x}, it should be metres",
    "the candidate contradicts the reference about {x}",
    "refused to answer a harmless question about {x}",
]


def _corpus(n: int, seed: int) -> tuple[list[str], list[int]]:
    rng = random.Random(seed)
    texts, groups = [], []
    for _ in range(n):
        g = rng.randrange(len(TEMPLATES))
        extra = " ".join(rng.choice(["clearly", "really", "so"]) for _ in range(rng.randrange(3)))
        texts.append(f"{TEMPLATES[g].format(x=rng.choice(['paris', 'oslo', 'lima']))} {extra}".strip())
        groups.append(g)
    return texts, groups


def _partition(labels) -> set[frozenset[int]]:
    out: dict[int, set[int]] = {}
    for i, label in enumerate(labels):
        out.setdefault(int(label), set()).add(i)
    return {frozenset(v) for v in out.values()}


def test_clear_cut_groups_are_found_and_deterministic():
    texts, groups = _corpus(2000, seed=4)
    result = cluster_failures(texts)
    assert _partition(result.labels) == _partition(groups)
    assert [c.size for c in result.clusters] == sorted((groups.count(g) for g in set(groups)), reverse=True)
    again = cluster_failures(texts)
    assert np.array_equal(again.labels, result.labels) and again.to_dict() == result.to_dict()
    first = result.clusters[0]
    assert first.members == sorted(first.members) and len(first.examples) == 5
    assert set(first.words) <= {w for i in first.members for w in texts[i].split()}


def test_the_twin_gives_the_same_clusters(impl):
    texts, _ = _corpus(300, seed=9)
    texts += ["", "12 34", "Other text entirely, nothing alike", "other TEXT entirely, nothing alike!"]
    twin = cluster_texts(texts, implementation="python")
    got = cluster_texts(texts, implementation=impl)
    assert np.array_equal(twin[0], got[0]) and twin[1:] == got[1:]
    assert _signatures(texts, 2, 128, 1, impl).tobytes() == _signatures(texts, 2, 128, 1, "python").tobytes()
    labels = got[0]
    assert labels[-1] == labels[-2]  # identical after casefolding and punctuation
    assert labels[-4] == len(texts) - 4 and labels[-3] == len(texts) - 3  # no words: alone


_words = st.sampled_from(["alpha", "beta", "gamma", "delta", "wrong", "date", "unit", "missing", "x"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_words, min_size=0, max_size=8).map(" ".join), min_size=1, max_size=60), st.integers(0, 5))
def test_every_link_is_a_confirmed_similarity_and_clusters_refine_the_candidate_graph(texts, seed):
    labels, _, _ = cluster_texts(texts, seed=seed, threshold=0.5)
    kernels = _backend.get()
    distinct = list(dict.fromkeys(t.casefold() for t in texts))
    sigs = _signatures(distinct, 2, 128, seed, None)
    index = {t: k for k, t in enumerate(distinct)}
    sim = lambda i, j: (sigs[index[texts[i].casefold()]] == sigs[index[texts[j].casefold()]]).mean()  # noqa: E731
    keys = _band_keys(sigs, 32)
    share = lambda i, j: bool((keys[index[texts[i].casefold()]] == keys[index[texts[j].casefold()]]).any())  # noqa: E731
    empty = np.uint64(2**64 - 1)
    words = [sigs[index[t.casefold()]][0] != empty for t in texts]
    # the full graph: every pair that shares a band and is similar enough (or identical text)
    n = len(texts)
    parent = list(range(n))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            same_text = texts[i].casefold() == texts[j].casefold()
            if same_text or (words[i] and words[j] and share(i, j) and sim(i, j) >= 0.5):
                parent[root(j)] = root(i)
    full = _partition([root(i) for i in range(n)])
    mine = _partition(labels)
    # each of our clusters sits inside one full-graph component
    for cluster in mine:
        assert len({root(i) for i in cluster}) == 1
    assert len(mine) >= len(full)
    assert kernels is not None
    # and every cluster is connected by similar pairs: some member pair of a 2+ cluster is similar
    for cluster in mine:
        if len(cluster) > 1:
            members = sorted(cluster)
            assert any(
                texts[a].casefold() == texts[b].casefold() or sim(a, b) >= 0.5
                for a in members
                for b in members
                if a < b
            )


def test_baseline_and_candidate():
    base = ["the answer misses the date of the paris event"] * 5 + ["refused to answer a harmless question"] * 3
    cand = ["the answer misses the date of the oslo event"] * 2 + [
        "the response gives the wrong unit, it should be metres"
    ] * 4
    result = compare_clusters(base, cand)
    by_words = {c.change: c for c in result.clusters}
    assert by_words["new"].counts == {"baseline": 0, "candidate": 4}
    assert by_words["gone"].counts == {"baseline": 3, "candidate": 0}
    assert by_words["shrank"].counts == {"baseline": 5, "candidate": 2}
    text = result.format()
    assert "baseline     5 -> candidate     2  shrank" in text
    data = result.to_dict()
    assert data["runs"] == {"baseline": 8, "candidate": 6} and data["clusters"] == 3


def test_failures_of_judge_and_evaluate_outputs():
    judged = [
        {"id": "a", "row": 0, "pass": False, "score": 0.0, "reasoning": "wrong date"},
        {"id": "b", "row": 1, "pass": True, "score": 1.0, "reasoning": "fine"},
        {"id": "c", "row": 2, "pass": None, "score": None, "status": "unscored", "unscored_reason": "unparseable: x"},
    ]
    assert [(f.id, f.text) for f in failures_of(judged)] == [("a", "wrong date")]
    assert [f.text for f in failures_of(judged, unscored=True)] == ["wrong date", "unparseable: x"]
    table = [
        {"row": 0, "id": 1, "faithfulness/score": 0.25, "faithfulness/pass": False, "faithfulness/status": "scored",
         "faithfulness/explanation": "1 of 4 claims supported"},
        {"row": 1, "id": 2, "faithfulness/score": 0.75, "faithfulness/pass": True, "faithfulness/status": "scored",
         "faithfulness/explanation": "3 of 4 claims supported"},
    ]  # fmt: skip
    assert [f.row for f in failures_of(table, metric="faithfulness")] == [0]
    assert [f.row for f in failures_of(table, metric="faithfulness", score_below=0.8)] == [0, 1]
    assert failures_of(table, metric="faithfulness", text_field="id")[0].text == "1"


def test_naming_by_a_model_over_http(tmp_path):
    def responder(body):
        dates = re.search(r"\bdate\b", body["messages"][-1]["content"])
        return json.dumps({"name": "missing dates", "description": "what they share"} if dates else {"nope": 1})

    texts, _ = _corpus(200, seed=2)
    result = cluster_failures(texts)
    with JudgeServer(responder=responder) as server:
        from respeval.judge import OpenAIChatModel

        name_clusters(result, OpenAIChatModel("m", base_url=server.url), top=4, cache=tmp_path / "names.sqlite")
        calls = len(server.records)
    named = {c.id: c.name for c in result.clusters}
    date_cluster = next(c for c in result.clusters if "date" in c.words)
    assert date_cluster.name == "missing dates" and date_cluster.description == "what they share"
    assert result.naming["named"] == 1 and len(result.naming["failed"]) == 3
    assert all(reason.startswith("unparseable") for reason in result.naming["failed"].values())
    assert calls == 1 + 3 * 2  # the unreadable ones re-asked once
    assert sum(v is not None for v in named.values()) == 1


def test_the_command(tmp_path, capsys):
    from respeval.cli.app import main

    texts, _ = _corpus(120, seed=5)
    rows = tmp_path / "judged.jsonl"
    rows.write_text("".join(json.dumps({"row": i, "pass": False, "reasoning": t}) + "\n" for i, t in enumerate(texts)))
    base = tmp_path / "base.jsonl"
    base.write_text(
        "".join(json.dumps({"row": i, "pass": False, "reasoning": t}) + "\n" for i, t in enumerate(texts[:30]))
    )
    out = tmp_path / "clusters.json"
    assert main(["clusters", "--input", str(rows), "--baseline", str(base), "--json", "--out", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["failures"] == 150 and data["runs"] == {"baseline": 30, "candidate": 120}
    assert sum(i["size"] for i in data["items"]) == 150
    full = json.loads(out.read_text())
    assert sum(len(i["members"]) for i in full["items"]) == 150
    assert main(["clusters", "--input", str(rows)]) == 0
    assert "failing rows in" in capsys.readouterr().out
    assert Failure("x").run == "candidate"
