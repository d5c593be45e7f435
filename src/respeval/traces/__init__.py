"""Traces in, eval datasets out: readers of what running LLM systems emit, one case per
trace, and the dataset build behind ``respeval dataset from-traces``.

Readers (one per format, all yielding the one case schema, :data:`CASE_FIELDS`):

* OpenTelemetry OTLP JSON (:mod:`~respeval.traces.otlp`): the collector's file exporter
  (one ``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest`` per line) and OTLP/HTTP
  JSON payloads, with spans following the GenAI semantic conventions in every version
  (:mod:`~respeval.traces.genai`) or OpenInference's (:mod:`~respeval.traces.openinference`);
* OpenAI chat-completions request/response logs (:mod:`~respeval.traces.chatlogs`);
* ADK session dumps (:mod:`~respeval.traces.adk`, read by :mod:`respeval.agents`).

::

    from respeval import traces

    for case in traces.read_cases(["spans/"], seed=7):
        print(case.trace_id, case.prompt, case.tool_calls, case.input_tokens)

    report = traces.from_traces(
        ["spans/"], out="cases.jsonl", adk_evalset="cases.evalset.json", label_sheet="label.csv",
        options=traces.Options(sampling=traces.Sampling(rate=0.1, seed=7, keep_errors=True),
                               dedupe=True, scrub_pii=True),
    )
    print(report.to_json())

Sampling (:mod:`~respeval.traces.sampling`) decides membership by a seeded hash of the
trace id; grouping (:mod:`~respeval.traces.spill`) partitions records by that hash so
memory stays flat; PII scrubbing (:mod:`~respeval.traces.pii`) uses stable keyed
placeholders; near duplicates (:mod:`~respeval.traces.dedupe`) are found with MinHash from
the native core.
"""

from respeval.traces.build import BuildReport, Filters, Options, from_traces, read_cases
from respeval.traces.case import CASE_FIELDS, DEFAULT_FEEDBACK_ATTRIBUTES, Case
from respeval.traces.dedupe import NearDuplicates
from respeval.traces.errors import BadRecord, TraceInputError
from respeval.traces.pii import Scrubber
from respeval.traces.sampling import Sampling, unit_hash

__all__ = [
    "CASE_FIELDS",
    "DEFAULT_FEEDBACK_ATTRIBUTES",
    "BadRecord",
    "BuildReport",
    "Case",
    "Filters",
    "NearDuplicates",
    "Options",
    "Sampling",
    "Scrubber",
    "TraceInputError",
    "from_traces",
    "read_cases",
    "unit_hash",
]
