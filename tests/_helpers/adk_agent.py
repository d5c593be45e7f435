"""A real ADK agent (google-adk's LlmAgent, run by ADK's runner) on a scripted model: no
network.  Asked about the weather in a city, the model calls the ``get_weather`` tool, then
answers from the tool's result; anything else it answers directly."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

_CITY = re.compile(r"weather in (\w+)", re.I)


def get_weather(city: str) -> dict[str, Any]:
    """The forecast for a city."""
    return {"city": city, "forecast": "sunny" if len(city) % 2 else "rainy"}


class ScriptedLlm(BaseLlm):
    model: str = "scripted-llm"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=11, candidates_token_count=4)
        for part in last.parts or []:
            if part.function_response is not None:
                result = part.function_response.response or {}
                text = f"It is {result.get('forecast')} in {result.get('city')}."
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=text)]), usage_metadata=usage
                )
                return
        asked = " ".join(p.text or "" for p in last.parts or [])
        found = _CITY.search(asked)
        if found:
            call = types.FunctionCall(name="get_weather", args={"city": found.group(1)})
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)]), usage_metadata=usage
            )
            return
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text="I only know the weather.")]),
            usage_metadata=usage,
        )


root_agent = LlmAgent(name="weather", model=ScriptedLlm(), instruction="Answer weather questions.", tools=[get_weather])
