"""One progress display for every long command: a tqdm bar on a terminal, and elsewhere (CI
logs, files, pipes) one plain line every ``interval`` seconds, so a log is not filled with
carriage-return redraws.  Nothing is shown for runs shorter than ``delay`` seconds."""

from __future__ import annotations

import sys
import time
from typing import IO, Any

LINE_INTERVAL = 30.0


class LineProgress:
    """The non-terminal display: ``desc: 12,000/48,064 rows (25.0%), 4,100 rows/s`` every
    ``interval`` seconds, and a last line at the end when any was written."""

    def __init__(
        self,
        total: int | None,
        unit: str,
        desc: str,
        stream: IO[str],
        *,
        delay: float = 2.0,
        interval: float = LINE_INTERVAL,
        clock: Any = time.monotonic,
    ) -> None:
        self.total, self.unit, self.desc, self.stream = total, unit, desc, stream
        self.n = 0
        self.clock = clock
        self.start = clock()
        self.next_line = self.start + max(delay, interval)
        self.interval = interval
        self.lines = 0
        self.postfix = ""

    def set_postfix_str(self, postfix: str, refresh: bool = True) -> None:
        """Text after the counts on the next line (tqdm's name): ``$0.0123 spent``."""
        self.postfix = postfix

    def _line(self) -> str:
        elapsed = max(self.clock() - self.start, 1e-9)
        done = f"{self.n:,}" if self.total is None else f"{self.n:,}/{self.total:,}"
        share = f" ({100.0 * self.n / self.total:.1f}%)" if self.total else ""
        line = f"{self.desc}: {done} {self.unit}{share}, {self.n / elapsed:,.0f} {self.unit}/s"
        return f"{line}, {self.postfix}" if self.postfix else line

    def update(self, n: int = 1) -> None:
        self.n += n
        now = self.clock()
        if now >= self.next_line:
            print(self._line(), file=self.stream, flush=True)
            self.lines += 1
            self.next_line = now + self.interval

    def close(self) -> None:
        if self.lines:
            print(self._line() + " (done)", file=self.stream, flush=True)
            self.lines = 0

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(
    total: int | None,
    *,
    unit: str,
    desc: str,
    stream: IO[str] | None = None,
    delay: float = 2.0,
    **tqdm_options: Any,
) -> Any:
    """A progress display on ``stream`` (stderr): tqdm when it is a terminal, else LineProgress.
    Both have ``update(n)``, ``close()`` and work as context managers."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, desc=desc, file=stream, delay=delay, dynamic_ncols=True, **tqdm_options)
    return LineProgress(total, unit, desc, stream, delay=delay)
