"""Embedding models, through the judge's transport and cache: an OpenAI-compatible
``POST {base_url}/embeddings`` (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, TEI's OpenAI
route) or any Python callable ``texts -> vectors``.

:func:`aembed` (and :func:`embed`) embed many texts: repeated texts once, every text's
vector looked up in the judge cache first (:class:`~respeval.judge.cache.JudgeCache`: the
same file, keyed by the embedder's identity and the text, so a rerun pays for nothing
twice), the misses sent in batches of ``batch_size`` with the judge engine's retry rules
(transient errors, a 429's ``Retry-After``, seeded exponential backoff).  A vector is stored
as the JSON of its floats, which reads back bit for bit.

Model strings (:func:`load_embedder`): ``openai:MODEL`` (``base_url`` for a local server;
key from ``OPENAI_API_KEY``, none sent when unset), ``python:module:function`` (the
function's code fingerprint is its identity, or ``@VERSION``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Union, runtime_checkable

import httpx
import numpy as np

from respeval._sync import run_sync
from respeval._targets import load_target
from respeval.fingerprint import CodeFingerprint, code_fingerprint, process_token, split_version
from respeval.judge.cache import JudgeCache, KeyMaker
from respeval.judge.errors import FatalError, JudgeError, TransientError
from respeval.judge.limits import backoff_delay, jitter_unit
from respeval.judge.models._http import HttpJudgeModel, token_count
from respeval.judge.models.base import Capabilities, Completion, JudgeRequest, Message

__all__ = [
    "EMBEDDING_VERSION",
    "CallableEmbeddings",
    "EmbedStats",
    "Embedder",
    "EmbeddingOptions",
    "OpenAIEmbeddings",
    "aembed",
    "cosine",
    "embed",
    "load_embedder",
]

EMBEDDING_VERSION = "embedding/v1"
"""The cache key's template version of an embedding (a text is a one-message request)."""


