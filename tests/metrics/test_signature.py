"""One signature class for every metric: every registered metric's signature (before and after a
run), a custom metric's and semantic similarity's are built by ``respeval.metrics.signature``
and carry the package version once, last, as ``version:respeval-<version>``."""

from __future__ import annotations

import pytest

from respeval import __version__
from respeval.evaluate.custom import CustomMetric
from respeval.judge.similarity import similarity_signature
from respeval.metrics import REGISTRY, MetricOptions
from respeval.metrics import signature as signature_module
from respeval.metrics.match import SquadFamily
from respeval.metrics.signature import Signature

PACKAGE_FIELD = f"version:respeval-{__version__}"

# the options a metric cannot be built without (every other metric is built with its defaults)
REQUIRED_OPTIONS = {
    "regex": {"pattern": "x"},
    "includes": {"values": ["a"]},
    "word_count": {"max": 5},
    "sentence_count": {"min": 1},
    "trajectory_single_tool_use": {"tool_name": "search"},
}


@pytest.fixture
def built_texts(monkeypatch):
    """Every text ``Signature.format`` produced while the test ran."""
    texts: list[str] = []
    real = Signature.format

    def recording(self, short=False):
        text = real(self, short)
        texts.append(text)
        return text

    monkeypatch.setattr(Signature, "format", recording)
    return texts


def signature_problems(text: str, built_texts: list[str]) -> list[str]:
    """What is wrong with a signature text: not built by the one class, or the package version
    not written exactly once, last, the one way."""
    problems = []
    if text not in built_texts:
        problems.append("not built by respeval.metrics.signature.Signature")
    versions = [part for part in text.split("|") if part.startswith("version:")]
    if versions != [PACKAGE_FIELD] or not text.endswith(PACKAGE_FIELD):
        problems.append(f"version fields {versions}, expected exactly [{PACKAGE_FIELD!r}] last")
    return problems


def _signatures_of(name: str) -> list[str]:
    options = MetricOptions(params={name: REQUIRED_OPTIONS[name]} if name in REQUIRED_OPTIONS else {})
    (family,) = REGISTRY.build_families([name], options)
    texts = [family.signature()]
    for_run = getattr(family, "signature_for_run", None)
    if for_run is not None:
        texts.append(for_run(1))
    return texts


@pytest.mark.parametrize("name", REGISTRY.names())
def test_every_registered_metric_signs_through_the_one_class(name, built_texts):
    for text in _signatures_of(name):
        assert signature_problems(text, built_texts) == [], text


def test_a_hand_built_signature_is_caught(built_texts):
    """The check above fails on what signatures were before: a hand-written string, a second
    ``version:`` field, the package version without its ``respeval-`` prefix."""
    assert len(signature_problems("squad|version:v1|norm:official", built_texts)) == 2
    assert signature_problems(f"rouge1|tok:rouge|version:{__version__}", built_texts)
    text = str(Signature("squad", norm="official"))
    assert signature_problems(text, built_texts) == []
    assert signature_problems(text + "|version:v1", built_texts)


def test_custom_metric_and_semantic_similarity_sign_through_the_one_class(built_texts):
    def has_answer(row):
        return 1.0

    for metric in (CustomMetric("answer", has_answer), CustomMetric("answer", has_answer, version="2")):
        text = metric.signature()
        assert signature_problems(text, built_texts) == [], text
    # the user's code version is the ``code`` field, never a second ``version:``
    assert "|code:@2|" in CustomMetric("answer", has_answer, version="2").signature()
    for text in (similarity_signature("fake:embedder"), similarity_signature("fake:embedder", 0.5)):
        assert signature_problems(text, built_texts) == [], text


def test_squad_names_its_script_version_apart_from_the_package_version():
    assert SquadFamily(version="v2").signature() == f"squad|squad:v2|norm:official|{PACKAGE_FIELD}"


def test_fields_in_order_booleans_as_yes_no_empty_fields_left_out_version_last():
    signature = Signature("m", b=True, a=False, skipped=None, n=3)
    assert str(signature) == f"m|b:yes|a:no|n:3|{PACKAGE_FIELD}"
    assert str(signature.named("M")) == f"M|b:yes|a:no|n:3|{PACKAGE_FIELD}"
    assert str(Signature(nrefs=1)) == f"nrefs:1|{PACKAGE_FIELD}"
    assert signature_module.limit_field(None) == "none" and signature_module.limit_field(5) == 5


def test_the_package_version_field_cannot_be_given():
    with pytest.raises(ValueError, match="squad:v1"):
        Signature("squad", version="v1")
    with pytest.raises(ValueError, match="no '|'"):
        Signature("a|b")
