"""The exception hierarchy: one class under oxmcp.McpError per core error kind, each reached
for real where a test can provoke it, and each checked through the one native mapper."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import oxmcp
import pytest
from conftest import EVERYTHING, PY
from oxmcp import _native

CLASSES = {
    "rpc": oxmcp.RpcError,
    "timeout": oxmcp.RequestTimeoutError,
    "cancelled": oxmcp.RequestCancelledError,
    "connection_closed": oxmcp.ConnectionClosedError,
    "spawn": oxmcp.SpawnError,
    "io": oxmcp.TransportError,
    "protocol": oxmcp.ProtocolError,
    "unsupported_protocol_version": oxmcp.UnsupportedProtocolVersionError,
    "invalid_schema": oxmcp.InvalidSchemaError,
    "invalid_argument": oxmcp.InvalidArgumentError,
    "config": oxmcp.ConfigError,
    "auth": oxmcp.AuthError,
    "task_required": oxmcp.TaskRequiredError,
    "handshake_incomplete": oxmcp.HandshakeIncompleteError,
}


def test_every_core_kind_has_its_class() -> None:
    kinds = dict(_native.error_kinds())
    assert set(kinds) == set(CLASSES)
    for kind, name in kinds.items():
        assert CLASSES[kind].__name__ == name
        assert issubclass(CLASSES[kind], oxmcp.McpError)


@pytest.mark.parametrize("kind", sorted(CLASSES))
def test_the_mapper_builds_each_class_with_its_attributes(kind: str) -> None:
    with pytest.raises(oxmcp.McpError) as info:
        _native._raise_kind(kind)
    err = info.value
    assert type(err) is CLASSES[kind]
    assert err.kind == kind
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err) and str(clone) == str(err)
    if kind == "rpc":
        assert err.code == -32602
    if kind == "timeout":
        assert err.method == "tools/call" and err.after == 1.5  # type: ignore[attr-defined]
    if kind == "connection_closed":
        assert err.stderr == "last words"  # type: ignore[attr-defined]
    if kind == "spawn":
        assert err.command == "nowhere"  # type: ignore[attr-defined]
    if kind == "unsupported_protocol_version":
        assert err.requested == "1999-01-01"  # type: ignore[attr-defined]
        assert err.supported == ["2025-11-25"]  # type: ignore[attr-defined]
    if kind == "task_required":
        assert err.tool == "synthetic"  # type: ignore[attr-defined]
    if kind == "config":
        assert isinstance(err, oxmcp.ConfigError)
        assert (err.file, err.server, err.field) == ("mcp.json", "weather", "command")
    with pytest.raises(ValueError):
        _native._raise_kind("no-such-kind")


async def test_spawn_failure_names_the_command() -> None:
    with pytest.raises(oxmcp.SpawnError) as info:
        async with oxmcp.Client.stdio("/nonexistent/mcp-server", ["--x"]):
            pass
    assert "/nonexistent/mcp-server" in str(info.value)
    assert info.value.command.startswith("/nonexistent/mcp-server")  # type: ignore[attr-defined]


async def test_a_server_that_dies_gives_connection_closed_with_its_stderr(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text("import sys\nsys.stderr.write('fatal: no config\\n')\nsys.exit(3)\n")
    with pytest.raises(oxmcp.ConnectionClosedError) as info:
        async with oxmcp.Client.stdio(PY, [str(script)]):
            pass
    assert "fatal: no config" in (info.value.stderr or "")  # type: ignore[attr-defined]


async def test_a_server_that_is_not_mcp_is_a_clear_error(tmp_path: Path) -> None:
    script = tmp_path / "chatty.py"
    script.write_text("print('hello, I am not JSON-RPC')\nimport time\ntime.sleep(30)\n")
    with pytest.raises(oxmcp.McpError):
        async with oxmcp.Client.stdio(PY, [str(script)], timeout=3):
            pass


async def test_timeout_and_rpc_and_invalid_argument(client: oxmcp.Client) -> None:
    with pytest.raises(oxmcp.RequestTimeoutError):
        await client.call_tool("never_returns", timeout=0.2)
    with pytest.raises(oxmcp.RpcError) as info:
        await client.request("no/such/method")
    assert info.value.code == -32601
    with pytest.raises(oxmcp.InvalidArgumentError):
        await client.call_tool("add", {"a": 1}, timeout=-1)
    with pytest.raises(oxmcp.InvalidArgumentError, match="invalid log level"):
        await client.set_logging_level("loud")


async def test_calls_after_close_are_connection_closed() -> None:
    c = await oxmcp.Client.stdio(PY, [str(EVERYTHING)])
    await c.close()
    with pytest.raises(oxmcp.ConnectionClosedError):
        await c.call_tool("add", {"a": 1, "b": 2})


def test_bad_definitions_are_refused_at_registration() -> None:
    server = oxmcp.Server("bad")
    with pytest.raises(oxmcp.InvalidSchemaError):
        server.add_tool(lambda: "x", name="bad", input_schema={"type": 12})
    with pytest.raises(oxmcp.InvalidArgumentError):
        server.add_tool(lambda: "x", name="has space")
    with pytest.raises(oxmcp.McpError):

        @server.resource("test://{unclosed")
        def broken() -> str:
            return ""

    with pytest.raises(ValueError):
        server.completion(argument="x")
    with pytest.raises(oxmcp.InvalidArgumentError):

        @server.completion(prompt="missing", argument="x")
        def nothing(value: str, context: dict[str, str]) -> list[str]:
            return []


def test_serving_outside_an_event_loop_is_a_clear_error() -> None:
    server = oxmcp.Server("no-loop")
    with pytest.raises(RuntimeError, match="running asyncio event loop"):
        server._native.serve_stdio()
    assert sys.modules["oxmcp"] is oxmcp


# A peer's JSON-RPC error message and its stderr, laced with what would rewrite a terminal:
# an OSC title change, BEL, CR (to overwrite the line), clear-screen and a bidi override.
HOSTILE = "\x1b]0;pwned\x07\r\x1b[2J\u202eoxmcp: logged in"
RAW_CONTROL = [chr(c) for c in range(0x20) if c != 0x0A] + ["\x7f", "\x9b", "\u202e"]

HOSTILE_PEER = r"""
import json, sys
EVIL = json.loads(sys.argv[1])
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities":
             {"tools": {}}, "serverInfo": {"name": "evil", "version": "1"}}}
    elif m["method"] == "tools/call" and m["params"]["name"] == "die":
        sys.stderr.write("last words" + EVIL + "\n")
        sys.stderr.flush()
        sys.exit(3)
    elif m["method"] == "tools/call":
        r = {"error": {"code": -32000, "message": "refused" + EVIL, "data": {"why": EVIL}}}
    else:
        r = {"error": {"code": -32601, "message": "method not found"}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], **r}) + "\n")
    sys.stdout.flush()
"""


async def test_peer_text_in_exception_messages_is_sanitized(tmp_path: Path) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE_PEER)
    async with oxmcp.Client.stdio(PY, [str(script), json.dumps(HOSTILE)]) as client:
        with pytest.raises(oxmcp.RpcError) as info:
            await client.call_tool("anything", {})
        message = str(info.value)
        assert not [c for c in RAW_CONTROL if c in message], repr(message)
        # Shown, escaped, not dropped; the exact text stays in the error's data.
        assert "\\x1b]0;pwned\\x07\\r" in message and "\\u202e" in message
        assert info.value.data == {"why": HOSTILE}
        with pytest.raises(oxmcp.ConnectionClosedError) as closed:
            await client.call_tool("die", {})
    message = str(closed.value)
    assert not [c for c in RAW_CONTROL if c in message], repr(message)
    assert HOSTILE in (closed.value.stderr or "")  # type: ignore[attr-defined]
