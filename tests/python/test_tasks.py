"""Tasks in the Python binding (issue 38), against the installed wheel: ``@server.tool(task=...)``
with ``def`` and ``async def`` handlers, ``client.call_tool_as_task`` and its ``TaskHandle``
(``status``, ``result``, ``cancel``, ``async for``), ``client.task(id)`` from another
connection, ``host.call_tool(..., task=True)``, and the official TypeScript SDK's tasks client
driving the Python conformance fixture. Each happy path has its bad-input neighbour: unknown
ids, a bad TTL, bad registrations, a handler that raises, a plain call of a task-only tool.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import time
from collections.abc import AsyncIterator

import oxmcp
import pytest
from conftest import PY, REPO, start_http, stop

FIXTURE = REPO / "examples" / "python" / "conformance_server.py"
TS_TASKS_CLIENT = REPO / "tests" / "interop" / "node" / "tasks_client.mjs"
ERAS = ["2025-11-25", "2026-07-28"]


class Seen:
    """What the handlers saw, for the assertions (set from the loop and from threads)."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.lock = threading.Lock()

    def add(self, event: str) -> None:
        with self.lock:
            self.events.append(event)

    async def wait_for(self, event: str) -> None:
        for _ in range(500):
            if event in self.events:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"{event!r} not seen; saw {self.events}")


def make_server(seen: Seen) -> oxmcp.Server:
    server = oxmcp.Server("tasks-test", "1.0.0")

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: oxmcp.Context) -> str:
        """Sleeps, then says so."""
        await ctx.report_status("sleeping")
        await asyncio.sleep(seconds)
        return f"slept {seconds:g}"

    @server.tool(task=True)
    async def watched(ctx: oxmcp.Context) -> str:
        """Runs until cancelled."""
        seen.add("async started")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.add("async cancelled")
            raise
        return "never"

    @server.tool(task="optional")
    def watched_def(ctx: oxmcp.Context) -> str:
        """A def handler: it sees its cancellation as a flag."""
        seen.add("def started")
        for _ in range(1000):
            if ctx.is_cancelled:
                seen.add("def cancelled")
                return "stopped"
            time.sleep(0.01)
        return "never cancelled"

    @server.tool(task="optional")
    async def boom() -> str:
        """Raises."""
        raise RuntimeError("kaboom")

    @server.tool(task="required")
    async def must() -> str:
        """Only runs as a task."""
        return "ran as a task"

    return server


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, Seen]]:
    seen = Seen()
    server = make_server(seen)
    http = await server.serve_http(port=0)
    try:
        yield http.url, seen
    finally:
        await http.shutdown()


async def test_a_task_outlives_its_client_and_another_collects_it(
    served: tuple[str, Seen],
) -> None:
    url, _ = served
    async with oxmcp.Client.http(url) as first:
        handle = await first.call_tool_as_task("slow", {"seconds": 0.5})
        task_id = handle.id
        assert task_id is not None and len(task_id) == 22
        status = await handle.status()
        assert status["taskId"] == task_id
        assert status["status"] in ("working", "completed")
    # The first client is gone; the task is not.
    async with oxmcp.Client.http(url) as second:
        result = await second.task(task_id).result()
        assert result["content"][0]["text"] == "slept 0.5"
        # The neighbour: an id nobody created.
        with pytest.raises(oxmcp.RpcError) as unknown:
            await second.task("no-such-task").status()
        assert unknown.value.code == -32602


@pytest.mark.parametrize("era", ERAS)
async def test_cancel_reaches_async_and_def_handlers(served: tuple[str, Seen], era: str) -> None:
    url, seen = served
    seen.events.clear()
    async with oxmcp.Client.http(url, protocol_version=era) as c:
        for tool, started, cancelled in [
            ("watched", "async started", "async cancelled"),
            ("watched_def", "def started", "def cancelled"),
        ]:
            handle = await c.call_tool_as_task(tool)
            await seen.wait_for(started)
            await handle.cancel()
            await seen.wait_for(cancelled)
            assert (await handle.status())["status"] == "cancelled"
            with pytest.raises(oxmcp.RequestCancelledError):
                await handle.result()
            await handle.cancel()  # again: harmless


