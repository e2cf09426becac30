"""Our Python client against the official Python SDK's servers, feature by feature, in both
eras: tests/interop/python/feature_server.py over stdio, and served by http_server.py over
Streamable HTTP in each of the SDK's HTTP modes. Tools, resources and templates,
subscriptions, prompts, completion, logging, sampling, elicitation and roots (server → client
requests in the handshake era, multi round-trip results in 2026-07-28), and the SDK's answers
to bad input."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import oxmcp
import pytest
from conftest import INTEROP, PY, start_sdk_http, stop


@pytest.fixture(params=["streamable", "json", "stateless"])
def sdk(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """The SDK's server in one HTTP mode: (mode, URL)."""
    proc, url = start_sdk_http(request.param)
    try:
        yield request.param, url
    finally:
        stop(proc)


def _elicit(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"username": "ada", "email": "a@example.com"}}


async def _sample(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "forty-two"},
        "model": "test-model",
        "stopReason": "endTurn",
    }


#: Our client's answers to what the SDK's feature server asks back (any transport).
CALLBACKS: dict[str, Any] = {
    "log_level": "debug",
    "sampling_callback": _sample,
    "elicitation_callback": _elicit,
    "list_roots_callback": lambda: [{"uri": "file:///work", "name": "work"}],
}


async def _check_catalogue(c: oxmcp.Client) -> None:
    """The feature server's resources, templates, prompts and completion."""
    resources = {r["name"] for r in (await c.list_resources())["resources"]}
    assert {"static-text", "static-binary"} <= resources
    text = await c.read_resource("test://static-text")
    assert "text" in text["contents"][0]
    templates = (await c.list_resource_templates())["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "test://template/{id}/data"
    read = await c.read_resource("test://template/7/data")
    assert "7" in read["contents"][0]["text"]
    prompts = {p["name"] for p in (await c.list_prompts())["prompts"]}
    assert {"simple_prompt", "greeting"} <= prompts
    g = await c.get_prompt("greeting", {"name": "Ada"})
    assert "Ada" in json.dumps(g["messages"])
    done = await c.complete(
        {"type": "ref/prompt", "name": "greeting"}, {"name": "name", "value": "A"}
    )
    assert done["completion"]["values"], done


async def _check_asks_back(c: oxmcp.Client) -> None:
    """The SDK asks (sampling, elicitation, roots) and logs; :data:`CALLBACKS` answer."""
    r = await c.call_tool("ask_model", {"prompt": "meaning of life?"})
    assert "forty-two" in r["content"][0]["text"], r
    r = await c.call_tool("ask_user", {"message": "who?"})
    assert r["content"][0]["text"].startswith("accept: "), r
    r = await c.call_tool("list_client_roots", {})
    assert json.loads(r["content"][0]["text"]) == [{"uri": "file:///work", "name": "work"}]
    r = await c.call_tool("log_messages", {})
    assert not r.get("isError"), r


async def _check_unknown_tool(c: oxmcp.Client) -> None:
    try:  # the SDK answers an unknown tool with isError (or a JSON-RPC error)
        unknown = await c.call_tool("no_such_tool", {})
        assert unknown.get("isError") is True, unknown
    except oxmcp.RpcError:
        pass


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
async def test_our_client_drives_sdk_feature_server(protocol_version: str | None) -> None:
    logs: list[dict[str, Any]] = []
    async with oxmcp.Client.stdio(
        PY,
        [str(INTEROP / "feature_server.py")],
        protocol_version=protocol_version,
        logging_callback=logs.append,
        **CALLBACKS,
    ) as c:
        modern = protocol_version is None
        assert c.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        await _check_catalogue(c)
        await _check_asks_back(c)
        await _check_unknown_tool(c)
    assert {m.get("level") for m in logs} >= {"info", "error"}, logs


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
async def test_our_client_drives_sdk_http_server(protocol_version: str | None) -> None:
    proc, url = start_sdk_http("streamable")
    try:
        async with oxmcp.Client.http(url, protocol_version=protocol_version) as c:
            tools = [t["name"] for t in (await c.list_tools())["tools"]]
            assert tools, tools
            resources = (await c.list_resources())["resources"]
            assert isinstance(resources, list)
    finally:
        stop(proc)


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
async def test_every_feature_over_the_sdks_http_server(
    sdk: tuple[str, str], protocol_version: str | None
) -> None:
    mode, sdk_url = sdk
    logs: list[dict[str, Any]] = []
    updated: list[str] = []
    async with oxmcp.Client.http(
        sdk_url,
        protocol_version=protocol_version,
        logging_callback=logs.append,
        resource_updated_callback=updated.append,
        **CALLBACKS,
    ) as c:
        modern = protocol_version is None
        assert c.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        # Tools.
        tools = {t["name"] for t in (await c.list_tools())["tools"]}
        assert {"ask_model", "ask_user", "list_client_roots", "touch"} <= tools
        await _check_catalogue(c)
        binary = await c.read_resource("test://static-binary")
        assert "blob" in binary["contents"][0]
        # Sampling, elicitation, roots: the SDK asks, our callbacks answer. In the handshake
        # era that needs a back-channel (an SSE answer or the GET stream), which the SDK's
        # JSON-only and stateless modes do not have: it says so, as a JSON-RPC error.
        if not modern and mode != "streamable":
            with pytest.raises(oxmcp.RpcError, match="back-channel"):
                await c.call_tool("ask_model", {"prompt": "meaning of life?"})
            return
        await _check_asks_back(c)
        if not modern and mode == "streamable":
            # Handshake-era subscriptions: subscribe, touch, the update arrives (GET stream).
            await c.subscribe_resource("test://watched")
            r = await c.call_tool("touch", {"uri": "test://watched"})
            assert "1 subscription notice" in r["content"][0]["text"], r
            for _ in range(100):
                if updated:
                    break
                await asyncio.sleep(0.05)
            assert updated == ["test://watched"]
            await c.unsubscribe_resource("test://watched")
            await c.set_logging_level("error")
    if not modern and mode == "streamable":
        assert {m.get("level") for m in logs} >= {"info", "error"}, logs


async def test_the_sdks_answers_to_bad_requests_are_typed(sdk: tuple[str, str]) -> None:
    _, sdk_url = sdk
    async with oxmcp.Client.http(sdk_url, protocol_version="2025-11-25") as c:
        with pytest.raises(oxmcp.RpcError):
            await c.read_resource("test://no-such-resource")
        with pytest.raises(oxmcp.RpcError):
            await c.get_prompt("no_such_prompt", {})
        await _check_unknown_tool(c)
        with pytest.raises(oxmcp.RpcError):
            await c.request("no/such/method", {})
        # The session survives all of that.
        assert {t["name"] for t in (await c.list_tools())["tools"]}


async def test_a_server_that_goes_away_is_a_typed_error() -> None:
    proc, url = start_sdk_http("streamable")
    try:
        async with oxmcp.Client.http(url, protocol_version="2025-11-25", timeout=20) as c:
            assert (await c.list_tools())["tools"]
            proc.kill()
            proc.wait(10)
            with pytest.raises(oxmcp.McpError):
                await c.list_tools()
    finally:
        proc.kill()
        stop(proc)
    with pytest.raises(oxmcp.McpError):
        await oxmcp.Client.http(url, timeout=10)
