"""Issue 12.15: a generator where sacreBLEU wants a sequence behaves as in sacreBLEU (the same
TypeError and message), never a bare "object of type 'generator' has no len()"."""

from __future__ import annotations

import pytest

sacrebleu = pytest.importorskip("sacrebleu")

from respeval.compat import sacrebleu as compat  # noqa: E402

HYPS = ["the cat sat", "a dog"]
REFS = ["the cat sat down", "a dog barks"]


def _outcome(fn, *args):
    try:
        return ("ok", str(fn(*args)).split(" ", 3)[:3])
    except Exception as exc:  # noqa: BLE001 - the exception is the thing compared
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("name", ["corpus_bleu", "corpus_chrf", "corpus_ter"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: ((h for h in HYPS), [REFS]),
        lambda: (HYPS, [(r for r in REFS)]),
        lambda: (tuple(HYPS), [tuple(REFS)]),
    ],
    ids=["generator-hyps", "generator-refs", "tuples"],
)
def test_same_outcome_as_sacrebleu(name, make):
    ours = _outcome(getattr(compat, name), *make())
    theirs = _outcome(getattr(sacrebleu, name), *make())
    assert ours == theirs
    assert "has no len" not in ours[1]
