"""The call scanner that feeds the trajectory call memo (cext/trajectory.h,
rv_tj_object_span), fuzzed in C: its SSE2, AVX2 and AVX-512 paths against its portable path, its hash against
the plain hash of the span, and every read inside the text (AddressSanitizer).  Through
Python its mistakes could only cost speed (a call the memo does not know is read in full,
and its end checked), so it is tested here, where a wrong end is visible."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("c") / "json_span_fuzz.c"


def _build(tmp_path: Path, sanitize: bool) -> Path | None:
    exe = tmp_path / ("fuzz-asan" if sanitize else "fuzz")
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"] if sanitize else []
    cc = shutil.which("gcc") or shutil.which("cc")
    done = subprocess.run(
        [cc, "-O1", "-g", *flags, "-I", str(ROOT / "cext"), "-o", str(exe), str(SOURCE)],
        capture_output=True,
        text=True,
    )
    return exe if done.returncode == 0 else None


@pytest.mark.skipif(not (shutil.which("gcc") or shutil.which("cc")), reason="no C compiler to build the fuzzer")
@pytest.mark.parametrize("seed", [1, 2])
def test_call_scanner_paths_agree_and_stay_in_bounds(tmp_path, seed):
    exe = _build(tmp_path, sanitize=True) or _build(tmp_path, sanitize=False)
    assert exe is not None, "the fuzzer does not compile"
    done = subprocess.run([str(exe), "150000", str(seed)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    ok, texts, ends, widest = done.stdout.split()
    assert ok == "ok" and int(texts) == 150000 and widest in ("sse2", "avx2", "avx512")
    assert 0.2 < int(ends) / int(texts) < 0.8  # both outcomes are exercised
