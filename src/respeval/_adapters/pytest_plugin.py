"""The respeval pytest plugin: metric thresholds and judge verdicts as test assertions.

Registered through the ``pytest11`` entry point, so installing respeval enables it.  In a
test::

    from respeval.testing import assert_judged, assert_metric

    def test_summary_quality():
        assert_metric("rougeL", summaries, references, at_least=0.40)

    def test_answer(respeval_judge_model):      # or configure --respeval-judge
        assert_judged("It is Paris.", "Paris", prompt="Capital of France?")

``assert_judged`` asks the judge engine (with its SQLite cache, so a rerun pays for nothing
twice).  Options (command line, or the same names in ``[tool.pytest.ini_options]``):

* ``--respeval-judge MODEL``: the judge model spec (``openai:gpt-4o-mini``, ...); or
  override the ``respeval_judge_model`` fixture to return a model object;
* ``--respeval-cache PATH``: the judge cache (default ``.respeval/judge-cache.sqlite``);
* ``--respeval-replay-only``: answer only from the cache and fail on a miss (for CI).

The terminal report ends with the pass rates of the metric and judge assertions and the
judge's calls, tokens and cost; each test's values go to its JUnit XML properties
(``respeval.metric.<name>``, ``respeval.judge.score``, ``respeval.judge.pass``, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

DEFAULT_CACHE = ".respeval/judge-cache.sqlite"


@dataclass
class Tally:
    """What the session's respeval assertions did (for the terminal summary)."""

    metric_checks: int = 0
    metric_passed: int = 0
    judged: int = 0
    judged_passed: int = 0
    unscored: int = 0
    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    by_metric: dict[str, list[int]] = field(default_factory=dict)  # name -> [passed, checks]


@dataclass
class _Session:
    config: Any
    tally: Tally = field(default_factory=Tally)
    item: Any = None
    cache: Path | None = None
    model: Any = None  # the running test's respeval_judge_model, when it asked for one
    configured_model: Any = None  # loaded once from --respeval-judge

    def option(self, name: str) -> Any:
        value = self.config.getoption(name.replace("-", "_"), default=None)
        if value in (None, False):
            value = self.config.getini(name.replace("-", "_"))
        return value

    @property
    def replay_only(self) -> bool:
        value = self.option("respeval-replay-only")
        return value is True or str(value).lower() in ("1", "true", "yes")

    def judge_cache(self) -> Path:
        """The judge cache's path (each assertion opens it: SQLite makes that cheap and safe)."""
        if self.cache is None:
            path = Path(self.option("respeval-cache") or DEFAULT_CACHE)
            if not path.is_absolute():
                path = Path(self.config.rootpath) / path
            if self.replay_only and not path.is_file():
                pytest.fail(f"respeval: --respeval-replay-only, but there is no judge cache at {path}", pytrace=False)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.cache = path
        return self.cache

    def judge_model(self) -> Any:
        if self.model is not None:
            return self.model
        if self.configured_model is None:
            spec = self.option("respeval-judge")
            if spec:
                from respeval import judge

                self.configured_model = judge.load_model(spec)
        return self.configured_model

    def record(self, key: str, value: Any) -> None:
        if self.item is not None:
            self.item.user_properties.append((key, value))


# Sessions nest (pytester runs pytest inside pytest): the innermost is the current one.
_SESSIONS: list[_Session] = []
_KEY = pytest.StashKey[_Session]()


def _current() -> _Session | None:
    return _SESSIONS[-1] if _SESSIONS else None


# --------------------------------------------------------------------------- assertions


