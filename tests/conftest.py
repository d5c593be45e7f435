"""Shared fixtures: the implementation switch, seeded randomness, the real corpora."""

from __future__ import annotations

import json
import os
import random

import pytest

from _helpers import implementations
from _helpers.paths import FIXTURES, shared_data


@pytest.fixture(params=implementations.params())
def impl(request) -> str:
    """Runs a test once per implementation (pure-Python reference and native core)."""
    return request.param


@pytest.fixture
def rng(request) -> random.Random:
    """A seeded Random; the seed is printed so a failure can be replayed with RESPEVAL_SEED."""
    seed = int(os.environ.get("RESPEVAL_SEED", "20261129"))
    print(f"seed={seed} (set RESPEVAL_SEED to replay)")
    return random.Random(seed)


@pytest.fixture(scope="session")
def wmt():
    """WMT17 en-de: (reference lines, {short system name such as "C-3MA.4959": lines}),
    split with str.splitlines() as benchmarks/make_fixtures_mt.py does."""
    folder = shared_data("wmt17_en_de")
    reference = (folder / "newstest2017-ende-ref.de").read_text(encoding="utf-8").splitlines()
    systems = {
        path.name[len("newstest2017.") : -len(".en-de.txt")]: path.read_text(encoding="utf-8").splitlines()
        for path in sorted((folder / "systems").glob("newstest2017.*.en-de.txt"))
    }
    return reference, systems


@pytest.fixture(scope="session")
def corpus_fixture():
    """sacreBLEU's corpus scores of every WMT17 system (benchmarks/make_fixtures_mt.py)."""
    path = FIXTURES / "sacrebleu_wmt17_corpus.json"
    if not path.is_file():
        pytest.skip(f"{path} missing: run benchmarks/make_fixtures_mt.py")
    return json.loads(path.read_text(encoding="utf-8"))["systems"]


@pytest.fixture(scope="session")
def verified():
    """The data README's verified WMT17 scores."""
    return json.loads(shared_data("wmt17_en_de", "expected_scores_verified.json").read_text(encoding="utf-8"))
