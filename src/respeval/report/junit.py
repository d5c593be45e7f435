"""JUnit XML for CI, the one writer: ``respeval gate --junit`` (a test case per row) and
``respeval compare --junit`` (a test case per metric, and the overall decision).

A case fails (``<failure>``) when the run found something wrong with it (a rejected row, a
regressed metric) and errs (``<error>``) when it could not be decided (an unscored row); CI
systems show both.  Every text is scrubbed of secrets; the file is replaced atomically.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field

from respeval.io.files import atomic_output
from respeval.redact import redact

__all__ = ["JUnitCase", "write_junit"]


@dataclass(frozen=True)
class JUnitCase:
    """One ``<testcase>``: ``failure``/``error`` are ``(message, type, text)`` or None (passed);
    ``properties`` become ``<properties>`` (the numbers behind the verdict)."""

    name: str
    classname: str
    failure: tuple[str, str, str] | None = None
    error: tuple[str, str, str] | None = None
    properties: dict[str, str] = field(default_factory=dict)


def write_junit(path: str | os.PathLike[str], suite_name: str, cases: Iterable[JUnitCase]) -> None:
    """Write one ``<testsuite>`` of ``cases`` to ``path``."""
    cases = list(cases)
    suite = ET.Element(
        "testsuite",
        name=suite_name,
        tests=str(len(cases)),
        failures=str(sum(c.failure is not None for c in cases)),
        errors=str(sum(c.error is not None for c in cases)),
        skipped="0",
    )
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname=redact(case.classname), name=redact(case.name))
        if case.properties:
            props = ET.SubElement(element, "properties")
            for key, value in case.properties.items():
                ET.SubElement(props, "property", name=redact(key), value=redact(value))
        for tag, outcome in (("failure", case.failure), ("error", case.error)):
            if outcome is not None:
                message, kind, text = outcome
                ET.SubElement(element, tag, message=redact(message), type=redact(kind)).text = redact(text)
    with atomic_output(os.fspath(path), "wb") as fh:
        ET.ElementTree(suite).write(fh, encoding="utf-8", xml_declaration=True)
