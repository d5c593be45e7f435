"""The one signature: everything needed to reproduce a metric's numbers, in one line.

sacreBLEU's habit, for every metric: ``name|key:value|...|version:respeval-<version>``,
named fields in the order given, ``yes``/``no`` for true/false, fields without a value
left out, and the package version written once, last, always the same way.  A metric's
``signature()`` builds one and returns its text; the text is what summaries, outputs and
resume fingerprints keep.

``version`` is the package's field: a metric whose own options have a version (SQuAD's
evaluation script, a custom metric's code) names that field after what it versions, so a
reader never has two ``version:`` fields to choose from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from respeval._version import __version__

VERSION_FIELD = "version"
PACKAGE_VERSION = f"respeval-{__version__}"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def limit_field(value: Any) -> Any:
    """A limit (a bound, a timeout) as a signature field: ``none`` when there is none, so it is
    written, not left out as a field without a value is."""
    return "none" if value is None else value


class Signature:
    """An ordered set of named fields, written as ``[name|]key:value|...|version:respeval-X``.

    ``name`` (optional) heads the line bare, as the metric's name (``BLEU``, ``trajectory``);
    sacreBLEU's result signatures have none.  ``fields`` keep their order; a ``None`` value is
    left out; ``version`` may not be given (it is the package's, added last).
    ``abbreviations``: the field names ``format(short=True)`` writes instead (sacreBLEU's).
    """

    abbreviations: Mapping[str, str] = {}

    def __init__(self, name: str | None = None, /, **fields: Any) -> None:
        if VERSION_FIELD in fields:
            raise ValueError(
                f"{VERSION_FIELD!r} is the package version's field in a signature; "
                "name the field after what it versions (e.g. squad:v1)"
            )
        if name is not None and (not name or "|" in name):
            raise ValueError(f"a signature's name must be non-empty and hold no '|', got {name!r}")
        self.name = name
        self.fields: dict[str, Any] = {**fields, VERSION_FIELD: PACKAGE_VERSION}

    def named(self, name: str) -> Signature:
        """The same fields headed by ``name`` (a family's ``BLEU|...`` over a result's ``nrefs:1|...``)."""
        fields = {k: v for k, v in self.fields.items() if k != VERSION_FIELD}
        return Signature(name, **fields)

    def update(self, key: str, value: Any) -> None:
        """Set a field (a new one goes before the version, which stays last)."""
        if key == VERSION_FIELD:
            raise ValueError(f"{VERSION_FIELD!r} is the package version's field in a signature")
        self.fields[key] = value

    def format(self, short: bool = False) -> str:
        keys = [k for k in self.fields if k != VERSION_FIELD] + [VERSION_FIELD]
        parts = [self.name] if self.name else []
        for key in keys:
            value = self.fields[key]
            if value is None:
                continue
            parts.append(f"{self.abbreviations.get(key, key) if short else key}:{_text(value)}")
        return "|".join(parts)

    def __str__(self) -> str:
        return self.format()

    __repr__ = __str__
