"""The OpenMP wait policy is the command line's setting, not the library's: ``import respeval``
leaves the process's environment alone, and ``respeval`` (the program) makes idle threads
sleep unless the user chose otherwise.  Read back from the OpenMP runtime itself: libgomp
prints the settings it loaded with under ``OMP_DISPLAY_ENV=VERBOSE`` (``GOMP_SPINCOUNT`` is 0
for sleeping waits, 300000 for libgomp's default spin-then-sleep)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("respeval._core", reason="respeval._core is not built")


def _run(args: list[str], tmp_path, **env: str) -> tuple[str, dict[str, str]]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    environ.update(OMP_DISPLAY_ENV="VERBOSE", **env)
    done = subprocess.run(args, capture_output=True, text=True, env=environ, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = dict(re.findall(r"^\s+(OMP_WAIT_POLICY|GOMP_SPINCOUNT) = '([^']*)'", done.stderr, re.M))
    if "GOMP_SPINCOUNT" not in shown:
        pytest.skip("the core's OpenMP runtime is not libgomp (it does not display its settings)")
    return done.stdout, shown


LIBRARY = """
import os, respeval
print("OMP_WAIT_POLICY" in os.environ)
respeval.rouge(["the cat sat"], ["the cat sat down"], threads=2)
"""


def _cli(tmp_path) -> list[str]:
    (tmp_path / "rows.jsonl").write_text('{"response": "the cat sat", "reference": "the cat sat down"}\n')
    return [sys.executable, "-m", "respeval", "score", "--pred", "rows.jsonl", "--metrics", "rouge1", "--quiet"]


def test_importing_the_library_sets_no_openmp_policy(tmp_path):
    out, shown = _run([sys.executable, "-c", LIBRARY], tmp_path)
    assert out.split()[0] == "False"  # the environment is the caller's
    assert shown["GOMP_SPINCOUNT"] != "0"  # libgomp's own default


def test_the_command_line_makes_idle_threads_sleep(tmp_path):
    _, shown = _run([*_cli(tmp_path), "--out", "out.jsonl"], tmp_path)
    assert shown == {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"}


def test_a_policy_the_user_set_wins_on_the_command_line(tmp_path):
    _, shown = _run([*_cli(tmp_path), "--out", "out.jsonl"], tmp_path, OMP_WAIT_POLICY="ACTIVE")
    assert shown["OMP_WAIT_POLICY"] == "ACTIVE" and shown["GOMP_SPINCOUNT"] != "0"
