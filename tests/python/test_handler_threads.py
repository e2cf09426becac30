"""Where handlers run, and what that must not change: a ``def`` handler runs on the runtime
worker that polls its request (its other work handed to another thread meanwhile), so a slow
one stalls nothing else, two of them run at once, exceptions become ``isError``, and a
cancelled call leaves the session usable. An ``async def`` that awaits runs on the serving
loop. A server process exits cleanly, code 0, at stdin EOF and on SIGINT with handlers still
running, and a handler raising SystemExit or KeyboardInterrupt fails only its own call."""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import json
import platform
import signal
import subprocess
import textwrap
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import oxmcp
import pytest
from conftest import PY

REQUEST = contextvars.ContextVar("REQUEST", default="unset")


class Fixture:
    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.done = threading.Event()
        self.barrier = threading.Barrier(2, timeout=5)
        self.finished: list[str] = []


@pytest.fixture
async def served() -> AsyncIterator[tuple[Fixture, str]]:
    f = Fixture()
    server = oxmcp.Server("threads")

    @server.tool()
    def hold(tag: str) -> str:
        """Blocks until the test opens the gate."""
        f.entered.set()
        assert f.gate.wait(10), "the gate never opened"
        f.finished.append(tag)
        f.done.set()
        return tag

    @server.tool()
    def quick(n: int) -> int:
        return n * 2

    @server.tool()
    def meet(tag: str) -> str:
        """Returns only once a second call is inside the handler too."""
        f.barrier.wait()
        return tag

    @server.tool()
    def fails(n: int) -> str:
        raise ValueError(f"no {n}")

    @server.tool()
    def exits(how: str) -> str:
        if how == "exit":
            raise SystemExit(3)
        raise KeyboardInterrupt

    @server.tool()
    async def awaits(n: int) -> str:
        await asyncio.sleep(0.01)
        loop_thread = threading.get_ident() == asyncio.get_running_loop()._thread_id  # type: ignore[attr-defined]
        return f"{n * 2} {loop_thread} {REQUEST.get()}"

    REQUEST.set("from-serve")
    http = await server.serve_http(port=0)
    try:
        yield f, http.url
    finally:
        f.gate.set()
        await http.shutdown()


async def test_a_slow_def_blocks_neither_its_session_nor_another(
    served: tuple[Fixture, str],
) -> None:
    f, url = served
    async with oxmcp.Client.http(url) as one, oxmcp.Client.http(url) as two:
        slow = asyncio.ensure_future(one.call_tool("hold", {"tag": "slow"}))
        assert await asyncio.to_thread(f.entered.wait, 10)
        # The slow handler is still inside its call: both sessions are answered meanwhile.
        assert (await one.call_tool("quick", {"n": 2}))["structuredContent"] == {"result": 4}
        assert (await two.call_tool("quick", {"n": 3}))["structuredContent"] == {"result": 6}
        bad = await two.call_tool("quick", {"n": "three"})
        assert bad["isError"] is True
        assert not slow.done() and f.finished == []
        f.gate.set()
        assert (await slow)["content"][0]["text"] == "slow"


async def test_two_def_handlers_run_at_once(served: tuple[Fixture, str]) -> None:
    f, url = served
    async with oxmcp.Client.http(url) as client:
        # Each call returns only when the other is in its handler too.
        both = await asyncio.gather(
            client.call_tool("meet", {"tag": "a"}), client.call_tool("meet", {"tag": "b"})
        )
        assert sorted(r["content"][0]["text"] for r in both) == ["a", "b"]
        # The neighbour: alone, the call waits for a partner that never comes and fails.
        f.barrier.reset()
        alone = await client.call_tool("meet", {"tag": "alone"})
        assert alone["isError"] is True
        assert "BrokenBarrierError" in alone["content"][0]["text"]


async def test_def_exceptions_become_is_error(served: tuple[Fixture, str]) -> None:
    _, url = served
    async with oxmcp.Client.http(url) as client:
        failed = await client.call_tool("fails", {"n": 7})
        assert failed["isError"] is True
        assert "ValueError: no 7" in failed["content"][0]["text"]
        for how, name in [("exit", "SystemExit"), ("interrupt", "KeyboardInterrupt")]:
            r = await client.call_tool("exits", {"how": how})
            assert r["isError"] is True, r
            assert name in r["content"][0]["text"]
        # The server is still there.
        assert (await client.call_tool("quick", {"n": 5}))["structuredContent"] == {"result": 10}


