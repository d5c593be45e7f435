"""What ``dataset from-traces`` writes: the eval dataset (JSONL, Parquet or CSV, through
:class:`respeval.io.ResultWriter`), an ADK eval set whose expected trajectory is the one
observed, and a labelling sheet for humans.  Each goes to a temporary file beside its
destination and is renamed into place only when complete.

**Dataset.**  One row per case, the columns of :data:`respeval.traces.case.CASE_FIELDS`.
In JSONL the nested fields (``messages``, ``tool_calls``, ``tools``, ``feedback``) are JSON
values; in Parquet and CSV they are JSON text (one schema for every row group, whatever
keys a case has; respeval's readers and trajectory metrics read JSON text).

**ADK eval set** (``google.adk.evaluation.eval_set.EvalSet``, loaded by ADK's own
``load_eval_set_from_file``).  One eval case per trace (``eval_id`` = the trace id), one
invocation per user turn: the user message, the tool calls made before the next user
message (``intermediate_data.tool_uses``, with their results as ``tool_responses``), the
assistant's earlier texts (``intermediate_responses``) and its last text
(``final_response``).  When the trace's trajectory came from tool spans that the messages do
not show, the whole trajectory goes to the last invocation.  ADK's ``FunctionCall.args`` is
an object: a case with arguments that are not one is left out and counted.  The
``session_input`` is ``{app_name: the service (or "app"), user_id: "user", state: {}}``.

**Labelling sheet** (CSV, UTF-8 with a byte order mark so spreadsheets read it as UTF-8):
``trace_id, start_time, service, model, prompt, response, tool_calls, error, latency_s,
feedback`` and empty ``label`` and ``notes`` columns; tool calls one per line as
``name {arguments}``; a cell longer than :data:`CELL_LIMIT` characters (spreadsheets stop
at 32,767) is cut, saying so.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping, Sequence
from typing import IO, Any

from respeval.io.files import OutputError, commit, create_temporary, remove_quietly
from respeval.io.formats import WRITE_FORMATS, resolve_format
from respeval.io.writers import ResultWriter
from respeval.traces.case import CASE_FIELDS

__all__ = ["CELL_LIMIT", "SHEET_FIELDS", "AdkEvalSetWriter", "DatasetWriter", "LabelSheetWriter", "adk_eval_case"]

CELL_LIMIT = 32_000
SHEET_FIELDS = (
    "trace_id",
    "start_time",
    "service",
    "model",
    "prompt",
    "response",
    "tool_calls",
    "error",
    "latency_s",
    "feedback",
    "label",
    "notes",
)
NESTED = ("messages", "tool_calls", "tools", "feedback")
_INTS = ("input_tokens", "output_tokens", "model_calls")
_FLOATS = ("cost_usd", "latency_s")


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class _Atomic:
    """A file written under a temporary name and renamed into place by :meth:`commit`."""

    def __init__(self, path: str, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = None) -> None:
        self.path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(directory, exist_ok=True)
            self.tmp, self._file = create_temporary(self.path, mode, encoding=encoding, newline=newline)
        except OSError as exc:
            raise OutputError.wrap(exc, self.path) from exc

    def _close(self) -> None:  # pragma: no cover - overridden
        pass

    def commit(self) -> None:
        self._close()
        commit(self.tmp, self.path)

    def abort(self) -> None:
        try:
            self._close()
        except (OSError, ValueError):
            pass
        remove_quietly([self.tmp])


class DatasetWriter(_Atomic):
    """The eval dataset, one batch of case rows at a time."""

    def __init__(self, path: str, fmt: str | None = None) -> None:
        self.fmt = resolve_format(os.fspath(path), fmt, WRITE_FORMATS)
        super().__init__(path, "wb" if self.fmt == "parquet" else "w", newline="")
        self._writer = ResultWriter(self.path, self.fmt, stream=self._file)
        self.rows = 0

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        columns: dict[str, Any] = {name: [row[name] for row in rows] for name in CASE_FIELDS}
        if self.fmt != "jsonl":
            for name in NESTED:
                columns[name] = [_json_text(v) for v in columns[name]]
        if self.fmt == "parquet":
            import pyarrow as pa

            columns = {
                name: pa.array(
                    values, type=pa.int64() if name in _INTS else pa.float64() if name in _FLOATS else pa.string()
                )
                for name, values in columns.items()
            }
        self._writer.write(columns)
        self.rows += len(rows)

    def _close(self) -> None:
        if self.rows == 0 and not self._writer.closed and self.fmt == "parquet":
            self.write_empty()
        self._writer.close()

    def write_empty(self) -> None:
        """A Parquet file with the dataset's columns and no rows (a run that kept no case)."""
        import pyarrow as pa

        fields = [
            (name, pa.int64() if name in _INTS else pa.float64() if name in _FLOATS else pa.string())
            for name in CASE_FIELDS
        ]
        self._writer.write({name: pa.array([], type=t) for name, t in fields})


