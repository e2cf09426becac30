"""WebSocket in the Python binding: ``Server.serve_ws`` / ``run("ws")`` /
``serve_http(websocket=True)`` and ``Client.websocket``, over real sockets on 127.0.0.1.

Happy paths (list, call, progress, a tool's error result; a child process serving with
``run("ws")``; both transports on one port; an ``mcpServers`` entry of type ``ws``) each have a
bad-input neighbour: bad URLs, nothing listening, a server shut down mid-call, an oversized
message, a foreign ``Origin``, bad options.

Hostile raw clients (the ``websockets`` package, sending exactly the frames each case needs) run
the cases of tests/fixtures/websocket/hostile.json, shared with the Node suite: subprotocol
offers, a binary frame, invalid JSON, 20 MiB, a foreign ``Origin`` or ``Host``, a socket dropped
mid-request (the handler sees ``CancelledError``), a peer that answers no ping; after each, the
same server serves a fresh client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import oxmcp
import pytest
from conftest import EVERYTHING, PY, REPO, stop
from oxmcp.types import AccessClaims
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as raw_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

APP = "https://app.example"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def make_server() -> tuple[oxmcp.Server, asyncio.Event]:
    server = oxmcp.Server("ws-test", "1.0.0")
    started = asyncio.Event()

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    async def count(n: int, ctx: oxmcp.Context) -> str:
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1}")
        return f"counted {n}"

    @server.tool()
    def refuse() -> str:
        raise oxmcp.ToolError("told the model exactly this")

    @server.tool()
    async def hang() -> str:
        started.set()
        await asyncio.Event().wait()
        return "unreachable"

    return server, started


@pytest.fixture
async def served() -> AsyncIterator[tuple[oxmcp.WsServer, asyncio.Event]]:
    server, started = make_server()
    ws = await server.serve_ws(port=0, allowed_origins=[APP], max_message_bytes=4096)
    try:
        yield ws, started
    finally:
        await ws.shutdown()


async def test_client_and_server_over_websocket(
    served: tuple[oxmcp.WsServer, asyncio.Event],
) -> None:
    ws, _ = served
    assert ws.url == f"ws://127.0.0.1:{ws.port}/mcp"
    progress: list[tuple[float, float | None, str | None]] = []
    async with oxmcp.Client.websocket(ws.url, name="ws-pytest", timeout=20) as c:
        assert c.server["serverInfo"]["name"] == "ws-test"
        names = sorted(t["name"] for t in (await c.list_tools())["tools"])
        assert names == ["count", "echo", "hang", "refuse"]
        result = await c.call_tool("echo", {"text": "héllo"})
        assert result["content"] == [{"type": "text", "text": "héllo"}]
        assert not result.get("isError")
        counted = await c.call_tool(
            "count", {"n": 3}, progress_callback=lambda p, t, m: progress.append((p, t, m))
        )
        assert counted["content"][0]["text"] == "counted 3"
        for _ in range(50):
            if len(progress) == 3:
                break
            await asyncio.sleep(0.01)
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        refused = await c.call_tool("refuse")
        assert refused["isError"] is True
        assert refused["content"][0]["text"] == "told the model exactly this"
        # The bad-input neighbours of a call: an unknown tool, arguments of the wrong type.
        with pytest.raises(oxmcp.RpcError):
            await c.call_tool("nope")
        wrong = await c.call_tool("echo", {"text": 5})
        assert wrong["isError"] is True
        await c.ping()


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9/mcp", "not a url", "ws://", "ftp://127.0.0.1/mcp"],
)
async def test_a_bad_url_raises_the_typed_error(url: str) -> None:
    started = time.monotonic()
    with pytest.raises(oxmcp.InvalidArgumentError):
        await oxmcp.Client.websocket(url, connect_timeout=5)
    assert time.monotonic() - started < 5


async def test_nothing_listening_raises_within_the_connect_timeout() -> None:
    url = f"ws://127.0.0.1:{free_port()}/mcp"
    started = time.monotonic()
    with pytest.raises(oxmcp.TransportError):
        await oxmcp.Client.websocket(url, connect_timeout=3)
    assert time.monotonic() - started < 3.5


async def test_a_silent_server_raises_request_timeout_at_the_connect_timeout() -> None:
    # A listening socket nobody answers: TCP connects (the backlog), the upgrade never does.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"ws://127.0.0.1:{silent.getsockname()[1]}/mcp"
        started = time.monotonic()
        with pytest.raises(oxmcp.RequestTimeoutError):
            await oxmcp.Client.websocket(url, connect_timeout=0.5)
        assert 0.4 < time.monotonic() - started < 5


async def test_bad_client_options_raise_invalid_argument() -> None:
    with pytest.raises(oxmcp.InvalidArgumentError):
        await oxmcp.Client.websocket("ws://127.0.0.1:9/mcp", headers={"bad name": "x"})
    with pytest.raises(oxmcp.InvalidArgumentError):
        await oxmcp.Client.websocket("ws://127.0.0.1:9/mcp", connect_timeout=-1)


async def test_a_server_shut_down_mid_call_fails_the_pending_call(
    served: tuple[oxmcp.WsServer, asyncio.Event],
) -> None:
    ws, started = served
    async with oxmcp.Client.websocket(ws.url, timeout=60) as c:
        pending = asyncio.ensure_future(c.call_tool("hang"))
        await asyncio.wait_for(started.wait(), 10)
        await ws.shutdown()
        with pytest.raises(oxmcp.ConnectionClosedError):
            await asyncio.wait_for(pending, 10)
        with pytest.raises(oxmcp.ConnectionClosedError):
            await asyncio.wait_for(c.ping(), 10)


async def test_an_oversized_message_closes_the_connection(
    served: tuple[oxmcp.WsServer, asyncio.Event],
) -> None:
    ws, _ = served
    async with oxmcp.Client.websocket(ws.url, timeout=20) as c:
        fits = await c.call_tool("echo", {"text": "x" * 1024})
        assert fits["content"][0]["text"] == "x" * 1024
        with pytest.raises(oxmcp.ConnectionClosedError):
            await asyncio.wait_for(c.call_tool("echo", {"text": "x" * 8192}), 10)
    # The client's own cap: an answer bigger than it closes the socket from this side.
    async with oxmcp.Client.websocket(ws.url, timeout=20, max_message_bytes=2048) as c:
        with pytest.raises(oxmcp.ProtocolError, match="too big"):
            await asyncio.wait_for(c.call_tool("echo", {"text": "y" * 3000}), 10)
        # The socket is gone: later calls fail at once with the same cause.
        with pytest.raises(oxmcp.ProtocolError, match="too big"):
            await asyncio.wait_for(c.ping(), 10)


async def test_a_foreign_origin_is_refused(
    served: tuple[oxmcp.WsServer, asyncio.Event],
) -> None:
    ws, _ = served
    async with oxmcp.Client.websocket(ws.url, headers={"Origin": APP}) as c:
        await c.ping()
    with pytest.raises(oxmcp.AuthError, match="403"):
        await oxmcp.Client.websocket(
            ws.url, headers={"Origin": "https://evil.example"}, connect_timeout=5
        )


async def test_bad_server_options_raise_invalid_argument() -> None:
    server, _ = make_server()
    with pytest.raises(oxmcp.InvalidArgumentError):
        await server.serve_ws("localhost")
    with pytest.raises(oxmcp.InvalidArgumentError):
        # Tokens' audience cannot be known before listening on port 0.
        await server.serve_ws(auth=lambda token: None)
    for bad in [{"ping_interval": -1.0}, {"ping_timeout": float("nan")}]:
        with pytest.raises(oxmcp.InvalidArgumentError):
            await server.serve_ws(port=0, **bad)
    with pytest.raises(ValueError):
        server.run("ws", store="redis://127.0.0.1:6379/")
    with pytest.raises(ValueError):
        server.run("carrier-pigeon")  # type: ignore[arg-type]


async def test_serve_http_with_websocket_takes_both_on_one_path() -> None:
    server, _ = make_server()
    http = await server.serve_http(port=0, websocket=True)
    try:
        ws_url = "ws://" + http.url.removeprefix("http://")
        async with oxmcp.Client.websocket(ws_url, timeout=20) as c:
            assert (await c.call_tool("echo", {"text": "ws"}))["content"][0]["text"] == "ws"
        async with oxmcp.Client.http(http.url, timeout=20) as c:
            assert (await c.call_tool("echo", {"text": "h"}))["content"][0]["text"] == "h"
    finally:
        await http.shutdown()
    # Without websocket=True the same path refuses the upgrade.
    plain = await server.serve_http(port=0)
    try:
        with pytest.raises(oxmcp.ProtocolError, match="upgrade"):
            await oxmcp.Client.websocket(
                "ws://" + plain.url.removeprefix("http://"), connect_timeout=5
            )
    finally:
        await plain.shutdown()


@pytest.fixture
def child_ws_url() -> Iterator[str]:
    """everything.py serving with ``run("ws", port=0)`` in a child process."""
    proc = subprocess.Popen(
        [PY, str(EVERYTHING), "--ws"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    url = None
    for line in proc.stderr:
        if "listening on " in line:
            url = line.split("listening on ", 1)[1].strip()
            break
    try:
        assert url is not None, f"run('ws') never listened (exit {proc.poll()})"
        yield url
    finally:
        stop(proc)


async def test_run_ws_in_a_child_process(child_ws_url: str) -> None:
    assert child_ws_url.startswith("ws://127.0.0.1:")
    async with oxmcp.Client.websocket(child_ws_url, timeout=20) as c:
        assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
        failed = await c.call_tool("tool_error")
        assert failed["isError"] is True
    # The neighbour: plain HTTP to a WebSocket-only server is no MCP endpoint.
    with pytest.raises(oxmcp.McpError):
        await oxmcp.Client.http(
            "http://" + child_ws_url.removeprefix("ws://"), timeout=5, protocol_version="2025-11-25"
        )


async def test_a_ws_entry_in_a_host_config(
    served: tuple[oxmcp.WsServer, asyncio.Event],
) -> None:
    ws, _ = served
    config: dict[str, Any] = {
        "mcpServers": {
            "sock": {"type": "ws", "url": ws.url},
            "dead": {"type": "ws", "url": f"ws://127.0.0.1:{free_port()}/mcp"},
        }
    }
    async with oxmcp.Host.from_config(config, connect_timeout=5) as host:
        result = await host.call_tool("sock", "echo", {"text": "via host"})
        assert result["content"][0]["text"] == "via host"
        states = {s["name"]: s for s in await host.status()}
        assert states["sock"]["state"] == "connected", states
        assert states["dead"]["state"] != "connected", states
    with pytest.raises(oxmcp.ConfigError):
        await oxmcp.Host.from_config({"mcpServers": {"bad": {"type": "ws"}}})


async def test_bearer_tokens_are_checked_on_the_upgrade() -> None:
    server, _ = make_server()
    port = free_port()
    resource = f"ws://127.0.0.1:{port}/mcp"

    async def verify(token: str) -> AccessClaims | None:
        if token == "good":
            return {"subject": "alice", "scopes": ["mcp:read"], "audience": resource}
        if token == "elsewhere":
            return {"subject": "bob", "scopes": ["mcp:read"], "audience": "https://other/"}
        return None

    ws = await server.serve_ws(
        port=port,
        auth=verify,
        authorization_servers=["https://auth.example.com"],
        required_scopes=["mcp:read"],
    )
    try:
        assert ws.url == resource
        good = {"Authorization": "Bearer good"}
        async with oxmcp.Client.websocket(ws.url, headers=good, timeout=20) as c:
            assert (await c.call_tool("echo", {"text": "ok"}))["content"][0]["text"] == "ok"
        for headers in (
            {},
            {"Authorization": "Bearer nope"},
            {"Authorization": "Bearer elsewhere"},
        ):
            with pytest.raises(oxmcp.AuthError, match=r"40[13]"):
                await oxmcp.Client.websocket(ws.url, headers=headers, connect_timeout=5)
    finally:
        await ws.shutdown()


def start_announcing(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Starts ``argv`` and returns it with the ws:// URL it announces on stderr."""
    proc = subprocess.Popen(
        argv,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening on ws://" in line:
            return proc, "ws://" + line.split("listening on ws://", 1)[1].strip()
    stop(proc)
    raise AssertionError(f"{argv} never listened (exit {proc.poll()})")


async def test_the_python_examples_serve_websocket_with_ws_and_port() -> None:
    """Issue 39: the conformance fixture and the weather example take ``--ws --port N``."""
    fixture = str(REPO / "examples" / "python" / "conformance_server.py")
    weather_src = str(REPO / "examples" / "python" / "weather-server" / "src")
    weather = [
        PY,
        "-c",
        f"import sys; sys.path.insert(0, {weather_src!r}); sys.argv[1:] = ['--ws', '--port', "
        f"'{free_port()}']; import oxmcp_weather; oxmcp_weather.main()",
    ]
    for argv, tool, args, expect in [
        (
            [PY, fixture, "--ws", "--port", str(free_port())],
            "test_simple_text",
            {},
            "This is a simple text response for testing.",
        ),
        (weather, "get_weather", {"city": "Beijing"}, "Beijing:"),
    ]:
        proc, url = start_announcing(argv)
        try:
            async with oxmcp.Client.websocket(url, timeout=20) as c:
                result = await c.call_tool(tool, args)
                assert result["content"][0]["text"].startswith(expect), result
        finally:
            stop(proc)
    # Both transports on one port, and the neighbour: a port that is taken fails the start.
    port = free_port()
    proc, url = start_announcing([PY, fixture, "--http", "--ws", "--port", str(port)])
    try:
        async with oxmcp.Client.websocket(url, timeout=20) as c:
            assert (await c.call_tool("test_simple_text"))["content"][0]["text"]
        async with oxmcp.Client.http(url.replace("ws://", "http://", 1), timeout=20) as c:
            assert (await c.call_tool("test_simple_text"))["content"][0]["text"]
        taken = await asyncio.to_thread(
            subprocess.run,
            [PY, fixture, "--ws", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert taken.returncode != 0
    finally:
        stop(proc)


# --- Hostile clients: the shared cases of tests/fixtures/websocket/hostile.json ---------------

HOSTILE = json.loads(
    (REPO / "tests" / "fixtures" / "websocket" / "hostile.json").read_text("utf-8")
)
# How long any single step may take (a guard against hangs, not a timed assertion).
STEP = 10.0
_MISSING = object()


def at(value: Any, path: str) -> Any:
    """The value at a dotted path (array indexes as numbers), or ``_MISSING``."""
    for part in path.split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def check_json(message: Any, step: dict[str, Any], what: str) -> None:
    for path, expected in step["expect_json"].items():
        assert at(message, path) == expected, f"{what}: {path} in {message}"
    for path in step.get("absent", []):
        assert at(message, path) is _MISSING, f"{what}: {path} in {message}"


def hostile_server() -> tuple[oxmcp.Server, dict[str, asyncio.Event]]:
    """The fixture's tools, and the events its ``wait_for_cancel`` handler records."""
    server = oxmcp.Server("ws-hostile", "1.0.0")
    seen = {"started": asyncio.Event(), "cancelled": asyncio.Event()}

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    async def wait_for_cancel() -> str:
        seen["started"].set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen["cancelled"].set()
            raise
        return "unreachable"

    return server, seen


async def raw_upgrade(url: str, case: dict[str, Any]) -> tuple[ClientConnection | None, int]:
    """A raw client's upgrade as the case asks (its subprotocol offer, its headers; a ``Host``
    header replaces the real one); the open connection and 101, or None and the refusal's
    status."""
    headers = dict(case.get("headers", {}))
    host = headers.pop("Host", None)
    origin = headers.pop("Origin", None)
    parts = urlsplit(url)
    # The TCP connection goes to the server; the URL only names the Host header.
    target = url if host is None else f"ws://{host}{parts.path}"
    sock = socket.create_connection(("127.0.0.1", parts.port or 80), timeout=STEP)
    try:
        ws = await raw_connect(
            target,
            sock=sock,
            origin=origin,
            subprotocols=case.get("offer"),
            additional_headers=headers or None,
            user_agent_header=None,
            compression=None,
            max_size=None,
            # The raw client pings nothing itself (the keepalive case needs it silent).
            ping_interval=None,
            open_timeout=STEP,
            close_timeout=STEP,
        )
    except InvalidStatus as refused:
        sock.close()
        return None, refused.response.status_code
    assert ws.response is not None
    return ws, ws.response.status_code


async def next_json(ws: ClientConnection, what: str) -> Any:
    message = await asyncio.wait_for(ws.recv(), STEP)
    assert isinstance(message, str), f"{what}: expected a text frame, got {message!r:.200}"
    return json.loads(message)


async def expect_close(ws: ClientConnection, code: int, what: str) -> None:
    """The next frame (pings are answered and skipped) is a close frame with ``code``; the
    closing handshake is then completed."""
    try:
        message = await asyncio.wait_for(ws.recv(), STEP)
    except ConnectionClosed as closed:
        assert closed.rcvd is not None, f"{what}: no close frame ({closed})"
        assert closed.rcvd.code == code, f"{what}: closed with {closed.rcvd}"
    else:
        pytest.fail(f"{what}: expected a close frame with {code}, got {message!r:.200}")


@pytest.mark.parametrize("case", HOSTILE["cases"], ids=[c["name"] for c in HOSTILE["cases"]])
async def test_a_hostile_client_gets_the_rust_servers_answer(case: dict[str, Any]) -> None:
    # The only server setting a case needs is the keepalive's (in ms in the table).
    settings = case.get("server", {})
    name = case["name"]
    server, seen = hostile_server()
    served = await server.serve_ws(
        port=0,
        ping_interval=settings["ping_interval_ms"] / 1000 if settings else None,
        ping_timeout=settings["ping_timeout_ms"] / 1000 if settings else None,
    )
    try:
        ws, status = await raw_upgrade(served.url, case)
        assert status == case["upgrade"]["status"], name
        if ws is not None:
            chosen = ws.response.headers.get_all("Sec-WebSocket-Protocol") if ws.response else []
            echoed = case["upgrade"]["subprotocol"]
            assert chosen == ([] if echoed is None else [echoed]), f"{name}: {chosen}"
            await run_steps(ws, case, seen)
        # The server stays up: a fresh client is served end to end.
        async with oxmcp.Client.websocket(served.url, timeout=20, connect_timeout=STEP) as c:
            result = await c.call_tool("echo", {"text": "still here"})
            assert result["content"][0]["text"] == "still here", name
    finally:
        await served.shutdown()


async def run_steps(
    ws: ClientConnection,
    case: dict[str, Any],
    seen: dict[str, asyncio.Event],
) -> None:
    init = HOSTILE["initialize"]
    await ws.send(json.dumps(init["request"]))
    check_json(await next_json(ws, "initialize"), {"expect_json": init["expect"]}, "initialize")
    await ws.send(json.dumps(init["initialized"]))
    done = False
    for i, step in enumerate(case["steps"]):
        what = f"{case['name']}, step {i}"
        if "send_json" in step:
            await ws.send(json.dumps(step["send_json"]))
        elif "send_text" in step:
            await ws.send(step["send_text"])
        elif "send_binary_json" in step:
            await ws.send(json.dumps(step["send_binary_json"]).encode())
        elif "send_echo_bytes" in step:
            huge = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x" * step["send_echo_bytes"]}},
            }
            # The server may close while the frame is still going out.
            with contextlib.suppress(ConnectionClosed):
                await asyncio.wait_for(ws.send(json.dumps(huge)), STEP)
        elif "expect_json" in step:
            check_json(await next_json(ws, what), step, what)
        elif "expect_close" in step:
            await expect_close(ws, step["expect_close"], what)
            done = True
        elif "await_handler" in step:
            await asyncio.wait_for(seen[step["await_handler"]].wait(), STEP)
        elif "drop" in step:
            if step["drop"] == "reset":
                ws.transport.abort()
            else:
                await asyncio.wait_for(ws.close(), STEP)
            done = True
        elif "silent_ms" in step:
            # Nothing read, so no ping answered (the raw client pings nothing itself).
            ws.transport.pause_reading()
            await asyncio.sleep(step["silent_ms"] / 1000)
            ws.transport.resume_reading()
        else:
            pytest.fail(f"{what}: unknown step {step}")
    if not done:
        await asyncio.wait_for(ws.close(), STEP)
