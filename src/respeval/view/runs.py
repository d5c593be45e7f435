"""Finding runs: what ``respeval view RUN_DIR_OR_FILE...`` opens.

A run is a run summary (``--summary-out``: the one schema ``respeval report`` renders, or a
command's ``--json`` output, read through :func:`respeval.report.to_run_summary`) and the
per-row file it names (``meta.output``: ``--out`` of ``score``, ``judge``, ``gate``,
``evaluate``), or an agent run's results (``respeval agent --out``, with its summary when one
is beside it), or a per-row file on its own.  A folder holds any number of them (and folders
of them, one level down); a collection summary (``respeval report`` of several runs) gives
each of its runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from respeval.io.formats import format_of
from respeval.report.runs import to_run_summary
from respeval.report.schema import SCHEMA, check_summary, new_summary, runs_of

__all__ = ["Run", "agent_records", "find_runs"]

ROW_FORMATS = ("parquet", "jsonl", "csv")
_SKIPPED_SUFFIXES = (".errors.jsonl", ".partial", ".tmp", ".cache.sqlite")


@dataclass
class Run:
    """One run the viewer shows: its ``summary`` (a run summary, possibly empty) and where its
    rows are (a file, or ``records`` for an agent run's cases)."""

    title: str
    command: str
    summary: dict[str, Any]
    source: str
    rows_path: str | None = None
    rows_format: str | None = None
    records: list[dict[str, Any]] | None = None
    agent: dict[str, Any] | None = field(default=None, repr=False)  # respeval agent --out results
    id: str = ""

    @property
    def has_rows(self) -> bool:
        return self.rows_path is not None or self.records is not None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def _is_agent_results(data: Any) -> bool:
    return isinstance(data, Mapping) and "eval_set_id" in data and isinstance(data.get("runs"), list)


def _resolve(output: Any, beside: Path) -> Path | None:
    """A summary's ``meta.output`` as a file that exists: as written (absolute, or relative
    to here), relative to the summary's folder, or its name in that folder."""
    if not isinstance(output, str) or not output:
        return None
    for candidate in (Path(output), beside / output, beside / Path(output).name):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _command_of(summary: Mapping[str, Any]) -> str:
    meta = summary.get("meta") or {}
    if meta.get("command"):
        return str(meta["command"])
    if summary.get("validation"):
        return "validate"
    if summary.get("agents"):
        return "agent"
    if summary.get("compare"):
        return "compare"
    return "run"


def agent_records(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An agent run's cases as rows: run (1, 2, ... in ``--actual`` order), case id, status,
    each metric's score, pass and reason, and the turns (JSON text: user, expected and actual
    answers and tool calls)."""
    records = []
    for r, run in enumerate(results.get("runs") or []):
        for case in run.get("cases") or []:
            record: dict[str, Any] = {"run": r + 1, "eval_id": str(case.get("eval_id")), "status": case.get("status")}
            for m in case.get("metrics") or []:
                name = str(m.get("metric"))
                record[f"{name}/score"] = m.get("score")
                record[f"{name}/pass"] = None if m.get("status") == "NOT_EVALUATED" else m.get("status") == "PASSED"
                record[f"{name}/status"] = "scored" if m.get("score") is not None else "unscored"
                record[f"{name}/threshold"] = m.get("threshold")
                record[f"{name}/unscored_reason"] = m.get("reason")
            record["turns"] = json.dumps(case.get("turns") or [], ensure_ascii=False, default=str)
            records.append(record)
    # every record holds every column (metrics a case lacks are null)
    names = list(dict.fromkeys(k for rec in records for k in rec))
    return [{k: rec.get(k) for k in names} for rec in records]


def _agent_run(results: Mapping[str, Any], summary: Mapping[str, Any] | None, source: Path) -> Run:
    if summary is None:
        summary = new_summary(
            f"Agent eval set {results.get('eval_set_id')}",
            {"command": "agent", "eval set": results.get("eval_set_id"), "runs": len(results.get("runs") or [])},
        )
        summary["scores"] = [{"metric": k, "mean": v} for k, v in (results.get("metric_means") or {}).items()]
    return Run(
        title=str(summary.get("title") or f"Agent eval set {results.get('eval_set_id')}"),
        command="agent",
        summary=dict(summary),
        source=str(source),
        records=agent_records(results),
        agent=dict(results),
    )


def _summary_run(summary: Mapping[str, Any], source: Path) -> Run:
    rows = _resolve((summary.get("meta") or {}).get("output"), source.parent)
    fmt = format_of(rows) if rows is not None else None
    return Run(
        title=str(summary.get("title") or source.stem),
        command=_command_of(summary),
        summary=dict(summary),
        source=str(source),
        rows_path=str(rows) if rows is not None and fmt in ROW_FORMATS else None,
        rows_format=fmt if fmt in ROW_FORMATS else None,
    )


def _table_run(path: Path) -> Run:
    return Run(
        title=path.name,
        command="rows",
        summary=new_summary(path.name, {"rows": str(path)}),
        source=str(path),
        rows_path=str(path.resolve()),
        rows_format=format_of(path),
    )


def _runs_in_files(files: Sequence[Path], explicit: bool) -> list[Run]:
    """The runs of some files (a folder's, or those named on the command line)."""
    runs: list[Run] = []
    agents: list[tuple[Path, Any]] = []
    agent_summaries: dict[str, Mapping[str, Any]] = {}
    tables = [f for f in files if format_of(f) in ROW_FORMATS and not f.name.endswith(_SKIPPED_SUFFIXES)]
    for f in files:
        if format_of(f) != "json":
            continue
        data = _read_json(f)
        if _is_agent_results(data):
            agents.append((f, data))
            continue
        try:
            summary = to_run_summary(data, str(f))
            check_summary(summary, str(f))
        except ValueError:
            continue  # some other JSON file
        for one in runs_of(summary):
            if _command_of(one) == "agent" and (one.get("meta") or {}).get("eval set") is not None:
                agent_summaries[str((one.get("meta") or {}).get("eval set"))] = one
                continue
            runs.append(_summary_run(one, f))
    for f, data in agents:
        runs.append(_agent_run(data, agent_summaries.pop(str(data.get("eval_set_id")), None), f))
    for alone in agent_summaries.values():  # an agent summary without its results: its summary alone
        runs.append(Run(str(alone.get("title") or "agent run"), "agent", dict(alone), "agent summary"))
    claimed = {os.path.realpath(r.rows_path) for r in runs if r.rows_path}
    unclaimed = [t for t in tables if os.path.realpath(t) not in claimed]
    if explicit or not runs:
        runs.extend(_table_run(t) for t in unclaimed)
    return runs


def find_runs(paths: Iterable[str | os.PathLike[str]]) -> list[Run]:
    """Every run under ``paths`` (files, or folders of them and their sub-folders), numbered
    in order; raises ``ValueError`` naming a path that holds none."""
    runs: list[Run] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise ValueError(f"{path}: no such file or directory")
        if path.is_dir():
            found = _runs_in_files(sorted(p for p in path.iterdir() if p.is_file()), explicit=False)
            for sub in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.endswith(".parts")):
                found += _runs_in_files(sorted(p for p in sub.iterdir() if p.is_file()), explicit=False)
        else:
            fmt = format_of(path)
            if fmt not in (*ROW_FORMATS, "json"):
                raise ValueError(f"{path}: not a run summary (.json) or a per-row file (.parquet, .jsonl, .csv)")
            found = _runs_in_files([path], explicit=True)
            if fmt == "json" and not found:
                raise ValueError(
                    f"{path}: not a run summary ({SCHEMA}), a command's --json output, or respeval agent --out results"
                )
            # a per-row file named on its own takes the summary beside it that names it
            if fmt in ROW_FORMATS and found and found[0].command == "rows":
                beside = [
                    r
                    for r in _runs_in_files(sorted(path.parent.glob("*.json")), explicit=False)
                    if r.rows_path and os.path.realpath(r.rows_path) == os.path.realpath(path)
                ]
                found = beside[:1] or found
        if not found:
            raise ValueError(f"{path}: no run here (run summaries *.json, respeval agent results, per-row files)")
        runs.extend(found)
    for i, run in enumerate(runs, 1):
        run.id = str(i)
    return runs
