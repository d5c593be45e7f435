"""The front door is a contract: its names are pinned here (httpx's habit), and every
lower layer reads the version from ``_version`` so ``import respeval`` stays light."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import respeval

PUBLIC = [
    "REGISTRY",
    "AggregateScore",
    "BleuResult",
    "ChrfResult",
    "ExactMatchResult",
    "Interval",
    "MetricFamily",
    "MetricOptions",
    "MetricResult",
    "MetricSpec",
    "RougeResult",
    "RunSummary",
    "Score",
    "SquadResult",
    "TerResult",
    "TrajectoryResult",
    "__version__",
    "agents",
    "align",
    "bleu",
    "chrf",
    "compare",
    "exact_match",
    "evaluate",
    "judge",
    "rouge",
    "run",
    "score_files",
    "score_table",
    "squad",
    "systems",
    "response_match_score",
    "ter",
    "trajectory",
]


def test_all_is_pinned():
    assert sorted(respeval.__all__) == sorted(PUBLIC)


def test_every_exported_name_resolves():
    for name in respeval.__all__:
        assert getattr(respeval, name) is not None, name


def test_unknown_attribute_raises_attribute_error():
    try:
        respeval.no_such_thing  # noqa: B018
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:
        raise AssertionError("respeval.no_such_thing should raise AttributeError")


def test_import_does_not_load_the_pipeline_or_the_judge():
    code = (
        "import sys, respeval\n"
        "heavy = [m for m in ('respeval.bulk', 'respeval.io', 'respeval.judge', 'respeval.agents', 'httpx') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_lower_layers_never_import_the_package_root_for_the_version():
    from pathlib import Path

    src = Path(respeval.__file__).parent
    offenders = [
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if "from respeval import __version__" in p.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_every_function_at_the_front_door_shows_its_real_parameters():
    """help(respeval.X) and inspect.signature show the parameters, never (*args, **kwargs)
    (respeval.evaluate, respeval.compare and respeval.align are callable packages: issue 32, point 5)."""
    import inspect

    import respeval

    for name in respeval.__all__:
        obj = getattr(respeval, name)
        if not callable(obj) or inspect.isclass(obj):
            continue
        parameters = inspect.signature(obj).parameters.values()
        kinds = [p.kind for p in parameters]
        assert inspect.Parameter.VAR_POSITIONAL not in kinds, name
        # trajectory's **options are the metrics' options, run's **overrides the engine's fields
        assert kinds.count(inspect.Parameter.VAR_KEYWORD) == 0 or name in ("trajectory", "run"), name


# the metric functions at the front door: predictions and references first (issue 29.8)
METRICS_AT_THE_DOOR = ("rouge", "bleu", "chrf", "ter", "exact_match", "squad", "trajectory", "response_match_score")


def test_the_metric_functions_take_predictions_and_references_first():
    import inspect

    import respeval

    firsts = {name: list(inspect.signature(getattr(respeval, name)).parameters)[:2] for name in METRICS_AT_THE_DOOR}
    assert {name: first for name, first in firsts.items() if first != ["predictions", "references"]} == {}
    import respeval.metrics.tool_correctness as tc

    assert list(inspect.signature(tc.deepeval_tool_correctness).parameters)[:2] == ["predictions", "references"]


CALLS = [[{"tool_name": "a", "tool_input": {}}]]
OLD_NAMES = {  # function: (old name, new name, the arguments by their new names)
    "bleu": ("hypotheses", "predictions", {"predictions": ["the cat sat"], "references": ["the cat sat on"]}),
    "squad": ("gold_answers", "references", {"predictions": ["Paris"], "references": [["Paris"]]}),
    "trajectory": ("reference", "references", {"predictions": CALLS, "references": CALLS}),
    "chrf": ("hypotheses", "predictions", {"predictions": ["the cat sat"], "references": ["the cat sat on"]}),
}


@pytest.mark.parametrize("name", sorted(OLD_NAMES))
def test_an_old_argument_name_works_and_warns_once(name):
    import warnings

    import respeval
    from respeval import _renamed

    _renamed._warned.clear()
    fn = getattr(respeval, name)
    old, new, kwargs = OLD_NAMES[name]
    renamed = {(old if k == new else k): v for k, v in kwargs.items()}
    want = fn(**kwargs).to_dict()
    with pytest.warns(DeprecationWarning, match=re.escape(f"{name}({old}=...) is now {name}({new}=...)")):
        assert fn(**renamed).to_dict() == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fn(**renamed).to_dict() == want  # once per process: no second warning
    with pytest.raises(TypeError, match=f"got both {old}= and its new name {new}="):
        fn(**kwargs, **{old: kwargs[new]})


def test_a_tokenizer_is_named_tokenizer_at_the_door_and_tokenize_still_works():
    """issue 29, point 8: ``tokenizer=`` everywhere (ROUGE's spelling); BLEU's ``tokenize=``
    (sacreBLEU's) is still taken by the function, the family, ``--metric-option`` and the
    adapters, with one warning; the sacreBLEU drop-in keeps sacreBLEU's own name."""
    import inspect

    import respeval
    from respeval import _renamed
    from respeval.metrics import REGISTRY, MetricOptions
    from respeval.metrics.bleu import BleuFamily

    takes = {name: inspect.signature(getattr(respeval, name)).parameters for name in METRICS_AT_THE_DOOR}
    assert [name for name, params in takes.items() if "tokenize" in params] == []
    assert "tokenizer" in takes["bleu"] and "tokenizer" in takes["rouge"]

    _renamed._warned.clear()
    want = respeval.bleu(["abcd"], ["abce"], tokenizer="char").score
    with pytest.warns(DeprecationWarning, match=re.escape("bleu(tokenize=...) is now bleu(tokenizer=...)")):
        assert respeval.bleu(["abcd"], ["abce"], tokenize="char").score == want
    with pytest.warns(DeprecationWarning, match=re.escape("BleuFamily(tokenize=...) is now BleuFamily(tokenizer=...)")):
        (family,) = REGISTRY.build_families(["bleu"], MetricOptions(params={"bleu": {"tokenize": "intl"}}))
    assert isinstance(family, BleuFamily) and family.tokenizer == "intl"
    import respeval.compat.sacrebleu as sacrebleu

    assert "tokenize" in inspect.signature(sacrebleu.corpus_bleu).parameters  # the drop-in: sacreBLEU's name


def test_an_old_on_error_value_works_and_warns():
    import respeval
    from respeval import _renamed

    _renamed._warned.clear()
    calls = CALLS
    with pytest.warns(DeprecationWarning, match=re.escape("trajectory(on_error='raise') is now on_error='fail'")):
        respeval.trajectory(calls, calls, on_error="raise")
    with pytest.raises(ValueError, match="on_error must be 'fail' or 'record'"):
        respeval.trajectory(calls, calls, on_error="skip-it")


def test_every_error_respeval_raises_on_purpose_has_one_root():
    """issue 29, point 7: one exception tree.  Every public exception class defined in respeval
    derives from respeval.errors.RespevalError (and still from the built-in class callers
    catch); private ones (``_Stop``, signals between respeval's own functions) are exempt."""
    import importlib
    import inspect
    import pkgutil

    import respeval
    from respeval.errors import RespevalError

    checked, rootless = [], []
    for info in pkgutil.walk_packages(respeval.__path__, "respeval."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, Exception)
                and not issubclass(obj, Warning)
                and obj.__module__ == info.name
                and not name.startswith("_")
            ):
                checked.append(f"{info.name}.{name}")
                if not issubclass(obj, RespevalError):
                    rootless.append(f"{info.name}.{name}")
    assert len(checked) >= 15, checked
    assert rootless == [], rootless


def test_help_starts_with_a_map_of_the_entry_points():
    """help(respeval) was 1,375 lines whose summary left out evaluate, the judge and agents
    (issue 32, point 5): the package docstring opens with one line per entry point."""
    import respeval

    doc = respeval.__doc__ or ""
    head = doc[: doc.index("Metrics::")]
    for entry in ("score", "judge", "evaluate", "run, compare", "agents", "traces, monitor", "view"):
        assert f"\n    {entry}" in head, entry
    for name in ("rouge", "judge", "evaluate", "run", "compare", "agents", "trajectory", "score_files"):
        assert name in respeval.__all__ and f"respeval.{name}" in head, name
    assert len(head.splitlines()) <= 15


def test_a_score_run_imports_only_what_it_uses(tmp_path):
    """issue 34: ``respeval score`` of ROUGE imports the ROUGE family alone, and neither pandas
    (pyarrow's pandas shim, asked by ``pa.array`` of a list), the report, asyncio nor the
    pure-Python twin of the core: ~0.4 s of a run before."""
    code = (
        "import sys\n"
        "from respeval import _backend\n"
        "from respeval.cli import main\n"
        f"code = main(['score', '--example', '--out', {str(tmp_path / 'rows.parquet')!r}, '--quiet'])\n"
        "loaded = ['pandas', 'asyncio', 'respeval.report', 'respeval.metrics.bleu', 'respeval.metrics.trajectory']\n"
        "loaded += ['respeval._core_py'] if _backend.native_available() else []\n"
        "print(code, ','.join(m for m in loaded if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "0"
