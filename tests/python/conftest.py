"""Shared fixtures and helpers: paths, the `everything` server as a stdio child or an HTTP
process, and the official Python SDK as a peer (imported quietly, its client's callbacks, its
HTTP server started)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import oxmcp
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EVERYTHING = HERE / "servers" / "everything.py"
INTEROP = REPO / "tests" / "interop" / "python"
PY = sys.executable


def pytest_sessionstart(session: pytest.Session) -> None:
    # The point of these tests is the installed wheel, never the source tree.
    assert "bindings-python" not in (oxmcp.__file__ or ""), oxmcp.__file__


@pytest.fixture
async def client() -> AsyncIterator[oxmcp.Client]:
    async with oxmcp.Client.stdio(PY, [str(EVERYTHING)], name="pytest") as c:
        yield c


def raw_initialize(client_name: str = "raw", client_version: str = "0") -> dict[str, Any]:
    """The ``initialize`` request (id 1, 2025-11-25) for the tests that write the wire
    themselves."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": client_version},
        },
    }


def start_http(script: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Starts an HTTP fixture (ours: it says ``... listening on URL`` on stderr) and returns it
    with its URL."""
    proc = subprocess.Popen(
        [PY, str(script), "--http", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening on " in line:
            return proc, line.split("listening on ", 1)[1].strip()
    proc.kill()
    proc.wait(10)
    raise RuntimeError(f"{script} never listened (exit {proc.returncode})")


def start_sdk_http(mode: str) -> tuple[subprocess.Popen[str], str]:
    """Starts the SDK's Streamable HTTP server (tests/interop/python/http_server.py serving
    feature_server.py) in one of its modes (``streamable``, ``json``, ``stateless``) and
    returns it with its URL (read from its stdout)."""
    proc = subprocess.Popen(
        [PY, str(INTEROP / "http_server.py"), "features", mode, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "http://127.0.0.1:" in line:
            start = line.index("http://127.0.0.1:")
            return proc, line[start:].split()[0].rstrip(".,")
    proc.kill()
    proc.wait(10)
    raise RuntimeError("the SDK server never listened: " + "".join(lines))


def stop(proc: subprocess.Popen[str]) -> None:
    """Stops a server started by :func:`start_http` or :func:`start_sdk_http`."""
    proc.terminate()
    proc.wait(10)
    for pipe in (proc.stdout, proc.stderr):
        if pipe:
            pipe.close()


@contextmanager
def serving_http(script: Path, *args: str) -> Iterator[str]:
    """:func:`start_http` for the length of a ``with``: its URL."""
    proc, url = start_http(script, *args)
    try:
        yield url
    finally:
        stop(proc)


@pytest.fixture
def http_url() -> Iterator[str]:
    with serving_http(EVERYTHING) as url:
        yield url


def sdk() -> Any:
    """The official SDK's package, its deprecation warnings (errors here) silenced."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    import mcp

    return mcp


def sdk_client_callbacks() -> dict[str, Any]:
    """The SDK client's answers to what the `everything` server asks back: sampling says
    "hi", elicitation accepts ``{"name": "Ada"}``, the one root is ``file:///r``."""
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
