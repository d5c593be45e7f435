"""The generation method: one request per case to write, one JSON object back, checked against
the case schema.

To the judge engine (:class:`respeval.judge.engine.JudgeEngine`, the one engine that calls
models) this is a method like any judging one: it builds a request from a record, reads the
reply, and says how to ask again once when the reply cannot be used.  So generation has the
engine's concurrency, retries, rate limits, cache and budget, on every model the judge layer
supports.

A reply is usable when it holds one JSON object (the whole reply, a fenced block, or a
structured reply) that the schema accepts (respeval's ``json_valid`` check, jsonschema's
validator).  An unusable reply is asked again once, with the validation error; a second
unusable one leaves the case unwritten with that reason.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from respeval.judge.methods.base import reask_for_json
from respeval.judge.models.base import Capabilities, Completion, JsonSchema, JudgeRequest, Message
from respeval.judge.parsing import Parsed, ParseFailure, objects_in
from respeval.metrics.checks import JsonValid

__all__ = ["DEFAULT_SCHEMA", "TEMPLATE_VERSION", "CaseGenerator", "GenerationItem", "fill_template"]

TEMPLATE_VERSION = "generate-case/v1"

DEFAULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "minLength": 1},
        "reference": {"type": "string", "minLength": 1},
    },
    "required": ["prompt", "reference"],
    "additionalProperties": False,
}
"""An eval case: the input to send and the reference answer."""

SYSTEM = """\
You write test cases for evaluating an AI system. Each reply is exactly one test case: one \
JSON object that follows this JSON Schema, and nothing else (no prose, no Markdown):
{schema}"""


def fill_template(template: str, values: Mapping[str, Any], where: str) -> str:
    """``template`` with each ``{field}`` replaced by the seed's value (strings as they are,
    other values as JSON); ``{{`` and ``}}`` are literal braces.  A field the seed lacks is an
    error naming it and ``where``."""
    out = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        if spec or conversion or not name.isidentifier():
            raise ValueError(f"template: {{{name}}}: name a seed field only ({{field}}, no formats or indexing)")
        if name not in values:
            raise ValueError(
                f"{where}: the template names {{{name}}}, which this seed lacks (it has {', '.join(values) or 'none'})"
            )
        value = values[name]
        out.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return "".join(out)


@dataclass(frozen=True)
class GenerationItem:
    """One case to write: the filled template, the directive (an edge case to cover), its
    index (which makes it a request of its own)."""

    prompt: str
    directive: str | None
    index: int
    variant: int


class CaseGenerator:
    """The generation method (see the module docstring).

    Args:
        schema: the JSON Schema every case must follow (default :data:`DEFAULT_SCHEMA`).
        system_instruction: what the cases are for ("cases for a travel assistant's
            booking flow"), put before the format rules.
        temperature: sampling temperature (default 1.0: variety; None leaves the provider's).
        max_tokens: reply limit per call.
        seed: sent to models that support one (plus the case's index).
    """

    name = "generate"
    fields: tuple[str, ...] = ("prompt", "directive", "index", "variant")
    verdict_fields = ("case",)

    def __init__(
        self,
        *,
        schema: Mapping[str, Any] | None = None,
        system_instruction: str | None = None,
        temperature: float | None = 1.0,
        max_tokens: int = 1024,
        seed: int | None = None,
    ) -> None:
        self.schema = dict(schema or DEFAULT_SCHEMA)
        self.check = JsonValid(name="case_schema", schema=self.schema, strip_fences=True)
        self.system_instruction = system_instruction or None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        shown = json.dumps(self.schema, indent=2, sort_keys=True)
        self._system = SYSTEM.format(schema=shown)
        if self.system_instruction:
            self._system = f"{self.system_instruction}\n\n{self._system}"
        digest = hashlib.sha256(
            json.dumps([self._system, self.temperature, self.max_tokens], sort_keys=True).encode()
        ).hexdigest()[:12]
        self.template_version = f"{TEMPLATE_VERSION}+{digest}"
        self._json_schema = JsonSchema("eval_case", self.schema, strict=False)

    def signature(self) -> str:
        return f"{self.template_version}|seed:{self.seed}"

    def item(self, record: Mapping[str, Any]) -> GenerationItem:
        prompt = record.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("field 'prompt': the filled template is empty")
        directive = record.get("directive")
        return GenerationItem(
            prompt,
            directive if isinstance(directive, str) else None,
            int(record["index"]),
            int(record.get("variant") or 0),
        )

    def user_message(self, item: GenerationItem) -> str:
        parts = [item.prompt.strip()]
        if item.directive:
            parts.append(f"Edge case to cover in this test case: {item.directive}")
        if item.variant:
            parts.append(
                f"This is variant {item.variant + 1} of this request: write a test case different from the obvious one."
            )
        return "\n\n".join(parts)

    def build(self, item: GenerationItem, capabilities: Capabilities) -> JudgeRequest:
        return JudgeRequest(
            messages=(Message("system", self._system), Message("user", self.user_message(item))),
            temperature=self.temperature if capabilities.temperature else None,
            seed=(self.seed + item.index) if (self.seed is not None and capabilities.seed) else None,
            max_tokens=self.max_tokens,
            json_schema=self._json_schema if capabilities.json_schema else None,
            template_version=self.template_version,
        )

    def parse(self, item: GenerationItem, completion: Completion) -> Parsed[dict[str, Any]] | ParseFailure:
        if isinstance(completion.structured, Mapping):
            candidates = [(json.dumps(completion.structured, ensure_ascii=False), "structured")]
        else:
            text = completion.text.strip()
            if not text:
                return ParseFailure(f"empty reply{f' (refused: {completion.refusal})' if completion.refusal else ''}")
            candidates = [(text, "json")]
            if not text.startswith(("{", "```")):
                found = list(objects_in(text, limit=4))
                if len(found) == 1:
                    candidates.append((json.dumps(found[0][0], ensure_ascii=False), "embedded"))
        reason = "no JSON object"
        for candidate, stage in candidates:
            value, problem = self.check.read(candidate)
            if problem is not None:
                reason = problem
            elif not isinstance(value, dict):
                reason = "not a JSON object"
            else:
                return Parsed(value, stage)
        if completion.finish_reason == "length":
            reason += " (the reply was cut at max_tokens)"
        return ParseFailure(reason)

    def reask(
        self, item: GenerationItem, request: JudgeRequest, completion: Completion, failure: ParseFailure
    ) -> JudgeRequest:
        return reask_for_json(request, completion, failure, json.dumps(self.schema, sort_keys=True))

    def row_fields(self, verdict: dict[str, Any]) -> dict[str, Any]:
        return {"pass": True, "case": verdict}
