"""The providers' batch APIs, faked on the test server: OpenAI's files + batches and
Anthropic's message batches, following their documented wire formats.

Mounted by :mod:`_helpers.judge_server` (``JudgeServer(batch_api=BatchAPI(...))``, or
``spawn_server(batch_api={...})`` for a subprocess); it answers

OpenAI      ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files``,
            ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
            ``GET /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``
Anthropic   ``POST /v1/messages/batches``, ``GET /v1/messages/batches``,
            ``GET /v1/messages/batches/{id}``, ``POST .../{id}/cancel``, ``GET .../{id}/results``

A batch moves through its statuses with time (``seconds`` from creation to its end:
OpenAI ``validating -> in_progress -> finalizing -> completed``, Anthropic ``in_progress ->
ended``).  Its requests are answered by the chat server's responder when it ends, with
dials for what goes wrong: ``error_rate`` (per-request errors, decided per request from
the seed, its request (:func:`request_of` its ``custom_id``) and how often it was submitted before, so a resent request can
succeed), ``expire`` (ordinals of batches that expire, with ``expire_fraction`` of their
requests never run), ``upload_delay`` / ``submit_delay`` / ``download_delay`` (the server
holds its answer after acting, so a client killed in between has to find the file or the
batch it created), ``drop_submits`` (the first N batch creations are lost in transit: no
batch is created and the connection is closed without an answer), ``list_files`` (False: ``GET /v1/files`` answers 404, as OpenAI-compatible
servers without that route do), and the providers' per-batch limits.  Anthropic requests that force a
tool call get a ``tool_use`` block unless ``ignore_schema`` is set.

Everything submitted is recorded (``submissions``: the custom_ids of each batch created,
and the requests they stand for, :func:`request_of`), so tests can check that no request
was submitted twice.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_MAX_BYTES = 256 * 1024 * 1024
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def tokens(chars: int) -> int:
    return chars // 4 + 1


_MARKED = re.compile(r"^r[0-9a-f]{24}_([0-9a-f]+)$")


def request_of(custom_id: str) -> str:
    """The request a ``custom_id`` stands for, whichever batch (job) it went out in: respeval
    marks each with its job (``r<job>_<cache key prefix>``), so the same request resent in
    another batch has another custom_id; tests count requests, not ids."""
    match = _MARKED.match(custom_id)
    return match.group(1) if match else custom_id


@dataclass
class BatchPlan:
    """The dials (see the module docstring); JSON-serialisable for the subprocess server."""

    seconds: float = 0.0
    error_rate: float = 0.0
    error_status: int = 500
    expire: tuple[int, ...] = ()
    expire_fraction: float = 0.5
    upload_delay: float = 0.0
    submit_delay: float = 0.0
    download_delay: float = 0.0
    openai_max_requests: int = OPENAI_MAX_REQUESTS
    openai_max_bytes: int = OPENAI_MAX_BYTES
    anthropic_max_requests: int = ANTHROPIC_MAX_REQUESTS
    anthropic_max_bytes: int = ANTHROPIC_MAX_BYTES
    ignore_schema: bool = False
    drop_submits: int = 0  # the first N batch creations are dropped in transit: no batch, the connection closed
    list_files: bool = True  # False: GET /v1/files is 404 "no route", as some OpenAI-compatible servers answer
    seed: int = 0

    def __post_init__(self) -> None:
        self.expire = tuple(self.expire)


@dataclass
class _Batch:
    id: str
    provider: str
    ordinal: int
    created: float
    lines: list[dict[str, Any]]
    input_file_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    cancelled_at: float | None = None
    failed: str | None = None
    results: list[dict[str, Any]] | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None


def openai_reply(body: dict[str, Any], content: str, index: str) -> dict[str, Any]:
    prompt = sum(len(m.get("content") or "") for m in body.get("messages") or [])
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": tokens(prompt),
            "completion_tokens": tokens(len(content)),
            "total_tokens": tokens(prompt) + tokens(len(content)),
        },
    }


def anthropic_reply(body: dict[str, Any], content: str, index: str, *, honour_tools: bool = True) -> dict[str, Any]:
    prompt = sum(len(m.get("content") or "") for m in body.get("messages") or []) + len(body.get("system") or "")
    choice = body.get("tool_choice")
    tool = choice.get("name") if isinstance(choice, dict) and choice.get("type") == "tool" else None
    verdict = None
    if tool and honour_tools:
        try:
            verdict = json.loads(content)
        except ValueError:
            verdict = None
    if isinstance(verdict, dict):
        blocks: list[dict[str, Any]] = [{"type": "tool_use", "id": f"toolu_{index}", "name": tool, "input": verdict}]
        stop = "tool_use"
    else:
        blocks = [{"type": "text", "text": content}]
        stop = "end_turn"
    return {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": blocks,
        "stop_reason": stop,
        "usage": {"input_tokens": tokens(prompt), "output_tokens": tokens(len(content))},
    }


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1e6):06d}Z"


class BatchAPI:
    """The fake batch endpoints (see the module docstring)."""

    def __init__(
        self,
        plan: BatchPlan | None = None,
        *,
        responder: Callable[[Any], str] | None = None,
        api_key: str | None = None,
        **dials: Any,
    ) -> None:
        self.plan = plan or BatchPlan(**dials)
        self.responder = responder or (
            lambda body: json.dumps({"reasoning": "batch judge", "score": 1.0, "pass": True})
        )
        self.api_key = api_key
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, _Batch] = {}
        self.ordinals: Counter[str] = Counter()
        self.submitted: Counter[str] = Counter()  # custom_id -> times submitted
        self.submissions: list[dict[str, Any]] = []
        self.nth: dict[str, dict[str, int]] = {}
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ routing

    @staticmethod
    def handles(path: str) -> bool:
        route = path.split("?", 1)[0]
        return bool(re.search(r"/v1/(files|batches|messages/batches)(/|$)", route))

    async def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, bytes, str]:
        """(status, body, content type); status 0: close the connection without an answer."""
        route, _, query = path.partition("?")
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        anthropic = "/messages/batches" in route
        if method == "POST" and re.search(r"/v1/(batches|messages/batches)$", route) and self.plan.drop_submits > 0:
            with self.lock:
                self.plan.drop_submits -= 1
                self.calls["dropped submit"] += 1
            return 0, b"", ""
        self.calls[f"{method} {re.sub(r'/(file|batch|msgbatch)_[0-9a-z]+', '/{id}', route)}"] += 1
        if self.api_key is not None:
            sent = headers.get("x-api-key") if anthropic else headers.get("authorization")
            if sent != (self.api_key if anthropic else f"Bearer {self.api_key}"):
                return self._error(401, "invalid x-api-key" if anthropic else "Incorrect API key provided", anthropic)
        try:
            if anthropic:
                return await self._anthropic(method, route, params, headers, raw)
            return await self._openai(method, route, params, headers, raw)
        except _HTTPError as exc:
            return self._error(exc.status, exc.message, anthropic)

    @staticmethod
    def _error(status: int, message: str, anthropic: bool) -> tuple[int, bytes, str]:
        if anthropic:
            body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        else:
            body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        return status, json.dumps(body).encode(), "application/json"

    @staticmethod
    def _ok(data: Any) -> tuple[int, bytes, str]:
        return 200, json.dumps(data).encode(), "application/json"

    # ------------------------------------------------------------------ OpenAI

    async def _openai(
        self, method: str, route: str, params: dict[str, str], headers: dict[str, str], raw: bytes
    ) -> tuple[int, bytes, str]:
        tail = route.split("/v1", 1)[1]
        parts = [p for p in tail.split("/") if p]
        if parts[0] == "files":
            if method == "POST" and len(parts) == 1:
                return await self._upload(headers, raw)
            if method == "GET" and len(parts) == 1:
                if not self.plan.list_files:
                    raise _HTTPError(404, "no route")
                data = [
                    self._file_object(f) for f in self.files.values() if params.get("purpose", "batch") == f["purpose"]
                ]
                data.sort(key=lambda f: f["created_at"], reverse=params.get("order", "desc") == "desc")
                return self._ok({"object": "list", "data": data, "has_more": False})
            file = self.files.get(parts[1]) if len(parts) > 1 else None
            if file is None:
                raise _HTTPError(404, f"No such File object: {parts[1] if len(parts) > 1 else ''}")
            if method == "GET" and len(parts) == 2:
                return self._ok(self._file_object(file))
            if method == "GET" and parts[2:] == ["content"]:
                if self.plan.download_delay:
                    await asyncio.sleep(self.plan.download_delay)
                return 200, file["content"], "application/octet-stream"
        if parts[0] == "batches":
            if method == "POST" and len(parts) == 1:
                return await self._create_openai(raw)
            if method == "GET" and len(parts) == 1:
                return self._ok(self._list("openai", params, self._openai_object, cursor="after"))
            batch = self.batches.get(parts[1]) if len(parts) > 1 else None
            if batch is None or batch.provider != "openai":
                raise _HTTPError(404, f"No batch found with id '{parts[1] if len(parts) > 1 else ''}'.")
            if method == "GET" and len(parts) == 2:
                return self._ok(self._openai_object(batch))
            if method == "POST" and parts[2:] == ["cancel"]:
                self._cancel(batch)
                return self._ok(self._openai_object(batch))
        raise _HTTPError(404, f"unknown route {method} {route}")

    async def _upload(self, headers: dict[str, str], raw: bytes) -> tuple[int, bytes, str]:
        match = re.search(r"boundary=([^;]+)", headers.get("content-type", ""))
        if match is None:
            raise _HTTPError(400, "expected multipart/form-data")
        boundary = b"--" + match.group(1).strip('"').encode()
        fields: dict[str, Any] = {}
        for part in raw.split(boundary)[1:]:
            if part.startswith(b"--"):
                break
            head, _, body = part.partition(b"\r\n\r\n")
            body = body[:-2] if body.endswith(b"\r\n") else body
            name = re.search(rb'name="([^"]*)"', head)
            filename = re.search(rb'filename="([^"]*)"', head)
            if name is not None:
                fields[name.group(1).decode()] = (filename.group(1).decode() if filename else None, body)
        if "file" not in fields or "purpose" not in fields:
            raise _HTTPError(400, "'file' and 'purpose' are required")
        purpose = fields["purpose"][1].decode()
        if purpose != "batch":
            raise _HTTPError(400, f"purpose must be batch here, got {purpose!r}")
        filename, content = fields["file"]
        file_id = f"file_{uuid.uuid4().hex[:20]}"
        with self.lock:
            self.files[file_id] = {
                "id": file_id,
                "filename": filename or "upload.jsonl",
                "bytes": len(content),
                "created_at": int(time.time()),
                "purpose": "batch",
                "content": content,
            }
        if self.plan.upload_delay:
            await asyncio.sleep(self.plan.upload_delay)  # stored, but the client does not know yet
        return self._ok(self._file_object(self.files[file_id]))

    @staticmethod
    def _file_object(file: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": file["id"],
            "object": "file",
            "bytes": file["bytes"],
            "created_at": file["created_at"],
            "filename": file["filename"],
            "purpose": file["purpose"],
            "status": "processed",
        }

    async def _create_openai(self, raw: bytes) -> tuple[int, bytes, str]:
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise _HTTPError(400, "body is not JSON") from exc
        for name in ("input_file_id", "endpoint", "completion_window"):
            if name not in body:
                raise _HTTPError(400, f"Missing required parameter: '{name}'.")
        if body["endpoint"] != "/v1/chat/completions" or body["completion_window"] != "24h":
            raise _HTTPError(400, "endpoint must be /v1/chat/completions and completion_window 24h here")
        file = self.files.get(body["input_file_id"])
        if file is None:
            raise _HTTPError(400, f"No such File object: {body['input_file_id']}")
        metadata = body.get("metadata") or {}
        if not isinstance(metadata, dict) or len(metadata) > 16:
            raise _HTTPError(400, "metadata: at most 16 string pairs")
        lines, problem = [], None
        seen: set[str] = set()
        for number, line in enumerate(file["content"].splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                problem = f"line {number}: not JSON"
                break
            if (
                item.get("method") != "POST"
                or item.get("url") != body["endpoint"]
                or not isinstance(item.get("body"), dict)
            ):
                problem = f"line {number}: method must be POST and url {body['endpoint']}"
                break
            if not isinstance(item.get("custom_id"), str) or item["custom_id"] in seen:
                problem = f"line {number}: custom_id missing or not unique"
                break
            seen.add(item["custom_id"])
            lines.append(item)
        if problem is None and len(lines) > self.plan.openai_max_requests:
            problem = f"{len(lines)} requests, over the limit of {self.plan.openai_max_requests}"
        if problem is None and file["bytes"] > self.plan.openai_max_bytes:
            problem = f"{file['bytes']} bytes, over the limit of {self.plan.openai_max_bytes}"
        batch = self._new_batch("openai", "batch", lines, input_file_id=file["id"], metadata=metadata)
        batch.failed = problem
        if self.plan.submit_delay:
            await asyncio.sleep(self.plan.submit_delay)  # created, but the client does not know yet
        return self._ok(self._openai_object(batch))

    def _openai_object(self, batch: _Batch) -> dict[str, Any]:
        status, done = self._progress(batch)
        if batch.failed is not None:
            status = "failed"
        elif status == "ended":
            status = self._finish(batch)
        counts = {"total": len(batch.lines), "completed": 0, "failed": 0}
        if batch.results is not None:
            counts["completed"] = sum(r["kind"] == "succeeded" for r in batch.results)
            counts["failed"] = len(batch.results) - counts["completed"]
        else:
            counts["completed"] = done
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": {"object": "list", "data": [{"code": "invalid_file", "message": batch.failed, "line": None}]}
            if batch.failed
            else None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": int(batch.created),
            "expires_at": int(batch.created + 86400),
            "cancelled_at": int(batch.cancelled_at) if batch.cancelled_at and status == "cancelled" else None,
            "request_counts": counts,
            "metadata": batch.metadata or None,
        }

    # ------------------------------------------------------------------ Anthropic

    async def _anthropic(
        self, method: str, route: str, params: dict[str, str], headers: dict[str, str], raw: bytes
    ) -> tuple[int, bytes, str]:
        if headers.get("anthropic-version") is None:
            raise _HTTPError(400, "anthropic-version header is required")
        tail = route.split("/messages/batches", 1)[1]
        parts = [p for p in tail.split("/") if p]
        if not parts:
            if method == "POST":
                return await self._create_anthropic(raw, headers)
            if method == "GET":
                return self._ok(
                    self._list("anthropic", params, lambda b: self._anthropic_object(b, headers), cursor="after_id")
                )
        batch = self.batches.get(parts[0]) if parts else None
        if batch is None or batch.provider != "anthropic":
            raise _HTTPError(404, f"batch {parts[0] if parts else ''} not found")
        if method == "GET" and len(parts) == 1:
            return self._ok(self._anthropic_object(batch, headers))
        if method == "POST" and parts[1:] == ["cancel"]:
            self._cancel(batch)
            return self._ok(self._anthropic_object(batch, headers))
        if method == "GET" and parts[1:] == ["results"]:
            if self._anthropic_object(batch, headers)["processing_status"] != "ended":
                raise _HTTPError(400, "results are available once the batch has ended")
            if self.plan.download_delay:
                await asyncio.sleep(self.plan.download_delay)
            assert batch.results is not None
            lines = [json.dumps(self._anthropic_result(r)) for r in batch.results]
            return 200, ("\n".join(lines) + "\n").encode(), "application/binary"
        raise _HTTPError(404, f"unknown route {method} {route}")

    async def _create_anthropic(self, raw: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise _HTTPError(400, "body is not JSON") from exc
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            raise _HTTPError(400, "requests: a non-empty list is required")
        if len(requests) > self.plan.anthropic_max_requests or len(raw) > self.plan.anthropic_max_bytes:
            raise _HTTPError(413, "batch over the request-count or size limit")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id) or custom_id in seen:
                raise _HTTPError(400, f"requests.{i}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$ and be unique")
            if not isinstance(item.get("params"), dict) or "max_tokens" not in item["params"]:
                raise _HTTPError(400, f"requests.{i}.params: max_tokens is required")
            seen.add(custom_id)
        batch = self._new_batch(
            "anthropic", "msgbatch", [{"custom_id": r["custom_id"], "body": r["params"]} for r in requests]
        )
        if self.plan.submit_delay:
            await asyncio.sleep(self.plan.submit_delay)
        return self._ok(self._anthropic_object(batch, headers))

    def _anthropic_object(self, batch: _Batch, headers: dict[str, str]) -> dict[str, Any]:
        status, done = self._progress(batch)
        counts = {"processing": len(batch.lines) - done, "succeeded": done, "errored": 0, "canceled": 0, "expired": 0}
        ended_at = None
        if status == "ended":
            self._finish(batch)
            assert batch.results is not None
            kinds = Counter(r["kind"] for r in batch.results)
            counts = {
                "processing": 0,
                "succeeded": kinds["succeeded"],
                "errored": kinds["errored"],
                "canceled": kinds["cancelled"],
                "expired": kinds["expired"],
            }
            ended_at = _iso(batch.created + self.plan.seconds)
        elif batch.cancelled_at is not None:
            status = "canceling"
        host = headers.get("host", "127.0.0.1")
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "ended_at": ended_at,
            "created_at": _iso(batch.created),
            "expires_at": _iso(batch.created + 86400),
            "archived_at": None,
            "cancel_initiated_at": _iso(batch.cancelled_at) if batch.cancelled_at else None,
            "results_url": f"http://{host}/v1/messages/batches/{batch.id}/results" if status == "ended" else None,
        }

    @staticmethod
    def _anthropic_result(result: dict[str, Any]) -> dict[str, Any]:
        kind = result["kind"]
        if kind == "succeeded":
            return {"custom_id": result["custom_id"], "result": {"type": "succeeded", "message": result["reply"]}}
        if kind == "errored":
            error = {"type": "error", "error": {"type": "api_error", "message": result["message"]}}
            return {"custom_id": result["custom_id"], "result": {"type": "errored", "error": error}}
        return {"custom_id": result["custom_id"], "result": {"type": "canceled" if kind == "cancelled" else "expired"}}

    # ------------------------------------------------------------------ shared

    def _new_batch(self, provider: str, prefix: str, lines: list[dict[str, Any]], **extra: Any) -> _Batch:
        with self.lock:
            ordinal = self.ordinals[provider]
            self.ordinals[provider] += 1
            batch = _Batch(
                id=f"{prefix}_{uuid.uuid4().hex[:24]}",
                provider=provider,
                ordinal=ordinal,
                created=time.time(),
                lines=lines,
                **extra,
            )
            self.batches[batch.id] = batch
            ids = [line["custom_id"] for line in lines]
            requests = [request_of(cid) for cid in ids]
            self.submissions.append({"provider": provider, "id": batch.id, "custom_ids": ids, "requests": requests})
            self.nth[batch.id] = {cid: self.submitted[request_of(cid)] for cid in ids}  # earlier submissions of each
            self.submitted.update(requests)
        return batch

    def _progress(self, batch: _Batch) -> tuple[str, int]:
        """The status a batch has reached by now, and how many requests are done."""
        seconds = self.plan.seconds
        elapsed = time.time() - batch.created
        if batch.cancelled_at is not None or elapsed >= seconds:
            return "ended", len(batch.lines)
        share = elapsed / seconds
        done = int(len(batch.lines) * min(1.0, share / 0.9))
        if batch.provider == "anthropic":
            return "in_progress", done
        if share < 0.1:
            return "validating", 0
        return ("in_progress" if share < 0.9 else "finalizing"), done

    def _cancel(self, batch: _Batch) -> None:
        if batch.results is None and batch.cancelled_at is None:
            batch.cancelled_at = time.time()

    def _finish(self, batch: _Batch) -> str:
        """Answer (once) every request of an ended batch; its final status."""
        expiring = batch.ordinal in self.plan.expire and batch.cancelled_at is None
        if batch.results is None:
            plan = self.plan
            results = []
            elapsed = (batch.cancelled_at or time.time()) - batch.created
            cancelled_share = min(1.0, elapsed / plan.seconds) if plan.seconds else 0.0
            nth = self.nth.get(batch.id, {})
            for position, line in enumerate(batch.lines):
                custom_id = line["custom_id"]
                rng = random.Random(f"{plan.seed}:{request_of(custom_id)}:{nth.get(custom_id, 0)}")
                roll, fate = rng.random(), rng.random()
                if batch.cancelled_at is not None and position >= cancelled_share * len(batch.lines):
                    results.append({"custom_id": custom_id, "kind": "cancelled"})
                elif expiring and fate < plan.expire_fraction:
                    results.append({"custom_id": custom_id, "kind": "expired"})
                elif roll < plan.error_rate:
                    results.append(
                        {
                            "custom_id": custom_id,
                            "kind": "errored",
                            "status": plan.error_status,
                            "message": f"injected per-request error {plan.error_status}",
                        }
                    )
                else:
                    content = self.responder(line["body"])
                    index = uuid.uuid4().hex[:12]
                    if batch.provider == "anthropic":
                        reply = anthropic_reply(line["body"], content, index, honour_tools=not plan.ignore_schema)
                    else:
                        reply = openai_reply(line["body"], content, index)
                    results.append({"custom_id": custom_id, "kind": "succeeded", "reply": reply})
            random.Random(f"{plan.seed}:{batch.id}").shuffle(results)  # results come in any order
            batch.results = results
            if batch.provider == "openai":
                self._write_openai_files(batch)
        if batch.provider == "anthropic":
            return "ended"
        if batch.cancelled_at is not None:
            return "cancelled"
        return "expired" if expiring else "completed"

    def _write_openai_files(self, batch: _Batch) -> None:
        assert batch.results is not None
        output, errors = [], []
        for r in batch.results:
            line: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": r["custom_id"]}
            if r["kind"] == "succeeded":
                line.update(
                    response={"status_code": 200, "request_id": uuid.uuid4().hex, "body": r["reply"]}, error=None
                )
                output.append(line)
            elif r["kind"] == "errored":
                body = {"error": {"message": r["message"], "type": "server_error", "code": None}}
                line.update(
                    response={"status_code": r["status"], "request_id": uuid.uuid4().hex, "body": body}, error=None
                )
                errors.append(line)
            else:
                code = "batch_expired" if r["kind"] == "expired" else "batch_cancelled"
                message = (
                    "This request could not be executed before the completion window expired."
                    if r["kind"] == "expired"
                    else "This request was not executed: the batch was cancelled."
                )
                line.update(response=None, error={"code": code, "message": message})
                errors.append(line)
        for kind, lines in (("output", output), ("error", errors)):
            if not lines:
                continue
            file_id = f"file_{uuid.uuid4().hex[:20]}"
            content = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
            self.files[file_id] = {
                "id": file_id,
                "filename": f"{batch.id}_{kind}.jsonl",
                "bytes": len(content),
                "created_at": int(time.time()),
                "purpose": "batch_output",
                "content": content,
            }
            if kind == "output":
                batch.output_file_id = file_id
            else:
                batch.error_file_id = file_id

    def _list(
        self, provider: str, params: dict[str, str], render: Callable[[_Batch], dict[str, Any]], *, cursor: str
    ) -> dict[str, Any]:
        batches = sorted(
            (b for b in self.batches.values() if b.provider == provider), key=lambda b: b.created, reverse=True
        )
        after = params.get(cursor)
        if after:
            ids = [b.id for b in batches]
            batches = batches[ids.index(after) + 1 :] if after in ids else []
        limit = int(params.get("limit", "20"))
        page = batches[:limit]
        data = [render(b) for b in page]
        out: dict[str, Any] = {"data": data, "has_more": len(batches) > limit}
        if provider == "openai":
            out.update(object="list", first_id=page[0].id if page else None, last_id=page[-1].id if page else None)
        else:
            out.update(first_id=page[0].id if page else None, last_id=page[-1].id if page else None)
        return out

    # ------------------------------------------------------------------ for tests

    def stats(self) -> dict[str, Any]:
        with self.lock:
            submissions = [dict(s) for s in self.submissions]
        return {
            "calls": dict(self.calls),
            "batches": len(submissions),
            "requests": sum(len(s["custom_ids"]) for s in submissions),
            "submissions": submissions,
            "plan": asdict(self.plan),
        }


class _HTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
