"""Imported once by the forkserver of ``_helpers.kill``: everything a command loads, so that
each forked child starts warm (an editable install checks its build on every new import)."""

import contextlib

import respeval.bulk  # noqa: F401
import respeval.cli.app
from respeval.bulk import build_families
from respeval.metrics import REGISTRY

respeval.cli.app.build_parser()  # imports every subcommand's module
for _name in REGISTRY.names():  # loads the native kernels the metrics use
    with contextlib.suppress(Exception):  # some metrics need options (a pattern, a tool name)
        for _family in build_families([_name]):
            _family.score(_family.prepare(["a b", "c"]), ["a b", "d"])
