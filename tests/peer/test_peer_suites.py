"""The drop-in claim, held to the peers' own tests (issue 13, point 10).

rouge-score 0.1.2's and sacreBLEU 2.6.0's test suites (../shared/peer_suites) run with only
their imports pointed at respeval.compat (``_helpers.peer_suites``: a copy with the import
statements rewritten, checked to differ from the original in nothing else). The tests that
pass must be exactly those that pass on the peer itself (``tests/fixtures/peer_suites.json``,
written by ``benchmarks/make_peer_suite_fixture.py``), minus the documented exceptions
there: tests of rouge-score's ``_``-prefixed helpers and sacreBLEU's test-set
catalogue/downloads. A regression fails; so does a test that starts passing unexpectedly
(update the fixture). Both runs take about 20 s together.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _helpers import peer_suites
from _helpers.paths import FIXTURES

FIXTURE = FIXTURES / "peer_suites.json"


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _nltk_data_available(resource: str) -> bool:
    try:
        import nltk

        nltk.data.find(resource)
    except (ImportError, LookupError):
        return False
    return True


def expected_passes(spec: dict) -> set[str]:
    """The peer's passes minus the exceptions, with machine-dependent tests decided for this machine."""
    environment = spec["environment"]
    expected = {
        test_id
        for test_id, outcome in spec["peer_outcomes"].items()
        if outcome == "passed" and test_id not in spec["exceptions"] and test_id not in environment
    }
    for test_id, needs in environment.items():
        if _nltk_data_available(needs["nltk_data"]):
            expected.add(test_id)
    return expected


def _skip_unless_available(suite: peer_suites.Suite) -> None:
    if not peer_suites.available(suite):
        pytest.skip(
            f"the {suite.name} suite is not available: it needs ../shared/peer_suites/{suite.folder}"
            + (" and ../shared/data/wmt17_en_de" if suite.name == "sacrebleu" else "")
        )


@pytest.mark.parametrize("name", sorted(peer_suites.SUITES))
def test_peer_suite_passes_on_respeval_as_on_the_peer(name: str, recorded: dict, tmp_path: Path) -> None:
    suite = peer_suites.SUITES[name]
    _skip_unless_available(suite)
    spec = recorded["suites"][name]
    run = peer_suites.run(suite, suite.compat, tmp_path)

    assert run.imported == [], f"the run against {suite.compat} imported the real {name}: {run.imported}"
    # a test file that does not import shows up as one "error" entry under its file name
    new_tests = {t for t in run.outcomes if "::" in t and t not in spec["peer_outcomes"]}
    assert not new_tests, f"tests not in the fixture (regenerate it): {sorted(new_tests)}"

    expected = expected_passes(spec)
    passed = run.passed()
    regressions = sorted(expected - passed)
    unexpected = sorted(passed - expected)
    report = (
        f"{name}: {len(passed & expected)} of {len(expected)} expected passes "
        f"({sum(o == 'passed' for o in spec['peer_outcomes'].values())} pass on the peer)\n"
        f"regressions: {[(t, run.outcomes.get(t, 'not run')) for t in regressions]}\n"
        f"passing but not expected (update benchmarks/make_peer_suite_fixture.py): {unexpected}\n"
        f"{run.output[-6000:]}"
    )
    assert not regressions and not unexpected, report


def test_the_exceptions_are_the_documented_kinds_only(recorded: dict) -> None:
    """Every excused test is a private-helper test or a test-set catalogue/download test, with its reason."""
    kinds = ("tests only rouge_scorer's private helpers (", "sacreBLEU's test-set catalogue and downloader (")
    for name, spec in recorded["suites"].items():
        assert spec["exceptions"], name
        for test_id, reason in spec["exceptions"].items():
            assert reason.startswith(kinds), (test_id, reason)
    # what respeval.compat must pass: rouge-score 41 of its 45 tests, sacreBLEU 130 of its 144
    counts = {
        name: (len(spec["peer_outcomes"]), len(expected_passes(spec))) for name, spec in recorded["suites"].items()
    }
    punkt = _nltk_data_available("tokenizers/punkt_tab")
    assert counts == {"rouge_score": (45, 41 + punkt), "sacrebleu": (144, 130)}


@pytest.mark.slow
def test_fixture_matches_the_peers_today(recorded: dict, tmp_path: Path) -> None:
    """Re-run both suites on the installed peers (about 4.5 minutes) and compare with the fixture."""
    for name, suite in peer_suites.SUITES.items():
        _skip_unless_available(suite)
        run = peer_suites.run(suite, suite.name, tmp_path)
        spec = recorded["suites"][name]
        peer = {t: o for t, o in spec["peer_outcomes"].items() if t not in spec["environment"]}
        now = {t: o for t, o in run.outcomes.items() if t not in spec["environment"]}
        # downloads may succeed on a machine with network access: compare the rest
        downloads = {t for t, reason in spec["exceptions"].items() if "download" in reason}
        assert {t: o for t, o in now.items() if t not in downloads} == {
            t: o for t, o in peer.items() if t not in downloads
        }, name