def _content(text: str, role: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _same_calls(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> bool:
    from respeval._tool_calls import canonical_args

    if len(a) != len(b):
        return False
    try:
        return all(
            x["name"] == y["name"] and canonical_args(x.get("arguments")) == canonical_args(y.get("arguments"))
            for x, y in zip(a, b)
        )
    except (TypeError, ValueError):
        return False


def adk_eval_case(row: Mapping[str, Any]) -> dict[str, Any] | str:
    """An ADK ``EvalCase`` (JSON) for one case row, or why it cannot be one."""
    trajectory = row.get("tool_calls") or []
    for i, call in enumerate(trajectory):
        if call.get("arguments") is not None and not isinstance(call.get("arguments"), dict):
            return f"call {i} ({call.get('name')}): arguments are not a JSON object (ADK's FunctionCall.args must be)"
    turns: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for m in row.get("messages") or []:
        role = m.get("role")
        if role == "user":
            turns.append({"user": m.get("content") or "", "calls": [], "results": [], "texts": []})
            continue
        if not turns:
            if role == "system":
                continue
            turns.append({"user": row.get("prompt") or "", "calls": [], "results": [], "texts": []})
        turn = turns[-1]
        if role == "assistant":
            for call in m.get("tool_calls") or []:
                turn["calls"].append({"id": call.get("id"), "name": call["name"], "arguments": call.get("arguments")})
                if call.get("id"):
                    names[call["id"]] = call["name"]
            if m.get("content"):
                turn["texts"].append(m["content"])
        elif role == "tool":
            name = m.get("name") or names.get(m.get("tool_call_id") or "", "tool")
            turn["results"].append({"id": m.get("tool_call_id"), "name": name, "content": m.get("content")})
    if not turns:
        turns.append({"user": row.get("prompt") or "", "calls": [], "results": [], "texts": []})
    seen = [c for t in turns for c in t["calls"]]
    if not _same_calls(seen, trajectory):
        # the trajectory came from tool spans the messages do not show: it is the last turn's
        for t in turns:
            t["calls"], t["results"] = [], []
        turns[-1]["calls"] = [{"id": None, "name": c["name"], "arguments": c.get("arguments")} for c in trajectory]
    invocations = []
    for n, t in enumerate(turns):
        final = t["texts"][-1] if t["texts"] else ""
        if n == len(turns) - 1 and not final:
            final = row.get("response") or ""
        responses = []
        for r in t["results"]:
            content = r["content"]
            try:
                decoded = json.loads(content) if isinstance(content, str) else content
            except ValueError:
                decoded = content
            resp: dict[str, Any] = {
                "name": r["name"],
                "response": decoded if isinstance(decoded, dict) else {"result": decoded},
            }
            if r.get("id"):
                resp["id"] = r["id"]
            responses.append(resp)
        uses = []
        for c in t["calls"]:
            use: dict[str, Any] = {"name": c["name"], "args": c.get("arguments") or {}}
            if c.get("id"):
                use["id"] = c["id"]
            uses.append(use)
        invocations.append(
            {
                "invocation_id": f"{row['trace_id']}-{n}",
                "user_content": _content(t["user"], "user"),
                "final_response": _content(final, "model"),
                "intermediate_data": {
                    "tool_uses": uses,
                    "tool_responses": responses,
                    "intermediate_responses": [["agent", [{"text": x}]] for x in t["texts"][:-1]],
                },
            }
        )
    return {
        "eval_id": str(row["trace_id"]),
        "conversation": invocations,
        "session_input": {"app_name": row.get("service") or "app", "user_id": "user", "state": {}},
    }


class AdkEvalSetWriter(_Atomic):
    """An ADK eval set, one eval case at a time (the file is one JSON object)."""

    def __init__(self, path: str, eval_set_id: str, description: str = "") -> None:
        super().__init__(path)
        self._fh: IO[str] = self._file
        head = {"eval_set_id": eval_set_id, "name": eval_set_id, "description": description}
        self._fh.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "eval_cases": [')
        self.cases = 0
        self.left_out = 0
        self.first_left_out: str | None = None

    def write(self, row: Mapping[str, Any]) -> None:
        case = adk_eval_case(row)
        if isinstance(case, str):
            self.left_out += 1
            if self.first_left_out is None:
                self.first_left_out = f"trace {row['trace_id']}: {case}"
            return
        self._fh.write(("\n" if self.cases == 0 else ",\n") + json.dumps(case, ensure_ascii=False))
        self.cases += 1

    def _close(self) -> None:
        if not self._fh.closed:
            self._fh.write("\n]}\n")
            self._fh.close()


def _cell(value: Any) -> str:
    text = "" if value is None else value if isinstance(value, str) else _json_text(value) or ""
    if len(text) > CELL_LIMIT:
        text = text[:CELL_LIMIT] + f" … [cut: {len(text) - CELL_LIMIT} more characters, see the dataset]"
    return text


class LabelSheetWriter(_Atomic):
    """The labelling sheet (CSV), one case row at a time."""

    def __init__(self, path: str) -> None:
        super().__init__(path, encoding="utf-8-sig", newline="")
        self._fh: IO[str] = self._file
        self._csv = csv.writer(self._fh, lineterminator="\n")
        self._csv.writerow(SHEET_FIELDS)
        self.rows = 0

    def write(self, row: Mapping[str, Any]) -> None:
        calls = "\n".join(
            f"{c['name']} {_json_text(c.get('arguments')) if c.get('arguments') is not None else '{}'}"
            for c in row.get("tool_calls") or []
        )
        values = {**row, "tool_calls": calls, "label": "", "notes": ""}
        self._csv.writerow([_cell(values.get(name)) for name in SHEET_FIELDS])
        self.rows += 1

    def _close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
