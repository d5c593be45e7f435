"""Anthropic's Message Batches: ``POST /v1/messages/batches`` with ``{"requests":
[{"custom_id", "params"}, ...]}`` (``params`` is the body an interactive call sends), then
``GET .../{id}`` until ``processing_status`` is ``ended``, then the JSONL at ``results_url``:
``{"custom_id", "result": {"type": "succeeded", "message"} | {"type": "errored", "error"} |
{"type": "canceled"} | {"type": "expired"}}``.  A batch holds at most 100,000 requests and
256 MB.  ``custom_id`` must match ``^[a-zA-Z0-9_-]{1,64}$``: respeval's are the 64-hex
cache keys.

Message batches carry no metadata, so a run killed between sending a batch and recording
its id finds it again among the batches created since it started sending, by request
count, skipping batches already recorded for other jobs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import httpx

from respeval.judge.errors import TransientError
from respeval.judge.models._http import api_url, json_object, send_as, with_query
from respeval.judge.models.base import JudgeRequest, loads_response
from respeval.judge.models.batching import (
    CANCELLED,
    ERRORED,
    EXPIRED,
    SUCCEEDED,
    BatchResult,
    RemoteBatch,
    batch_basics,
    error_text,
    timestamp,
)

if TYPE_CHECKING:
    from respeval.judge.models.anthropic import AnthropicModel

__all__ = ["AnthropicBatchClient"]

MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024 * 1024
_FIND_SLACK = 120.0  # seconds of clock skew tolerated when matching by creation time


class AnthropicBatchClient:
    """The Message Batches API behind an :class:`~respeval.judge.models.anthropic.AnthropicModel`."""

    provider = "anthropic"

    def __init__(
        self,
        model: AnthropicModel,
        *,
        max_requests: int = MAX_REQUESTS,
        max_bytes: int = MAX_BYTES,
        timeout: float | None = 600.0,
    ) -> None:
        self.model = model
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self._timeout = timeout
        self._where = f"{model.endpoint} (message batches)"

    def _url(self, path: str) -> httpx.URL:
        route, _, query = path.partition("?")
        return with_query(api_url(self.model.base_url, "/v1/messages/batches" + route, unless_endswith="/v1"), query)

    async def _call(self, method: str, url: httpx.URL, content: bytes = b"") -> bytes:
        headers = self.model.request_headers()
        if not content:
            headers.pop("content-type", None)
        return await send_as(self.model, method, url, headers, content, timeout=self._timeout, where=self._where)

    async def _json(self, method: str, path: str, content: bytes = b"") -> dict[str, Any]:
        return json_object(await self._call(method, self._url(path), content), self._where)

    def line(self, custom_id: str, request: JudgeRequest) -> bytes:
        record = {"custom_id": custom_id, "params": self.model.build_body(request)}
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"

    async def prepare(self, job: str, lines: Sequence[bytes]) -> str | None:
        return None  # the requests travel in the submission itself

    async def submit(self, job: str, handle: str | None, lines: Sequence[bytes]) -> RemoteBatch:
        body = b'{"requests":[' + b",".join(line.rstrip(b"\n") for line in lines) + b"]}"
        return self._batch(await self._json("POST", "", body))

    async def find(self, job: str, *, since: float, count: int, claimed: frozenset[str]) -> RemoteBatch | None:
        candidates: list[RemoteBatch] = []
        after: str | None = None
        while True:
            data = await self._json("GET", "?limit=100" + (f"&after_id={after}" if after else ""))
            items = [i for i in data.get("data") or [] if isinstance(i, dict)]
            batches = [self._batch(i) for i in items]
            candidates.extend(
                b for b in batches if b.id not in claimed and b.total == count and b.created_at >= since - _FIND_SLACK
            )
            if not data.get("has_more") or not batches or min(b.created_at for b in batches) < since - _FIND_SLACK:
                break
            after = batches[-1].id
        if not candidates:
            return None
        # the earliest one created after the submission started (several: another process's)
        return min(candidates, key=lambda b: abs(b.created_at - since))

    async def retrieve(self, remote_id: str) -> RemoteBatch:
        return self._batch(await self._json("GET", f"/{remote_id}"))

    async def cancel(self, remote_id: str) -> RemoteBatch:
        return self._batch(await self._json("POST", f"/{remote_id}/cancel"))

    async def recent(self, limit: int = 100) -> list[RemoteBatch]:
        data = await self._json("GET", f"?limit={limit}")
        return [self._batch(i) for i in data.get("data") or [] if isinstance(i, dict)]

    async def results(self, remote: RemoteBatch) -> list[BatchResult]:
        # The key goes only where the model's own calls go: a results_url on another host is
        # not followed (the same path on the base URL serves the same results).
        target = self._url(f"/{remote.id}/results")
        url = remote.raw.get("results_url")
        if isinstance(url, str) and url:
            given = httpx.URL(url)
            if (given.scheme, given.host, given.port) == (target.scheme, target.host, target.port):
                target = given
        content = await self._call("GET", target)
        out = []
        for number, raw in enumerate(content.splitlines(), 1):
            if raw.strip():
                out.append(self._result(raw, f"results of {remote.id} line {number}"))
        return out

    def _result(self, raw: bytes, where: str) -> BatchResult:
        try:
            item = loads_response(raw)  # a key twice in a tool-use verdict stays visible
            custom_id = item["custom_id"]
            result = item["result"]
            kind = result["type"]
        except (ValueError, KeyError, TypeError):
            return BatchResult(custom_id="", kind=ERRORED, error=f"unreadable result line ({where})")
        if not isinstance(custom_id, str):
            return BatchResult(custom_id="", kind=ERRORED, error=f"result line without a custom_id ({where})")
        if kind == "succeeded":
            try:
                return BatchResult(custom_id, SUCCEEDED, completion=self.model.parse_response(result.get("message")))
            except TransientError as exc:
                return BatchResult(custom_id, ERRORED, error=str(exc))
        if kind == "expired":
            return BatchResult(custom_id, EXPIRED, error="expired: the batch ended before this request ran")
        if kind == "canceled":
            return BatchResult(custom_id, CANCELLED, error="canceled: the batch was cancelled before this request ran")
        return BatchResult(custom_id, ERRORED, error=error_text(result.get("error")))

    def _batch(self, data: dict[str, Any]) -> RemoteBatch:
        batch_id, status, counts = batch_basics(data, "processing_status", self._where)
        return RemoteBatch(
            id=batch_id,
            status=status,
            ended=status == "ended",
            created_at=timestamp(data.get("created_at")),
            counts=counts,
            total=sum(counts.values()),
            raw=data,
        )