@pytest.mark.parametrize("era", ERAS)
async def test_a_raising_handler_and_a_task_only_tool(served: tuple[str, Seen], era: str) -> None:
    url, _ = served
    async with oxmcp.Client.http(url, protocol_version=era) as c:
        handle = await c.call_tool_as_task("boom")
        result = await handle.result()
        assert result.get("isError") is True
        assert "kaboom" in result["content"][0]["text"]
        # 2025-11-25 counts a tool error as failed; 2026-07-28 as completed with isError.
        want = "failed" if era == "2025-11-25" else "completed"
        assert (await handle.status())["status"] == want
        with pytest.raises(oxmcp.TaskRequiredError) as refused:
            await c.call_tool("must")
        assert refused.value.tool == "must"
        assert "call_tool_as_task" in str(refused.value)
        ran = await (await c.call_tool_as_task("must")).result()
        assert ran["content"][0]["text"] == "ran as a task"


@pytest.mark.parametrize("era", ERAS)
async def test_async_for_follows_the_status_to_the_end(served: tuple[str, Seen], era: str) -> None:
    url, _ = served
    async with oxmcp.Client.http(url, protocol_version=era) as c:
        handle = await c.call_tool_as_task("slow", {"seconds": 1.2}, ttl=120)
        seen: list[tuple[str, str | None]] = []
        async for status in handle:
            seen.append((status["status"], status.get("statusMessage")))
        assert ("working", "sleeping") in seen, seen
        assert seen[-1][0] == "completed"
        granted = (await handle.status()).get("ttl", (await handle.status()).get("ttlMs"))
        assert granted is not None and granted > 0
        # The neighbour: a TTL that is not a duration.
        with pytest.raises(oxmcp.InvalidArgumentError):
            await c.call_tool_as_task("slow", {"seconds": 0}, ttl=-1)


def test_bad_task_registrations_are_refused() -> None:
    server = oxmcp.Server("bad", "1.0.0")

    async def tool() -> str:
        return "x"

    with pytest.raises(oxmcp.McpError):
        server.add_tool(tool, task="sometimes")  # type: ignore[arg-type]
    with pytest.raises(oxmcp.InvalidArgumentError):
        server.add_tool(tool, task="optional", task_start="later")  # type: ignore[arg-type]
    server.add_tool(tool, name="fine", task="optional", task_start="deferred")
    listed = {t["name"]: t for t in server.list_tools()}
    assert listed["fine"]["execution"] == {"taskSupport": "optional"}


async def test_the_host_runs_a_call_as_a_task() -> None:
    config = {"mcpServers": {"fixture": {"command": PY, "args": [str(FIXTURE)]}}}
    async with oxmcp.Host.from_config(config) as host:
        r = await host.call_tool(
            "fixture", "slow_compute", {"seconds": 0.2, "label": "hosted"}, task=True
        )
        assert r["content"][0]["text"] == "hosted: computed after 0.2 s"
        r = await host.call_tool("fixture", "failing_job", task=True)
        assert r.get("isError") is True
        with pytest.raises(oxmcp.TaskRequiredError):
            await host.call_tool("fixture", "failing_job")


def ts_tasks_client(*args: str) -> subprocess.CompletedProcess[str]:
    """Runs the TypeScript SDK 1.x tasks client (tests/interop/node/tasks_client.mjs)."""
    node_modules = TS_TASKS_CLIENT.parent / "node_modules" / "@modelcontextprotocol" / "sdk"
    if shutil.which("node") is None or not node_modules.exists():
        if os.environ.get("OXMCP_REQUIRE_INTEROP") == "1":
            raise AssertionError("node or the TypeScript SDK is missing (make interop-deps)")
        pytest.skip("node or the TypeScript SDK is not installed (make interop-deps)")
    return subprocess.run(
        ["node", str(TS_TASKS_CLIENT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=TS_TASKS_CLIENT.parent,
    )


def test_the_typescript_sdk_tasks_client_drives_the_python_fixture_over_stdio() -> None:
    out = ts_tasks_client("stdio", PY, str(FIXTURE))
    assert out.returncode == 0 and out.stdout.endswith("all checks passed\n"), (
        out.stdout + out.stderr
    )


def test_the_typescript_sdk_tasks_client_drives_the_python_fixture_over_http() -> None:
    proc, url = start_http(FIXTURE, "--port", "0")
    try:
        out = ts_tasks_client("http", url)
        assert out.returncode == 0 and out.stdout.endswith("all checks passed\n"), (
            out.stdout + out.stderr
        )
    finally:
        stop(proc)
