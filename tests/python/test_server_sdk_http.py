"""The official Python SDK's client (`mcp`) drives our Python server over Streamable HTTP,
every feature, both eras: tools, resources, templates, subscriptions (`resources/subscribe`
in the handshake era, `subscriptions/listen` in 2026-07-28), prompts, completion, logging,
progress, sampling, elicitation and roots (requests to the client in the handshake era, the
core's multi round-trip rounds in 2026-07-28), and list_changed after a runtime `add_tool`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from conftest import EVERYTHING, start_http


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    proc, url = start_http(EVERYTHING)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stderr:
            proc.stderr.close()


def _sdk() -> Any:
    from mcp.shared.exceptions import MCPDeprecationWarning

    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    import mcp

    return mcp


def _callbacks() -> dict[str, Any]:
    from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

    async def sampling(ctx: Any, params: Any) -> Any:
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="hi"), model="m"
        )

    async def elicitation(ctx: Any, params: Any) -> Any:
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(ctx: Any) -> Any:
        return ListRootsResult(roots=[Root(uri="file:///r")])

    return {
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
        "list_roots_callback": roots,
    }


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_http_client_asks_back_and_logs(url: str, mode: str) -> None:
    mcp = _sdk()
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import ResourceTemplateReference

    logs: list[Any] = []

    async def logging_cb(params: Any) -> None:
        logs.append(params)

    async with mcp.Client(
        streamable_http_client(url), mode=mode, logging_callback=logging_cb, **_callbacks()
    ) as client:
        modern = mode == "auto"
        assert client.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        r = await client.call_tool("ask_model", {"prompt": "q"})
        assert r.content[0].text == "model said: hi", r
        r = await client.call_tool("ask_user", {})
        assert r.content[0].text == "accept: {'name': 'Ada'}", r
        r = await client.call_tool("roots", {})
        assert r.content[0].text == "file:///r", r
        # A template's completion (the prompt one is in test_sdk_interop).
        done = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="test://items/{item_id}"),
            {"name": "item_id", "value": "7"},
        )
        assert done.completion.values[:2] == ["70", "71"]
        assert done.completion.has_more is True
        seen: list[float] = []

        async def progress(p: float, total: float | None, message: str | None) -> None:
            seen.append(p)

        r = await client.call_tool("slow", {"seconds": 0.1}, progress_callback=progress)
        assert r.content[0].text == "done"
        assert seen[:3] == [0, 1, 2], seen
        if not modern:
            await client.set_logging_level("debug")
            await client.call_tool("who", {})
            assert any(getattr(m, "data", None) == "who was called" for m in logs), logs
        # Bad input: an unknown tool and a bad argument are answered, the session goes on.
        r = await client.call_tool("add", {"a": "x", "b": 1})
        assert r.is_error
        with pytest.raises(mcp.MCPError):
            await client.read_resource("test://nowhere")
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


async def test_sdk_http_subscriptions_handshake_era(url: str) -> None:
    mcp = _sdk()
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import ResourceUpdatedNotification, ToolListChangedNotification

    updated = anyio.Event()
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            assert str(message.params.uri) == "test://static"
            updated.set()
        elif isinstance(message, ToolListChangedNotification):
            changed.set()

    async with mcp.Client(
        streamable_http_client(url), mode="legacy", message_handler=on_message
    ) as client:
        await client.subscribe_resource("test://static")
        await client.call_tool("touch", {"uri": "test://static"})
        with anyio.fail_after(30):
            await updated.wait()
        await client.call_tool("add_dynamic", {})
        with anyio.fail_after(30):
            await changed.wait()
        names = {t.name for t in (await client.list_tools()).tools}
        assert "dynamic" in names
        assert (await client.call_tool("remove_dynamic", {})).structured_content == {"result": True}
        await client.unsubscribe_resource("test://static")


async def test_sdk_http_subscriptions_listen_2026(url: str) -> None:
    mcp = _sdk()
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

    async with mcp.Client(streamable_http_client(url), mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["test://static"]
        ) as sub:
            await client.call_tool("touch", {"uri": "test://static"})
            await client.call_tool("add_dynamic", {})
            got: set[type] = set()
            with anyio.fail_after(30):
                async for event in sub:
                    if isinstance(event, ResourceUpdated):
                        assert event.uri == "test://static"
                    got.add(type(event))
                    if {ResourceUpdated, ToolsListChanged} <= got:
                        break
        await client.call_tool("remove_dynamic", {})
