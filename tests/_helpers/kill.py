"""Run ``respeval`` commands in child processes that SIGKILL themselves at chosen moments.

A child is forked from a forkserver that has imported respeval, numpy and pyarrow once,
so a run costs a fork rather than a fresh interpreter (~1.5 s of imports here).  The kill
is a real ``SIGKILL`` (no cleanup, no ``finally``), delivered by the child to itself:

* at the ``n``-th call of a function (``"os.replace"``, ``"shutil.rmtree"``,
  ``"respeval.bulk.chunks.score_chunk"``, ...): deterministic moments, e.g. between writing
  a file and renaming it, or in the middle of a cleanup;
* after ``seconds`` (a timer thread): a moment nobody chose, inside C code as often as not;
* when ``kill_when()`` (polled by the parent) turns true, e.g. once a server has seen ``k``
  more requests: a moment nobody chose that is still sure to fall inside the run, however
  fast or slow the machine.

``slow=("target", seconds)`` makes every call of a function sleep first (to keep a run going
while another is started).  ``count_calls`` reports how often each target is called by a
whole run, so a test can spread kill points over a run's events.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

PRELOAD = ["_helpers.kill_preload"]


def _context() -> Any:
    from multiprocessing import forkserver

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    # Python 3.11's forkserver does not apply the parent's sys.path before preloading: it
    # gets the tests folder (for _helpers) through the environment it starts with.
    here = str(Path(__file__).resolve().parents[1])
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, saved) if p)
    try:
        forkserver.ensure_running()
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    return ctx


def _resolve(target: str) -> tuple[Any, str]:
    """``"pkg.module.attr"`` or ``"pkg.module.Class.method"`` -> (owner object, attribute)."""
    parts = target.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:-1]:
            owner = getattr(owner, name)
        return owner, parts[-1]
    raise ValueError(f"cannot resolve {target!r}")


def _wrap(target: str, before: Any) -> None:
    owner, name = _resolve(target)
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        before()
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def _child(
    argv: Sequence[str],
    cwd: str,
    stdout: str,
    kill_at: tuple[str, int] | None,
    kill_after: float | None,
    slow: tuple[str, float] | None,
    counts: str | None,
    targets: Sequence[str],
) -> None:
    os.chdir(cwd)
    if kill_at is not None:
        target, nth = kill_at
        seen = [0]

        def maybe_kill() -> None:
            seen[0] += 1
            if seen[0] == nth:
                os.kill(os.getpid(), signal.SIGKILL)

        _wrap(target, maybe_kill)
    if slow is not None:
        _wrap(slow[0], lambda: time.sleep(slow[1]))
    tally: dict[str, int] = {}
    for target in targets:
        tally[target] = 0

        def bump(t: str = target) -> None:
            tally[t] += 1

        _wrap(target, bump)
    if kill_after is not None:
        timer = threading.Timer(kill_after, lambda: os.kill(os.getpid(), signal.SIGKILL))
        timer.daemon = True
        timer.start()
    from respeval.cli.app import main

    with open(stdout, "w", encoding="utf-8") as out, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    if counts is not None:
        Path(counts).write_text(json.dumps(tally))
    sys.stdout.flush()
    os._exit(code)


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike = ".",
    kill_at: tuple[str, int] | None = None,
    kill_after: float | None = None,
    slow: tuple[str, float] | None = None,
    kill_when: Callable[[], bool] | None = None,
    timeout: float = 120,
    wait: bool = True,
) -> Any:
    """Run ``respeval ARGV`` in a child; returns (exit code, output) -- the exit code is
    ``-9`` when the child was killed.  With ``wait=False`` returns the process and the
    output file instead."""
    ctx = _context()
    out = Path(cwd, f".child-{time.monotonic_ns()}.out")
    proc = ctx.Process(target=_child, args=(list(argv), str(cwd), str(out), kill_at, kill_after, slow, None, ()))
    proc.start()
    if not wait:
        return proc, out
    if kill_when is not None:
        deadline = time.monotonic() + timeout
        while proc.is_alive() and time.monotonic() < deadline:
            if kill_when():
                os.kill(proc.pid, signal.SIGKILL)  # type: ignore[arg-type]
                break
            time.sleep(0.002)
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise AssertionError(f"respeval {' '.join(argv)} did not finish in {timeout}s")
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    out.unlink(missing_ok=True)
    return proc.exitcode, text


def count_calls(argv: Sequence[str], targets: Sequence[str], *, cwd: str | os.PathLike = ".") -> dict[str, int]:
    """How many times a whole (uninterrupted) run calls each target."""
    ctx = _context()
    out = Path(cwd, f".child-{time.monotonic_ns()}.out")
    counts = Path(cwd, f".child-{time.monotonic_ns()}.counts")
    proc = ctx.Process(
        target=_child, args=(list(argv), str(cwd), str(out), None, None, None, str(counts), list(targets))
    )
    proc.start()
    proc.join(120)
    assert proc.exitcode == 0, out.read_text()
    out.unlink(missing_ok=True)
    result = json.loads(counts.read_text())
    counts.unlink()
    return result
