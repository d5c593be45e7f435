"""Documented size limits of the native core, and the error a row beyond them raises.

Work on a row is bounded so that memory stays proportional to the work actually
done: no row can make the core allocate a quadratic table or run out of memory
silently.  A row beyond a limit raises :class:`RowTooLongError`, a ``ValueError``
that names the row, so the bulk pipeline can record it as a bad row (``--on-error``)
and go on with the others.
"""

from __future__ import annotations

from respeval.errors import RespevalError

__all__ = ["LCS_MAX_CELLS", "TER_MAX_WORDS", "RowTooLongError"]

#: Longest hypothesis or reference, in words after TER's tokenization, of one row.
TER_MAX_WORDS = 1 << 17

#: Largest LCS table of one row for ROUGE-L and ROUGE-Lsum: prediction tokens times
#: reference tokens (about 2**34 machine-word steps, seconds of work).  Memory stays
#: linear in the row's length whatever the size (cext/lcs.h).
LCS_MAX_CELLS = 1 << 40


class RowTooLongError(RespevalError, ValueError):
    """A row is beyond a documented size limit of the core (see ``respeval.limits``).

    ``row`` is the row's index in the call's input, ``what`` names what is too large
    (``"the hypothesis"``, ...), ``size`` is its size in ``unit`` and ``limit`` the limit.
    """

    def __init__(self, row: int, what: str, size: int, limit: int, metric: str, unit: str = "tokens") -> None:
        self.row, self.what, self.size, self.limit, self.metric, self.unit = row, what, size, limit, metric, unit
        super().__init__(
            f"row {row}: {what} has {size:,} {unit}, beyond {metric}'s limit of {limit:,} per row "
            "(see respeval.limits); shorten or split it, or score with --on-error to skip the row"
        )

    def __reduce__(self) -> tuple:
        return (type(self), (self.row, self.what, self.size, self.limit, self.metric, self.unit))
