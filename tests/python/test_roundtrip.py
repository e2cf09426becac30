"""Our client against our server, over stdio and HTTP: every value shape crossing the
boundary, with a bad-input neighbour for each happy path."""

from __future__ import annotations

import oxmcp
import pytest
from conftest import EVERYTHING, PY


async def test_handshake_and_list(client: oxmcp.Client) -> None:
    assert client.server["serverInfo"]["name"] == "everything"
    assert client.server["serverInfo"]["version"] == "1.2.3"
    assert client.server["instructions"] == "Test server for the Python binding."
    assert client.protocol_version == "2026-07-28"
    tools = {t["name"]: t for t in (await client.list_tools())["tools"]}
    add = tools["add"]
    assert add["description"] == "Adds two numbers."
    assert add["inputSchema"]["properties"]["a"] == {
        "type": "integer",
        "description": "the first number",
    }
    assert add["inputSchema"]["required"] == ["a", "b"]
    assert add["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["shape_area"]["title"] == "Shape area"
    assert tools["shape_area"]["annotations"] == {"readOnlyHint": True}
    assert "outputSchema" not in tools["plain"]


async def test_def_and_async_def(client: oxmcp.Client) -> None:
    r = await client.call_tool("add", {"a": 2, "b": 40})
    assert r["content"] == [{"type": "text", "text": "42"}]
    assert r["structuredContent"] == {"result": 42}
    r = await client.call_tool("echo", {"text": "ab", "times": 3})
    assert r["structuredContent"] == {"result": "ababab"}
    r = await client.call_tool("plain", {"text": "hi"})
    assert r["content"] == [{"type": "text", "text": "hi"}]
    assert "structuredContent" not in r


async def test_bad_arguments_are_tool_errors(client: oxmcp.Client) -> None:
    r = await client.call_tool("add", {"a": "two", "b": 1})
    assert r.get("isError") is True
    r = await client.call_tool("add", {"a": 1})
    assert r.get("isError") is True
    with pytest.raises(oxmcp.InvalidArgumentError):
        await client.call_tool("add", [1, 2])  # type: ignore[arg-type]


async def test_rich_arguments_and_outputs(client: oxmcp.Client) -> None:
    tools = {t["name"]: t for t in (await client.list_tools())["tools"]}
    schema = tools["shape_area"]["inputSchema"]
    assert "$defs" in schema and "Point" in schema["$defs"]
    assert schema["properties"]["mode"]["enum"] == ["fast", "exact"]
    assert tools["shape_area"]["outputSchema"]["properties"]["unit"] == {"type": "string"}
    r = await client.call_tool(
        "shape_area",
        {"shape": {"name": "tri", "points": [{"x": 1}, {"x": 2, "y": 3}]}, "unit": "fahrenheit"},
    )
    assert r.get("isError") is not True, r
    assert r["structuredContent"] == {"value": 2.0, "unit": "fahrenheit/fast/None"}
    r = await client.call_tool("shape_area", {"shape": {"name": "tri", "points": "nope"}})
    assert r.get("isError") is True
    r = await client.call_tool("weather_dict", {"city": "Oslo"})
    assert r["structuredContent"] == {"city": "Oslo", "temp": 21}
    assert r["content"] == [{"type": "text", "text": '{"city":"Oslo","temp":21}'}]


async def test_content_helpers(client: oxmcp.Client) -> None:
    r = await client.call_tool("picture")
    assert r["content"] == [{"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}]
    r = await client.call_tool("blocks")
    assert [b["type"] for b in r["content"]] == ["image", "text"]


async def test_failures(client: oxmcp.Client) -> None:
    r = await client.call_tool("fails", {"message": "boom"})
    assert r["isError"] is True
    assert r["content"][0]["text"] == "ValueError: boom"
    r = await client.call_tool("tool_error")
    assert r["isError"] is True
    assert r["content"][0]["text"] == "told the model exactly this"
    with pytest.raises(oxmcp.RpcError) as info:
        await client.call_tool("protocol_error")
    assert info.value.code == -32042
    assert info.value.data == {"why": "test"}
    r = await client.call_tool("unserialisable")
    assert r["isError"] is True
    assert "not JSON-serialisable" in r["content"][0]["text"]
    with pytest.raises(oxmcp.RpcError):
        await client.call_tool("no_such_tool")
    # The server kept serving through all of that.
    assert (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}


async def test_resources(client: oxmcp.Client) -> None:
    listed = (await client.list_resources())["resources"]
    assert {r["uri"] for r in listed} == {"test://static", "test://binary"}
    r = await client.read_resource("test://static")
    assert r["contents"] == [
        {"uri": "test://static", "mimeType": "text/plain", "text": "static text"}
    ]
    r = await client.read_resource("test://binary")
    assert r["contents"][0]["blob"] == "AAEC"
    templates = (await client.list_resource_templates())["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "test://items/{item_id}"
    r = await client.read_resource("test://items/7")
    assert r["contents"][0]["text"] == "item 7"
    with pytest.raises(oxmcp.RpcError):
        await client.read_resource("test://items/missing")
    with pytest.raises(oxmcp.RpcError):
        await client.read_resource("test://nowhere")


async def test_prompts_and_completions(client: oxmcp.Client) -> None:
    prompts = {p["name"]: p for p in (await client.list_prompts())["prompts"]}
    assert prompts["greeting"]["arguments"] == [
        {"name": "name", "description": "who to greet", "required": True},
        {"name": "style", "description": "how", "required": False},
    ]
    r = await client.get_prompt("greeting", {"name": "Ada"})
    assert r["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hello Ada (plain)"}}
    ]
    r = await client.get_prompt("conversation", {"topic": "owls"})
    assert [m["role"] for m in r["messages"]] == ["user", "assistant"]
    with pytest.raises(oxmcp.RpcError):
        await client.get_prompt("greeting", {})  # a required argument is missing
    c = await client.complete(
        {"type": "ref/prompt", "name": "greeting"}, {"name": "name", "value": "al"}
    )
    assert c["completion"]["values"] == ["alice", "albert"]
    c = await client.complete(
        {"type": "ref/resource", "uri": "test://items/{item_id}"}, {"name": "item_id", "value": "x"}
    )
    assert len(c["completion"]["values"]) == 100
    assert c["completion"]["hasMore"] is True


async def test_context_and_logging() -> None:
    logs: list[dict[str, object]] = []
    async with oxmcp.Client.stdio(
        PY, [str(EVERYTHING)], name="ctx-client", log_level="debug", logging_callback=logs.append
    ) as c:
        r = await c.call_tool("who")
        assert r["structuredContent"]["client"] == "ctx-client"
        assert r["structuredContent"]["request_id_type"] in ("int", "str")
    assert any(m.get("data") == "who was called" for m in logs), logs


@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_server_to_client_requests(protocol_version: str) -> None:
    async def sampling(params: dict[str, object]) -> dict[str, object]:
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    def elicitation(params: dict[str, object]) -> dict[str, object]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with oxmcp.Client.stdio(
        PY,
        [str(EVERYTHING)],
        protocol_version=protocol_version,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=lambda: ["file:///a", "file:///b"],
    ) as c:
        assert c.protocol_version == protocol_version
        r = await c.call_tool("ask_model", {"prompt": "hello"})
        assert r["content"][0]["text"] == "model said: hi", r
        r = await c.call_tool("ask_user")
        assert r["content"][0]["text"] == "accept: {'name': 'Ada'}", r
        r = await c.call_tool("roots")
        assert r["content"][0]["text"] == "file:///a,file:///b", r


async def test_elicitation_answer_that_breaks_the_schema() -> None:
    async with oxmcp.Client.stdio(
        PY,
        [str(EVERYTHING)],
        protocol_version="2025-11-25",
        elicitation_callback=lambda p: {"action": "accept", "content": {"name": 5}},
    ) as c:
        r = await c.call_tool("ask_user")
        assert r["isError"] is True
        assert "does not match the requested schema" in r["content"][0]["text"]


async def test_runtime_tools_send_list_changed() -> None:
    changed: list[str] = []
    async with oxmcp.Client.stdio(
        PY, [str(EVERYTHING)], protocol_version="2025-11-25", list_changed_callback=changed.append
    ) as c:
        await c.call_tool("add_dynamic")
        assert (await c.call_tool("dynamic"))["content"][0]["text"] == "I was added at runtime"
        assert (await c.call_tool("remove_dynamic"))["structuredContent"] == {"result": True}
        with pytest.raises(oxmcp.RpcError):
            await c.call_tool("dynamic")
        await c.ping()
    assert changed.count("tools") >= 2, changed


async def test_http_roundtrip(http_url: str) -> None:
    async with oxmcp.Client.http(http_url) as c:
        r = await c.call_tool("add", {"a": 1, "b": 2})
        assert r["structuredContent"] == {"result": 3}
        r = await c.read_resource("test://items/3")
        assert r["contents"][0]["text"] == "item 3"
    async with oxmcp.Client.http(http_url, protocol_version="2025-11-25") as c:
        assert c.protocol_version == "2025-11-25"
        assert (await c.call_tool("echo", {"text": "x"}))["structuredContent"] == {"result": "x"}


async def test_http_bad_url() -> None:
    with pytest.raises(oxmcp.McpError):
        async with oxmcp.Client.http("http://127.0.0.1:9/mcp", timeout=5):
            pass
    with pytest.raises(oxmcp.InvalidArgumentError):
        async with oxmcp.Client.http("http://127.0.0.1:9/mcp", headers={"bad header": "x"}):
            pass
