"""HF ``evaluate`` metrics computed by respeval.

Two ways in:

* ``evaluate.load(respeval.hf.path("rouge"))``: an ``evaluate`` metric module shipped in
  this package (under ``modules/<name>/<name>.py``), so it loads offline, with the Hub
  module's ``compute()`` arguments, defaults, output keys and aggregation;
* ``respeval.hf.rouge.compute(predictions=..., references=...)``: the same function
  without ``evaluate`` (or ``datasets``) installed.

Metrics: ``rouge``, ``sacrebleu`` (BLEU), ``chrf``, ``ter``, ``squad``, ``squad_v2``.
"""

from __future__ import annotations

from pathlib import Path

from respeval._adapters.hf import chrf, rouge, sacrebleu, squad, squad_v2, ter

NAMES = ("rouge", "sacrebleu", "chrf", "ter", "squad", "squad_v2")
MODULES = Path(__file__).resolve().parent / "modules"


def path(name: str) -> str:
    """The directory of respeval's ``evaluate`` module for the HF metric ``name``.

    ``evaluate.load(respeval.hf.path("rouge"))`` loads it from disk, without the network.
    """
    if name not in NAMES:
        hint = " (HF's 'bleu' is a different metric; respeval replaces 'sacrebleu')" if name == "bleu" else ""
        raise ValueError(f"no respeval module for HF metric {name!r}{hint}; available: {', '.join(NAMES)}")
    return str(MODULES / name)


__all__ = ["NAMES", "chrf", "path", "rouge", "sacrebleu", "squad", "squad_v2", "ter"]
