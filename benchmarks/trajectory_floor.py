"""How fast could any reader of the trajectory rows be?  The floor under the native core.

    python benchmarks/trajectory_floor.py                  # 8 rounds of 32,768 rows
    python benchmarks/trajectory_floor.py --rounds 16 --forms dicts

For each input form, per round and interleaved, on tau-bench-shaped rows
(``trajectory_workload``):

- **native**: the trajectory family (``prepare`` + ``score``, one thread), as
  ``trajectory_report.py`` times it;
- **touch**: the least any exact reader must do with the same rows, built from
  ``benchmarks/c/touch.c`` with the C compiler: visit every object and read every
  string's characters (lists of dicts), or read every byte of the text (JSON text); no
  comparing, canonicalising or interning;
- **after reading**: the kernels and the per-row columns on the interned ids (the same for
  every form);
- **twin**: the pure-Python twin on the round's first 2,048 rows, as in
  ``trajectory_report.py``.

``ceiling`` = twin time / (touch + after reading): the native/twin ratio that a reader
doing nothing but touching its input would reach.  When it is below a target, no
implementation that reads those inputs reaches the target on this machine.  Each form is
built anew before each timer (the rows are as cold for touch as for native).  CPU time of
the process; medians of the rounds, with their range.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import trajectory_workload  # noqa: E402
from bench_trajectory import METRICS, family_scores  # noqa: E402
from respeval.metrics.trajectory import TrajectoryFamily, _column, _intern  # noqa: E402


def build_touch(folder: Path):
    """benchmarks/c/touch.c as an extension module (None without a C compiler)."""
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    out = folder / ("respeval_touch" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = [cc, "-O2", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"], str(HERE / "c" / "touch.c"), "-o"]
    done = subprocess.run([*cmd, str(out)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"building benchmarks/c/touch.c failed:\n{done.stderr}")
    spec = importlib.util.spec_from_file_location("respeval_touch", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu(fn, *args) -> float:
    t0 = time.process_time()
    fn(*args)
    return time.process_time() - t0


def after_reading(preds, refs) -> float:
    """CPU seconds of the kernels and the per-row columns, on ids interned beforehand."""
    fam = TrajectoryFamily(METRICS, implementation="native", threads=1)
    prepared = fam.prepare(refs)
    pred = _intern(prepared.table, _column(preds, "predicted"), fam, "predicted_trajectory")
    return cpu(fam._score, prepared.kernels, prepared.table, pred, prepared.ref)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--chunk", type=int, default=1 << 15)
    parser.add_argument("--sample", type=int, default=2048, help="rows per round for the twin")
    parser.add_argument("--forms", default="json,dicts", help="json and/or dicts")
    args = parser.parse_args()
    forms = [f.strip() for f in args.forms.split(",") if f.strip()]
    unknown = set(forms) - {"json", "dicts"}
    if unknown:
        raise SystemExit(f"--forms: {', '.join(sorted(unknown))} has no touch floor here (json, dicts)")
    with tempfile.TemporaryDirectory() as tmp:
        touch = build_touch(Path(tmp))
        if touch is None:
            raise SystemExit("no C compiler (gcc or cc, or $CC) to build benchmarks/c/touch.c")
        tmpl = trajectory_workload.templates()
        per_row = {(f, part): [] for f in forms for part in ("native", "touch", "twin", "ceiling", "ratio")}
        after: list[float] = []
        for r in range(args.rounds):
            n = args.chunk
            texts_p, texts_r = trajectory_workload.texts(r * n, n, tmpl)
            after.append(after_reading(texts_p, texts_r) / n)
            for f in forms:
                convert = trajectory_workload.convert
                native = cpu(family_scores, convert(texts_p, f), convert(texts_r, f), "native") / n
                walk = touch.touch_objects if f == "dicts" else touch.touch_texts
                p, q = convert(texts_p, f), convert(texts_r, f)
                touched = (cpu(walk, p) + cpu(walk, q)) / n
                del p, q
                sp, sr = (convert(x[: args.sample], f) for x in (texts_p, texts_r))
                twin = cpu(family_scores, sp, sr, "python") / len(sp)
                for part, v in (
                    ("native", native),
                    ("touch", touched),
                    ("twin", twin),
                    ("ceiling", twin / (touched + after[-1])),
                    ("ratio", twin / native),
                ):
                    per_row[(f, part)].append(v)
            print(f"  round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)

    def us(xs):
        return f"{statistics.median(xs) * 1e6:.2f} ({min(xs) * 1e6:.2f}-{max(xs) * 1e6:.2f})"

    def x(xs):
        return f"{statistics.median(xs):.1f}x ({min(xs):.1f}-{max(xs):.1f})"

    print(
        f"machine: {platform.machine()} {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores, one thread; {args.rounds} rounds of {args.chunk:,} rows, twin on {args.sample:,}; "
        f"CPU time, us a row: median (range)"
    )
    print(f"after reading (kernels + per-row columns, every form): {us(after)}")
    print("| input form | native | touch (floor of reading) | twin | native/twin | ceiling: twin/(touch + after) |")
    print("|---|---|---|---|---|---|")
    for f in forms:
        print(
            f"| {f} | {us(per_row[(f, 'native')])} | {us(per_row[(f, 'touch')])} | {us(per_row[(f, 'twin')])} "
            f"| {x(per_row[(f, 'ratio')])} | {x(per_row[(f, 'ceiling')])} |"
        )


if __name__ == "__main__":
    main()
