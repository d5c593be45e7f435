"""Acceptance 3: sampling is stable.  The same seed gives the same cases (the same bytes) on
a shuffled copy of the input and on the input split across files; membership is the
documented keyed hash of the trace id, so it is the same on every machine."""

from __future__ import annotations

import json
import random

import pytest

from _helpers import trace_corpus
from respeval import traces
from respeval.traces.sampling import Sampling, rate_threshold, unit_hash


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """One file of seeded traffic, a copy with its lines and each line's spans shuffled, and
    the same spans split over five files in a directory (each span in a request of its own file)."""
    root = tmp_path_factory.mktemp("sampling")
    original = root / "spans.jsonl"
    counts = trace_corpus.write(original, 3000, seed=11)
    lines = original.read_text().splitlines()
    rng = random.Random(5)
    shuffled_lines = []
    for line in lines:
        request = json.loads(line)
        for rs in request["resourceSpans"]:
            rng.shuffle(rs["scopeSpans"][0]["spans"])
        rng.shuffle(request["resourceSpans"])
        shuffled_lines.append(json.dumps(request))
    rng.shuffle(shuffled_lines)
    shuffled = root / "shuffled.jsonl"
    shuffled.write_text("\n".join(shuffled_lines) + "\n")
    split = root / "split"
    split.mkdir()
    outs = [open(split / f"part-{i}.jsonl", "w") for i in range(5)]
    for line in lines:
        request = json.loads(line)
        for rs in request["resourceSpans"]:
            for span in rs["scopeSpans"][0]["spans"]:
                one = {
                    "resourceSpans": [
                        {"resource": rs["resource"], "scopeSpans": [{"scope": {"name": "x"}, "spans": [span]}]}
                    ]
                }
                outs[rng.randrange(5)].write(json.dumps(one) + "\n")
    for fh in outs:
        fh.close()
    return original, shuffled, split, counts["traces"]


def _build(tmp_path, inputs, name, **sampling):
    out = tmp_path / f"{name}.jsonl"
    opts = traces.Options(sampling=Sampling(**sampling))
    report = traces.from_traces([str(p) for p in inputs], out=str(out), options=opts)
    return out.read_bytes(), report


@pytest.mark.parametrize(
    "sampling",
    [
        {"rate": 0.3, "seed": 7},
        {"rate": 0.1, "seed": 7, "keep_errors": True},
        {"rate": 0.2, "seed": 3, "stratify": "model"},
        {"seed": 3, "stratify": "service", "per_stratum": 25},
    ],
    ids=["rate", "failures-plus-rate", "stratified-rate", "per-stratum"],
)
def test_same_cases_shuffled_and_split(tmp_path, corpus, sampling):
    original, shuffled, split, n_traces = corpus
    a, report = _build(tmp_path, [original], "a", **sampling)
    b, _ = _build(tmp_path, [shuffled], "b", **sampling)
    c, _ = _build(tmp_path, [split], "c", **sampling)
    assert a == b == c
    assert 0 < report.written < 0.5 * n_traces


def test_membership_is_the_keyed_hash(tmp_path, corpus):
    original = corpus[0]
    data, report = _build(tmp_path, [original], "m", rate=0.25, seed=9)
    kept = [json.loads(line)["trace_id"] for line in data.decode().splitlines()]
    everything = [c.trace_id for c in traces.read_cases([str(original)], seed=9)]
    threshold = rate_threshold("0.25")
    assert kept == [t for t in everything if unit_hash(t, 9) < threshold]
    # the output order is the unit hash's
    assert kept == sorted(kept, key=lambda t: (unit_hash(t, 9), t))


def test_the_rate_is_the_share_kept():
    rng = random.Random(1)
    ids = ["%032x" % rng.getrandbits(128) for _ in range(40_000)]
    for rate in ("0.01", "0.25", "0.9"):
        share = sum(unit_hash(t, 3) < rate_threshold(rate) for t in ids) / len(ids)
        assert abs(share - float(rate)) < 6 * (float(rate) * (1 - float(rate)) / len(ids)) ** 0.5


def test_unit_hash_is_pinned():
    """The documented formula, pinned: a change would move every sample on every machine."""
    import hashlib

    tid = "4bf92f3577b34da6a3ce929d0e0e4736"
    want = int.from_bytes(hashlib.blake2b(tid.encode(), digest_size=8, key=b"12345").digest(), "big")
    assert unit_hash(tid, 12345) == want == PINNED
    assert rate_threshold("0.5") == 2**63 and rate_threshold(1) == 2**64 and rate_threshold("0") == 0


PINNED = 0xEB16CBCEE9EF84BF  # computed once from the formula above; never to change


def test_larger_rates_keep_supersets_and_seeds_differ(tmp_path, corpus):
    original = corpus[0]

    def ids(**s):
        data, _ = _build(tmp_path, [original], "x", **s)
        return {json.loads(x)["trace_id"] for x in data.decode().splitlines()}

    small, large = ids(rate=0.1, seed=1), ids(rate=0.4, seed=1)
    assert small < large
    assert ids(rate=0.1, seed=2) != small


def test_all_failures_plus_a_share_of_the_rest(tmp_path, corpus):
    original = corpus[0]
    everything = list(traces.read_cases([str(original)], seed=4))
    failures = {c.trace_id for c in everything if c.error}
    assert failures
    data, report = _build(tmp_path, [original], "f", rate=0.05, seed=4, keep_errors=True)
    kept = {json.loads(x)["trace_id"] for x in data.decode().splitlines()}
    assert failures <= kept
    rest = {c.trace_id for c in everything if not c.error and unit_hash(c.trace_id, 4) < rate_threshold("0.05")}
    assert kept == failures | rest
    assert report.errors_kept == len(failures)


def test_stratified_quotas(tmp_path, corpus):
    original = corpus[0]
    everything = list(traces.read_cases([str(original)], seed=6))
    sizes: dict = {}
    for c in everything:
        sizes[c.model] = sizes.get(c.model, 0) + 1
    data, report = _build(tmp_path, [original], "s", rate=0.1, seed=6, stratify="model")
    rows = [json.loads(x) for x in data.decode().splitlines()]
    got: dict = {}
    for r in rows:
        got[r["model"]] = got.get(r["model"], 0) + 1
    assert got == {m: max(1, int(n * 0.1 + 0.5)) for m, n in sizes.items()}
    assert report.strata == {m: {"cases": n, "kept": got[m]} for m, n in sorted(sizes.items())}
    # each stratum's kept cases are its smallest unit hashes
    for m in sizes:
        mine = sorted((unit_hash(c.trace_id, 6), c.trace_id) for c in everything if c.model == m)
        assert [t for _, t in mine[: got[m]]] == [r["trace_id"] for r in rows if r["model"] == m]
    data, _ = _build(tmp_path, [original], "p", seed=6, stratify="model", per_stratum=5)
    assert len(data.decode().splitlines()) == 5 * len(sizes)
