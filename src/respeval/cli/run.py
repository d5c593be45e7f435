"""``respeval run``: run the systems under test over a dataset (prompts, or templates and their
variables) into one table of responses, resumably; ``--example`` runs the whole loop (run,
then compare) offline on data and a toy model that ship with respeval."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from respeval.cli.batching import BATCH_EPILOG, exit_status, progress_printer
from respeval.cli.common import Exit, add_epilog_more, non_negative_float, positive_int, signals_interrupt, stop_exit
from respeval.cli.judge_options import InputFileError, JudgeConfig, add_judge_arguments
from respeval.redact import redact

NAME = "run"
HELP = "run systems under test (models, agents, functions) over a dataset: responses, usage, latency"
DESCRIPTION = (
    "Send every case of a dataset to every system under test (provider models, OpenAI-compatible servers, agent "
    "endpoints, Python functions), under one or more prompt templates, and write one row per (case, system, "
    "template) with the response, tool calls, latency, tokens, cost and any error. The judge's engine makes the "
    "calls: concurrent, rate-limited, retried, cached, budgeted, resumable after a crash with no call repeated, "
    "and --batch sends them as provider batches at half price. The output feeds compare, score, judge, evaluate "
    "and gate unchanged."
)
EPILOG = """\
systems (--system NAME=SPEC, repeatable; NAME is the output's system column):
  openai:MODEL          OpenAI chat completions, or any compatible server with --base-url
                        (vLLM, Ollama http://localhost:11434/v1, llama.cpp, LiteLLM)
  anthropic:MODEL       Anthropic Messages
  http://HOST/PATH      an agent endpoint: POST {"prompt", "system_instruction", "messages",
                        "temperature", "max_tokens", "seed", "tools"}, answer {"response",
                        "tool_calls"?, "usage"?: {"tokens_in", "tokens_out"}, "error"?}
  python:MOD:FUNC[@V]   a Python function taking that same request dict and returning the
                        response (a string) or that same answer object; sync or async; runs
                        in this process, or sandboxed with --isolate NAME (no network, no
                        keys, time and memory limits)
  adk:MOD:AGENT         an ADK agent (pip install google-adk), run by ADK's own runner
  fake:k=v,...          a scripted model for dry runs (fake:text=hello)
  Keys come from the environment only ($OPENAI_API_KEY, $ANTHROPIC_API_KEY, --api-key-env)
  and are never written anywhere.

prompts:
  --template 'Q: {question}' fills {field} from each row of --input (JSONL, CSV or Parquet);
  each value goes in fenced as data between [FIELD code] markers (--no-fence: verbatim).
  Placeholders name fields only: no code runs. Several --template (NAME=TEXT or @FILE names
  them; else t1, t2, ...) and several --system form a matrix. Every row is checked first: a
  field a template names that a row lacks, or a row's field no template names (an unused
  variable; carry it with --keep FIELD), stops the run naming the file, row and field. The
  id, reference, references and expected fields are always carried. Without --template each
  row needs a prompt field.

output (--out FILE.jsonl):
  one row per (case, template, system), in that order: the input's fields, id, system,
  template (when several), prompt (unless the input has one), response, tool_calls,
  latency_s, tokens_in, tokens_out, cost_usd (null without a price), finish_reason, error
  (null, or why the row has no response). Rows go to OUT.parts/ as they finish; OUT is
  written only when every row is done. OUT.lock keeps a second run off the same --out.

resuming:
  every answer is cached (SQLite, default OUT.cache.sqlite) before its row is written:
  after a crash, kill -9, Ctrl-C or a budget stop, rerun the same command (with --resume to
  keep the rows already written; a changed input, template, system or option is refused,
  naming what changed) and no answered request is sent again.

exit status:
  0 every row done (some may have an error: see the summary), 1 bad input or options, 3 a
  system stopped on a model error (401, 404, ...), 4 the budget, 5 provider batches still
  running (--batch-wait; rerun), 130 interrupted.

examples:
  respeval run --example
  respeval run --input vars.jsonl --template 'Q: {question}' \\
      --system baseline=openai:gpt-4o-mini --system candidate=openai:gpt-4.1-mini \\
      --out responses.jsonl
  respeval compare --input responses.jsonl --baseline baseline --candidate candidate \\
      --metric exact_match,rouge1 --reference-field expected
  respeval run --input vars.csv --template short=@short.txt --template long=@long.txt \\
      --system local=openai:Qwen/Qwen2.5-7B-Instruct --base-url http://localhost:8000/v1 \\
      --system agent=http://127.0.0.1:9000/agent --out responses.jsonl --resume
  respeval run --spec run.yaml
  respeval run --input scenarios.jsonl --simulator openai:gpt-4o-mini --max-turns 6 \\
      --system candidate=openai:gpt-4.1-mini --out conversations.jsonl
  respeval run --input docs/examples/scenarios.jsonl --max-turns 4 \\
      --simulator python:respeval.systems.example:toy_user \\
      --system toy=python:respeval.systems.example:toy_model --out conversations.jsonl

