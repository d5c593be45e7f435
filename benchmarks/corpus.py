"""The benchmark workloads: real (prediction, reference) pairs built from ../shared/data.

Short pairs (``short_pairs()``, exactly 100,000), in this order:

1. every WMT17 en-de system (16) against the human reference: 16 x 3,004 = 48,064 pairs;
2. every system against the *next* system's output (alphabetical order, cyclic) as a
   pseudo-reference: 48,064 pairs;
3. every REALSumm row (CNN/DM system summary vs reference summary, multi-sentence,
   newline-separated): 2,500 pairs;
4. every system against the system *two* after it, until 100,000 pairs: 1,372 pairs.

A bulk evaluation job looks like this: many systems scored against one reference set, so a
reference text recurs (16 times in block 1). respeval tokenizes each distinct reference once;
rouge-score and rouge-score-rs tokenize it per pair. That is part of what is measured.

Subsets for the slower libraries (``subset(pairs, n)``) take every k-th pair of the 100,000,
so they have the same mix of blocks (and of lengths) as the full set.

Long documents (``long_pairs()``): the WMT17 reference and each system's output cut, at the
same segment boundaries, into documents of consecutive segments, one segment per line, each
cut made as soon as every side has at least 1,000 tokens (about 50 segments, 1,000-1,500
tokens per document); then system document vs reference document for the 16 systems. They
are scored with rougeLsum (the summary-level union LCS over the lines).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

N_SHORT = 100_000
LONG_DOC_TOKENS = 1_000
_TOKEN = re.compile(r"[a-z0-9]+")

sys.path.insert(0, str(ROOT / "tests"))
from _helpers.corpora import load_realsumm, load_wmt17  # noqa: E402

Pairs = tuple[list[str], list[str]]  # (predictions, references)


def data_available() -> bool:
    return (DATA / "wmt17_en_de" / "systems").is_dir() and (DATA / "realsumm").is_dir()


def missing_message() -> str:
    return f"real corpus not available: {DATA} (expected ../shared/data beside the project)"


def short_pairs(n: int = N_SHORT) -> Pairs:
    """The first ``n`` (at most 100,000 by default) real short pairs, in the order above."""
    reference, systems = load_wmt17(DATA)
    outs = list(systems.values())
    k = len(outs)
    preds: list[str] = []
    refs: list[str] = []
    for hyp in outs:  # 1. system vs reference
        preds += hyp
        refs += reference
    for i, hyp in enumerate(outs):  # 2. system vs next system
        preds += hyp
        refs += outs[(i + 1) % k]
    for row in load_realsumm(DATA):  # 3. REALSumm
        preds.append(row["prediction"])
        refs.append(row["reference"])
    for i, hyp in enumerate(outs):  # 4. system vs the system two after it
        if len(preds) >= n:
            break
        preds += hyp
        refs += outs[(i + 2) % k]
    if len(preds) < n:
        raise ValueError(f"only {len(preds)} real pairs available, {n} asked")
    return preds[:n], refs[:n]


def distinct_references(pairs: Pairs) -> Pairs:
    """The same pairs with every reference text made distinct, with the same tokens.

    Reference ``i`` gets a space and ``i`` in binary written with "." and "," (no
    tokenizer here keeps either), so no reference text is shared and a library that
    de-duplicates references cannot gain from it; every score stays the same.
    """
    preds, refs = pairs
    return list(preds), [r + " " + format(i, "b").replace("0", ".").replace("1", ",") for i, r in enumerate(refs)]


def subset(pairs: Pairs, n: int) -> Pairs:
    """``n`` pairs spread evenly over ``pairs`` (every k-th), same mix as the whole."""
    preds, refs = pairs
    if n >= len(preds):
        return list(preds), list(refs)
    step = len(preds) / n
    idx = [int(i * step) for i in range(n)]
    return [preds[i] for i in idx], [refs[i] for i in idx]


def _ntokens(text: str) -> int:
    """Tokens under rouge-score's tokenizer (lowercase, runs of [a-z0-9]), without stemming."""
    return len(_TOKEN.findall(text.lower()))


def long_pairs(n: int | None = None) -> Pairs:
    """System document vs reference document, newline-separated segments, >= 1,000 tokens."""
    reference, systems = load_wmt17(DATA)
    sides = [reference, *systems.values()]
    counts = [[_ntokens(line) for line in side] for side in sides]
    # cut all sides at the same segment boundaries, as soon as every side has LONG_DOC_TOKENS
    bounds = []
    start = 0
    totals = [0] * len(sides)
    for i in range(len(reference)):
        totals = [t + c[i] for t, c in zip(totals, counts)]
        if min(totals) >= LONG_DOC_TOKENS:
            bounds.append((start, i + 1))
            start = i + 1
            totals = [0] * len(sides)

    def docs(lines: list[str]) -> list[str]:
        return ["\n".join(lines[a:b]) for a, b in bounds]

    ref_docs = docs(reference)
    preds: list[str] = []
    refs: list[str] = []
    for hyp in systems.values():
        preds += docs(hyp)
        refs += ref_docs
    if n is not None:
        return subset((preds, refs), n)
    return preds, refs


def describe() -> str:
    """Token statistics of the workloads (rouge-score's tokenizer, no stemming)."""
    lines = []
    for name, (p, r) in (("short", short_pairs()), ("long", long_pairs())):
        tp = [_ntokens(x) for x in p]
        tr = [_ntokens(x) for x in r]
        lines.append(
            f"{name}: {len(p)} pairs, prediction tokens mean {sum(tp) / len(tp):.1f} "
            f"(min {min(tp)}, max {max(tp)}), reference tokens mean {sum(tr) / len(tr):.1f} "
            f"(min {min(tr)}, max {max(tr)}), distinct references {len(set(r))}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(describe())


# --- the libraries, behind one interface -------------------------------------------------

LIBRARIES = ("respeval", "respeval-python", "rouge-score-rs", "rouge-score")


def rayon_threads() -> str:
    """rouge-score-rs's thread count in this process (RAYON_NUM_THREADS), as a label."""
    import os

    value = os.environ.get("RAYON_NUM_THREADS", "")
    return value if value.isdigit() and int(value) > 0 else "all"


def runner(library: str, types: tuple[str, ...], stem: bool, threads: int | None = None):
    """``fn(preds, refs) -> result`` for one library; scorer construction is done here,
    outside what is timed. ``threads`` only applies to respeval (rouge-score-rs takes its
    thread count from RAYON_NUM_THREADS, once per process; rouge-score has one thread)."""
    if library == "respeval":
        import respeval

        return lambda p, r: respeval.rouge(p, r, types, stemmer=stem, threads=threads, implementation="native")
    if library == "respeval-python":
        import respeval

        return lambda p, r: respeval.rouge(p, r, types, stemmer=stem, implementation="python")
    if library == "rouge-score-rs":
        import rouge_score_rs

        scorer = rouge_score_rs.RougeScorer(list(types), use_stemmer=stem)
        return lambda p, r: scorer.score_batch(r, p)
    if library == "rouge-score":
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=stem)
        return lambda p, r: [scorer.score(t, x) for x, t in zip(p, r)]
    raise ValueError(f"unknown library {library!r}")


def as_matrix(library: str, result, types: tuple[str, ...]):
    """Per pair, precision/recall/F of each type, as a float64 array (n, 3 * len(types))."""
    import numpy as np

    if library.startswith("respeval"):
        return np.column_stack([result[f"{t}_{x}"] for t in types for x in "prf"])
    return np.array([[v for t in types for v in row[t]] for row in result], dtype=np.float64)
