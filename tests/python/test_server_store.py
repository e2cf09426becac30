"""`serve_http(store="redis://...")`: Python server replicas sharing sessions through a private
`redis-server` (Debian's; `make scale-out-deps` installs it) on a free loopback port. A
session initialized on one replica is served by the others (tools/call), an elicitation asked
by one replica is answered through another, and a multi round-trip (2026-07-28) request
started on one finishes on another (a shared `state_key`). A bad store URL is a typed error.
"""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import oxmcp
import pytest
from conftest import PY, REPO, start_http, stop

FIXTURE = REPO / "examples" / "python" / "conformance_server.py"
STATE_KEY = "ab" * 32
VERSION = "2025-11-25"

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="needs redis-server (make scale-out-deps)"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "redis-server exited"
                assert time.monotonic() < deadline, "redis-server did not listen"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def replicas(redis_url: str) -> Iterator[list[str]]:
    replica = ("--port", "0", "--store", redis_url, "--state-key", STATE_KEY)
    started = [start_http(FIXTURE, *replica) for _ in range(3)]
    try:
        yield [url for _, url in started]
    finally:
        for proc, _ in started:
            stop(proc)


class Http:
    """One POST to a replica, its answer read as JSON or as SSE events one by one."""

    def __init__(self, url: str, body: Any, headers: dict[str, str] | None = None) -> None:
        u = urlparse(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        self.conn.request(
            "POST",
            u.path,
            json.dumps(body),
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **(headers or {}),
            },
        )
        self.resp = self.conn.getresponse()

    def messages(self) -> Iterator[Any]:
        if self.resp.getheader("Content-Type", "").startswith("application/json"):
            yield json.loads(self.resp.read())
            return
        data: list[str] = []
        for raw in self.resp:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                text = "\n".join(data)
                data = []
                if text:
                    yield json.loads(text)

    def answer(self) -> Any:
        for m in self.messages():
            if "result" in m or "error" in m:
                return m
        raise AssertionError("the stream ended without an answer")

    def close(self) -> None:
        self.conn.close()


def rpc(url: str, body: Any, session: str | None = None) -> tuple[Any, str | None]:
    headers = {"MCP-Protocol-Version": VERSION}
    if session:
        headers["Mcp-Session-Id"] = session
    h = Http(url, body, headers)
    try:
        if h.resp.status == 202:
            return None, session
        assert h.resp.status == 200, (h.resp.status, h.resp.read())
        return h.answer(), h.resp.getheader("Mcp-Session-Id") or session
    finally:
        h.close()


def initialize(url: str, capabilities: dict[str, Any] | None = None) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "store-test", "version": "1"},
        },
    }
    answer, session = rpc(url, init)
    assert answer["result"]["protocolVersion"] == VERSION
    assert session
    return session


def test_a_session_opened_on_one_replica_is_served_by_the_others(replicas: list[str]) -> None:
    a, b, c = replicas
    session = initialize(a)
    rpc(b, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    for i, url in enumerate([b, c, a, c]):
        call = {
            "jsonrpc": "2.0",
            "id": 10 + i,
            "method": "tools/call",
            "params": {"name": "test_simple_text", "arguments": {}},
        }
        answer, _ = rpc(url, call, session)
        text = answer["result"]["content"][0]["text"]
        assert text == "This is a simple text response for testing."
    listed, _ = rpc(c, {"jsonrpc": "2.0", "id": 20, "method": "tools/list"}, session)
    assert "scale_out_touch" in {t["name"] for t in listed["result"]["tools"]}
    # A session id no replica knows is refused everywhere.
    h = Http(b, {"jsonrpc": "2.0", "id": 21, "method": "tools/list"}, {"Mcp-Session-Id": "nope"})
    assert h.resp.status == 404
    h.close()


def test_an_elicitation_is_answered_through_another_replica(replicas: list[str]) -> None:
    a, b, c = replicas
    session = initialize(a, {"elicitation": {}})
    rpc(a, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    call = {
        "jsonrpc": "2.0",
        "id": 30,
        "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "Who are you?"}},
    }
    asking = Http(b, call, {"MCP-Protocol-Version": VERSION, "Mcp-Session-Id": session})
    assert asking.resp.status == 200
    messages = asking.messages()
    question = next(m for m in messages if m.get("method") == "elicitation/create")
    assert question["params"]["message"] == "Who are you?"
    reply = {
        "jsonrpc": "2.0",
        "id": question["id"],
        "result": {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}},
    }
    # The answer goes to replica C; B, which runs the handler, must get it.
    done: list[Any] = []
    t = threading.Thread(target=lambda: done.append(rpc(c, reply, session)))
    t.start()
    answer = next(m for m in messages if "result" in m or "error" in m)
    t.join(30)
    asking.close()
    text = answer["result"]["content"][0]["text"]
    assert text.startswith("User response: action=accept")
    assert '"username":"ada"' in text


def test_a_multi_round_request_finishes_on_another_replica(replicas: list[str]) -> None:
    a, b, _ = replicas
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "store-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    params: dict[str, Any] = {
        "name": "test_input_required_result_elicitation",
        "arguments": {},
        "_meta": meta,
    }
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}
    headers["Mcp-Name"] = params["name"]
    first = Http(a, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers)
    round1 = first.answer()["result"]
    first.close()
    assert "user_name" in round1["inputRequests"], round1
    params = {
        **params,
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Grace"}}},
        "requestState": round1.get("requestState"),
    }
    if params["requestState"] is None:
        del params["requestState"]
    second = Http(b, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}, headers)
    round2 = second.answer()
    second.close()
    assert round2["result"]["content"][0]["text"] == "Hello, Grace!", round2


async def test_bad_store_urls_are_typed_errors() -> None:
    server = oxmcp.Server("store-errors")
    with pytest.raises(oxmcp.InvalidArgumentError, match="unsupported session store"):
        await server.serve_http(store="memcached://127.0.0.1:11211/")
    with pytest.raises(oxmcp.InvalidArgumentError, match="Redis URL"):
        await server.serve_http(store="redis://[not a host/")
    # Nothing listens on this port: a bounded connect, then a transport error.
    with pytest.raises(oxmcp.McpError, match="cannot reach Redis"):
        await server.serve_http(store=f"redis://127.0.0.1:{free_port()}/")
    # None of these left the server half-started.
    http = await server.serve_http()
    await http.shutdown()


def test_bad_state_keys_are_refused() -> None:
    with pytest.raises(oxmcp.InvalidArgumentError, match="32 bytes"):
        oxmcp.Server("short-key", state_key=b"too short")
    proc = subprocess.run(
        [PY, str(FIXTURE), "--http", "--state-key", "zz"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "--state-key needs 64 hex digits" in proc.stderr
