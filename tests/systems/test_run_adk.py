"""An ADK agent as a system under test, run by ADK's own runner (the real google-adk, on a
scripted model): the final response, the tool trajectory as ADK records it, usage, caching."""

from __future__ import annotations

import pytest

pytest.importorskip("google.adk")

from respeval.systems import load_system, run  # noqa: E402

ROWS = [{"id": "a", "question": "What is the weather in Paris?"}, {"id": "b", "question": "Tell me a joke"}]


def test_an_adk_agent_answers_with_its_tool_trajectory(tmp_path):
    result = run(ROWS, {"adk": "adk:_helpers.adk_agent:root_agent"}, templates="{question}", fence=False,
                 cache=tmp_path / "c.sqlite")  # fmt: skip
    first, second = result.rows
    assert first["response"] == "It is sunny in Paris."
    assert [(c["name"], c["arguments"]) for c in first["tool_calls"]] == [("get_weather", {"city": "Paris"})]
    assert (first["tokens_in"], first["tokens_out"]) == (22, 8)  # two model calls of the scripted model
    assert second["response"] == "I only know the weather." and second["tool_calls"] is None
    again = run(ROWS, {"adk": "adk:_helpers.adk_agent:root_agent"}, templates="{question}", fence=False,
                cache=tmp_path / "c.sqlite")  # fmt: skip
    assert again.systems["adk"].calls == 0 and again.rows == result.rows


def test_an_adk_agent_keeps_its_own_instruction():
    with pytest.raises(ValueError, match="an ADK agent keeps its own instruction"):
        load_system("adk", "adk:_helpers.adk_agent:root_agent", system_instruction="Be brief.")
    with pytest.raises(ValueError, match="expected an ADK agent object"):
        load_system("adk", "adk:_helpers.adk_agent:get_weather")
