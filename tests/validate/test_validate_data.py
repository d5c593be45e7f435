"""Published numbers reproduced on the real data in ../shared/data (skipped when it is absent).

PandaLM: inter-annotator kappas, majority labels, GPT-3.5 and PandaLM-7B against the majority.
LLMBar: accuracy and position consistency recomputed from both orders equal statistics.json.
REALSumm: system-level Kendall tau of ROUGE-2 vs LitePyramid on the 14 abstractive systems.
WMT MQM (TED en-de): segment- and system-level correlation of chrF with MQM.
"""

from __future__ import annotations

import collections
import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

import respeval
from _helpers.corpora import read_jsonl
from _helpers.paths import SHARED_DATA
from respeval import validate as val

DATA = SHARED_DATA


def _data(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real corpus not available: {path} (expected ../shared/data beside the project)")
    return path


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- PandaLM


@pytest.fixture(scope="module")
def pandalm() -> dict:
    folder = _data("judge", "pandalm")
    tests = _json(folder / "testset-v1.json")
    gpt = _json(folder / "gpt-3.5-turbo-testset-v1.json")
    panda = _json(folder / "pandalm-7b-testset-v1.json")
    assert [r["idx"] for r in tests] == [r["idx"] for r in gpt] == [r["idx"] for r in panda]
    annotators = [[int(r[f"annotator{i}"]) for r in tests] for i in (1, 2, 3)]
    return {
        "tests": tests,
        "gpt": [r["gpt_result"] for r in gpt],
        "pandalm": [int(r["pandalm_result"]) for r in panda],
        "annotators": annotators,
    }


def _majority(labels: tuple[int, int, int]) -> int:
    """The label at least two annotators gave; the first annotator's on a three-way split."""
    label, count = collections.Counter(labels).most_common(1)[0]
    return label if count > 1 else labels[0]


def _gpt_label(answer: str, unparseable: int | None) -> int | None:
    """'1'/'2' are winners; 'Tie'/'tie' is 0; anything else ('garbage') is ``unparseable``."""
    if answer in ("1", "2"):
        return int(answer)
    return 0 if answer.lower() == "tie" else unparseable


def test_pandalm_inter_annotator_kappas(pandalm):
    a1, a2, a3 = pandalm["annotators"]
    kappas = [val.agreement(x, y).cohen_kappa for x, y in ((a1, a2), (a1, a3), (a2, a3))]
    assert [round(k, 4) for k in kappas] == [0.8520, 0.8789, 0.8617]


def test_pandalm_majority_label_counts(pandalm):
    majority = [_majority(t) for t in zip(*pandalm["annotators"])]
    assert collections.Counter(majority) == {0: 105, 1: 422, 2: 472}


@pytest.mark.parametrize(
    "judge, expected",
    [
        ("gpt", (0.7107, 0.5879, 0.5736, 0.5755)),
        ("pandalm", (0.6677, 0.5738, 0.5750, 0.5743)),
    ],
)
def test_pandalm_judges_against_the_majority(pandalm, judge, expected):
    majority = [_majority(t) for t in zip(*pandalm["annotators"])]
    labels = pandalm[judge] if judge == "pandalm" else [_gpt_label(a, 0) for a in pandalm["gpt"]]
    a = val.agreement(labels, majority, labels=[0, 1, 2])
    got = (a.accuracy, a.macro_precision, a.macro_recall, a.macro_f1)
    assert [round(x, 4) for x in got] == list(expected)


def test_pandalm_unparseable_answers_dropped_and_counted(pandalm):
    majority = [_majority(t) for t in zip(*pandalm["annotators"])]
    labels = [_gpt_label(a, None) for a in pandalm["gpt"]]
    r = val.validate_pair(labels, majority, name="gpt-3.5", kind="pairwise", n_boot=0)
    assert r.used == 974 and r.dropped["judge_missing"] == 25 and r.dropped["total"] == 25
    assert round(r.agreement.accuracy, 4) == 0.7156


# --------------------------------------------------------------------------- LLMBar


def _percent(text: str) -> float:
    return float(re.search(r"([\d.]+)%", text).group(1)) / 100


@pytest.mark.parametrize(
    "subset, judge, strategy",
    [
        ("LLMBar/Natural", "GPT-4", "Vanilla"),
        ("LLMBar/Natural", "ChatGPT", "Vanilla"),
        ("LLMBar/Adversarial/Neighbor", "GPT-4", "Vanilla"),
        ("Processed/MT-Bench", "GPT-4", "Vanilla_NoRules"),
    ],
)
def test_llmbar_accuracy_and_position_consistency(subset, judge, strategy):
    folder = _data("judge", "llmbar", "Dataset", *subset.split("/"), "evaluators", judge, strategy)
    results, stats = _json(folder / "result.json"), _json(folder / "statistics.json")
    first = [r["results"][0]["swap = False"]["winner"] for r in results]
    second = [r["results"][0]["swap = True"]["winner"] for r in results]  # original orientation
    gold = [str(r["label"]) for r in results]
    accuracy = (val.agreement(first, gold).accuracy + val.agreement(second, gold).accuracy) / 2
    assert accuracy == pytest.approx(_percent(stats["correct_average"]), abs=5e-4)
    p = val.pairwise_consistency(first, second, ties=(), first_shown="1")
    assert p.consistency == pytest.approx(_percent(stats["equal"]), abs=5e-4)
    # LLMBar's kappa_agreement is the plain kappa between the two orders
    assert p.consistency_kappa == pytest.approx(stats["kappa_agreement"], abs=1e-12)
    assert p.flip_rate == pytest.approx(1 - p.consistency)  # LLMBar judges never tie


# --------------------------------------------------------------------------- REALSumm


@pytest.fixture(scope="module")
def realsumm_abstractive() -> list[dict]:
    path = _data("realsumm", "realsumm_cnndm_100docs_25systems.jsonl")
    rows = read_jsonl(path)
    rows = [r for r in rows if r["kind"] == "abs"]
    assert len({r["system"] for r in rows}) == 14
    return rows


def _sentences(tagged: str) -> str:
    return "\n".join(s.strip() for s in re.findall(r"<t>(.*?)</t>", tagged, re.S))


def test_realsumm_system_kendall_rouge2_vs_litepyramid(realsumm_abstractive):
    rows = realsumm_abstractive
    systems = [r["system"] for r in rows]
    human = [r["scores"]["litepyramid_recall"] for r in rows]
    # ROUGE-1.5.5's stored ROUGE-2 F (stemmed), and respeval's own ROUGE-2 F with stemming
    stored = [r["scores"]["rouge_2_f_score"] for r in rows]
    ours = respeval.rouge(
        [_sentences(r["system_summary"]) for r in rows],
        [_sentences(r["ref_summ"]) for r in rows],
        ("rouge2",),
        stemmer=True,
    )["rouge2_f"]
    for metric in (stored, ours):
        c = val.metric_human_correlation(metric, human, systems=systems, level="system")
        assert c.n == 14
        assert round(c.kendall_tau_b, 2) == 0.80
        assert c.kendall_tau_b == pytest.approx(73 / 91)  # 82 concordant, 9 discordant pairs


def test_realsumm_correlations_equal_scipy(realsumm_abstractive):
    stats = pytest.importorskip("scipy.stats", reason="scipy not installed")
    rows = realsumm_abstractive
    metric = np.array([r["scores"]["rouge_2_f_score"] for r in rows])
    human = np.array([r["scores"]["litepyramid_recall"] for r in rows])
    c = val.metric_human_correlation(metric, human)
    assert c.kendall_tau_b == pytest.approx(stats.kendalltau(metric, human).statistic, abs=1e-12)
    assert c.spearman == pytest.approx(stats.spearmanr(metric, human).statistic, abs=1e-12)
    assert c.pearson == pytest.approx(stats.pearsonr(metric, human).statistic, abs=1e-12)


# --------------------------------------------------------------------------- WMT MQM


def _mqm_segments(max_seg: int) -> tuple[list[str], list[str], list[str], np.ndarray]:
    """(system, hypothesis, reference, MQM average) for TED en-de segments ``<= max_seg``."""
    folder = _data("mt_mqm", "ted", "ende")
    targets: dict[tuple[str, int], str] = {}
    with (folder / "mqm_ted_ende.tsv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            targets[(row["system"], int(row["seg_id"]))] = re.sub(r"</?v>", "", row["target"])
    scores: dict[tuple[str, int], float] = {}
    for line in (folder / "mqm_ted_ende.avg_seg_scores.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        system, score, seg = line.split()
        if score != "None":
            scores[(system, int(seg))] = float(score)
    keys = sorted(k for k in targets if k[0] != "ref" and k[1] <= max_seg and k in scores and ("ref", k[1]) in targets)
    return (
        [k[0] for k in keys],
        [targets[k] for k in keys],
        [targets[("ref", k[1])] for k in keys],
        np.array([scores[k] for k in keys]),
    )


def test_mqm_chrf_correlates_with_expert_judgements():
    sacrebleu = pytest.importorskip("sacrebleu")
    systems, hyps, refs, mqm = _mqm_segments(max_seg=150)
    assert len(set(systems)) == 13 and len(hyps) > 1000
    chrf = sacrebleu.metrics.CHRF()
    metric = np.array([chrf.sentence_score(h, [r]).score for h, r in zip(hyps, refs)])
    segment = val.metric_human_correlation(metric, mqm)
    system = val.metric_human_correlation(metric, mqm, systems=systems, level="system")
    assert system.n == 13
    # chrF agrees with MQM (less negative = better) only weakly per segment
    assert 0.05 < segment.kendall_tau_b < 0.35
    assert -1 <= system.kendall_tau_b <= 1
    stats = pytest.importorskip("scipy.stats", reason="scipy not installed")
    assert segment.kendall_tau_b == pytest.approx(stats.kendalltau(metric, mqm).statistic, abs=1e-12)
