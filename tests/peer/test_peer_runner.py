"""The peer-suite runner changes imports and nothing else, and builds the suites' data as they expect."""

from __future__ import annotations

import ast
import bz2
import difflib
import pickle
from pathlib import Path

import pytest

from _helpers import peer_suites
from _helpers.paths import PEER_SUITES, SHARED_DATA

SACREBLEU = peer_suites.SUITES["sacrebleu"]
ROUGE = peer_suites.SUITES["rouge_score"]


def test_imports_are_pointed_at_the_target():
    source = (
        "import os, sacrebleu\n"
        "import sacrebleu.dataset as dataset\n"
        "from sacrebleu.metrics import BLEU\n"
        "from sacrebleu.significance import (\n"
        "    PairedTest,\n"
        "    Result,\n"
        ")\n"
        "import sacrebleu_extra\n"
        "\n"
        "def load():\n"
        "    import sacrebleu.utils\n"
        "    return sacrebleu.utils, BLEU  # sacrebleu stays in comments and code\n"
    )
    got = peer_suites.rewrite_imports(source, SACREBLEU, "respeval.compat.sacrebleu")
    assert got == (
        "import os; import respeval.compat.sacrebleu as sacrebleu\n"
        "import respeval.compat.sacrebleu.dataset as dataset\n"
        "from respeval.compat.sacrebleu.metrics import BLEU\n"
        "from respeval.compat.sacrebleu.significance import PairedTest, Result\n"
        "import sacrebleu_extra\n"
        "\n"
        "def load():\n"
        "    import respeval.compat.sacrebleu.utils; import respeval.compat.sacrebleu as sacrebleu\n"
        "    return sacrebleu.utils, BLEU  # sacrebleu stays in comments and code\n"
    )


def test_the_suites_own_modules_stay_local():
    source = "from rouge_score import rouge_scorer, test_util\nfrom rouge_score import test_util\n"
    assert peer_suites.rewrite_imports(source, ROUGE, "respeval.compat.rouge_score") == (
        "from respeval.compat.rouge_score import rouge_scorer; import test_util\nimport test_util\n"
    )
    # pointed at the peer itself, only the local module changes
    assert peer_suites.rewrite_imports(source, ROUGE, "rouge_score") == (
        "from rouge_score import rouge_scorer; import test_util\nimport test_util\n"
    )


def test_an_import_sharing_its_line_is_refused():
    with pytest.raises(ValueError, match="sharing its line"):
        peer_suites.rewrite_imports("x = 1; import sacrebleu\n", SACREBLEU, "respeval.compat.sacrebleu")
    with pytest.raises(ValueError, match="sharing its line"):
        peer_suites.rewrite_imports("import sacrebleu; x = 1\n", SACREBLEU, "respeval.compat.sacrebleu")


@pytest.mark.parametrize("suite", [ROUGE, SACREBLEU], ids=lambda s: s.name)
def test_every_suite_file_differs_only_in_import_lines(suite):
    folder = PEER_SUITES / suite.folder
    if not folder.is_dir():
        pytest.skip(f"{folder} not available")
    files = sorted(folder.rglob("*.py"))
    assert files
    changed = 0
    for path in files:
        original = path.read_text(encoding="utf-8")
        rewritten = peer_suites.rewrite_imports(original, suite, suite.compat)
        diff = [
            line[1:]
            for line in difflib.unified_diff(original.splitlines(), rewritten.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        for line in diff:
            statement = ast.parse(line.strip()).body
            assert all(isinstance(s, ast.Import | ast.ImportFrom) for s in statement), (path.name, line)
        changed += bool(diff)
    assert changed >= 4  # every test module imports the peer


def test_wmt17_pickle_is_what_test_significance_loads(tmp_path: Path):
    data = SHARED_DATA / "wmt17_en_de"
    if not data.is_dir():
        pytest.skip(f"{data} not available")
    path = tmp_path / "wmt17_en_de_systems.pkl.bz2"
    peer_suites.write_wmt17_pickle(path)
    with bz2.BZ2File(path, "rb") as f:
        named = pickle.load(f)
    # the loader: `named_systems.pop()` is ("reference", [stream]); PairedTest's first system is the baseline
    name, streams = named.pop()
    assert name == "reference" and len(streams) == 1 and len(streams[0]) == 3004
    assert len(named) == 16 and named[0][0] == peer_suites.WMT17_BASELINE
    assert all(len(hyps) == 3004 and isinstance(hyps[0], str) for _, hyps in named)
    reference = (data / "newstest2017-ende-ref.de").read_text(encoding="utf-8").splitlines()
    assert streams[0] == reference


def test_pyrouge_files_hold_four_lines_each(tmp_path: Path):
    testdata = PEER_SUITES / "rouge_score" / "testdata"
    if not testdata.is_dir():
        pytest.skip(f"{testdata} not available")
    for name in ("target_large.txt", "prediction_large.txt"):
        (tmp_path / name).write_bytes((testdata / name).read_bytes())
    peer_suites.write_pyrouge_files(tmp_path)
    made = sorted((tmp_path / "pyrouge_files").iterdir())
    assert len(made) == 2 * 250  # scoring_test reads target_multi.0..249 and prediction_multi.0..249
    lines = (testdata / "target_large.txt").read_text().splitlines(keepends=True)
    assert (tmp_path / "pyrouge_files" / "target_multi.1.txt").read_text() == "".join(lines[4:8])