def assert_metric(
    name: str,
    predictions: str | Sequence[Any],
    references: Any,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    of: str = "corpus",
    **options: Any,
) -> float:
    """Assert that respeval's ``name`` (any ``respeval.REGISTRY`` text metric) is within bounds.

    ``of="corpus"`` (default) checks the corpus value (the mean for ROUGE, corpus BLEU/chrF
    from summed statistics); ``"mean"`` the mean of per-row scores; ``"each"`` every row.
    ``options`` are the metric's (``stemmer=True``, ``tokenizer="intl"``, ...).  A single str
    is one prediction.  Returns the checked value (the lowest row's with ``"each"``).
    """
    __tracebackhide__ = True
    if at_least is None and at_most is None:
        raise ValueError("assert_metric needs a bound: at_least=..., at_most=... or both")
    if of not in ("corpus", "mean", "each"):
        raise ValueError(f"of must be 'corpus', 'mean' or 'each', not {of!r}")
    from respeval._adapters.scoring import score_rows  # the plugin loads in every pytest run: import on use

    if isinstance(predictions, str):
        predictions, references = [predictions], [references]
    got = score_rows(name, list(predictions), list(references), **options)
    if of == "each":
        values = [v for v in got["scores"] if v is not None]
        if len(values) != len(got["scores"]):
            raise AssertionError(f"respeval {name}: some rows could not be scored")
        low, high = min(values), max(values)
        value = low if at_least is not None else high
    else:
        low = high = value = got[of]
    if value is None:
        raise AssertionError(f"respeval {name}: nothing could be scored")
    ok = (at_least is None or low >= at_least) and (at_most is None or high <= at_most)
    session = _current()
    if session is not None:
        t = session.tally
        t.metric_checks += 1
        t.metric_passed += ok
        counts = t.by_metric.setdefault(name, [0, 0])
        counts[0] += ok
        counts[1] += 1
        session.record(f"respeval.metric.{name}", value)
    if not ok:
        bounds = " and ".join(
            b
            for b in (f">= {at_least}" if at_least is not None else "", f"<= {at_most}" if at_most is not None else "")
            if b
        )
        raise AssertionError(f"respeval {name} ({of}) = {value:.6g}, expected {bounds} ({len(got['scores'])} rows)")
    return float(value)


def assert_judged(
    response: str,
    reference: str,
    *,
    prompt: str = "",
    model: Any = None,
    method: Any = "pointwise",
    min_score: float | None = None,
    cache: Any = "session",
    replay_only: bool | None = None,
    **engine_options: Any,
) -> dict[str, Any]:
    """Assert that the judge finds ``response`` equivalent to ``reference``; returns the verdict.

    The judge is ``model`` or the session's (``--respeval-judge`` or the
    ``respeval_judge_model`` fixture); answers go through the session's judge cache (or
    ``cache``: a path, a ``judge.JudgeCache``, or None for none), and with
    ``--respeval-replay-only`` come only from it (a miss fails the test).  The row passes on
    the verdict's ``pass`` or, with ``min_score``, on ``score >= min_score``.
    """
    __tracebackhide__ = True
    from respeval import judge

    session = _current()
    if model is None and session is not None:
        model = session.judge_model()
    if model is None:
        raise pytest.UsageError(
            "assert_judged needs a judge model: pass model=, run pytest with --respeval-judge MODEL, "
            "or override the respeval_judge_model fixture"
        )
    if isinstance(cache, str) and cache == "session":
        cache = session.judge_cache() if session is not None else None
    if replay_only is None:
        replay_only = session.replay_only if session is not None else False
    row_id = session.item.nodeid if session is not None and session.item is not None else "assert_judged"
    record = {"id": row_id, "prompt": prompt, "reference": reference, "response": response}
    result = judge.run([record], model, method=method, cache=cache, replay_only=replay_only, **engine_options)
    s = result.summary
    if session is not None:
        t = session.tally
        t.calls += s.calls
        t.cache_hits += s.cache_hits
        t.tokens_in += s.tokens_in
        t.tokens_out += s.tokens_out
        t.cost += s.cost
        session.record("respeval.judge.model", s.model)
        session.record("respeval.judge.cost", s.cost)
        session.record("respeval.judge.cache_hit", bool(s.cache_hits))
    if result.stop_reason and not result.rows:
        if session is not None:
            session.tally.unscored += 1
        hint = " (run once without --respeval-replay-only to record it)" if replay_only else ""
        pytest.fail(f"respeval judge: {result.stop_reason}{hint}", pytrace=False)
    row = result.rows[0]
    if row.verdict is None:
        if session is not None:
            session.tally.unscored += 1
            session.record("respeval.judge.unscored", row.unscored_reason)
        raise AssertionError(f"respeval judge could not score the response: {row.unscored_reason}")
    verdict = dict(row.verdict)
    score = verdict.get("score")
    passed = bool(verdict.get("pass")) if min_score is None else (score is not None and score >= min_score)
    if session is not None:
        session.tally.judged += 1
        session.tally.judged_passed += passed
        session.record("respeval.judge.score", score)
        session.record("respeval.judge.pass", passed)
    if not passed:
        why = verdict.get("reasoning") or verdict.get("explanation") or ""
        need = f" (min_score {min_score})" if min_score is not None else ""
        raise AssertionError(f"respeval judge ({s.model}): score {score}, not passed{need}: {why}")
    return verdict


