"""``MetricResult.bootstrap(threads=...)``: the intervals do not depend on the thread count."""

from __future__ import annotations

import respeval


def test_bootstrap_intervals_are_the_same_for_any_thread_count():
    preds = [f"the cat sat on mat {i % 7}" for i in range(300)]
    refs = [f"a cat sat on the mat {i % 5}" for i in range(300)]
    res = respeval.rouge(preds, refs, ("rouge1", "rougeL"))
    one, two, default = res.bootstrap(200, threads=1), res.bootstrap(200, threads=2), res.bootstrap(200)
    assert one == two == default
    assert one["rouge1"].low.fmeasure < one["rouge1"].high.fmeasure
