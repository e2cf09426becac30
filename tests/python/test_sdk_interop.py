"""The official Python SDK (`mcp`, pinned in tests/interop/python/requirements.txt) as the
peer: its client drives our Python servers, stdio and HTTP, both eras (our client against its
servers is test_client_interop.py).

- The weather example, through the SDK-client script the Rust suite uses
  (tests/interop/python/client.py: schema, text, structuredContent, tool errors, unknown tool),
  also as uvx runs it from the wheel.
- The `everything` server feature by feature: tools, resources, templates, subscriptions
  (`resources/subscribe` in the handshake era, `subscriptions/listen` in 2026-07-28), prompts,
  completion, logging, progress, sampling, elicitation and roots (requests to the client in the
  handshake era, the core's multi round-trip rounds in 2026-07-28), and list_changed after a
  runtime `add_tool`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import EVERYTHING, INTEROP, PY, REPO, sdk, sdk_client_callbacks, serving_http

WEATHER_SRC = REPO / "examples" / "python" / "weather-server" / "src"
WEATHER_CMD = [
    PY,
    "-c",
    f"import sys; sys.path.insert(0, {str(WEATHER_SRC)!r}); import oxmcp_weather; "
    "oxmcp_weather.main()",
]


@pytest.mark.parametrize("mode", ["auto", "legacy", "2026-07-28"])
def test_sdk_client_drives_python_weather_server(mode: str) -> None:
    proc = subprocess.run(
        [PY, str(INTEROP / "client.py"), mode, *WEATHER_CMD],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok: unknown tool is JSON-RPC -32602" in proc.stdout


# --- the SDK's client against our everything server ---------------------------------------


async def _check_progress(client: Any) -> None:
    seen: list[float] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.append(p)

    r = await client.call_tool("slow", {"seconds": 0.1}, progress_callback=progress)
    assert r.content[0].text == "done"
    assert seen[:3] == [0, 1, 2], seen


async def _check_asks_back(client: Any) -> None:
    """Our server asks (sampling, elicitation, roots); :func:`sdk_client_callbacks` answer."""
    r = await client.call_tool("ask_model", {"prompt": "q"})
    assert r.content[0].text == "model said: hi", r
    r = await client.call_tool("ask_user", {})
    assert r.content[0].text == "accept: {'name': 'Ada'}", r
    r = await client.call_tool("roots", {})
    assert r.content[0].text == "file:///r", r


async def _check_logging(client: Any, logs: list[Any]) -> None:
    """Handshake era: ``logging/setLevel``, then a tool's log reaches the client's callback."""
    await client.set_logging_level("debug")
    await client.call_tool("who", {})
    assert any(getattr(m, "data", None) == "who was called" for m in logs), logs


async def _drive_with_sdk(client: Any, modern: bool) -> None:
    from mcp_types import TextContent

    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["add"].output_schema["properties"]["result"] == {"type": "integer"}
    r = await client.call_tool("add", {"a": 20, "b": 22})
    assert r.structured_content == {"result": 42}
    r = await client.call_tool("shape_area", {"shape": {"name": "t", "points": [{"x": 1}]}})
    assert r.structured_content == {"value": 1.0, "unit": "celsius/fast/None"}, r
    r = await client.call_tool("fails", {"message": "nope"})
    assert r.is_error and isinstance(r.content[0], TextContent)
    assert r.content[0].text == "ValueError: nope"
    r = await client.call_tool("add", {"a": "x", "b": 1})
    assert r.is_error
    # resources, templates, prompts, completion
    uris = {str(x.uri) for x in (await client.list_resources()).resources}
    assert uris == {"test://static", "test://binary"}
    read = await client.read_resource("test://items/9")
    assert read.contents[0].text == "item 9"
    templates = (await client.list_resource_templates()).resource_templates
    assert templates[0].uri_template == "test://items/{item_id}"
    prompt = await client.get_prompt("greeting", {"name": "Ada"})
    assert prompt.messages[0].content.text == "Hello Ada (plain)"
    from mcp_types import PromptReference

    done = await client.complete(
        PromptReference(type="ref/prompt", name="greeting"), {"name": "name", "value": "b"}
    )
    assert done.completion.values == ["bob"]
    await _check_progress(client)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_drives_everything_over_stdio(mode: str) -> None:
    mcp = sdk()
    logs: list[Any] = []

    async def logging_cb(params: Any) -> None:
        logs.append(params)

    params = mcp.StdioServerParameters(command=PY, args=[str(EVERYTHING)])
    async with mcp.Client(
        params,
        mode=mode,
        logging_callback=logging_cb,
        **sdk_client_callbacks(),
    ) as client:
        modern = mode == "auto"
        assert client.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        await _drive_with_sdk(client, modern)
        await _check_asks_back(client)
        if not modern:
            await _check_logging(client, logs)


async def test_sdk_client_drives_everything_over_http() -> None:
    mcp = sdk()
    from mcp.client.streamable_http import streamable_http_client

    with serving_http(EVERYTHING) as url:
        for mode in ("auto", "legacy"):
            async with mcp.Client(streamable_http_client(url), mode=mode) as client:
                await _drive_with_sdk(client, mode == "auto")


# --- the SDK's HTTP client against one everything server for the lot ----------------------


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    with serving_http(EVERYTHING) as url:
        yield url


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_http_client_asks_back_and_logs(everything_url: str, mode: str) -> None:
    mcp = sdk()
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import ResourceTemplateReference

    logs: list[Any] = []

    async def logging_cb(params: Any) -> None:
        logs.append(params)

    async with mcp.Client(
        streamable_http_client(everything_url),
        mode=mode,
        logging_callback=logging_cb,
        **sdk_client_callbacks(),
    ) as client:
        modern = mode == "auto"
        assert client.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        await _check_asks_back(client)
        # A template's completion (the prompt one is in _drive_with_sdk).
        done = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="test://items/{item_id}"),
            {"name": "item_id", "value": "7"},
        )
        assert done.completion.values[:2] == ["70", "71"]
        assert done.completion.has_more is True
        await _check_progress(client)
        if not modern:
            await _check_logging(client, logs)
        # Bad input: an unknown tool and a bad argument are answered, the session goes on.
        r = await client.call_tool("add", {"a": "x", "b": 1})
        assert r.is_error
        with pytest.raises(mcp.MCPError):
            await client.read_resource("test://nowhere")
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


async def test_sdk_http_subscriptions_handshake_era(everything_url: str) -> None:
    mcp = sdk()
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
        streamable_http_client(everything_url), mode="legacy", message_handler=on_message
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


async def test_sdk_http_subscriptions_listen_2026(everything_url: str) -> None:
    mcp = sdk()
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

    async with mcp.Client(streamable_http_client(everything_url), mode="auto") as client:
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


def test_uvx_runs_the_weather_example_from_the_wheel(tmp_path: Path) -> None:
    wheels = Path(os.environ.get("OXMCP_WHEEL_DIR", REPO / "target" / "py-wheels"))
    wheel = sorted(wheels.glob("oxmcp-*.whl"))
    assert wheel, f"no oxmcp wheel in {wheels}"
    uvx = Path(sys.executable).parent / "uvx"
    # Byte-identical data with the Rust example.
    shipped = WEATHER_SRC / "oxmcp_weather" / "cities.json"
    assert shipped.read_bytes() == (REPO / "examples" / "weather" / "cities.json").read_bytes()
    command = [
        str(uvx),
        "--no-config",
        # The SDK client starts servers with a minimal environment, so settings go as flags:
        # a private cache, and the system's certificates (a proxy's own CA is trusted too).
        "--cache-dir",
        str(tmp_path / "uv-cache"),
        "--system-certs",
        "--from",
        str(REPO / "examples" / "python" / "weather-server"),
        "--with",
        str(wheel[-1]),
        "oxmcp-weather",
    ]
    proc = subprocess.run(
        [PY, str(INTEROP / "client.py"), "auto", *command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok: tools/call get_weather Oslo" in proc.stdout