# --------------------------------------------------------------------------- pytest hooks


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("respeval", "respeval metric and judge assertions")
    group.addoption("--respeval-judge", metavar="MODEL", help="judge model spec for assert_judged (openai:..., ...)")
    group.addoption("--respeval-cache", metavar="PATH", help=f"judge cache (default {DEFAULT_CACHE} under rootdir)")
    group.addoption(
        "--respeval-replay-only",
        action="store_true",
        default=False,
        help="answer assert_judged from the judge cache only; a miss fails the test (for CI)",
    )
    parser.addini("respeval_judge", "judge model spec for assert_judged", default="")
    parser.addini("respeval_cache", "judge cache path", default="")
    parser.addini("respeval_replay_only", "replay judge answers from the cache only", default="")


def pytest_configure(config: Any) -> None:
    session = _Session(config)
    config.stash[_KEY] = session
    _SESSIONS.append(session)


def pytest_unconfigure(config: Any) -> None:
    session = config.stash.get(_KEY, None)
    if session is not None and session in _SESSIONS:
        _SESSIONS.remove(session)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
    session = item.config.stash.get(_KEY, None)
    if session is not None:
        session.item = item
    try:
        yield
    finally:
        if session is not None:
            session.item = None
            session.model = None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    session = config.stash.get(_KEY, None)
    if session is None:
        return
    t = session.tally
    if not (t.metric_checks or t.judged or t.unscored):
        return
    write = terminalreporter.write_line
    terminalreporter.section("respeval")
    if t.metric_checks:
        write(f"metric checks: {t.metric_passed}/{t.metric_checks} passed ({_pct(t.metric_passed, t.metric_checks)})")
        for name, (passed, checks) in sorted(t.by_metric.items()):
            write(f"  {name}: {passed}/{checks}")
    if t.judged or t.unscored:
        write(
            f"judged: {t.judged_passed}/{t.judged} passed ({_pct(t.judged_passed, t.judged)})"
            + (f", {t.unscored} unscored" if t.unscored else "")
        )
        mode = " (replay only)" if session.replay_only else ""
        write(
            f"judge: {t.calls} calls, {t.cache_hits} cache hits{mode}, "
            f"{t.tokens_in} tokens in, {t.tokens_out} out, cost ${t.cost:.4f}"
        )


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def respeval_judge_model(request: Any) -> Any:
    """The judge model of ``assert_judged``: from ``--respeval-judge`` (override to return a
    model object, e.g. a ``judge.OpenAIChatModel`` with your base_url)."""
    session = request.config.stash.get(_KEY, None)
    spec = session.option("respeval-judge") if session is not None else None
    if not spec:
        pytest.skip("no judge model: pass --respeval-judge MODEL or override the respeval_judge_model fixture")
    from respeval import judge

    return judge.load_model(spec)


@pytest.fixture(autouse=True)
def _respeval_session_model(request: Any) -> None:
    """Make the test's ``respeval_judge_model`` (when it asks for one) the default judge of
    ``assert_judged``."""
    session = request.config.stash.get(_KEY, None)
    if session is not None and "respeval_judge_model" in request.fixturenames:
        session.model = request.getfixturevalue("respeval_judge_model")


@pytest.fixture
def respeval_judge_cache(request: Any) -> Path:
    """The path of the session's judge cache (``judge.JudgeCache(path)`` opens it)."""
    session = request.config.stash[_KEY]
    return session.judge_cache()


__all__ = ["DEFAULT_CACHE", "Tally", "assert_judged", "assert_metric"]