async def test_cancelling_a_running_def_call_leaves_the_session_usable(
    served: tuple[Fixture, str],
) -> None:
    f, url = served
    async with oxmcp.Client.http(url) as client:
        task = asyncio.ensure_future(client.call_tool("hold", {"tag": "cancelled"}))
        assert await asyncio.to_thread(f.entered.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # A running `def` cannot be interrupted: it finishes, and its answer is dropped.
        f.gate.set()
        assert await asyncio.to_thread(f.done.wait, 10)
        assert f.finished == ["cancelled"]
        assert (await client.call_tool("quick", {"n": 1}))["structuredContent"] == {"result": 2}
        assert (await client.call_tool("quick", {"n": None}))["isError"] is True


async def test_an_async_def_that_awaits_runs_on_the_loop(served: tuple[Fixture, str]) -> None:
    _, url = served
    async with oxmcp.Client.http(url) as client:
        r = await client.call_tool("awaits", {"n": 21})
        assert r["content"][0]["text"] == "42 True from-serve"
        assert (await client.call_tool("awaits", {"n": "x"}))["isError"] is True


SERVER = textwrap.dedent(
    """
    import asyncio, sys, threading, time
    from oxmcp import Server

    # A thread of the program's own, which does not block signals (as Python threads do not).
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()

    server = Server("exiting")

    @server.tool()
    def block(seconds: float) -> str:
        print("entered block", file=sys.stderr, flush=True)
        time.sleep(seconds)
        return "slept"

    @server.tool()
    async def wait(seconds: float) -> str:
        print("entered wait", file=sys.stderr, flush=True)
        await asyncio.sleep(seconds)
        return "waited"

    server.run()
    """
)


def _line(obj: object) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def _signal_blocked(pid: int, tid: int, signum: int) -> bool:
    for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
        if line.startswith("SigBlk:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    raise AssertionError(f"no SigBlk for thread {tid}")


def _sigint_to_a_thread_of_its_own(pid: int) -> None:
    """Sends SIGINT to one thread of the program's own (not the main thread, not the
    runtime's), as the kernel may do with a process-wide signal; and checks on the way that
    every runtime thread blocks it."""
    user = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        tid = int(task.name)
        name = (task / "comm").read_text().strip()
        if name.startswith("oxmcp"):
            assert _signal_blocked(pid, tid, signal.SIGINT), f"runtime thread {name} takes SIGINT"
        elif tid != pid:
            user.append(tid)
    assert user, "the server's own thread is missing"
    tgkill = {"x86_64": 234, "aarch64": 131}[platform.machine()]
    assert ctypes.CDLL(None, use_errno=True).syscall(tgkill, pid, user[0], signal.SIGINT) == 0


@pytest.mark.parametrize("how", ["eof", "sigint", "sigint-on-a-thread"])
def test_server_exits_cleanly_with_handlers_in_flight(how: str, tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    # The context manager closes the pipes and reaps the process however the test ends.
    with subprocess.Popen(
        [PY, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdin and proc.stdout and proc.stderr
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        calls = [("block", 30), ("block", 30), ("wait", 30), ("block", 0)]
        for i, (name, seconds) in enumerate(calls, start=2):
            params = {"name": name, "arguments": {"seconds": seconds}}
            call = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
            proc.stdin.write(_line(call))
        proc.stdin.flush()
        # Every handler is inside its call before the process is told to stop.
        # Counted, not parsed by line: prints from handler threads may share a line.
        seen = ""
        while seen.count("entered block") < 3 or seen.count("entered wait") < 1:
            line = proc.stderr.readline().decode()
            assert line, f"the server died early: {seen}"
            seen += line
        answered = []
        while len(answered) < 2:
            line = proc.stdout.readline()
            assert line, proc.stderr.read().decode()[-2000:]
            answered.append(json.loads(line)["id"])
        assert answered == [1, 5], answered
        if how == "eof":
            proc.stdin.close()
        elif how == "sigint":
            proc.send_signal(signal.SIGINT)
        else:
            _sigint_to_a_thread_of_its_own(proc.pid)
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the server hung at exit")
        stderr = proc.stderr.read().decode()
        assert code == 0, stderr[-2000:]
        assert "Traceback" not in stderr and "abort" not in stderr.lower(), stderr[-2000:]
