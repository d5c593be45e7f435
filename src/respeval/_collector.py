"""Python's cyclic garbage collector, run less often while many small containers are made.

Values read from JSON are many small dicts and lists, none in a cycle, that the collector
walks again and again as they survive its young generation: ~35% of a run on nested JSONL
trajectories and ~2/3 of loading an ADK eval set (benchmarks/README.md).  A leaf module: it
imports nothing from respeval.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["fewer_collections"]


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """The collector every 100,000 allocations instead of 700 inside the block, put back after
    (a collection still runs: memory held in cycles is not lost, only found later)."""
    old = gc.get_threshold()
    gc.set_threshold(100_000, 100, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)
