"""Progress only on a terminal: a tqdm bar on a TTY, elsewhere a plain line every 30 s (CI logs
were filled with carriage-return redraws: issue 32, point 3)."""

from __future__ import annotations

import io
import os
import pty
from pathlib import Path

from respeval.cli.progress import LineProgress, progress


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_the_display_is_a_line_every_interval_and_never_a_carriage_return():
    stream, clock = io.StringIO(), _Clock()
    bar = LineProgress(1000, "rows", "scoring", stream, clock=clock)
    for _ in range(10):
        clock.now += 10.0
        bar.update(100)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    # at 30, 60 and 90 s, then the last line
    assert lines == [
        "scoring: 300/1,000 rows (30.0%), 10 rows/s",
        "scoring: 600/1,000 rows (60.0%), 10 rows/s",
        "scoring: 900/1,000 rows (90.0%), 10 rows/s",
        "scoring: 1,000/1,000 rows (100.0%), 10 rows/s (done)",
    ]


def test_a_short_run_off_a_terminal_prints_nothing():
    stream, clock = io.StringIO(), _Clock()
    with LineProgress(None, "rows", "judging", stream, clock=clock) as bar:
        clock.now = 1.0
        bar.update(5)
    assert stream.getvalue() == ""


def test_the_choice_follows_the_stream():
    assert isinstance(progress(10, unit="rows", desc="x", stream=io.StringIO()), LineProgress)
    main, other = pty.openpty()
    try:
        with os.fdopen(other, "w", closefd=False) as tty:
            bar = progress(10, unit="rows", desc="x", stream=tty)
            assert type(bar).__name__ == "tqdm"
            bar.close()
    finally:
        os.close(main)
        os.close(other)


def test_the_line_carries_a_postfix_and_a_total_learnt_late():
    """respeval run learns its total as it goes and shows the spend (tqdm's set_postfix_str)."""
    stream, clock = io.StringIO(), _Clock()
    bar = LineProgress(0, "rows", "running", stream, clock=clock)
    bar.total = 200
    bar.set_postfix_str("$0.0120 spent", refresh=False)
    clock.now = 40.0
    bar.update(100)
    bar.close()
    assert stream.getvalue().splitlines() == [
        "running: 100/200 rows (50.0%), 2 rows/s, $0.0120 spent",
        "running: 100/200 rows (50.0%), 2 rows/s, $0.0120 spent (done)",
    ]


def test_every_command_shows_progress_through_the_one_display():
    """A tqdm made elsewhere drew on CI logs (run) or showed nothing off a terminal (dataset
    generate, monitor: tqdm's disable=None)."""
    import respeval.cli

    folder = Path(respeval.cli.__file__).parent
    offenders = [p.name for p in folder.glob("*.py") if p.name != "progress.py" and "tqdm" in p.read_text()]
    assert offenders == []