multi-turn (--simulator SPEC):
  each --input row is a scenario: scenario (what the user wants; or --template renders it
  from the row), persona?, stop? (the phrase the simulator replies with when its goal is
  met, default ###STOP###), max_turns?. The simulator writes the user's messages, each
  system answers, until the stop phrase (stop_reason stopped), --max-turns answers
  (turn_limit) or a failed call (error). Every turn is cached: a rerun replays the
  conversations with no call repeated. One row per (case, system[, template]): messages
  (the conversation, read by respeval evaluate's trajectory_* metrics), response (the last
  reply), turns, stop_reason, error, the system's tokens_in, tokens_out, cost_usd,
  latency_s summed, and simulator_tokens_in, simulator_tokens_out, simulator_cost_usd.
"""

SPEC_KEYS = (
    "input",
    "templates",
    "systems",
    "out",
    "cache",
    "id_field",
    "keep",
    "fence",
    "base_url",
    "api_key_env",
    "temperature",
    "max_tokens",
    "seed",
    "tools",
    "system_instruction",
)
SYSTEM_KEYS = (
    "spec",
    "system_instruction",
    "temperature",
    "max_tokens",
    "seed",
    "tools",
    "base_url",
    "api_key_env",
    "isolation",
    "network",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_epilog_more(p, BATCH_EPILOG)
    src = p.add_argument_group("input")
    src.add_argument(
        "--input", metavar="FILE", help="the cases: prompts, or a template's variables (.jsonl, .csv, .parquet)"
    )
    src.add_argument(
        "--template",
        action="append",
        default=[],
        metavar="[NAME=]TEXT|@FILE",
        help="a prompt template naming fields as {field}; repeatable (a matrix with the systems)",
    )
    src.add_argument(
        "--id-field", default=None, metavar="NAME", help="the case id column (default id; else the row number)"
    )
    src.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="FIELD[,FIELD]",
        help="carry these input fields to the output though no template names them",
    )
    src.add_argument("--no-fence", action="store_true", help="insert template values verbatim, not fenced as data")
    src.add_argument("--spec", metavar="FILE", help="a run spec (.yaml or .json) with anything longer (see the docs)")
    src.add_argument(
        "--example",
        action="store_true",
        help="run a baseline and a candidate prompt over a shipped dataset with a toy local model, then compare",
    )
    sy = p.add_argument_group("systems")
    sy.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="a system under test: openai:MODEL, anthropic:MODEL, http://URL, python:MOD:FUNC, adk:MOD:AGENT",
    )
    sy.add_argument(
        "--system-instruction",
        action="append",
        default=[],
        metavar="[NAME=]TEXT|@FILE",
        help="the system message of system NAME (of every system without NAME=); repeatable",
    )
    sy.add_argument("--temperature", type=non_negative_float, default=None, metavar="T", help="sampling temperature")
    sy.add_argument("--max-tokens", type=positive_int, default=None, metavar="N", help="reply limit per call")
    sy.add_argument("--seed", type=int, default=None, metavar="N", help="sampling seed, for models that take one")
    sy.add_argument("--tools", metavar="FILE", help="tool (function) definitions, JSON, passed to every system")
    sy.add_argument("--base-url", metavar="URL", help="API root of the openai:/anthropic: systems")
    sy.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the systems' API key")
    sm = p.add_argument_group("multi-turn (a simulated user)")
    sm.add_argument(
        "--simulator",
        metavar="SPEC",
        help="a user simulator (any system spec) that converses with each system: --input rows are scenarios",
    )
    sm.add_argument(
        "--max-turns",
        type=positive_int,
        default=6,
        metavar="N",
        help="with --simulator: the system answers at most N messages (a row's max_turns overrides; default 6)",
    )
    sy.add_argument(
        "--isolate",
        action="append",
        default=[],
        metavar="NAME",
        help="run python: system NAME in the sandbox (a fresh process: no network, no keys, limits)",
    )
    add_judge_arguments(p, groups=("engine", "cache", "budget", "batch"), default_cache="OUT.cache.sqlite", title="run")
    out = p.add_argument_group("output")
    out.add_argument(
        "--out", metavar="FILE", help="the responses (.jsonl); rows go to FILE.parts/ until the run completes"
    )
    out.add_argument("--resume", action="store_true", help="keep the rows an interrupted run into --out wrote")
    out.add_argument("--json", action="store_true", help="print the summary as JSON")
    out.add_argument("--quiet", action="store_true", help="no progress bar")


# --------------------------------------------------------------------------- the spec


def _read_spec(path: str) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(f"--spec: cannot read {p}: {exc.strerror or exc}") from exc
    if p.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise InputFileError(f"{p}: YAML specs need PyYAML (pip install pyyaml), or write it as JSON") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InputFileError(f"{p}: not valid YAML: {exc}") from None
    elif p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputFileError(f"{p}: not valid JSON: {exc}") from None
    else:
        raise InputFileError(f"{p}: a run spec is .yaml, .yml or .json")
    if not isinstance(data, dict):
        raise InputFileError(f"{p}: a run spec is a mapping (input, templates, systems, ...)")
    unknown = sorted(set(data) - set(SPEC_KEYS))
    if unknown:
        raise InputFileError(f"{p}: unknown key(s) {', '.join(unknown)}; known: {', '.join(SPEC_KEYS)}")
    return data


def _relative(value: Any, base: Path) -> Any:
    if isinstance(value, str) and value and not os.path.isabs(value):
        return str(base / value)
    return value


# --------------------------------------------------------------------------- the run's parts


def _split_named(value: str, names: set[str]) -> tuple[str | None, str]:
    head, sep, rest = value.partition("=")
    if sep and head in names:
        return head, rest
    return None, value


def _text(value: str, base: Path | None = None) -> str:
    from respeval.judge.methods.prompts import read_text_option

    text = read_text_option(value, base)
    assert text is not None
    return text


def _tools(value: Any, base: Path | None, where: str) -> tuple[Any, ...]:
    from respeval.systems import load_tools

    if value is None:
        return ()
    if isinstance(value, str):
        path = Path(value) if base is None or os.path.isabs(value) else base / value
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputFileError(f"{where}: cannot read {path}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise InputFileError(f"{where}: {path} is not valid JSON: {exc}") from None
        where = str(path)
    try:
        return load_tools(value, where)
    except ValueError as exc:
        raise InputFileError(str(exc)) from None


def _plan(args: argparse.Namespace, config: JudgeConfig) -> dict[str, Any]:
    """The run the options (and the spec) ask for, as :func:`respeval.systems.arun` arguments."""
    from respeval.systems import Template, load_system
    from respeval.systems.specs import parse_system_option
    from respeval.systems.templates import parse_template

    spec: dict[str, Any] = _read_spec(args.spec) if args.spec else {}
    base = Path(args.spec).resolve().parent if args.spec else None
    fence = not args.no_fence and spec.get("fence", True) is not False
    data = args.input or (_relative(spec["input"], base) if "input" in spec and base else spec.get("input"))
    if not data:
        raise InputFileError("give --input FILE (the cases), or --example")
    templates: list[Any] = [parse_template(v, i, fence=fence) for i, v in enumerate(args.template, 1)]
    if not templates and spec.get("templates"):
        given = spec["templates"]
        if isinstance(given, str):
            given = [given]
        if isinstance(given, dict):
            templates = [Template(str(n), _text(str(t), base), fence) for n, t in given.items()]
        elif isinstance(given, list):
            templates = [Template(f"t{i}", _text(str(t), base), fence) for i, t in enumerate(given, 1)]
        else:
            raise InputFileError("spec: 'templates' is a template, a list of them or a mapping name -> template")
    # systems: the command line's, else the spec's
    entries: dict[str, dict[str, Any]] = {}
    for value in args.system:
        try:
            name, system_spec = parse_system_option(value)
        except ValueError as exc:
            raise InputFileError(str(exc)) from None
        if name in entries:
            raise InputFileError(f"--system: {name!r} is given twice; every system needs its own name")
        entries[name] = {"spec": system_spec}
    if not entries and spec.get("systems"):
        given = spec["systems"]
        if not isinstance(given, dict):
            raise InputFileError("spec: 'systems' is a mapping name -> spec string or {spec: ..., ...}")
        for name, entry in given.items():
            entry = {"spec": entry} if isinstance(entry, str) else entry
            if not isinstance(entry, dict) or not isinstance(entry.get("spec"), str):
                raise InputFileError(f"spec: system {name!r}: give its spec (openai:MODEL, python:mod:fn, ...)")
            unknown = sorted(set(entry) - set(SYSTEM_KEYS))
            if unknown:
                raise InputFileError(
                    f"spec: system {name!r}: unknown key(s) {', '.join(unknown)}; known: {', '.join(SYSTEM_KEYS)}"
                )
            entries[str(name)] = dict(entry)
    if not entries:
        raise InputFileError("give at least one --system NAME=SPEC (e.g. baseline=openai:gpt-4o-mini)")
    names = set(entries)
    instructions: dict[str | None, str] = {}
    for value in args.system_instruction:
        target, text = _split_named(value, names)
        try:
            instructions[target] = _text(text)
        except ValueError as exc:
            raise InputFileError(f"--system-instruction: {exc}") from None
    for name in args.isolate:
        if name not in entries:
            raise InputFileError(f"--isolate {name}: no such system (the systems: {', '.join(sorted(names))})")
        entries[name]["isolation"] = "process"
    common_tools = _tools(args.tools, None, "--tools") if args.tools else _tools(spec.get("tools"), base, "spec tools")
    systems = []
    for name, entry in entries.items():
        instruction = instructions.get(name, instructions.get(None))
        if instruction is None:
            raw = entry.get("system_instruction", spec.get("system_instruction"))
            instruction = _text(raw, base) if isinstance(raw, str) else None

        def pick(key: str, cli: Any, entry: dict[str, Any] = entry) -> Any:
            return cli if cli is not None else entry.get(key, spec.get(key))

        tools = _tools(entry["tools"], base, f"spec: system {name!r} tools") if "tools" in entry else common_tools
        try:
            systems.append(
                load_system(
                    name,
                    entry["spec"],
                    system_instruction=instruction,
                    temperature=pick("temperature", args.temperature),
                    max_tokens=pick("max_tokens", args.max_tokens),
                    seed=pick("seed", args.seed),
                    tools=tools,
                    base_url=pick("base_url", args.base_url),
                    api_key_env=pick("api_key_env", args.api_key_env),
                    isolation=str(entry.get("isolation", "none")),
                    network=bool(entry.get("network", False)),
                    timeout=config.engine.timeout,
                )
            )
        except ValueError as exc:
            raise InputFileError(f"--system {name}: {exc}") from None
    keep = [k.strip() for value in args.keep for k in value.split(",") if k.strip()]
    keep += [str(k) for k in spec.get("keep") or []]
    simulator = None
    if args.simulator:
        try:
            simulator = load_system(
                "simulator",
                args.simulator,
                temperature=args.temperature,
                seed=args.seed,
                base_url=args.base_url,
                api_key_env=args.api_key_env,
                timeout=config.engine.timeout,
            )
        except ValueError as exc:
            raise InputFileError(f"--simulator: {exc}") from None
    return {
        "simulator": simulator,
        "data": data,
        "systems": systems,
        "templates": templates,
        "id_field": args.id_field or spec.get("id_field") or "id",
        "keep": keep,
        "fence": fence,
    }


@contextlib.contextmanager
def _progress(args: argparse.Namespace, total_hint: str) -> Iterator[Any]:
    """Progress on stderr with rows/s and the spend: a bar on a terminal, else a line every 30 s."""
    if args.quiet or args.json:
        yield None
        return
    from respeval.cli.progress import progress

    bar = progress(0, unit="rows", desc=total_hint, delay=1.0)
    try:

        def update(done: int, total: int, spent: float) -> None:
            if bar.total != total:
                bar.total = total
            bar.set_postfix_str(f"${spent:.4f} spent", refresh=False)
            bar.update(done - bar.n)

        yield update
    finally:
        bar.close()


async def _run(args: argparse.Namespace, config: JudgeConfig, plan: dict[str, Any], on_progress: Any) -> Any:
    from respeval.judge.run import RunControl
    from respeval.systems import arun

    control = RunControl()
    with contextlib.ExitStack() as stack:
        if config.batch is None:
            stack.enter_context(signals_interrupt(asyncio.get_running_loop(), control))
        if args.simulator and config.batch is not None:
            raise InputFileError("--batch does not apply to --simulator runs: each turn waits for the one before")
        return await arun(
            plan["data"],
            plan["systems"],
            templates=plan["templates"],
            out=args.out,
            cache=config.cache if config.cache is not None else False,
            resume=args.resume,
            batch=config.batch or False,
            id_field=plan["id_field"],
            keep=plan["keep"],
            fence=plan["fence"],
            options=config.engine,
            control=control,
            on_progress=on_progress,
            on_batch_progress=progress_printer(args, "run"),
            simulator=plan["simulator"],
            max_turns=args.max_turns,
        )
    raise AssertionError("unreachable")  # pragma: no cover


def _status(result: Any) -> int:
    for summary in result.systems.values():
        if summary.batch is not None and summary.stop_kind is not None:
            return exit_status(summary.batch, summary.stop_kind)
    kind = result.stop_kind
    if kind == "not_run":
        return Exit.JUDGE_FATAL
    return stop_exit(kind)


def run(args: argparse.Namespace) -> int:
    """Run ``respeval run`` with parsed arguments; returns the exit status."""
    if args.example:
        return run_example(args)
    try:
        if args.spec and not args.out:
            spec = _read_spec(args.spec)
            if spec.get("out"):
                args.out = _relative(spec["out"], Path(args.spec).resolve().parent)
        if not args.out:
            raise InputFileError("give --out FILE.jsonl (the responses), or --example")
        if not args.out.lower().endswith((".jsonl", ".ndjson")):
            raise InputFileError(f"--out {args.out}: the responses are written as JSONL (.jsonl)")
        config = JudgeConfig.from_args(args, out=args.out, cache_beside_out=True)
        plan = _plan(args, config)
        with _progress(args, "running") as on_progress:
            result = asyncio.run(_run(args, config, plan, on_progress))
    except (InputFileError, ValueError, OSError) as exc:
        print(f"respeval run: error: {redact(exc)}", file=sys.stderr)
        return Exit.INPUT
    data = result.to_json()
    data["cache"] = config.cache
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(redact(result.format()))
        if result.complete:
            print(f"responses: {result.output}")
        else:
            print(f"rows so far: {result.output} ({args.out} is written when every row is done)")
        if config.cache:
            print(f"cache: {config.cache}")
    status = _status(result)
    if status != Exit.OK:
        print(
            f"respeval run: stopped: {redact(result.stop_reason)} (rerun the same command with --resume to go on)",
            file=sys.stderr,
        )
    elif result.complete and not args.json and args.simulator:
        print(f"next: respeval evaluate --input {result.output} --metric trajectory_tool_use_quality --model MODEL")
    elif result.complete and not args.json:
        print(
            f"next: respeval compare --input {result.output} --baseline NAME --candidate NAME "
            "--metric exact_match,rouge1 --reference-field expected"
        )
    return status


# --------------------------------------------------------------------------- --example


def run_example(args: argparse.Namespace) -> int:
    """Baseline and candidate prompts over the shipped questions, against the toy model
    (no network), then ``compare``: the decision is printed."""
    from respeval.compare import compare
    from respeval.systems import load_system
    from respeval.systems import run as run_systems
    from respeval.systems.example import BASELINE_INSTRUCTION, CANDIDATE_INSTRUCTION, EXAMPLE_TEMPLATE, dataset_path

    model = "python:respeval.systems.example:toy_model"
    systems = [
        load_system("baseline", model, system_instruction=BASELINE_INSTRUCTION),
        load_system("candidate", model, system_instruction=CANDIDATE_INSTRUCTION),
    ]
    with contextlib.ExitStack() as stack:
        out = args.out
        if not out:
            out = os.path.join(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="respeval-run-")), "responses.jsonl"
            )
        try:
            result = run_systems(dataset_path(), systems, templates=EXAMPLE_TEMPLATE, out=out, cache=False)
            comparison = compare(out, metrics=["exact_match", "rouge1"], ref_field="expected")
        except (ValueError, OSError) as exc:
            print(f"respeval run: error: {redact(exc)}", file=sys.stderr)
            return Exit.INPUT
    if args.json:
        print(json.dumps({"run": result.to_json(), "compare": comparison.to_json()}, indent=2, default=str))
        return Exit.OK
    print(
        f"respeval run --example: {result.cases} questions (respeval/data/run_example.jsonl), template "
        f"{EXAMPLE_TEMPLATE!r},\none toy local model (respeval.systems.example, no network) under two system "
        "instructions:\n"
        f"  baseline:  {BASELINE_INSTRUCTION!r}\n  candidate: {CANDIDATE_INSTRUCTION!r}\n"
    )
    print(result.format())
    print("\nrespeval compare --metric exact_match,rouge1 --reference-field expected:\n")
    print(comparison.format())
    where = f"responses: {args.out}" if args.out else "(add --out FILE.jsonl to keep the responses)"
    print(f"\n{where}\ndecision: {comparison.decision}")
    return Exit.OK
