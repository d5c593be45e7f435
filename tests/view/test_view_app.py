"""The viewer's ASGI application, called directly: which runs it finds, what each page holds,
the row table's filters, one row, two runs side by side, and what it refuses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _helpers.view_runs import HOSTILE_NAME, PAYLOAD, active_content, get, visible
from respeval.view import Viewer, find_runs
from respeval.view.app import CSP


@pytest.fixture(scope="module")
def app(runs):
    found = find_runs([runs["score"], runs["eval_a"], runs["eval_b"], runs["agent"]])
    return Viewer(found, hosts=["127.0.0.1:8000", "localhost:8000"])


def test_finds_each_run_and_its_rows(app, runs):
    assert [(r.id, r.command) for r in app.runs] == [
        ("1", "score"),
        ("2", "evaluate"),
        ("3", "evaluate"),
        ("4", "agent"),
    ]
    score, eval_a, _, agent = app.runs
    assert Path(score.rows_path) == (runs["score"] / "rows.parquet").resolve()  # named by the summary's output
    assert eval_a.rows_format == "parquet" and eval_a.summary["meta"]["command"] == "evaluate"
    assert agent.records and agent.summary["agents"]  # the results with the summary beside them
    # the evaluate folder's input rows.jsonl is not a run of its own: the summary names its rows
    assert all(not r.rows_path or not r.rows_path.endswith("rows.jsonl") for r in app.runs)
    with pytest.raises(ValueError, match="no such file"):
        find_runs([runs["score"] / "absent"])
    with pytest.raises(ValueError, match="not a run summary"):
        find_runs([runs["eval_a"] / "spec.yaml"])


def test_opened_on_one_run_the_first_page_is_its_summary_and_first_rows(runs):
    app = Viewer(find_runs([runs["eval_a"]]))
    status, headers, page = get(app, "/")
    assert status == 200
    text = visible(page)
    assert "Scores" in text and "GROUNDING" in text and "exact_match" in text  # the summary, with intervals
    assert re.search(r"\[\d\.\d{4}, \d\.\d{4}\]", text)
    assert "rows 1–30 of 30" in text
    ids = re.findall(r'<td><a class="row-link" href="/runs/1/rows/(\d+)">', page)
    assert ids[:3] == ["0", "1", "2"] and ">q0<" in page and ">q29<" in page  # the rows, with their ids


def test_every_page_is_sent_with_a_script_free_policy(app):
    for path in ("/", "/runs", "/runs/2", "/runs/2/rows", "/runs/2/rows/1", "/compare", "/nowhere"):
        status, headers, page = get(app, path)
        assert headers[b"content-security-policy"].decode() == CSP, path
        assert "script-src" not in CSP and "default-src 'none'" in CSP
        assert headers[b"x-content-type-options"] == b"nosniff" and headers[b"x-frame-options"] == b"DENY"
        assert active_content(page) == [], path
    assert get(app, "/nowhere")[0] == 404


def test_read_only_and_only_for_its_own_host(app):
    assert get(app, "/runs", method="POST")[0] == 405
    assert get(app, "/runs", method="DELETE")[0] == 405
    assert get(app, "/runs", host="evil.example:8000")[0] == 421  # a rebinding page cannot read it
    assert get(app, "/runs", host="localhost:8000")[0] == 200


def test_hostile_texts_and_names_are_text(app):
    for path in ("/runs/1", "/runs/1/rows", "/runs/2", "/runs/2/rows", "/runs/2/rows/1", "/runs/1/rows/20"):
        status, _, page = get(app, path)
        assert status == 200, path
        assert PAYLOAD not in page and HOSTILE_NAME not in page and active_content(page) == [], path
    text = visible(get(app, "/runs/2/rows/1")[2])
    assert PAYLOAD in text  # shown, as text
    assert HOSTILE_NAME in visible(get(app, "/runs/1")[2])  # the system's name
    assert HOSTILE_NAME in visible(get(app, "/runs/2")[2])  # the metric's name


def test_filter_sort_and_search_rows(app):
    def rows(query: str) -> tuple[str, list[str]]:
        status, _, page = get(app, "/runs/2/rows", query)
        assert status == 200, (query, visible(page)[:500])
        return visible(page), re.findall(r'class="row-link" href="/runs/2/rows/(\d+)"', page)

    text, found = rows("metric=GROUNDING")
    assert "GROUNDING: score" in text and "GROUNDING: explanation" in text and len(found) == 30
    _, passing = rows("metric=GROUNDING&status=pass")
    _, failing = rows("metric=GROUNDING&status=fail")
    assert passing and failing and sorted(passing + failing, key=int) == [str(i) for i in range(30)]
    text, found = rows("q=city+7")
    assert found == ["7", "16", "25"]  # "city 7" in the prompt, response or reference
    _, high = rows("metric=GROUNDING&min=4")
    _, low = rows("metric=GROUNDING&max=3.5")
    assert len(high) + len(low) == 30
    text, _ = rows("metric=bleu&sort=bleu%2Fscore&desc=1")
    scores = [float(x) for x in re.findall(r"(\d+\.\d{4})", text.split("bleu: score", 1)[1])[:30]]
    assert scores == sorted(scores, reverse=True)
    # the score run: filter by system, sort by TER (worst first)
    status, _, page = get(app, "/runs/1/rows", "system=plain&sort=ter&desc=1")
    assert status == 200 and "rows 1–20 of 20" in visible(page)


def test_bad_filters_are_refused_and_never_reach_sql(app):
    for query in ("metric=nope", "sort=bleu%3B%20DROP%20TABLE%20run_2", "min=abc", "page=-1", "min=nan"):
        status, _, page = get(app, "/runs/2/rows", query)
        assert status == 400, query
    # a search for SQL is a search for text: nothing matches, nothing breaks
    status, _, page = get(app, "/runs/2/rows", "q=%27%20OR%201%3D1%20--")
    assert status == 200 and "No row matches" in page
    status, _, page = get(app, "/runs/2/rows", "q=100%25")
    assert status == 200 and "No row matches" in page  # % is a character, not a wildcard
    assert get(app, "/runs/9")[0] == 404 and get(app, "/runs/2/rows/999")[0] == 404


def test_a_row_holds_its_texts_verdicts_and_the_judges_calls(app):
    status, _, page = get(app, "/runs/2/rows/3")
    text = visible(page)
    for what in ("prompt", "response", "reference", "context", "Which city is number 3?", "Policy 3"):
        assert what in text
    assert "Parsed verdict" in text and "GROUNDING" in text
    assert text.count("raw reply") == 3  # GROUNDING once, the pairwise call in both orders
    assert "order A = baseline, B = candidate" in text and "order swapped: A = candidate, B = baseline" in text
    assert "judge prompt: system" in text and '"winner"' in text and '"score"' in text
    assert "pairwise choice swapped" in text and "outcome" in text
    assert 'href="/runs/2/rows/2"' in page and 'href="/runs/2/rows/4"' in page  # previous, next


def test_a_score_row_shows_its_prediction_and_reference(app):
    status, _, page = get(app, "/runs/1/rows/2")  # system "plain", row 2
    text = visible(page)
    assert "the cat number 2 sat on a mat" in text and "the cat number 2 sat on the mat" in text
    assert "bleu" in text and "ter" in text


def test_an_agent_case_shows_expected_and_actual_calls_side_by_side(app):
    _, _, page = get(app, "/runs/4/rows")
    found = re.findall(r'class="row-link" href="/runs/4/rows/(\d+)"', page)
    assert len(found) == 6  # 3 cases x 2 runs
    pages = [visible(get(app, f"/runs/4/rows/{i}")[2]) for i in found]
    weekend = next(p for p in pages if "weekend_trip" in p)
    assert "expected" in weekend and "actual" in weekend
    assert 'get_forecast({"city": "Oslo", "days": 3})' in weekend
    assert 'get_forecast({"city": "Oslo", "days": 2})' in weekend
    assert "✗" in weekend and "✓" in weekend


def test_two_runs_side_by_side_flipped_first(app):
    status, _, page = get(app, "/compare", "a=2&b=3&metric=GROUNDING")
    assert status == 200
    text = visible(page)
    counts = re.search(r"(\d+) rows in both runs \(paired on id\);\s+(\d+) flipped", text)
    assert counts and int(counts.group(1)) == 30
    flipped = int(counts.group(2))
    marks = [bool(re.search("flipped", row)) for row in re.findall(r"<tr>(.*?)</tr>", page.split("<tbody>", 1)[1])]
    assert flipped > 0 and marks[:flipped] == [True] * flipped and not any(marks[flipped:])  # flipped first
    assert 'href="/runs/2/rows/' in page and 'href="/runs/3/rows/' in page  # each side's row
    assert get(app, "/compare", "a=2&b=2")[0] == 400
    status, _, page = get(app, "/compare")
    assert status == 200 and "run A" in page  # the form


def test_a_million_rows_page_like_a_few(tmp_path):
    n = 1_000_000
    path = tmp_path / "big.parquet"
    pq.write_table(
        pa.table(
            {
                "row": pa.array(range(n), pa.int64()),
                "id": pa.array([f"c{i}" for i in range(n)]),
                "m/score": pa.array([(i * 7919 % 1000) / 1000 for i in range(n)], pa.float64()),
                "m/status": pa.array(["scored"] * n),
            }
        ),
        path,
        row_group_size=100_000,
    )
    app = Viewer(find_runs([path]))
    status, _, page = get(app, "/runs/1/rows", "metric=m&page=19999")
    assert status == 200 and "rows 999,951–1,000,000 of 1,000,000" in visible(page)
    status, _, page = get(app, "/runs/1/rows", "metric=m&sort=m%2Fscore&desc=1&q=c99999")
    assert status == 200 and "rows 1–11 of 11" in visible(page)  # c99999 and c999990 to c999999
    assert ">c99999<" in page and ">c999990<" in page
    status, _, page = get(app, "/runs/1/rows/765432")
    assert status == 200 and "c765432" in page


def test_a_summary_without_rows_and_a_collection(tmp_path, runs):
    merged = tmp_path / "merged.json"
    one = json.loads((runs["eval_a"] / "summary.json").read_text())
    two = json.loads((runs["score"] / "summary.json").read_text())
    merged.write_text(json.dumps({"schema": one["schema"], "runs": [one, two]}))
    found = find_runs([merged])
    assert [r.command for r in found] == ["evaluate", "score"]  # a collection gives each of its runs
    app = Viewer(found)
    assert get(app, "/runs/1")[0] == 200 and get(app, "/runs")[0] == 200
