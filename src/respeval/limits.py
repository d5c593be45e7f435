"""Documented size limits of the native core, and the error a row beyond them raises.

Work on a row is bounded so that memory stays proportional to the work actually
done: no row can make the core allocate a quadratic table or run out of memory
silently.  A row beyond a limit raises :class:`RowTooLongError`, a ``ValueError``
that names the row, so the bulk pipeline can record it as a bad row (``--on-error``)
and go on with the others.
"""

from __future__ import annotations

__all__ = ["TER_MAX_WORDS", "RowTooLongError"]

#: Longest hypothesis or reference, in words after TER's tokenization, of one row.
TER_MAX_WORDS = 1 << 17


class RowTooLongError(ValueError):
    """A row is beyond a documented size limit of the core (see ``respeval.limits``).

    ``row`` is the row's index in the call's input, ``side`` what is too long
    (``"hypothesis"``, ``"reference"``, ...), ``size`` its length and ``limit`` the limit.
    """

    def __init__(self, row: int, side: str, size: int, limit: int, metric: str) -> None:
        self.row, self.side, self.size, self.limit, self.metric = row, side, size, limit, metric
        super().__init__(
            f"row {row}: the {side} has {size:,} tokens, beyond {metric}'s limit of {limit:,} per row "
            "(see respeval.limits); shorten or split it, or score it with --on-error to skip it"
        )

    def __reduce__(self) -> tuple:
        return (type(self), (self.row, self.side, self.size, self.limit, self.metric))
