"""benchmarks/speed_table.py renders docs/speed.md's table from the reports' JSON: checked on
canned JSON (``speed_runs/``, the shapes the reports write with ``--json``), no benchmark run."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys

import pytest

from _helpers.paths import ROOT

RUNS = ROOT / "tests" / "benchmarks_tool" / "speed_runs"

pytestmark = pytest.mark.skipif(not (ROOT / "benchmarks").is_dir(), reason="needs the source tree's benchmarks/")


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"speed_table_test_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def speed_table():
    return _module("speed_table")


@pytest.fixture(scope="module")
def rendered(speed_table) -> str:
    return speed_table.render(*speed_table.load(RUNS))


def _row(table: str, job_start: str) -> list[str]:
    rows = [line for line in table.splitlines() if line.startswith(f"| {job_start}")]
    assert len(rows) == 1, (job_start, rows)
    return [cell.strip() for cell in rows[0].strip("|").split(" | ")]


def test_the_host_line_names_cpu_cores_load_date_commit_and_cost(rendered):
    assert rendered.splitlines()[0] == (
        "Host: Intel(R) Xeon(R) Processor, 2 cores; load average (1 min) 1.0-2.5 over the runs; 2026-12-03; "
        "commit abc1234; Python 3.11.7; the runs took 13 minutes."
    )
    assert "quick, indicative only" not in rendered


def test_rows_give_the_per_round_ratios_the_verdicts_and_the_command(rendered):
    job, text, command = _row(rendered, "TER")
    assert job == "TER, 1 system (3,004 segments), native"
    assert text == "118x [110-134] (best / best 119x, target 120x: **not met**) sacreBLEU"
    assert command == "`python benchmarks/mt_report.py`"

    job, text, command = _row(rendered, "rouge1+2+L against the C limit prototype")
    assert "0.93 [0.91-0.94] (target 0.95: **not met**) of its speed on short pairs" in text
    assert "1.05 [1.03-1.06] (target 1: met) on rougeLsum long documents" in text

    job, text, command = _row(rendered, "rouge1+rouge2+rougeL")
    assert job == "rouge1+rouge2+rougeL, 100,000 real pairs, one thread"
    assert text.startswith(
        "rouge-score-rs (Rust): 7.3x [7.0-7.6] (best / best 7.6x, target 10x: **not met**), stemmed 10.9x [10.7-11.3]"
    )
    assert "rouge-score: 317x (best call, 5,000 pairs)" in text
    assert command == "`python benchmarks/report.py`; `python benchmarks/prototype_report.py`"


def test_the_judge_row_reads_pytest_benchmarks_json(rendered):
    _, text, command = _row(rendered, "judge engine")
    # 5,000 rows over the rounds' median / slowest / fastest seconds (1.6, 2.0, 1.25)
    assert text.startswith("3,125 [2,500-4,000] rows/s (target 1,000 rows/s: met); 270 [254-285] us of engine CPU")
    assert command == "`python -m pytest benchmarks/bench_judge.py -p no:cacheprovider`"


def test_a_report_that_failed_or_did_not_run_says_so(rendered):
    assert _row(rendered, "two ADK eval-set files")[1] == "not measured: the report exited 1 (its printout: `adk.log`)"
    assert _row(rendered, "corpus BLEU, 16 WMT17 systems, other peers")[1] == (
        "not measured: `peers_bleu` did not run or wrote no results"
    )


def test_a_quick_run_is_labelled(speed_table, tmp_path):
    shutil.copytree(RUNS, tmp_path / "runs")
    manifest_path = tmp_path / "runs" / "runs.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["runs"]["mt"] |= {"quick": True, "command": "python benchmarks/mt_report.py --quick"}
    manifest_path.write_text(json.dumps(manifest))
    rendered = speed_table.render(*speed_table.load(tmp_path / "runs"))
    assert "**quick, indicative only**" in rendered
    assert _row(rendered, "TER")[2] == "`python benchmarks/mt_report.py --quick`"


def test_the_page_is_rewritten_between_the_markers_only_and_check_sees_it(speed_table, tmp_path):
    page = tmp_path / "speed.md"
    before, after = "# Speed\n\nintro\n\n", "\n\nafter the table\n"
    page.write_text(f"{before}{speed_table.BEGIN}\n| old | table |\n{speed_table.END}{after}")
    args = ["--from", str(RUNS), "--doc", str(page)]
    assert speed_table.main([*args, "--check"]) == 1
    assert "| old | table |" in page.read_text()  # --check writes nothing
    assert speed_table.main(args) == 0
    text = page.read_text()
    assert text.startswith(f"{before}{speed_table.BEGIN}\nHost: Intel(R) Xeon(R) Processor")
    assert text.endswith(f"\n{speed_table.END}{after}")
    assert text.split(speed_table.END)[0].splitlines()[-1].startswith("| judge engine")
    assert "| old | table |" not in text
    assert speed_table.main([*args, "--check"]) == 0


def test_a_page_without_the_markers_is_refused(speed_table):
    with pytest.raises(SystemExit, match="markers"):
        speed_table.rewrite("# Speed\n\n| job | respeval vs |\n", "table")


def test_the_docs_page_carries_the_markers(speed_table):
    text = (ROOT / "docs" / "speed.md").read_text(encoding="utf-8")
    assert text.count(speed_table.BEGIN) == 1 and text.count(speed_table.END) == 1
    assert text.index(speed_table.BEGIN) < text.index(speed_table.END)


def test_ratios_are_the_peers_time_over_respevals_round_by_round():
    report_json = _module("report_json")
    found = report_json.ratio([2.0, 4.0, 3.0], [1.0, 1.0, 2.0])
    assert found == {"best": 2.0, "median": 2.0, "min": 1.5, "max": 4.0, "rounds": 3}
