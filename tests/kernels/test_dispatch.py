"""Every instruction-set path of the core that this CPU can run gives the same results
as the portable path (each forced with RESPEVAL_SIMD in a fresh process), and a path
that cannot run is a clear error, never a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")

# Texts that reach every branch of the tokenizer and the kernels: all three PEP 393
# kinds, U+0130 and the Kelvin sign, tokens across 64-byte blocks, long tokens, newlines,
# long predictions (several machine words) and documents for rougeLsum.
FINGERPRINT = r"""
import hashlib, json, random, sys
import numpy as np
from respeval import _core

rng = random.Random(7)
alphabet = ["a", "B", "z9", "Running", "\u0130ab", "\u212akm", "\u00e9t\u00e9", "\U0001F600x", "x" * 70, "\n", "-", "  "]
def text(n):
    return " ".join(rng.choice(alphabet) for _ in range(n))
texts = [text(rng.randrange(0, 300)) for _ in range(400)] + ["", "\n\n", "a" * 200 + "\u0130" + "b" * 63]
preds, refs = texts[:300], texts[300:]
h = hashlib.sha256()
for stem in (False, True):
    v = _core.Vocab()
    for part in _core.tokenize_rouge(v, texts, stem, 1):
        h.update(part)
    h.update("\x00".join(v.tokens()).encode("utf-8", "surrogatepass"))
    n = len(preds)
    pp = np.arange(n, dtype=np.int64)
    pr = np.array([rng.randrange(len(refs)) for _ in range(n)], np.int64)
    stats = np.zeros((n, 6), np.int64)
    lengths = np.zeros((n, 2), np.int64)
    _core.rouge_text_stats(preds, refs, pp, pr, 4, True, True, stem, stats, lengths, 2)
    h.update(stats.tobytes() + lengths.tobytes())
# tool calls as JSON text, read twice (the second time from the call memo): strings long
# enough to cross the scanners' 16-byte blocks, escapes, braces and non-ASCII inside them
pieces = ["a", '"', "\\\\", "{", "}", "]", "\u00e9", "\U0001F600", "x" * 17, "\n", ", "]
calls = [{"tool_name": rng.choice(["f", "g\u00e9", "h" * 20]),
          "tool_input": {rng.choice("kjz") * rng.randrange(1, 20): "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12)))
                         for _ in range(rng.randrange(0, 4))}} for _ in range(300)]
rows = [json.dumps(rng.sample(calls, rng.randrange(0, 6)), ensure_ascii=rng.random() < 0.5) for _ in range(400)]
table = _core.CallTable()
for _ in range(2):
    for part in table.intern(rows)[:3]:
        h.update(part)
# the memo's hash of a call text depends on its bytes alone: the same texts at every
# offset and alignment (0..130 spaces before them), in rows of one and of three, are
# remembered once each
texts = sorted({json.dumps(c, ensure_ascii=a) for c in calls[:40] for a in (True, False)})
shifted = ["[" + " " * k + t + "]" for k in range(131) for t in texts]
shifted += ["[" + " " * k + t + ", " + u + ",\n" + t + "]" for k in range(0, 131, 13) for t, u in zip(texts, texts[1:])]
memo = _core.CallTable()
memo.intern(shifted)
assert memo._memo_entries == len(texts), (memo._memo_entries, len(texts))
h.update(str(memo._memo_entries).encode())
# trajectory statistics: rows on the bit-parallel path (<= 64 calls a side) and beyond it
sides = []
for _ in range(2):
    lens = [rng.choice([0, 1, 2, 3, 7, 63, 64, 65]) for _ in range(500)]
    ids = np.array([rng.randrange(6) for _ in range(sum(lens))], np.int32)
    sides.append((ids, ids % 3, np.array([0] + lens, np.int64).cumsum()))
out = np.zeros((500, len(_core.TRAJECTORY_STATS)), np.int64)
pm, rm = np.zeros(len(sides[0][0]), np.uint8), np.zeros(len(sides[1][0]), np.uint8)
_core.trajectory_pair_stats(*sides[0], *sides[1], out, pm, rm, 1)
h.update(out.tobytes() + pm.tobytes() + rm.tobytes())
# CSV lines: quoted fields with doubled quotes before, inside and across 16-byte blocks
import csv, io
buf = io.StringIO()
writer = csv.writer(buf)
for _ in range(300):
    writer.writerow(["".join(rng.choice(pieces[:9]) for _ in range(rng.randrange(0, 30))) for _ in range(3)])
lines = [line.encode("utf-8") for line in buf.getvalue().splitlines(keepends=True)]
h.update(json.dumps(_core.csv_columns(lines, 3, [2, 0, 1])).encode("utf-8"))
# the MT byte scanners (mt_scan.h): 13a and chrF++ words as ids, chrF's characters; texts
# of every PEP 393 kind, across 64-byte blocks, with the bytes that send a text or a word
# to the slow paths (entities, newlines, <skipped>, non-ASCII whitespace, digits by '-')
mt_pieces = ["a", "Zz", "1", "-", ".", ",", "'", "&amp;", "<skipped>", "\n", " ", "\t", "\u00e9", "\u201e",
             "\U0001F600", "\xa0", "\u3000", "(", "!", "x" * 70, "1990-2000", "U.S.", "\ud800"]
mt = ["".join(rng.choice(mt_pieces) for _ in range(rng.randrange(0, 90))) for _ in range(600)]
for fn in (_core.tokenize_13a_ids, _core.chrf_words_ids):
    v = _core.Vocab()
    for part in fn(v, mt):
        h.update(part)
    h.update("\x00".join(v.tokens()).encode("utf-8", "surrogatepass"))
for keep in (False, True):
    for part in _core.chrf_chars(mt, keep):
        h.update(part)
print(json.dumps({"path": _core.simd_path(), "digest": h.hexdigest()}))
"""


def _run(path: str | None, code: str = FINGERPRINT) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("RESPEVAL_SIMD", None)
    if path is not None:
        env["RESPEVAL_SIMD"] = path
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def test_every_supported_path_equals_the_portable_path():
    paths = core.simd_paths()
    assert paths[0] == "portable" and core.simd_path() in paths
    results = {}
    for path in paths:
        done = _run(path)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        assert got["path"] == path
        results[path] = got["digest"]
    assert len(set(results.values())) == 1, results


def test_default_is_the_best_supported_path():
    done = _run(None, "from respeval import _core; print(_core.simd_path(), _core.simd_paths()[-1])")
    assert done.returncode == 0, done.stderr
    chosen, best = done.stdout.split()
    assert chosen == best


def test_an_unknown_path_is_a_clear_error():
    done = _run("avx9000", "import respeval._core")
    assert done.returncode != 0
    assert "RESPEVAL_SIMD='avx9000' is not a path of the core" in done.stderr
