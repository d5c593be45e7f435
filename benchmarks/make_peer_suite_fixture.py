"""Record what rouge-score's and sacreBLEU's own test suites pass on the peers themselves.

Runs both suites from ../shared/peer_suites against the installed rouge-score 0.1.2 and
sacreBLEU 2.6.0 (the same runner as tests/peer, with the peer as the import target), and
writes ``tests/fixtures/peer_suites.json``: every test id with the peer's outcome, the
documented exceptions (tests respeval.compat does not claim, with the reason) and the
tests whose outcome depends on the machine. ``tests/peer/test_peer_suites.py`` then runs
the suites against respeval.compat and requires exactly the peer's passes minus the
exceptions. The peers take about 4.5 minutes (rouge-score's bootstrap tests run its
pure-Python LCS), hence a fixture rather than a run in every test session.

Usage::

    python benchmarks/make_peer_suite_fixture.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _helpers import peer_suites  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "peer_suites.json"

PRIVATE = "tests only rouge_scorer's private helpers ({names}), which are not part of the drop-in"
CATALOGUE = (
    "sacreBLEU's test-set catalogue and downloader (sacrebleu.utils, sacrebleu.dataset): "
    "respeval scores text you have and does not provide them"
)

# Tests respeval.compat does not claim, and why (the rule: `_`-prefixed names, downloads).
EXCEPTIONS = {
    "rouge_score": {
        "rouge_scorer_test.py::RougeScorerTest::testLcsTable": PRIVATE.format(names="_lcs_table, _backtrack_norec"),
        "rouge_scorer_test.py::RougeScorerTest::testUnionLcs": PRIVATE.format(names="_find_union, _union_lcs"),
        "rouge_scorer_test.py::RougeScorerTest::testSummaryLevelLcs": PRIVATE.format(names="_summary_level_lcs"),
    },
    "sacrebleu": {"test_api.py": CATALOGUE, "test_dataset.py": CATALOGUE + "; every test downloads test sets"},
}

# Tests whose outcome depends on the machine, on the peer as on respeval.
ENVIRONMENT = {
    "rouge_score": {
        "rouge_scorer_test.py::RougeScorerTest::testRougeLSumSentenceSplitting": {
            "reason": "split_summaries=True calls nltk.sent_tokenize, which needs NLTK's punkt_tab data (a download)",
            "nltk_data": "tokenizers/punkt_tab",
        }
    }
}


def _exception(suite: str, test_id: str) -> str | None:
    for key, reason in EXCEPTIONS[suite].items():
        if test_id == key or test_id.startswith(key + "::"):
            return reason
    return None


def main() -> None:
    out: dict = {
        "generated_by": "python benchmarks/make_peer_suite_fixture.py",
        "peers": {"rouge_score": version("rouge-score"), "sacrebleu": version("sacrebleu")},
        "suites": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, suite in peer_suites.SUITES.items():
            run = peer_suites.run(suite, suite.name, Path(tmp))
            print(f"{name}: {len(run.passed())} of {len(run.outcomes)} pass on the peer ({run.seconds:.0f} s)")
            out["suites"][name] = {
                "peer_outcomes": dict(sorted(run.outcomes.items())),
                "exceptions": {
                    test_id: reason
                    for test_id in sorted(run.outcomes)
                    if (reason := _exception(name, test_id)) is not None
                },
                "environment": ENVIRONMENT.get(name, {}),
            }
    FIXTURE.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
