"""DuckDB: a 1M-row table scored in SQL with respeval's Arrow functions vs row-at-a-time Python UDFs.

    python benchmarks/duckdb_report.py                      # 1M rows, every contender on all of them
    python benchmarks/duckdb_report.py --slow-rows 200000   # row-at-a-time UDFs on the first 200k rows

The table is WMT17 en-de (16 systems x 3,004 segments from ../shared/data) repeated to
``--rows`` rows.  Each query is the same SQL with a different function behind the name:

* ``respeval``: ``respeval.duckdb.register(con)``; DuckDB hands each function 2,048-row
  Arrow vectors and respeval scores a vector in one call;
* ``rouge-score / row`` and ``sacrebleu / row``: a scalar (``type="native"``) Python UDF that
  calls the anchor library once per row, the way people write it today;
* ``respeval / row``: the same row-at-a-time UDF calling ``respeval.rouge`` on one pair,
  which isolates what vectorizing buys from the kernels' speed.

Every query is checked to give the same numbers as the vectorized one (to 1e-12; sacreBLEU
to 1e-9), so the comparison is of equal work.  The vectorized queries run ``--repeats`` times,
interleaved with the slow ones, and report the median and range; the slow ones run once.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _helpers.corpora import load_wmt17  # noqa: E402
from _helpers.paths import SHARED_DATA  # noqa: E402


def table(rows: int):
    import pyarrow as pa

    reference, systems = load_wmt17(SHARED_DATA)
    names = sorted(systems)
    hyp = [h for n in names for h in systems[n]]
    ref = reference * len(names)
    system = [n for n in names for _ in reference]
    reps = -(-rows // len(hyp))
    return pa.table(
        {
            "system": (system * reps)[:rows],
            "hyp": (hyp * reps)[:rows],
            "ref": (ref * reps)[:rows],
        }
    )


def timed(con, sql: str) -> tuple[float, list]:
    start = time.perf_counter()
    out = con.execute(sql).fetchall()
    return time.perf_counter() - start, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--slow-rows", type=int, default=None, help="rows for the row-at-a-time UDFs (default: --rows)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--slow",
        default="rouge-score,respeval,sacrebleu",
        help="which row-at-a-time UDFs to time (comma-separated of rouge-score, respeval, sacrebleu)",
    )
    args = parser.parse_args()
    slow_rows = args.slow_rows or args.rows

    import duckdb
    import sacrebleu
    from rouge_score import rouge_scorer

    import respeval
    import respeval.duckdb

    data = table(args.rows)
    con = respeval.duckdb.register(duckdb.connect())
    con.register("t_arrow", data)
    con.execute("CREATE TABLE t AS SELECT row_number() OVER () AS id, * FROM t_arrow")
    con.execute(f"CREATE TABLE t_slow AS SELECT * FROM t WHERE id <= {slow_rows}")

    scorer = rouge_scorer.RougeScorer(["rougeL"])
    con.create_function(
        "rouge_l_rouge_score_row", lambda h, r: scorer.score(r, h)["rougeL"].fmeasure, ["VARCHAR", "VARCHAR"], "DOUBLE"
    )
    con.create_function(
        "rouge_l_respeval_row",
        lambda h, r: float(respeval.rouge([h], [r], ("rougeL",), threads=1)["rougeL_f"][0]),
        ["VARCHAR", "VARCHAR"],
        "DOUBLE",
    )
    con.create_function(
        "sentence_bleu_sacrebleu_row",
        lambda h, r: sacrebleu.sentence_bleu(h, [r]).score,
        ["VARCHAR", "VARCHAR"],
        "DOUBLE",
    )

    def query(function: str, table_name: str) -> str:
        return f"SELECT sum({function}(hyp, ref)) FROM {table_name}"

    fast = {
        "rouge_l": query("rouge_l", "t"),
        "sentence_bleu": query("sentence_bleu", "t"),
        "corpus_bleu": "SELECT system, corpus_bleu(bleu_stats(hyp, ref)) FROM t GROUP BY system ORDER BY system",
        "chrf": query("chrf", "t"),
    }
    slow = {
        "rouge_l": [("rouge-score / row", "rouge_l_rouge_score_row"), ("respeval / row", "rouge_l_respeval_row")],
        "sentence_bleu": [("sacrebleu / row", "sentence_bleu_sacrebleu_row")],
    }
    wanted = {name.strip() for name in args.slow.split(",") if name.strip()}
    slow = {m: [(label, f) for label, f in cs if label.split(" /")[0] in wanted] for m, cs in slow.items()}
    slow = {m: cs for m, cs in slow.items() if cs}
    times: dict[str, list[float]] = {k: [] for k in fast}
    results: dict[str, list] = {}
    slow_times: dict[tuple[str, str], float] = {}
    for repeat in range(args.repeats):
        for name, sql in fast.items():
            seconds, out = timed(con, sql)
            times[name].append(seconds)
            results[name] = out
        if repeat == 0:
            for metric, contenders in slow.items():
                # the vectorized value on the same rows, to check the slow UDFs' numbers
                _, (want,) = timed(con, query(metric, "t_slow"))
                for label, function in contenders:
                    seconds, (got,) = timed(con, query(function, "t_slow"))
                    per_row = 1e-9 if "sacrebleu" in label else 1e-12  # plus the sum's own rounding
                    if abs(got[0] - want[0]) > (per_row + 1e-13) * slow_rows:
                        raise SystemExit(f"{label}: sum {got[0]!r} differs from respeval's {want[0]!r}")
                    slow_times[(metric, label)] = seconds

    print(f"DuckDB {duckdb.__version__}, respeval {respeval.__version__}, {args.rows:,} rows (WMT17 en-de repeated)")
    print(f"{'query':<16}{'function':<22}{'rows':>11}{'rows/s':>14}{'range (rows/s)':>24}{'vs respeval':>13}")
    for name in fast:
        t = times[name]
        median = statistics.median(t)
        rate = args.rows / median
        spread = f"{args.rows / max(t):,.0f}-{args.rows / min(t):,.0f}"
        print(f"{name:<16}{'respeval (Arrow)':<22}{args.rows:>11,}{rate:>14,.0f}{spread:>24}{'1':>13}")
        for label, _ in slow.get(name, []):
            slow_rate = slow_rows / slow_times[(name, label)]
            print(f"{'':<16}{label:<22}{slow_rows:>11,}{slow_rate:>14,.0f}{'(1 run)':>24}{slow_rate / rate:>13.3f}")
    check = results["corpus_bleu"]
    print(f"corpus BLEU per system from SQL, e.g. {check[0][0]}: {check[0][1]:.4f} (= respeval.bleu(...).score)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
