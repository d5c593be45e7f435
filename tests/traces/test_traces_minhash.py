"""MinHash signatures (cext/minhash.pxi, the twin respeval._core_py.minhash): both
implementations give identical signatures on any text, and the signatures estimate the
Jaccard similarity of the word-shingle sets they summarise."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from respeval import _backend, _core_py

ROOT = Path(__file__).resolve().parents[2]
NATIVE = _backend.native_available()

WORDS = st.sampled_from(["the", "The", "cat", "sat", "on", "mat", "ÄÖÜ", "naïve", "42", "x", "日本", "a-b", "¿qué?"])
TEXTS = st.one_of(
    st.text(max_size=80),
    st.lists(WORDS, max_size=30).map(" ".join),
    st.lists(st.sampled_from([" ", ",", ".\n", "\t", "--", "\x00", "é"]), max_size=10).map("".join),
)


def _sig(impl: str, texts, shingle=3, num_perm=32, seed=7) -> np.ndarray:
    data = _backend.get(impl).minhash_signatures(list(texts), shingle, num_perm, seed)
    return np.frombuffer(data, dtype=np.uint64).reshape(len(texts), num_perm)


@pytest.mark.skipif(not NATIVE, reason="respeval._core is not built")
@settings(max_examples=300, deadline=None)
@given(
    st.lists(TEXTS, max_size=6),
    st.integers(1, 5),
    st.integers(1, 40),
    st.integers(0, 2**64 - 1),
)
def test_native_and_twin_give_identical_signatures(texts, shingle, num_perm, seed):
    native = _backend.get("native").minhash_signatures(texts, shingle, num_perm, seed)
    twin = _core_py.minhash_signatures(texts, shingle, num_perm, seed)
    assert native == twin


@pytest.mark.skipif(not NATIVE, reason="respeval._core is not built")
def test_identical_on_many_rows_with_threads():
    rng = np.random.default_rng(3)
    vocab = ["alpha", "beta", "gamma", "delta", "Épsilon", "zeta", "eta", "theta"]
    texts = [" ".join(rng.choice(vocab, size=rng.integers(0, 60))) for _ in range(500)]
    native = _backend.get("native").minhash_signatures(texts, 4, 64, 11, threads=2)
    assert native == _core_py.minhash_signatures(texts, 4, 64, 11)


def test_words_and_case(impl):
    sig = _sig(impl, ["The cat, sat!", "the CAT sat", "the cat  sat.", "the cat sit", "", "...", "a"])
    assert (sig[0] == sig[1]).all() and (sig[1] == sig[2]).all()  # punctuation and ASCII case ignored
    assert not (sig[2] == sig[3]).all()
    assert (sig[4] == 2**64 - 1).all() and (sig[5] == 2**64 - 1).all()  # no words: the empty signature
    assert (sig[6] < 2**61 - 1).all()  # one word, fewer than the shingle size: one shingle


def test_signature_agreement_estimates_jaccard(impl):
    rng = np.random.default_rng(5)
    base = [f"w{i}" for i in rng.permutation(400)]
    # unigram shingles: the Jaccard similarity of two word sets is known exactly
    a, b = set(base[:300]), set(base[100:400])
    jaccard = len(a & b) / len(a | b)  # 200 / 400
    sig = _sig(impl, [" ".join(sorted(a)), " ".join(sorted(b))], shingle=1, num_perm=256, seed=1)
    estimate = float((sig[0] == sig[1]).mean())
    assert abs(estimate - jaccard) < 0.1  # 256 permutations: standard error ~0.03


def test_seed_changes_the_permutations(impl):
    assert not np.array_equal(_sig(impl, ["a b c d"], seed=1), _sig(impl, ["a b c d"], seed=2))


def test_bad_arguments(impl):
    kernels = _backend.get(impl)
    with pytest.raises(TypeError, match=r"texts\[1\] is a int"):
        kernels.minhash_signatures(["a", 3], 3, 8, 0)
    with pytest.raises(ValueError, match="shingle"):
        kernels.minhash_signatures(["a"], 0, 8, 0)
    with pytest.raises(ValueError, match="num_perm"):
        kernels.minhash_signatures(["a"], 1, 0, 0)
    with pytest.raises(OverflowError):
        kernels.minhash_signatures(["a"], 1, 1, -1)
    assert kernels.minhash_signatures([], 3, 8, 0) == b""


@pytest.mark.skipif(not (shutil.which("gcc") or shutil.which("cc")), reason="no C compiler")
def test_both_modular_multiplication_paths_agree(tmp_path):
    """rv_mh_perm's 128-bit path and its 32-bit-limb path (compilers without __int128) agree
    with (a*x+b) mod P on random and extreme values, under the sanitizers when available."""
    exe = tmp_path / "minhash_perm"
    cc = shutil.which("gcc") or shutil.which("cc")
    source = Path(__file__).with_name("c") / "minhash_perm.c"
    for flags in (["-fsanitize=address,undefined", "-fno-sanitize-recover=all"], []):
        built = subprocess.run([cc, "-O1", *flags, "-I", str(ROOT / "cext"), "-o", str(exe), str(source)])
        if built.returncode == 0:
            break
    assert built.returncode == 0, "tests/traces/c/minhash_perm.c does not compile"
    done = subprocess.run([str(exe), "300000", "9"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["ok", "300000"], done.stdout + done.stderr
