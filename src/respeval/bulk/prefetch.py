"""Reading ahead on a helper thread, so decoding the next chunk overlaps scoring this one."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

_DONE = object()


def prefetch(items: Iterator[Any], depth: int = 1) -> Iterator[Any]:
    """Iterate ``items`` on a helper thread, ``depth`` items ahead; errors re-raise here."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((_DONE, None))
        except BaseException as exc:  # handed to the consumer, which re-raises it
            q.put((_DONE, exc))

    thread = threading.Thread(target=produce, name="respeval-reader", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = q.get()
            if exc is not None:
                raise exc
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                thread.join(timeout=0.05)
