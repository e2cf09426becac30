"""oxmcp.langchain: langchain-core's fake chat model emitting tool calls drives a real MCP
server through `oxmcp.langchain` tools, over one session, with every argument name passed
through and the structured output kept as the artifact."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import oxmcp
import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from oxmcp.langchain import McpTool, load_tools

HERE = Path(__file__).resolve().parent
ARGNAMES = HERE / "servers" / "argnames.py"
CONFIG = {"mcpServers": {"lc": {"command": sys.executable, "args": [str(ARGNAMES)]}}}


def _call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{i}", "name": name, "args": args, "type": "tool_call"}


async def _run(model: Any, tools: list[McpTool], question: str) -> list[Any]:
    """The smallest agent loop: ask, run every tool call, feed the ToolMessages back."""
    by_name = {t.name: t for t in tools}
    messages: list[Any] = [HumanMessage(question)]
    for _ in range(5):
        reply = await model.ainvoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            messages.append(await by_name[call["name"]].ainvoke(call))
    return messages


async def test_a_fake_chat_model_calls_a_real_server_over_one_session() -> None:
    args = {"config": "prod", "run_manager": "alice", "callbacks": 3}
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage("", tool_calls=[_call(1, "lc__configure", args)]),
            AIMessage("", tool_calls=[_call(2, "lc__configure", {**args, "config": "dev"})]),
            AIMessage("configured twice"),
        ]
    )
    async with oxmcp.Host.from_config(CONFIG) as host:
        tools = await load_tools(host)
        assert {t.name for t in tools} == {"lc__configure", "lc__refuse"}
        messages = await _run(model, tools, "configure it")
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert len(results) == 2 and all(r.status == "success" for r in results)
    first, second = (r.artifact["structured_content"] for r in results)
    # Every name reached the server, untouched by langchain-core's own `config`/`run_manager`.
    assert first == {**args, "calls": 1}
    # The same process answered both: one session, not one per call.
    assert second == {**args, "config": "dev", "calls": 2}
    assert results[0].artifact["result"]["structuredContent"] == first
    assert results[0].tool_call_id == "call_1"
    assert messages[-1].content == "configured twice"


async def test_the_tool_keeps_schema_and_output_schema() -> None:
    async with oxmcp.Host.from_config(CONFIG) as host:
        (configure,) = [t for t in await load_tools(host) if t.mcp_name == "configure"]
        assert configure.server == "lc"
        assert configure.response_format == "content_and_artifact"
        assert configure.metadata is not None
        assert configure.metadata["output_schema"]["properties"]["calls"]["type"] == "integer"
        spec = convert_to_openai_tool(configure)["function"]
        assert spec["name"] == "lc__configure"
        assert {"config", "run_manager", "callbacks"} <= set(spec["parameters"]["properties"])


async def test_a_client_session_works_too_and_tool_errors_are_error_messages() -> None:
    async with oxmcp.Client.stdio(sys.executable, [str(ARGNAMES)]) as client:
        tools = {t.name: t for t in await load_tools(client)}
        assert set(tools) == {"configure", "refuse"}
        msg = await tools["refuse"].ainvoke(_call(1, "refuse", {"reason": "no"}))
        assert isinstance(msg, ToolMessage)
        assert msg.status == "error" and "refused: no" in str(msg.content)
        # Bad arguments are the server's to judge: an isError result, not a crash.
        bad = await tools["configure"].ainvoke(_call(2, "configure", {"config": 5}))
        assert bad.status == "error"
        # And a plain-text call of a JSON-schema tool is refused by langchain-core itself.
        with pytest.raises(ValueError, match="String tool inputs"):
            await tools["configure"].ainvoke("just text")
        # The session is still good.
        ok = await tools["configure"].ainvoke(
            _call(3, "configure", {"config": "x", "run_manager": "y"})
        )
        assert ok.artifact["structured_content"]["calls"] == 1