@runtime_checkable
class Embedder(Protocol):
    """What :func:`aembed` needs of an embedding model."""

    @property
    def model_id(self) -> str: ...

    def identity(self) -> dict[str, Any]:
        """Everything that changes a vector (provider, model, endpoint, dimensions, code)."""

    async def embed_batch(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        """One call: a vector per text, in order, and the input tokens it used."""

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None: ...


def _vectors(data: Any, n: int, where: str) -> list[list[float]]:
    """The ``data`` of an embeddings response as ``n`` vectors of one length (else a
    malformed response, retried like one)."""

    def bad(what: str) -> TransientError:
        return TransientError(f"malformed embeddings response from {where}: {what}", kind="malformed_response")

    items = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(items, list) or len(items) != n:
        raise bad(f"expected {n} items in 'data', got {len(items) if isinstance(items, list) else 'none'}")
    out: list[list[float] | None] = [None] * n
    for k, item in enumerate(items):
        index = item.get("index", k) if isinstance(item, Mapping) else None
        vector = item.get("embedding") if isinstance(item, Mapping) else None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n or out[index] is not None:
            raise bad(f"item {k} has no valid index")
        if not isinstance(vector, list) or not vector:
            raise bad(f"item {k} has no embedding (base64 embeddings are not requested)")
        values = []
        for x in vector:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise bad(f"item {k}: an embedding value is {x!r}")
            values.append(float(x))
        out[index] = values
    dims = {len(v) for v in out if v is not None}
    if len(dims) != 1:
        raise bad(f"vectors of different lengths {sorted(dims)}")
    return [v for v in out if v is not None]


class OpenAIEmbeddings(HttpJudgeModel):
    """``POST {base_url}/embeddings`` in OpenAI's wire format: ``{"model", "input": [texts],
    "encoding_format": "float"[, "dimensions"]}`` -> ``{"data": [{"index", "embedding"}],
    "usage": {"prompt_tokens"}}``.  The key, base URL and headers work as for
    :class:`~respeval.judge.models.openai.OpenAIChatModel` (secrets never in the cache)."""

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str = "OPENAI_API_KEY",
        dimensions: int | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | None = 60.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        if dimensions is not None and (isinstance(dimensions, bool) or dimensions < 1):
            raise ValueError(f"dimensions must be a positive whole number, got {dimensions!r}")
        super().__init__(
            model,
            base_url=base_url,
            path="/embeddings",
            api_key_env=api_key_env,
            capabilities=Capabilities(),
            transport=transport,
            timeout=timeout,
            headers=headers,
        )
        self.dimensions = dimensions

    default_headers = {"content-type": "application/json", "accept": "application/json"}

    def auth_headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"authorization": f"Bearer {key}"} if key else {}

    def _identity_extra(self) -> dict[str, Any]:
        return {"adapter": "openai-embeddings/1", "dimensions": self.dimensions}

    async def generate(self, request: JudgeRequest) -> Completion:
        raise JudgeError(f"{self.model_id} is an embedding model: it does not answer judge requests")

    async def embed_batch(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        body: dict[str, Any] = {"model": self.name, "input": list(texts), "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        data = await self.post(body, defaults=self.default_headers, auth=self.auth_headers())
        usage = data.get("usage") if isinstance(data, Mapping) else None
        tokens = token_count(usage.get("prompt_tokens")) if isinstance(usage, Mapping) else 0
        return _vectors(data, len(texts), self.endpoint), tokens


EmbedResult = Union[Sequence[Sequence[float]], np.ndarray]
EmbedFunction = Callable[[list[str]], Union[EmbedResult, Awaitable[EmbedResult]]]


class CallableEmbeddings:
    """``fn(texts) -> vectors`` (a list of lists of floats or a 2-D array; sync or async) as
    an embedding model.  Its identity is its code's fingerprint (:mod:`respeval.fingerprint`),
    or ``version``: bump it when the function's vectors change.  Code whose sameness cannot
    be proven is cached for this process only.  It raises
    :class:`~respeval.judge.errors.TransientError` to be retried; anything else stops."""

    provider = "python"

    def __init__(self, fn: EmbedFunction, *, name: str | None = None, version: str | None = None) -> None:
        self._fn = fn
        self.name = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        self.code: CodeFingerprint = code_fingerprint(fn, version=version)

    @property
    def model_id(self) -> str:
        return f"python:{self.name}"

    def identity(self) -> dict[str, Any]:
        code = self.code.digest if self.code.proven else f"this-process-only:{process_token(self._fn)}"
        return {"provider": "python", "model": self.name, "kind": "embeddings", "code": code}

    async def embed_batch(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        try:
            result = self._fn(list(texts))
            if inspect.isawaitable(result):
                result = await result
        except (TransientError, FatalError):
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code: a bug there stops the run
            raise FatalError(f"{self.model_id} raised {type(exc).__name__}: {exc}") from None
        rows = np.asarray(result, dtype=np.float64) if not isinstance(result, np.ndarray) else result
        if rows.ndim != 2 or rows.shape[0] != len(texts) or rows.shape[1] == 0:
            raise FatalError(f"{self.model_id} returned shape {rows.shape}; expected ({len(texts)}, dimensions)")
        if not np.isfinite(rows).all():
            raise FatalError(f"{self.model_id} returned a value that is not finite")
        return rows.astype(np.float64).tolist(), 0

    async def __aenter__(self) -> CallableEmbeddings:
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        return None


def _load_function(spec: str, target: str) -> Any:
    return load_target(target, f"embedding model {spec!r}", expected="python:module:function")


def load_embedder(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    dimensions: int | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Embedder:
    """The embedding model a string names: ``openai:MODEL`` or ``python:module:function``
    (``@VERSION`` optional)."""
    provider, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ValueError(f"embedding model {spec!r}: expected openai:MODEL or python:module:function")
    if provider == "openai":
        kwargs: dict[str, Any] = {"api_key_env": api_key_env or "OPENAI_API_KEY", "dimensions": dimensions}
        if base_url:
            kwargs["base_url"] = base_url
        return OpenAIEmbeddings(rest, transport=transport, **kwargs)
    if provider == "python":
        if base_url is not None:
            raise ValueError("base_url applies to openai: embedding models, not python:")
        target, version = split_version(rest)
        return CallableEmbeddings(_load_function(spec, target), name=target, version=version)
    raise ValueError(f"embedding model {spec!r}: unknown provider {provider!r}; expected openai or python")


@dataclass(frozen=True)
class EmbeddingOptions:
    """How :func:`aembed` calls the model: texts per call, calls in flight, retries (the
    judge engine's backoff rules), and the longest ``Retry-After`` honoured."""

    batch_size: int = 64
    concurrency: int = 4
    max_retries: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_retry_after: float = 300.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.concurrency < 1 or self.max_retries < 0:
            raise ValueError("batch_size and concurrency must be at least 1, max_retries at least 0")


@dataclass
class EmbedStats:
    """What one :func:`aembed` call did."""

    texts: int = 0
    unique: int = 0
    cache_hits: int = 0
    calls: int = 0
    retries: int = 0
    tokens_in: int = 0

    def add(self, other: EmbedStats) -> None:
        for name in ("texts", "unique", "cache_hits", "calls", "retries", "tokens_in"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_json(self) -> dict[str, int]:
        return dict(vars(self))


def _request(text: str) -> JudgeRequest:
    return JudgeRequest(messages=(Message("user", text),), template_version=EMBEDDING_VERSION)


async def _call(embedder: Embedder, texts: Sequence[str], options: EmbeddingOptions, stats: EmbedStats) -> Any:
    attempt = 0
    while True:
        try:
            stats.calls += 1
            return await embedder.embed_batch(texts)
        except TransientError as exc:
            if attempt >= options.max_retries:
                raise TransientError(
                    f"{embedder.model_id}: gave up after {attempt + 1} attempts: {exc}", kind=exc.kind
                ) from None
            wait = backoff_delay(
                attempt,
                base=options.backoff_base,
                cap=options.backoff_max,
                unit=jitter_unit(options.seed, "embeddings:" + texts[0], attempt),
                retry_after=exc.retry_after,
                max_retry_after=options.max_retry_after,
            )
            attempt += 1
            stats.retries += 1
            await asyncio.sleep(wait)


async def aembed(
    texts: Sequence[str],
    embedder: Embedder,
    *,
    cache: JudgeCache | None = None,
    options: EmbeddingOptions | None = None,
) -> tuple[np.ndarray, EmbedStats]:
    """The vectors of ``texts`` (rows of a float64 array, in order) and what it took (see the
    module docstring).  The embedder must be open (``async with embedder``).  A call that
    keeps failing raises :class:`~respeval.judge.errors.TransientError`; a fatal one
    :class:`~respeval.judge.errors.FatalError`."""
    opts = options or EmbeddingOptions()
    stats = EmbedStats(texts=len(texts))
    for k, t in enumerate(texts):
        if not isinstance(t, str):
            raise ValueError(f"text {k}: expected a string, got {type(t).__name__}")
    unique = list(dict.fromkeys(texts))
    stats.unique = len(unique)
    keys = KeyMaker(embedder.identity())
    found: dict[str, list[float]] = {}
    missing: list[str] = []
    for text in unique:
        cached = cache.get(keys(_request(text))) if cache is not None else None
        if cached is not None:
            found[text] = json.loads(cached.text)
            stats.cache_hits += 1
        else:
            missing.append(text)
    batches = [missing[i : i + opts.batch_size] for i in range(0, len(missing), opts.batch_size)]
    gate = asyncio.Semaphore(opts.concurrency)

    async def one(batch: list[str]) -> None:
        async with gate:
            vectors, tokens = await _call(embedder, batch, opts, stats)
        stats.tokens_in += tokens
        share = tokens // len(batch) if batch else 0
        for text, vector in zip(batch, vectors):
            found[text] = vector
            if cache is not None:
                completion = Completion(text=json.dumps(vector), tokens_in=share)
                cache.put(
                    keys(_request(text)),
                    completion,
                    model=embedder.model_id,
                    endpoint=str(getattr(embedder, "endpoint", "")),
                    template_version=EMBEDDING_VERSION,
                )

    await asyncio.gather(*(one(b) for b in batches))
    if not texts:
        return np.zeros((0, 0)), stats
    dims = {len(v) for v in found.values()}
    if len(dims) != 1:
        raise FatalError(f"{embedder.model_id} gave vectors of different lengths {sorted(dims)}")
    return np.asarray([found[t] for t in texts], dtype=np.float64), stats


def embed(
    texts: Sequence[str],
    embedder: Embedder,
    *,
    cache: JudgeCache | None = None,
    options: EmbeddingOptions | None = None,
) -> tuple[np.ndarray, EmbedStats]:
    """The synchronous :func:`aembed`; opens and closes the embedder itself."""

    async def go() -> tuple[np.ndarray, EmbedStats]:
        async with embedder:
            return await aembed(texts, embedder, cache=cache, options=options)

    return run_sync(go(), thread_name="respeval-embed")


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two arrays of vectors (NaN where a vector is zero)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"cannot compare vectors of shapes {a.shape} and {b.shape}")
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), np.nan)
