"""Questions a Python handler asks side by side (`asyncio.gather` of `ctx.elicit`,
`ctx.sample` and `ctx.list_roots`) go to a 2026-07-28 client in one round: the first
`InputRequiredResult` carries all of them, and the retry with every answer completes. Raw
stateless POSTs over real HTTP on 127.0.0.1. The bad-input neighbour: a question whose
params the core cannot read fails alone with `InvalidArgumentError` while the others are
still asked, and the server goes on serving.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import oxmcp
import pytest

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "rounds-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
}
FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


def call(url: str, name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}, "_meta": META, **(extra or {})}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
    # JSON, or an SSE stream whose last data line is the answer.
    if text.lstrip().startswith("{"):
        answer: dict[str, Any] = json.loads(text)
        return answer
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    last: dict[str, Any] = json.loads([d for d in data if d][-1])
    return last


@pytest.fixture
async def server_url() -> AsyncIterator[str]:
    server = oxmcp.Server("rounds")

    @server.tool()
    async def three_at_once(ctx: oxmcp.Context) -> str:
        name, reply, roots = await asyncio.gather(
            ctx.elicit("Your name?", FORM, key="name"),
            ctx.sample("Say hi", key="hi"),
            ctx.list_roots(key="roots"),
        )
        who, said = name["content"]["name"], reply["content"]["text"]
        return f"{who} / {said} / {roots['roots'][0]['uri']}"

    @server.tool()
    async def one_bad_question(ctx: oxmcp.Context) -> str:
        answers = await asyncio.gather(
            ctx.elicit("Your name?", FORM, key="name"),
            ctx.sample([{"role": "nobody", "content": 5}], key="bad"),
            return_exceptions=True,
        )
        return " | ".join(type(a).__name__ for a in answers)

    http = await server.serve_http(port=0)
    try:
        yield http.url
    finally:
        await http.shutdown()


ANSWERS = {
    "name": {"action": "accept", "content": {"name": "Ada"}},
    "hi": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
    "roots": {"roots": [{"uri": "file:///work"}]},
}


async def test_gathered_questions_go_out_in_one_round(server_url: str) -> None:
    first = await asyncio.to_thread(call, server_url, "three_at_once")
    result = first["result"]
    assert result["resultType"] == "input_required", first
    assert sorted(result["inputRequests"]) == ["hi", "name", "roots"], result
    methods = {k: v["method"] for k, v in result["inputRequests"].items()}
    assert methods == {
        "name": "elicitation/create",
        "hi": "sampling/createMessage",
        "roots": "roots/list",
    }
    retry = {"inputResponses": ANSWERS, "requestState": result.get("requestState")}
    done = await asyncio.to_thread(call, server_url, "three_at_once", retry)
    assert done["result"]["content"][0]["text"] == "Ada / hi / file:///work", done


async def test_a_bad_question_fails_alone(server_url: str) -> None:
    first = await asyncio.to_thread(call, server_url, "one_bad_question")
    result = first["result"]
    assert result["resultType"] == "input_required", first
    assert list(result["inputRequests"]) == ["name"], "the readable question is still asked"
    state = result.get("requestState")
    retry = {"inputResponses": {"name": ANSWERS["name"]}, "requestState": state}
    done = await asyncio.to_thread(call, server_url, "one_bad_question", retry)
    assert done["result"]["content"][0]["text"] == "dict | InvalidArgumentError", done
    # The server goes on serving.
    again = await asyncio.to_thread(call, server_url, "three_at_once")
    assert again["result"]["resultType"] == "input_required"
