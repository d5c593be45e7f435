"""Systems under test, and running them: ``respeval.run``.

::

    result = respeval.run(
        "questions.jsonl",                                   # the variables (JSONL, CSV, Parquet)
        {"baseline": "openai:gpt-4o-mini", "candidate": "openai:gpt-4.1-mini"},
        templates="Q: {question}",
        out="responses.jsonl", cache="run.sqlite",
    )
    print(result.format())
    respeval.compare("responses.jsonl", metrics=["exact_match"], ref_field="expected").decision

Modules: :mod:`~respeval.systems.base` (a :class:`System`, the :class:`Generate` method the
judge's engine runs it with, the agent contract), :mod:`~respeval.systems.specs` (system
specs: provider models, agent endpoints, Python functions, ADK agents),
:mod:`~respeval.systems.endpoint`, :mod:`~respeval.systems.functions` and
:mod:`~respeval.systems.adk` (one kind each), :mod:`~respeval.systems.templates` (cases,
templates, the matrix), :mod:`~respeval.systems.runner` (the run, its output, resuming) and
:mod:`~respeval.systems.example` (the deterministic model of ``respeval run --example``).
"""

from __future__ import annotations

from respeval.systems.base import Generate, System, contract_reply, contract_request, load_tools
from respeval.systems.runner import RunResult, SystemSummary, arun, run
from respeval.systems.specs import load_system
from respeval.systems.templates import DEFAULT_KEEP, Template

__all__ = [
    "DEFAULT_KEEP",
    "Generate",
    "RunResult",
    "System",
    "SystemSummary",
    "Template",
    "arun",
    "contract_reply",
    "contract_request",
    "load_system",
    "load_tools",
    "run",
]
