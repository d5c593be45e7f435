"""Builds of the native core at two revisions, for the interleaved A/B scripts (ab_intern.py,
ab_family.py, ab_readers.py), and one package tree both builds load in.

    python benchmarks/ab_build.py build main /tmp/ab/main     # git archive main, cmake + ninja
    python benchmarks/ab_build.py build HEAD /tmp/ab/head
    python benchmarks/ab_build.py tree /tmp/ab/tree /tmp/ab/head /tmp/ab/main
    SITE=$(python -c "import site; print(site.getsitepackages()[0])")
    PYTHONPATH=/tmp/ab/tree:$SITE python -S benchmarks/ab_intern.py \\
        /tmp/ab/main/_core.cpython-311-x86_64-linux-gnu.so /tmp/ab/head/_core.cpython-311-x86_64-linux-gnu.so

A core imports Python modules of its package when it loads (and a few when it runs), so
two builds loaded side by side need one ``respeval`` that has what each imports: ``tree``
copies the newer revision's package, adds the files of the older one that the newer one
no longer has, and the names the older core reads that the newer revision renamed
(``SHIMS``: issue 29 moved tool-call reading and Arrow nested values into leaf modules).
``python -S`` keeps the editable install's import hook from putting the working tree's
``respeval`` first.  Builds use the flags of the editable install (Release, -O3).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# module (relative to the package) -> lines appended so an older core finds its names
SHIMS = {
    "io/nested.py": [
        "from respeval._arrow_json import records_with_objects as _records_with_objects  # noqa: E402",
    ],
    "_core_py/trajectory.py": [
        "def _written_from_buffers(typ, depth):  # issue 29: now respeval._arrow_json.written_from_buffers",
        "    return written_from_buffers(typ, depth)",
    ],
}


def build(rev: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    src = out / "src-tree"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir()
    with tempfile.TemporaryFile() as archive:
        subprocess.run(["git", "archive", rev], cwd=ROOT, stdout=archive, check=True)
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(src, filter="data")
    import cython_cmake

    work = out / "build"
    work.mkdir(exist_ok=True)
    modules = Path(cython_cmake.__file__).parent / "cmake"
    subprocess.run(
        ["cmake", str(src), "-G", "Ninja", "-DSKBUILD_PROJECT_NAME=respeval", "-DCMAKE_BUILD_TYPE=Release",
         f"-DPython_EXECUTABLE={sys.executable}", f"-DCMAKE_MODULE_PATH={modules}"],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(["ninja"], cwd=work, check=True, capture_output=True)
    for so in work.glob("*.so"):
        shutil.copy2(so, out / so.name)
    print(
        f"{rev} ({subprocess.run(['git', 'rev-parse', rev], cwd=ROOT, capture_output=True, text=True).stdout.strip()})"
    )
    print("\n".join(str(p) for p in sorted(out.glob("*.so"))))


def tree(out: Path, new: Path, old: Path) -> None:
    pkg = out / "respeval"
    if pkg.exists():
        shutil.rmtree(pkg)
    shutil.copytree(new / "src-tree" / "src" / "respeval", pkg)
    for path in (old / "src-tree" / "src" / "respeval").rglob("*.py"):
        rel = path.relative_to(old / "src-tree" / "src" / "respeval")
        if not (pkg / rel).exists():
            (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, pkg / rel)
            print(f"from the older revision: {rel}")
    for rel, lines in SHIMS.items():
        target = pkg / rel
        if target.exists():
            with open(target, "a", encoding="utf-8") as f:
                f.write("\n\n" + "\n".join(lines) + "\n")
            print(f"shim: {rel}")
    cyutility = sorted(new.glob("_cyutility*.so"))
    if cyutility:
        shutil.copy2(cyutility[0], pkg / cyutility[0].name)
    print(pkg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build", help="the core of a git revision, built into a directory")
    b.add_argument("rev")
    b.add_argument("out", type=Path)
    t = sub.add_parser("tree", help="one package tree for two builds")
    t.add_argument("out", type=Path)
    t.add_argument("new", type=Path, help="the newer build's directory (its package is the base)")
    t.add_argument("old", type=Path, help="the older build's directory")
    args = parser.parse_args()
    if args.what == "build":
        build(args.rev, args.out)
    else:
        tree(args.out, args.new, args.old)


if __name__ == "__main__":
    main()
