"""``respeval clusters``: the failing rows of a run grouped by text similarity (MinHash over
word shingles, the native core's), with sizes, examples and words; with ``--baseline``, how
each cluster moved between two runs; ``--model MODEL`` names the largest clusters."""

from __future__ import annotations

import argparse
import json

from respeval.cli.common import Exit, positive_int, unit_interval

NAME = "clusters"
HELP = "group a run's failures (judge rationales, rubric failures, low scores) by similarity; baseline vs candidate"
DESCRIPTION = """\
Cluster the failing rows of a run: MinHash signatures of word shingles (the native core's, as
`dataset from-traces --dedupe` uses), LSH banding for candidates, pairs with estimated Jaccard
similarity >= --threshold linked, clusters = connected components.  Deterministic for --seed.

A row fails when its pass is false (--score-below: its score is below it; --unscored: an
unscored row fails too, its text being the unscored reason).  Inputs: `respeval judge`
outputs (pass, score, reasoning) or `respeval evaluate` tables (--metric NAME reads
NAME/pass, NAME/score, NAME/explanation), JSONL, CSV or Parquet."""
EPILOG = """\
examples:
  respeval clusters --input judged.jsonl
  respeval clusters --input table.parquet --metric faithfulness --score-below 0.5
  respeval clusters --input candidate.jsonl --baseline baseline.jsonl --json
  respeval clusters --input judged.jsonl --text-field response --threshold 0.4 --out clusters.json
  respeval clusters --input judged.jsonl --model openai:gpt-4o-mini --cache names.sqlite
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", required=True, metavar="FILE", help="the run's rows (the candidate)")
    parser.add_argument("--baseline", metavar="FILE", help="the baseline run's rows: clusters are compared")
    parser.add_argument("--metric", help="an evaluate table's metric (its NAME/pass, NAME/score, NAME/explanation)")
    parser.add_argument("--text-field", metavar="NAME", help="the text to cluster (default: the explanation)")
    parser.add_argument("--score-below", type=float, metavar="S", help="a row fails when its score is below S")
    parser.add_argument("--unscored", action="store_true", help="unscored rows fail too (clustered by reason)")
    parser.add_argument("--threshold", type=unit_interval, default=0.5, help="link rows at this estimated Jaccard")
    parser.add_argument("--shingle", type=positive_int, default=2, metavar="WORDS", help="words per shingle (2)")
    parser.add_argument("--seed", type=int, default=1, help="the MinHash permutations' seed (1)")
    parser.add_argument("--top", type=positive_int, default=20, help="clusters printed (20)")
    parser.add_argument("--examples", type=positive_int, default=3, help="examples per cluster (3)")
    parser.add_argument(
        "--model", dest="name_with", metavar="SPEC", help="a judge model names the --top largest clusters"
    )
    parser.add_argument("--base-url", metavar="URL", help="the naming model's API root (openai:, anthropic:)")
    parser.add_argument("--cache", metavar="FILE", help="the naming model's answer cache (SQLite)")
    parser.add_argument("--out", metavar="FILE", help="write every cluster with its members as JSON")
    parser.add_argument("--json", action="store_true", help="print the clusters as JSON")


def _records(path: str) -> list[dict]:
    from respeval.evaluate.inputs import open_dataset

    return [r for chunk in open_dataset(path).chunks(20_000) for r in chunk.dicts()]


def run(args: argparse.Namespace) -> int:
    from respeval.clusters import cluster_failures, compare_clusters, failures_of
    from respeval.io.files import write_text_atomic

    pick = {
        "metric": args.metric,
        "text_field": args.text_field,
        "score_below": args.score_below,
        "unscored": args.unscored,
    }
    options = {"threshold": args.threshold, "shingle": args.shingle, "seed": args.seed}
    candidate = failures_of(_records(args.input), **pick)
    if args.baseline:
        baseline = failures_of(_records(args.baseline), run="baseline", **pick)
        result = compare_clusters(baseline, candidate, **options)
    else:
        result = cluster_failures(candidate, **options)
    if args.name_with:
        from respeval.clusters import name_clusters
        from respeval.judge.specs import load_model

        name_clusters(result, load_model(args.name_with, base_url=args.base_url), top=args.top, cache=args.cache)
    if args.out:
        write_text_atomic(args.out, json.dumps(result.to_dict(examples=args.examples, members=True), indent=1) + "\n")
    if args.json:
        print(json.dumps(result.to_dict(examples=args.examples), indent=2))
    else:
        print(result.format(top=args.top, examples=args.examples))
    return Exit.OK
