"""pytest plugin for the peer-suite runner: every test's outcome, as JSON, at the end of a run.

Loaded with ``-p _helpers.peer_outcomes``; writes ``$PEER_OUTCOMES``:
``{"outcomes": {test id: outcome}, "imported": [...], "seconds": float}``. A test's outcome
is ``failed`` if any phase failed, else ``skipped`` if any phase skipped, else ``passed``; a
test module that could not be collected appears under its file path as ``error``.
``imported`` lists the modules of ``$PEER_PACKAGE`` (the real peer) that were imported, so
a run against respeval.compat can prove it never touched the peer.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

_RANK = {"passed": 0, "skipped": 1, "failed": 2}
_outcomes: dict[str, str] = {}
_started = time.perf_counter()


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _outcomes[report.nodeid] = "error"


def pytest_runtest_logreport(report: Any) -> None:
    outcome = report.outcome  # a failure in setup or teardown fails the test too
    previous = _outcomes.get(report.nodeid, "passed")
    _outcomes[report.nodeid] = max(previous, outcome, key=_RANK.__getitem__)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    path = os.environ.get("PEER_OUTCOMES")
    if not path:
        return
    package = os.environ.get("PEER_PACKAGE", "")
    imported = sorted(m for m in sys.modules if package and (m == package or m.startswith(package + ".")))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"outcomes": _outcomes, "imported": imported, "seconds": time.perf_counter() - _started}, f)
