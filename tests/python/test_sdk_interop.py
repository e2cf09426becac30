"""The official Python SDK (`mcp`, pinned in tests/interop/python/requirements.txt) as the
peer, both directions, stdio and HTTP, both eras.

- Its client drives our Python servers: the weather example through the SDK-client script the
  Rust suite uses (tests/interop/python/client.py: schema, text, structuredContent, tool
  errors, unknown tool), and the `everything` server feature by feature below.
- Our client drives its servers: tests/interop/python/feature_server.py (stdio) and
  http_server.py (Streamable HTTP).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import oxmcp
import pytest
from conftest import EVERYTHING, PY, REPO, start_http

INTEROP = REPO / "tests" / "interop" / "python"
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


def _sdk() -> Any:
    from mcp.shared.exceptions import MCPDeprecationWarning

    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    import mcp

    return mcp


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
    # progress
    seen: list[float] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.append(p)

    r = await client.call_tool("slow", {"seconds": 0.1}, progress_callback=progress)
    assert r.content[0].text == "done"
    assert seen[:3] == [0, 1, 2], seen


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_drives_everything_over_stdio(mode: str) -> None:
    mcp = _sdk()
    from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

    async def sampling(ctx: Any, params: Any) -> Any:
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="hi"), model="m"
        )

    async def elicitation(ctx: Any, params: Any) -> Any:
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(ctx: Any) -> Any:
        return ListRootsResult(roots=[Root(uri="file:///r")])

    logs: list[Any] = []

    async def logging_cb(params: Any) -> None:
        logs.append(params)

    params = mcp.StdioServerParameters(command=PY, args=[str(EVERYTHING)])
    async with mcp.Client(
        params,
        mode=mode,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
        logging_callback=logging_cb,
    ) as client:
        modern = mode == "auto"
        assert client.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        await _drive_with_sdk(client, modern)
        r = await client.call_tool("ask_model", {"prompt": "q"})
        assert r.content[0].text == "model said: hi", r
        r = await client.call_tool("ask_user", {})
        assert r.content[0].text == "accept: {'name': 'Ada'}", r
        r = await client.call_tool("roots", {})
        assert r.content[0].text == "file:///r", r
        if not modern:
            await client.set_logging_level("debug")
            await client.call_tool("who", {})
            assert any(getattr(m, "data", None) == "who was called" for m in logs), logs


async def test_sdk_client_drives_everything_over_http() -> None:
    mcp = _sdk()
    from mcp.client.streamable_http import streamable_http_client

    proc, url = start_http(EVERYTHING)
    try:
        for mode in ("auto", "legacy"):
            async with mcp.Client(streamable_http_client(url), mode=mode) as client:
                await _drive_with_sdk(client, mode == "auto")
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stderr:
            proc.stderr.close()


# --- our client against the SDK's servers --------------------------------------------------


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
async def test_our_client_drives_sdk_feature_server(protocol_version: str | None) -> None:
    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"username": "ada", "email": "a@example.com"}}

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "forty-two"},
            "model": "test-model",
            "stopReason": "endTurn",
        }

    logs: list[dict[str, Any]] = []
    async with oxmcp.Client.stdio(
        PY,
        [str(INTEROP / "feature_server.py")],
        protocol_version=protocol_version,
        log_level="debug",
        sampling_callback=sample,
        elicitation_callback=elicit,
        list_roots_callback=lambda: [{"uri": "file:///work", "name": "work"}],
        logging_callback=logs.append,
    ) as c:
        modern = protocol_version is None
        assert c.protocol_version == ("2026-07-28" if modern else "2025-11-25")
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
        r = await c.call_tool("ask_model", {"prompt": "meaning of life?"})
        assert "forty-two" in r["content"][0]["text"], r
        r = await c.call_tool("ask_user", {"message": "who?"})
        assert r["content"][0]["text"].startswith("accept: "), r
        r = await c.call_tool("list_client_roots", {})
        assert json.loads(r["content"][0]["text"]) == [{"uri": "file:///work", "name": "work"}]
        r = await c.call_tool("log_messages", {})
        assert not r.get("isError"), r
        try:  # the SDK answers an unknown tool with isError (or a JSON-RPC error)
            unknown = await c.call_tool("no_such_tool", {})
            assert unknown.get("isError") is True, unknown
        except oxmcp.RpcError:
            pass
    assert {m.get("level") for m in logs} >= {"info", "error"}, logs


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
async def test_our_client_drives_sdk_http_server(protocol_version: str | None) -> None:
    proc = subprocess.Popen(  # noqa: ASYNC220 (started once, read line by line)
        [PY, str(INTEROP / "http_server.py"), "features", "streamable", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        url = _wait_url(proc)
        async with oxmcp.Client.http(url, protocol_version=protocol_version) as c:
            tools = [t["name"] for t in (await c.list_tools())["tools"]]
            assert tools, tools
            resources = (await c.list_resources())["resources"]
            assert isinstance(resources, list)
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout:
            proc.stdout.close()


def _wait_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "http://127.0.0.1:" in line:
            start = line.index("http://127.0.0.1:")
            return line[start:].split()[0].rstrip(".,")
    raise RuntimeError("the SDK server never listened: " + "".join(lines))


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
