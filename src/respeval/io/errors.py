"""What goes wrong with input: a bad file (:class:`InputError`) or a bad record (:class:`RowError`),
and the one list of policies for bad records (:data:`ON_ERROR`)."""

from __future__ import annotations

from dataclasses import dataclass

from respeval.errors import RespevalError

# fail: stop at the first bad record, naming file, line and field;
# skip: leave bad records out, counted; record: leave them out and write each with its reason.
ON_ERROR = ("fail", "skip", "record")


class InputError(RespevalError, ValueError):
    """A problem with an input file: unreadable, wrong schema, or a bad record.

    ``row_error`` holds the :class:`RowError` when the problem is one record.
    """

    def __init__(self, message: str, row_error: RowError | None = None) -> None:
        super().__init__(message)
        self.row_error = row_error


@dataclass(frozen=True)
class RowError:
    """One bad input record.

    ``line`` is the 1-based source line for text, JSONL and CSV (``unit == "line"``) or the
    0-based row index for Parquet (``unit == "row"``).  ``field`` is None when the whole
    record is bad (malformed JSON, invalid UTF-8, wrong column count, empty line).
    """

    path: str
    line: int
    field: str | None
    reason: str
    unit: str = "line"

    def __str__(self) -> str:
        where = str(self.line) if self.unit == "line" else f"row {self.line}"
        what = f"field {self.field!r}: " if self.field is not None else ""
        return f"{self.path}:{where}: {what}{self.reason}"


def check_on_error(on_error: str) -> str:
    """``on_error`` itself, or a ValueError naming the choices."""
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    return on_error
