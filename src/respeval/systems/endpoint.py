"""An agent behind an HTTP endpoint, as a model of the judge's model layer.

``POST URL`` with the contract's request object (:func:`respeval.systems.base.contract_request`)
as the JSON body; the answer is the contract's reply (:func:`respeval.systems.base.contract_reply`).
The plumbing is the judge's HTTP adapters' (:class:`respeval.judge.models.HttpJudgeModel`):
the same transports, timeouts, secret scrubbing (credentials in the URL, the key), and the
same errors: a 429, a 5xx, a timeout, a dropped connection or a body that is not JSON is
retried with backoff; a 401/403/404 stops the run; a JSON reply that breaks the contract, or
says ``error``, fails its row with the reason.
"""

from __future__ import annotations

from typing import Any

import httpx

from respeval.judge.models import HttpJudgeModel
from respeval.judge.models.base import Capabilities, Completion, JudgeRequest
from respeval.systems.base import contract_reply, contract_request

__all__ = ["AgentEndpoint"]


class AgentEndpoint(HttpJudgeModel):
    """An agent at ``url`` speaking the contract.

    Args:
        url: the endpoint (``http://127.0.0.1:8000/agent``); the whole URL is called.
        api_key_env: an environment variable whose value is sent as ``Authorization:
            Bearer ...`` (none is sent when it is unset).
        transport, timeout, headers: as for :class:`respeval.judge.OpenAIChatModel`.
    """

    provider = "http"

    def __init__(
        self,
        url: str,
        *,
        api_key_env: str = "RESPEVAL_AGENT_KEY",
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | None = 60.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            url,
            base_url=url,
            path="",
            api_key_env=api_key_env,
            capabilities=Capabilities(temperature=True, seed=True, tools=True),
            transport=transport,
            timeout=timeout,
            headers=headers,
        )
        self._name = self.endpoint  # the URL without its credentials

    @property
    def model_id(self) -> str:
        return self.endpoint

    def _identity_extra(self) -> dict[str, Any]:
        return {"adapter": "agent-contract/1"}

    def auth_headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"authorization": f"Bearer {key}"} if key else {}

    async def generate(self, request: JudgeRequest) -> Completion:
        data = await self.post(
            contract_request(request),
            defaults={"content-type": "application/json", "accept": "application/json"},
            auth=self.auth_headers(),
        )
        return contract_reply(data, f"the agent at {self.endpoint}")
