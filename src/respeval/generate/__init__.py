"""Synthetic eval cases: a template and seed values in, cases that follow a JSON schema out,
written by any model the judge layer supports (``respeval dataset generate``).

::

    from respeval.generate import GenerateOptions, generate_cases

    cases, report = generate_cases(
        "Write a customer question about {product} that a support agent must answer.",
        [{"product": "a kettle"}, {"product": "a bike lock"}],
        "openai:gpt-4o-mini",
        GenerateOptions(n=40, directives=("none", "ambiguous", "adversarial", "multilingual")),
        out="cases.jsonl", cache="cases.cache.sqlite",
    )

The requests go through the judge engine (:mod:`respeval.judge.run`: concurrency, retries,
the answer cache, the budget) with the generation method (:mod:`respeval.generate.method`),
which checks every reply against the schema and asks again once when it does not fit; near
duplicates are dropped with MinHash from the native core (:mod:`respeval.traces.dedupe`).
"""

from respeval.generate.method import DEFAULT_SCHEMA, CaseGenerator, fill_template
from respeval.generate.run import (
    DIRECTIVES,
    LANGUAGES,
    GenerateOptions,
    GenerateReport,
    generate_cases,
    plan_requests,
)

__all__ = [
    "DEFAULT_SCHEMA",
    "DIRECTIVES",
    "LANGUAGES",
    "CaseGenerator",
    "GenerateOptions",
    "GenerateReport",
    "fill_template",
    "generate_cases",
    "plan_requests",
]
