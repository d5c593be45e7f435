"""``respeval batches``: the provider batches a judge cache knows of: list, cancel, fetch."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter, defaultdict
from typing import Any

from respeval.cli.common import Exit, positive_float
from respeval.judge.batch import BatchCache, BatchOptions, BatchReport, Job, job_summary, price_of
from respeval.judge.batch.runner import BatchRunner
from respeval.judge.batch.store import OPEN_STATES, SUBMITTED, SUBMITTING
from respeval.judge.models.batching import SupportsBatch
from respeval.judge.prices import load_price_table
from respeval.judge.specs import load_model
from respeval.redact import REDACTED, redact

NAME = "batches"
HELP = "list, cancel or fetch the provider batches of a judge cache (--batch runs)"
DESCRIPTION = (
    "The provider batches (OpenAI Batch API, Anthropic Message Batches) that --batch runs recorded in a judge "
    "cache: list them with their state, counts and cost; cancel the ones still running; fetch the results of "
    "the ones that ended into the cache (the next run of the judging command uses them)."
)
EPILOG = """\
actions:
  list    every batch: respeval's job id, provider, model, the provider's batch id, state
          (preparing, uploaded, submitting, submitted, downloaded, abandoned), the
          provider's status, requests, answers, failures, tokens and cost
  cancel  cancel running batches (all open ones, or the job / batch ids given); requests
          already answered stay answered, the rest are resent by the next run (up to
          --batch-retries) or left unscored with the reason. Only a batch known to be
          respeval's is cancelled: one found after a lost submission by its size and time
          alone (Anthropic's carry no metadata) is left alone until its results show the
          run's marker
  fetch   check the open batches once (--wait: until they end) and store the results of
          those that ended in the cache; rerun the judging command to use them

The API key is read from the provider's usual variable (--api-key-env to change it). A
base URL that held a credential was stored scrubbed: give it again with --base-url.

examples:
  respeval batches list --cache results.jsonl.cache.sqlite
  respeval batches fetch --cache results.jsonl.cache.sqlite --wait
  respeval batches cancel --cache results.jsonl.cache.sqlite
"""

ACTIONS = ("list", "cancel", "fetch")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=ACTIONS, help="list, cancel or fetch")
    p.add_argument("ids", nargs="*", metavar="ID", help="respeval job ids or provider batch ids (default: all open)")
    p.add_argument("--cache", required=True, metavar="FILE", help="the judge cache (SQLite) the --batch run used")
    p.add_argument("--base-url", metavar="URL", help="API root, when the recorded one held a credential")
    p.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the API key")
    p.add_argument("--wait", action="store_true", help="fetch: wait until the open batches end")
    p.add_argument(
        "--poll", type=positive_float, default=10.0, metavar="S", help="fetch --wait: first check after S seconds"
    )
    p.add_argument("--prices", metavar="FILE", help="price table for the cost of fetched results (JSON)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _selected(jobs: list[Job], ids: list[str]) -> list[Job]:
    if not ids:
        return jobs
    wanted = set(ids)
    chosen = [j for j in jobs if j.id in wanted or j.remote_id in wanted]
    unknown = wanted - {j.id for j in chosen} - {j.remote_id for j in chosen}
    if unknown:
        raise ValueError(f"no batch {', '.join(sorted(unknown))} in this cache (respeval batches list)")
    return chosen


def _model_for(job: Job, args: argparse.Namespace) -> Any:
    base_url = args.base_url or job.endpoint
    if REDACTED in base_url:
        raise ValueError(f"batch {job.remote_id or job.id}: its base URL held a credential: give it with --base-url")
    model = load_model(job.model, base_url=base_url, api_key_env=args.api_key_env)
    if not isinstance(model, SupportsBatch):
        raise ValueError(f"batch {job.id}: {job.model} has no batch API")
    return model


def _list(store_jobs: list[Job], cache: BatchCache, as_json: bool) -> None:
    keys = cache.store.key_counts()
    if as_json:
        print(json.dumps({"batches": [job_summary(j) for j in store_jobs], "requests": keys}, indent=2))
        return
    if not store_jobs:
        print(f"no batches in {cache.path}")
        return
    header = f"{'job':<24} {'provider':<9} {'batch id':<34} {'state':<11} {'status':<11} {'requests':>8} "
    header += f"{'answered':>8} {'failed':>6} {'cost':>9}  model"
    print(header)
    for j in store_jobs:
        failed = j.errored + j.expired + j.cancelled + j.missing
        cost = f"${j.cost:.4f}" if j.cost is not None else "-"
        print(
            f"{j.id:<24} {j.provider:<9} {j.remote_id or '-':<34} {j.state:<11} {j.remote_status or '-':<11} "
            f"{j.requests:>8} {j.succeeded:>8} {failed:>6} {cost:>9}  {j.model}"
        )
    states = Counter(j.state for j in store_jobs)
    print(
        f"{len(store_jobs)} batches ({', '.join(f'{k}: {v}' for k, v in sorted(states.items()))}); requests: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(keys.items()))
    )


async def _act(args: argparse.Namespace, cache: BatchCache, jobs: list[Job]) -> list[dict[str, Any]]:
    """cancel or fetch, per model; returns one line of outcome per job."""
    outcomes: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], list[Job]] = defaultdict(list)
    for job in jobs:
        groups[(job.model, job.endpoint)].append(job)
    table = load_price_table(args.prices) if args.prices else None
    say = None if args.json else (lambda m: print(f"respeval batches: {m}", file=sys.stderr, flush=True))
    for group in groups.values():
        model = _model_for(group[0], args)
        options = BatchOptions(poll_interval=args.poll, max_wait=None if args.wait else 0.0, prices=table)
        report = BatchReport(provider=group[0].provider, model=group[0].model)
        async with model:
            runner = BatchRunner(
                model.batch_client(),
                cache,
                model_id=model.model_id,
                identity_endpoint=str(model.identity().get("endpoint", "")),
                options=options,
                report=report,
                price=price_of(model, options),
                on_progress=say,
            )
            submitted = []
            for job in group:
                current: Job | None = job
                if job.state == SUBMITTING:
                    current = await runner.locate(job)
                    if current is None:
                        if args.action == "cancel":
                            cache.store.abandon(job.id, "cancelled before it was submitted")
                            outcomes.append({"job": job.id, "outcome": "abandoned (never reached the provider)"})
                        else:
                            outcomes.append({"job": job.id, "outcome": "not submitted: rerun the judging command"})
                        continue
                elif job.state != SUBMITTED:
                    if args.action == "cancel":
                        cache.store.abandon(job.id, "cancelled before it was submitted")
                        outcomes.append({"job": job.id, "outcome": "abandoned (never submitted)"})
                    else:
                        outcomes.append({"job": job.id, "outcome": f"{job.state}: rerun the judging command"})
                    continue
                assert current is not None
                if args.action == "cancel" and not current.confirmed:
                    # found by size and time after a lost submission: perhaps someone else's
                    outcomes.append(
                        {
                            "job": job.id,
                            "batch": current.remote_id,
                            "outcome": "not cancelled: found by its size and creation time after a lost submission, "
                            "it is not known to be this job's (fetch confirms or releases it once it ends)",
                        }
                    )
                elif args.action == "cancel":
                    remote = await runner.cancel(current)
                    outcomes.append(
                        {"job": job.id, "batch": remote.id, "outcome": f"cancel requested ({remote.status})"}
                    )
                else:
                    submitted.append(current)
            if submitted:
                await runner.collect(submitted)
                for job in submitted:
                    now = cache.store.job(job.id)
                    assert now is not None
                    outcomes.append(
                        {
                            "job": job.id,
                            "batch": now.remote_id,
                            "outcome": f"{now.state} ({now.remote_status})",
                            "answered": now.succeeded,
                            "failed": now.errored + now.expired + now.cancelled + now.missing,
                        }
                    )
    return outcomes


def run(args: argparse.Namespace) -> int:
    if args.action != "fetch" and args.wait:
        print("respeval batches: error: --wait applies to fetch", file=sys.stderr)
        return Exit.INPUT
    if not os.path.exists(args.cache):
        print(f"respeval batches: error: no cache at {args.cache}", file=sys.stderr)
        return Exit.INPUT
    try:
        with BatchCache(args.cache) as cache:
            if args.action == "list":
                _list(_selected(cache.store.jobs(), args.ids), cache, args.json)
                return Exit.OK
            jobs = _selected(cache.store.jobs(OPEN_STATES), args.ids)
            if not jobs:
                print("no open batches" if not args.json else json.dumps({"outcomes": []}))
                return Exit.OK
            outcomes = asyncio.run(_act(args, cache, jobs))
    except (ValueError, OSError) as exc:
        print(f"respeval batches: error: {redact(exc)}", file=sys.stderr)
        return Exit.INPUT
    if args.json:
        print(json.dumps({"outcomes": outcomes}, indent=2))
    else:
        for o in outcomes:
            extra = f", {o['answered']} answered, {o['failed']} failed" if "answered" in o else ""
            print(f"{o['job']} {o.get('batch') or ''}: {o['outcome']}{extra}")
    pending = any(o["outcome"].startswith("submitted") for o in outcomes)
    return Exit.BATCH_PENDING if args.action == "fetch" and pending else Exit.OK
