"""The cases of a run and the prompts each system is sent: rows with a ``prompt``, or
prompt templates filled from a variables file.

A **template** is text with ``{field}`` placeholders (``{{``/``}}`` for literal braces), the
judge's rule (:class:`respeval.judge.methods.prompts.PromptTemplate`): a placeholder names a
field and nothing else (no attribute access, no indexing, no format spec, no conversion), so
filling one evaluates no code.  Each inserted value goes in **fenced as data**, between two
markers carrying a code found in none of the row's values (``[QUESTION 3f9a…]`` …
``[/QUESTION 3f9a…]``), so a value cannot pass itself off as part of the instruction;
``fence=False`` inserts the values verbatim.

Every row is checked before the first call: a field a template names that a row lacks (or
holds null), and a field of a row that no template names (an *unused variable*: usually a
typo in a template or in the file), are errors naming the file, the row and the field.
Fields carried to the output without being variables are named with ``keep`` (the id field
and :data:`DEFAULT_KEEP`, the reference columns the scoring commands read, always are).

Several templates and several systems form a matrix: each case is sent once per (template,
system), and each output row is keyed by (case id, system, template).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from respeval.io import InputError, format_of, read_records
from respeval.judge.methods.prompts import PromptTemplate, read_text_option, text_value

__all__ = [
    "DEFAULT_KEEP",
    "OUTPUT_FIELDS",
    "Case",
    "Template",
    "build_cases",
    "parse_template",
    "read_rows",
]

DEFAULT_KEEP = ("reference", "references", "expected")
"""Fields carried to the output without a template naming them: the reference columns that
``score``, ``judge``, ``evaluate`` and ``compare`` read."""

OUTPUT_FIELDS = (
    "system",
    "template",
    "response",
    "tool_calls",
    "latency_s",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "finish_reason",
    "error",
)
"""The columns a run adds to each row (with ``id``, and ``prompt`` when the input has none)."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Template:
    """A named prompt template (see the module docstring)."""

    name: str
    text: str
    fence: bool = True

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"template name {self.name!r}: use letters, digits, '_', '.' or '-'")
        try:
            parsed = PromptTemplate(self.text)
        except ValueError as exc:
            raise ValueError(f"template {self.name!r}: {exc}") from None
        object.__setattr__(self, "_parsed", parsed)

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields the template names, in order."""
        parsed: PromptTemplate = self.__dict__["_parsed"]
        return parsed.fields

    def render(self, values: Mapping[str, str]) -> str:
        """The prompt for one row's values (every field the template names, as text)."""
        parsed: PromptTemplate = self.__dict__["_parsed"]
        if not self.fence:
            return parsed.text.format_map(dict(values))
        return parsed.render(values, parsed.data(values))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "text": self.text, "fence": self.fence}


def parse_template(value: str, position: int, *, fence: bool = True) -> Template:
    """A template as the command line gives it: ``TEXT``, ``NAME=TEXT``, ``@FILE`` or
    ``NAME=@FILE``.  Unnamed templates are ``t1``, ``t2``, ... by ``position`` (1-based); a
    template read from a file is named after the file (without its extension)."""
    name = None
    head, sep, rest = value.partition("=")
    if sep and _NAME.match(head) and "{" not in head:
        name, value = head, rest
    if value.startswith("@"):
        text = read_text_option(value)
        assert text is not None
        name = name or os.path.splitext(os.path.basename(value[1:]))[0]
    else:
        text = value
    return Template(name or f"t{position}", text, fence)


@dataclass
class Case:
    """One input row: its 0-based ``row``, where it is (``FILE:LINE``), its id and fields."""

    row: int
    where: str
    id: Any
    record: dict[str, Any]


