"""A scripted judge for tests and dry runs: fixed outputs, a script, a function, and fault
dials (latency, transient and fatal errors, malformed output).

Faults are decided per request from ``seed``, the request's content and how many times
that same request was seen before, never from call order.  So a run is reproducible however
the engine interleaves its concurrent calls, and a retried request can succeed.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Union

from respeval.judge.cache import KeyMaker
from respeval.judge.errors import FatalError, TransientError
from respeval.judge.models.base import BaseJudgeModel, Capabilities, Completion, JudgeRequest, estimate_tokens
from respeval.judge.models.callables import as_completion

__all__ = ["DEFAULT_VERDICT", "MALFORMED_OUTPUTS", "FakeModel"]

DEFAULT_VERDICT = '{"reasoning": "fake judge: same key facts", "score": 1.0, "pass": true}'

# Judge replies seen in the wild that carry no usable verdict.
MALFORMED_OUTPUTS = (
    "The candidate looks broadly right to me.",
    '{"reasoning": "close", "score": 1.0, "pa',
    '{"reasoning": "no score given", "pass": true}',
    '{"reasoning": "too generous", "score": 7, "pass": true}',
    '```json\n{"score": "high", "pass": "maybe"}\n```',
)

_FINGERPRINT = KeyMaker({"provider": "fake"})

ScriptItem = Union[str, Completion, BaseException, "dict[str, Any]"]
Outputs = Union[None, str, Sequence[ScriptItem], Callable[[JudgeRequest], Any]]


class FakeModel(BaseJudgeModel):
    """A judge model that needs no network.

    Args:
        outputs: None (always :data:`DEFAULT_VERDICT`); a string (always that text); a
            sequence consumed one item per call (strings, Completions, mappings, or exceptions
            to raise); or a function ``request -> str | mapping | Completion`` (may raise).
        latency: seconds per call, or a ``(low, high)`` range drawn per call.
        error_rate: probability that a call raises a TransientError with ``error_status``
            (and ``retry_after``, if given).
        fatal_rate: probability that a call raises a FatalError (an HTTP 401).
        malformed_rate: probability that a call returns one of :data:`MALFORMED_OUTPUTS`.
        seed: seeds the fault decisions and latency draws.
        capabilities: what the fake claims to support (default: everything).

    Attributes:
        calls: calls made (faulty ones included); ``requests``: every request received;
        ``max_in_flight``: the most calls that were running at once; ``tokens_in`` and
        ``tokens_out``: the usage of every completion returned (for accounting tests).
    """

    provider = "fake"

    def __init__(
        self,
        outputs: Outputs = None,
        *,
        name: str = "fake",
        latency: float | tuple[float, float] = 0.0,
        error_rate: float = 0.0,
        error_status: int = 503,
        retry_after: float | None = None,
        fatal_rate: float = 0.0,
        malformed_rate: float = 0.0,
        seed: int = 0,
        capabilities: Capabilities | None = None,
    ) -> None:
        super().__init__(
            name,
            capabilities=capabilities
            or Capabilities(temperature=True, seed=True, n=True, logprobs=True, json_schema=True, tools=True),
        )
        self._outputs = outputs
        self._script = list(outputs) if isinstance(outputs, (list, tuple)) else None
        self._latency = latency
        self._error_rate = error_rate
        self._error_status = error_status
        self._retry_after = retry_after
        self._fatal_rate = fatal_rate
        self._malformed_rate = malformed_rate
        self._seed = seed
        self._seen: Counter[str] = Counter()
        self.calls = 0
        self.requests: list[JudgeRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.tokens_in = 0
        self.tokens_out = 0

    def _identity_extra(self) -> dict[str, Any]:
        # Fault dials do not change what a successful answer is; outputs do, but a function
        # has no stable identity, so tests that reuse a cache across fakes use distinct names.
        return {"outputs": self._outputs if isinstance(self._outputs, str) or self._outputs is None else "custom"}

    def _rng(self, request: JudgeRequest) -> random.Random:
        fingerprint = _FINGERPRINT(request)
        nth = self._seen[fingerprint]
        self._seen[fingerprint] += 1
        return random.Random(f"{self._seed}:{fingerprint}:{nth}")

    async def generate(self, request: JudgeRequest) -> Completion:
        self.calls += 1
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            rng = self._rng(request)
            delay = rng.uniform(*self._latency) if isinstance(self._latency, tuple) else self._latency
            roll = rng.random()  # one draw decides the fault, so the rates add up exactly
            if delay > 0:
                await asyncio.sleep(delay)
            if roll < self._fatal_rate:
                raise FatalError("HTTP 401 from fake: injected authentication failure", status=401)
            roll -= self._fatal_rate
            if roll < self._error_rate:
                kind = "rate_limited" if self._error_status == 429 else "server_error"
                raise TransientError(
                    f"HTTP {self._error_status} from fake: injected fault",
                    kind=kind,
                    status=self._error_status,
                    retry_after=self._retry_after,
                )
            roll -= self._error_rate
            if roll < self._malformed_rate:
                completion = self._with_usage(request, Completion(text=rng.choice(MALFORMED_OUTPUTS)))
            else:
                completion = self._with_usage(request, self._answer(request))
            self.tokens_in += completion.tokens_in
            self.tokens_out += completion.tokens_out
            return completion
        finally:
            self.in_flight -= 1

    def _answer(self, request: JudgeRequest) -> Completion:
        outputs = self._outputs
        if outputs is None:
            return Completion(text=DEFAULT_VERDICT)
        if isinstance(outputs, str):
            return Completion(text=outputs)
        if self._script is not None:
            if not self._script:
                raise FatalError(f"fake model script exhausted after {self.calls - 1} calls")
            item = self._script.pop(0)
            if isinstance(item, BaseException):
                raise item
            return as_completion(item, "fake model script")
        assert callable(outputs)
        return as_completion(outputs(request), "fake model function")

    @staticmethod
    def _with_usage(request: JudgeRequest, completion: Completion) -> Completion:
        """Fill in estimated usage when the output did not bring its own, so accounting
        can be tested without a provider."""
        if completion.tokens_in or completion.tokens_out:
            return completion
        return Completion(
            text=completion.text,
            tokens_in=estimate_tokens(request.prompt_chars()),
            tokens_out=estimate_tokens(len(completion.text)),
            finish_reason=completion.finish_reason or "stop",
            model=completion.model,
            structured=completion.structured,
            refusal=completion.refusal,
        )
