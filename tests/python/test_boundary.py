"""The boundary under load and abuse: concurrency, the GIL, cancellation both ways, handlers
that misbehave, stdout hygiene, process exit with live children, and one server on two loops."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import oxmcp
import pytest
from conftest import EVERYTHING, PY, raw_initialize


async def test_thousand_concurrent_calls(client: oxmcp.Client) -> None:
    results = await asyncio.gather(
        *(client.call_tool("add", {"a": i, "b": 1}) for i in range(1000))
    )
    assert [r["structuredContent"]["result"] for r in results] == [i + 1 for i in range(1000)]
    results = await asyncio.gather(
        *(client.call_tool("echo", {"text": str(i)}) for i in range(1000))
    )
    assert [r["structuredContent"]["result"] for r in results] == [str(i) for i in range(1000)]


async def test_gil_is_released_while_rust_awaits(client: oxmcp.Client) -> None:
    ticks = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        before = ticks
        r = await client.call_tool("blocking_sleep", {"seconds": 0.5})
        during = ticks - before
    finally:
        stop.set()
        thread.join()
    assert r["content"][0]["text"].startswith("slept on")
    # The thread ran while we awaited the call (it could not, had the GIL been held).
    assert during > 1000, during


async def test_task_cancel_sends_cancelled_and_handler_sees_it(client: oxmcp.Client) -> None:
    task = asyncio.ensure_future(client.call_tool("slow", {"seconds": 30}))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # notifications/cancelled reached the server, which cancelled the Python handler.
    for _ in range(50):
        seen = (await client.call_tool("events"))["structuredContent"]["result"]
        if any(e.startswith("slow cancelled") for e in seen):
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail(f"the handler never saw CancelledError: {seen}")
    assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}


async def test_timeout_cancels_a_handler_that_never_returns(client: oxmcp.Client) -> None:
    with pytest.raises(oxmcp.RequestTimeoutError) as info:
        await client.call_tool("never_returns", timeout=0.5)
    assert info.value.method == "tools/call"
    for _ in range(50):
        seen = (await client.call_tool("events"))["structuredContent"]["result"]
        if "never_returns cancelled" in seen:
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail(f"the handler was never cancelled: {seen}")


async def test_asyncio_timeout_works_too(client: oxmcp.Client) -> None:
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await client.call_tool("never_returns")
    assert (await client.call_tool("add", {"a": 2, "b": 2}))["structuredContent"] == {"result": 4}


async def test_progress_callback(client: oxmcp.Client) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    r = await client.call_tool(
        "slow", {"seconds": 0.2}, progress_callback=lambda p, t, m: seen.append((p, t, m))
    )
    assert r["content"][0]["text"] == "done"
    await asyncio.sleep(0.05)
    assert seen[:2] == [(0, 10, "step 0"), (1, 10, "step 1")], seen


async def test_print_in_a_stdio_handler_never_corrupts_the_stream() -> None:
    async with oxmcp.Client.stdio(PY, [str(EVERYTHING)]) as c:
        for _ in range(20):
            r = await c.call_tool("printer", {"text": '{"jsonrpc": "2.0", "id": 1}'})
            assert r["content"][0]["text"] == "printed"
        assert (await c.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}


def test_print_goes_to_stderr_raw_stdio(tmp_path: Path) -> None:
    """Byte-level check: every stdout line is JSON-RPC; the prints are on stderr."""
    import json

    init = raw_initialize()
    lines = [
        init,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "printer", "arguments": {"text": "x"}},
        },
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in lines)
    proc = subprocess.run(
        [PY, str(EVERYTHING)], input=stdin, capture_output=True, text=True, timeout=30
    )
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [m.get("id") for m in out] == [1, 2], proc.stdout
    assert "this goes to stderr" in proc.stderr
    assert "and so does this" in proc.stderr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is reaped by its parent; count it as gone only once it is not ours to reap.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("how", ["normal", "exception", "sigterm"])
def test_interpreter_exit_leaves_no_orphan(how: str, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    script = tmp_path / "host.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, os, sys
            import oxmcp

            async def main():
                clients = []
                for _ in range(2):
                    c = await oxmcp.Client.stdio({PY!r}, [{str(EVERYTHING)!r}])
                    clients.append(c)
                r = await clients[0].request("tools/call", {{"name": "who", "arguments": {{}}}})
                with open({str(pidfile)!r}, "w") as f:
                    f.write(str(os.getpid()))
                print("ready", flush=True)
                await asyncio.to_thread(sys.stdin.readline)  # the test has seen the children
                if {how!r} == "exception":
                    raise RuntimeError("the host crashed")
                if {how!r} == "sigterm":
                    await asyncio.sleep(60)

            asyncio.run(main())
            """
        )
    )
    proc = subprocess.Popen(
        [PY, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == "ready"
    children = _children(proc.pid)
    assert len(children) == 2, children
    proc.stdin.write("go\n")
    proc.stdin.close()
    if how == "sigterm":
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    proc.stdout.close()
    stderr = proc.stderr.read() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    # Exit as Python means it, never an abort from a runtime thread caught by finalization.
    expected = {"normal": 0, "exception": 1, "sigterm": -signal.SIGTERM}[how]
    assert proc.returncode == expected, stderr[-2000:]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in children):
        time.sleep(0.1)
    assert not [p for p in children if _alive(p)], "server processes outlived the host"


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append(int(entry.name))
    return out


def test_one_server_two_loops_is_a_clear_error() -> None:
    server = oxmcp.Server("shared")

    @server.tool()
    async def hello() -> str:
        return "hi"

    started = threading.Event()
    release = threading.Event()
    errors: list[BaseException] = []

    async def serve_a() -> None:
        http = await server.serve_http(port=0)
        started.set()
        while not release.is_set():  # noqa: ASYNC110 (set from another thread)
            await asyncio.sleep(0.05)
        await http.shutdown()

    thread = threading.Thread(target=lambda: asyncio.run(serve_a()))
    thread.start()
    try:
        assert started.wait(30)

        async def serve_b() -> None:
            try:
                await server.serve_http(port=0)
            except BaseException as e:
                errors.append(e)

        asyncio.run(serve_b())
    finally:
        release.set()
        thread.join(30)
    assert len(errors) == 1 and isinstance(errors[0], RuntimeError), errors
    assert "another event loop" in str(errors[0])

    # Once the first loop is done, the server may serve from a new one.
    async def serve_c() -> str:
        http = await server.serve_http(port=0)
        async with oxmcp.Client.http(http.url) as c:
            r = await c.call_tool("hello")
        await http.shutdown()
        return r["content"][0]["text"]

    assert asyncio.run(serve_c()) == "hi"


HI_SERVER = (
    "import oxmcp\ns = oxmcp.Server('s')\n@s.tool()\ndef hi() -> str:\n    return 'hi'\ns.run()\n"
)


def test_fork_gets_a_fresh_runtime(http_url: str) -> None:
    # A forked child gets its own runtime and its own spawner thread: it can reach an HTTP
    # server and start (and reap) a stdio server of its own, while the parent goes on too.
    code = textwrap.dedent(
        f"""
        import asyncio, os, sys
        import oxmcp

        STDIO = [sys.executable, "-c", {HI_SERVER!r}]

        async def call():
            async with oxmcp.Client.http({http_url!r}) as c:
                return (await c.call_tool("add", {{"a": 1, "b": 2}}))["structuredContent"]["result"]

        async def stdio():
            async with oxmcp.Client.stdio(STDIO[0], STDIO[1:]) as c:
                return (await c.call_tool("hi", {{}}))["content"][0]["text"]

        def children():
            me = str(os.getpid())
            found = []
            for d in os.listdir("/proc"):
                try:
                    stat = open(f"/proc/{{d}}/stat").read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if stat[1] == me:
                    found.append(stat[0])
            return found

        assert asyncio.run(call()) == 3       # the parent's runtime is up
        assert asyncio.run(stdio()) == "hi"   # and its spawner thread
        pid = os.fork()
        if pid == 0:
            ok = asyncio.run(asyncio.wait_for(call(), 20)) == 3
            ok = ok and asyncio.run(asyncio.wait_for(stdio(), 20)) == "hi"
            ok = ok and children() == []      # the stdio server was reaped: no zombie
            os._exit(0 if ok else 1)
        assert asyncio.run(stdio()) == "hi"   # the parent is unaffected
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
        """
    )
    proc = subprocess.run(
        [PY, "-W", "ignore::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_import_is_lazy() -> None:
    code = "import sys, oxmcp; print('pydantic' in sys.modules, 'oxmcp._native' in sys.modules)"
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=30).stdout
    assert out.split() == ["False", "False"]
    code = "import sys, oxmcp; oxmcp.Client; print('pydantic' in sys.modules)"
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=30).stdout
    assert out.split() == ["False"]


def test_hostile_stdio_input_does_not_stop_the_python_server() -> None:
    """Garbage, an oversized line and a non-object: the server answers what has an id with an
    error (or drops it), and keeps serving the well-formed request after them."""
    import json

    init = raw_initialize()
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
    }
    stdin = (
        json.dumps(init)
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + "\n{not json at all\n"
        + '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", '
        + '"arguments": {"text": "'
        + "x" * (5 * 1024 * 1024)
        + '"}}}\n[1, 2, 3]\n'
        + json.dumps(call)
        + "\n"
    )
    proc = subprocess.run(
        [PY, str(EVERYTHING)], input=stdin, capture_output=True, text=True, timeout=60
    )
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    by_id = {m.get("id"): m for m in out}
    assert by_id[3]["result"]["structuredContent"] == {"result": 5}, proc.stdout[:2000]
    assert "result" not in by_id.get(2, {}), "the oversized request must not be served"
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_exit_right_after_a_call_is_clean(tmp_path: Path) -> None:
    """The last response's wake-up races interpreter finalization; it must never abort."""
    script = tmp_path / "quick.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, oxmcp

            async def main():
                async with oxmcp.Client.stdio({PY!r}, [{str(EVERYTHING)!r}]) as c:
                    await c.call_tool("add", {{"a": 1, "b": 2}})

            asyncio.run(main())
            """
        )
    )
    for _ in range(5):
        proc = subprocess.run([PY, str(script)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
