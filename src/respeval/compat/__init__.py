"""Drop-in replacements for the APIs people already use: rouge-score and sacreBLEU.

``respeval.compat.rouge_score`` mirrors rouge-score 0.1.2's modules (``rouge_scorer``,
``scoring``, ``tokenizers``, ``tokenize``, ``io``); ``respeval.compat.sacrebleu`` mirrors
sacreBLEU 2.6's (``compat``, ``metrics``, ``significance``, ``tokenizers``). Both are held
to the peers' own test suites (tests/peer). ``from respeval.compat import rouge_scorer,
scoring`` keeps working.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["rouge_scorer", "scoring"]


def __getattr__(name: str) -> Any:
    # loaded on first use, so `import respeval.compat.sacrebleu` does not load ROUGE
    if name in __all__:
        return importlib.import_module(f"respeval.compat.rouge_score.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