def read_rows(path: str | os.PathLike[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(FILE:LINE, record)`` for every row of a JSONL, CSV or Parquet file, read by
    :func:`respeval.io.read_records` (CSV values are text; JSONL and Parquet keep their types)."""
    name = os.fspath(path)
    if format_of(name) not in ("jsonl", "csv", "parquet"):
        raise InputError(f"{name}: the input is .jsonl, .csv or .parquet")
    yield from read_records(name)


def _records(data: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(data, (str, os.PathLike)):
        yield from read_rows(data)
        return
    if isinstance(data, Mapping) or isinstance(data, (bytes, str)):
        raise TypeError("data must be a file path or a sequence of dicts")
    if hasattr(data, "to_pylist"):  # an Arrow table
        data = data.to_pylist()
    elif hasattr(data, "to_dict") and hasattr(data, "columns"):  # a pandas DataFrame
        data = data.to_dict("records")
    for i, item in enumerate(data):
        if not isinstance(item, Mapping):
            raise InputError(f"records[{i}]: expected a dict, got {type(item).__name__}")
        yield f"records[{i}]", dict(item)


def _where(case_where: str, row: int) -> str:
    return f"{case_where} (row {row})"


def build_cases(
    data: Any,
    templates: Sequence[Template],
    *,
    id_field: str = "id",
    keep: Iterable[str] = (),
    prompt_field: str = "prompt",
    reserved: Iterable[str] = OUTPUT_FIELDS,
) -> tuple[list[Case], str]:
    """Read and check every row (see the module docstring); returns the cases and a digest
    of what was read (part of a run's resume fingerprint).

    Without templates every row needs a ``prompt_field`` string (``prompt``; a simulated
    conversation's ``scenario``).  ``reserved``: the columns the run writes, which no input
    field may be named.  Raises :class:`InputError` naming the file, row and field of the
    first bad row."""
    kept = {id_field, *DEFAULT_KEEP, *keep}
    named = {name for t in templates for name in t.fields}
    reserved = set(reserved)
    if not templates:
        reserved.discard("template")
    cases: list[Case] = []
    seen: dict[str, str] = {}
    digest = hashlib.sha256()
    has_ids: bool | None = None
    for row, (where, record) in enumerate(_records(data)):
        at = _where(where, row)
        for name in record:
            if name in reserved:
                raise InputError(f"{at}: field {name!r}: the run writes a column of that name; rename it in the input")
        if templates:
            for template in templates:
                for name in template.fields:
                    if record.get(name) is None:
                        state = "null" if name in record else "missing"
                        raise InputError(f"{at}: field {name!r}: {state} (template {template.name!r} names it)")
            unused = [n for n in record if n not in named and n not in kept]
            if unused:
                name = unused[0]
                raise InputError(
                    f"{at}: field {name!r}: no template names it (an unused variable); name it in a template, "
                    f"or carry it to the output with --keep {name}"
                )
        else:
            prompt = record.get(prompt_field)
            if not isinstance(prompt, str):
                state = "missing" if prompt_field not in record else f"expected a string, got {type(prompt).__name__}"
                raise InputError(
                    f"{at}: field {prompt_field!r}: {state} (without --template every row needs its {prompt_field}; "
                    "or give a template naming the row's fields)"
                )
        present = id_field in record and record[id_field] is not None
        if has_ids is None:
            has_ids = present
        elif present != has_ids:
            raise InputError(
                f"{at}: field {id_field!r}: "
                + ("missing, though earlier rows have one" if not present else "given, though earlier rows have none")
                + " (every row needs an id, or none does: then the row number is the id)"
            )
        case_id = record[id_field] if present else row
        if isinstance(case_id, bool) or not isinstance(case_id, (str, int)):
            raise InputError(f"{at}: field {id_field!r}: expected a string or an integer, got {case_id!r}")
        key = str(case_id)
        if key in seen:
            raise InputError(
                f"{at}: field {id_field!r}: id {case_id!r} appears twice (first at {seen[key]}); every case needs "
                f"its own id (--id-field names another column)"
            )
        seen[key] = at
        digest.update(json.dumps(record, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8") + b"\n")
        cases.append(Case(row, where, case_id, record))
    if not cases:
        source = os.fspath(data) if isinstance(data, (str, os.PathLike)) else "the records"
        raise InputError(f"{source}: no rows to run")
    return cases, digest.hexdigest()


@dataclass(frozen=True)
class Prompt:
    """What one (case, template) sends: the template's name (None without templates) and
    the user message."""

    template: str | None
    text: str


def prompts_of(case: Case, templates: Sequence[Template], prompt_field: str = "prompt") -> list[Prompt]:
    """The case's prompt under each template (or its own ``prompt_field`` without templates)."""
    if not templates:
        return [Prompt(None, case.record[prompt_field])]
    out = []
    for template in templates:
        values = {name: text_value(case.record[name]) for name in template.fields}
        out.append(Prompt(template.name, template.render(values)))
    return out
