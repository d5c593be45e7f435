"""OpenAI's Batch API: the input file goes to ``POST /v1/files`` (``purpose=batch``), the
batch to ``POST /v1/batches``, results come back as output and error files.

Input lines are ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``
with the same body an interactive call sends.  Output and error lines are ``{"id",
"custom_id", "response": {"status_code", "request_id", "body"} | null, "error": {"code",
"message"} | null}``; a request the batch never ran (expired, cancelled) is in the error
file with ``batch_expired`` / ``batch_cancelled``.  A batch holds at most 50,000 requests
and a 200 MB file.

Every batch is submitted with ``metadata: {"respeval_job": JOB}`` and its file is named
``respeval-JOB.jsonl``, so a run killed between sending and recording either finds them
again instead of uploading or submitting twice.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from respeval.judge.errors import FatalError, TransientError
from respeval.judge.models._http import api_url, decode_json, json_object, send_as, with_query
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
    from respeval.judge.models.openai import OpenAIChatModel

__all__ = ["OpenAIBatchClient"]

MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024
ENDPOINT = "/v1/chat/completions"
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
_FIND_SLACK = 600.0  # seconds before the recorded submission time still searched


class OpenAIBatchClient:
    """The batch API behind an :class:`~respeval.judge.models.openai.OpenAIChatModel`
    (same base URL, key and transport; the model must be open)."""

    provider = "openai"

    def __init__(
        self,
        model: OpenAIChatModel,
        *,
        max_requests: int = MAX_REQUESTS,
        max_bytes: int = MAX_BYTES,
        completion_window: str = "24h",
        timeout: float | None = 600.0,
    ) -> None:
        self.model = model
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.completion_window = completion_window
        self._timeout = timeout
        self._where = f"{model.endpoint} (batch API)"

    # ------------------------------------------------------------------ plumbing

    async def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> bytes:
        base_headers = self.model.request_headers()
        if headers is not None:
            base_headers = {k: v for k, v in base_headers.items() if k.lower() != "content-type"}
            base_headers.update(headers)
        content = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        if body is None and raw is None:
            base_headers.pop("content-type", None)
        url = with_query(api_url(self.model.base_url, path.partition("?")[0]), path.partition("?")[2])
        return await send_as(self.model, method, url, base_headers, content, timeout=self._timeout, where=self._where)

    async def _json(self, method: str, path: str, body: Any = None) -> Any:
        return json_object(await self._call(method, path, body), self._where)

    # ------------------------------------------------------------------ lines

    def line(self, custom_id: str, request: JudgeRequest) -> bytes:
        body = self.model.build_body(request)
        record = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"

    @staticmethod
    def filename(job: str) -> str:
        return f"respeval-{job}.jsonl"

    # ------------------------------------------------------------------ submit

    async def prepare(self, job: str, lines: Sequence[bytes]) -> str | None:
        size = sum(len(line) for line in lines)
        found = await self._find_file(self.filename(job), size)
        if found is not None:
            return found
        boundary = f"respeval-{uuid.uuid4().hex}"
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{self.filename(job)}"\r\n'
            "Content-Type: application/jsonl\r\n\r\n"
        ).encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        content = b"".join([head, *lines, tail])
        data = decode_json(
            await self._call(
                "POST", "/files", raw=content, headers={"content-type": f"multipart/form-data; boundary={boundary}"}
            ),
            self._where,
        )
        file_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(file_id, str):
            raise TransientError(f"malformed response from {self._where}: no file id", kind="malformed_response")
        return file_id

    async def _find_file(self, name: str, size: int) -> str | None:
        """An earlier upload of this job's file, if the server lists files.  Listing is an
        optimisation (it saves a second upload after an interrupted one): a server without
        the route (404 "no route"), or one that refuses the query, gets the upload; only a
        refused key stops here, as the upload would stop too."""
        try:
            data = await self._json("GET", "/files?purpose=batch&limit=1000&order=desc")
        except TransientError:
            return None
        except FatalError as exc:
            if exc.status in (401, 403):
                raise
            return None
        for item in data.get("data") or []:
            if isinstance(item, dict) and item.get("filename") == name and item.get("bytes") == size:
                if item.get("status") not in ("error", "deleted") and isinstance(item.get("id"), str):
                    return str(item["id"])
        return None

    async def submit(self, job: str, handle: str | None, lines: Sequence[bytes]) -> RemoteBatch:
        if handle is None:
            raise ValueError("an OpenAI batch needs its uploaded input file (prepare first)")
        body = {
            "input_file_id": handle,
            "endpoint": ENDPOINT,
            "completion_window": self.completion_window,
            "metadata": {"respeval_job": job},
        }
        return self._batch(await self._json("POST", "/batches", body))

    async def find(self, job: str, *, since: float, count: int, claimed: frozenset[str]) -> RemoteBatch | None:
        after: str | None = None
        while True:
            data = await self._json("GET", "/batches?limit=100" + (f"&after={after}" if after else ""))
            items = [i for i in data.get("data") or [] if isinstance(i, dict)]
            for item in items:
                batch = self._batch(item)
                if batch.metadata.get("respeval_job") == job:
                    return batch
            if not data.get("has_more") or not items:
                return None
            if min(timestamp(i.get("created_at")) for i in items) < since - _FIND_SLACK:
                return None
            after = str(items[-1].get("id"))

    # ------------------------------------------------------------------ follow up

    async def retrieve(self, remote_id: str) -> RemoteBatch:
        return self._batch(await self._json("GET", f"/batches/{remote_id}"))

    async def cancel(self, remote_id: str) -> RemoteBatch:
        return self._batch(await self._json("POST", f"/batches/{remote_id}/cancel"))

    async def recent(self, limit: int = 100) -> list[RemoteBatch]:
        data = await self._json("GET", f"/batches?limit={limit}")
        return [self._batch(i) for i in data.get("data") or [] if isinstance(i, dict)]

    async def results(self, remote: RemoteBatch) -> list[BatchResult]:
        out: list[BatchResult] = []
        for field_name in ("output_file_id", "error_file_id"):
            file_id = remote.raw.get(field_name)
            if not isinstance(file_id, str) or not file_id:
                continue
            content = await self._call("GET", f"/files/{file_id}/content")
            for number, raw in enumerate(content.splitlines(), 1):
                if raw.strip():
                    out.append(self._result(raw, f"{field_name} {file_id} line {number}"))
        return out

    def _result(self, raw: bytes, where: str) -> BatchResult:
        try:
            item = loads_response(raw)
            custom_id = item["custom_id"]
        except (ValueError, KeyError, TypeError):
            return BatchResult(custom_id="", kind=ERRORED, error=f"unreadable result line ({where})")
        if not isinstance(custom_id, str):
            return BatchResult(custom_id="", kind=ERRORED, error=f"result line without a custom_id ({where})")
        response = item.get("response")
        error = item.get("error")
        if isinstance(response, dict) and response.get("status_code") == 200 and not error:
            try:
                completion = self.model.parse_response(response.get("body"))
            except TransientError as exc:
                return BatchResult(custom_id, ERRORED, error=str(exc))
            return BatchResult(custom_id, SUCCEEDED, completion=completion)
        code = error.get("code") if isinstance(error, dict) else None
        if code == "batch_expired":
            return BatchResult(custom_id, EXPIRED, error=error_text(error))
        if code == "batch_cancelled":
            return BatchResult(custom_id, CANCELLED, error=error_text(error))
        if isinstance(response, dict):
            status = response.get("status_code")
            reason = error_text(response.get("body"), default="no message")
            return BatchResult(custom_id, ERRORED, error=f"HTTP {status}: {reason}")
        return BatchResult(custom_id, ERRORED, error=error_text(error))

    def _batch(self, data: dict[str, Any]) -> RemoteBatch:
        batch_id, status, counts = batch_basics(data, "status", self._where)
        errors = data.get("errors")
        error = None
        if status == "failed":
            items = errors.get("data") if isinstance(errors, dict) else None
            error = "; ".join(error_text(e) for e in items[:3]) if items else "the batch failed validation"
        raw_metadata = data.get("metadata")
        metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
        return RemoteBatch(
            id=batch_id,
            status=status,
            ended=status in _ENDED,
            created_at=timestamp(data.get("created_at")),
            counts={k: v for k, v in counts.items() if k != "total"},
            total=counts.get("total", 0),
            error=error,
            metadata=metadata,
            raw=data,
        )
