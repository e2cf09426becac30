"""The stdio client hosted on the caller's asyncio loop thread (bindings-python/src/embed.rs):
calls, cancellation, a misbehaving peer, closing with calls in flight, a loop that closes
under an open client, several clients and loops, and the fallback to tokio where hosting
cannot be done. The peer is raw JSON-RPC lines (servers/raw_peer.py)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from typing import Any

import pytest
from conftest import HERE, PY
from oxmcp import Client
from oxmcp.errors import ConnectionClosedError, McpError, RequestTimeoutError, RpcError

RAW_PEER = str(HERE / "servers" / "raw_peer.py")
NESTED = str(HERE / "servers" / "nested_client.py")


def open_peer(**kwargs: Any) -> Any:
    return Client.stdio(PY, [RAW_PEER], **kwargs)


def text(result: Any) -> str:
    return str(result["content"][0]["text"])


async def peer_pid(client: Client) -> int:
    return int(text(await client.call_tool("pid")))


def gone(pid: int) -> bool:
    """Whether the process no longer exists at all (exited and reaped: not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_gone(pid: int, secs: float = 20.0) -> bool:
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.02)
    return False


async def test_sequential_and_concurrent_calls_run_hosted() -> None:
    async with open_peer() as client:
        assert client._native.is_hosted
        for i in range(300):
            assert text(await client.call_tool("echo", {"text": f"n{i}"})) == f"n{i}"
        many = await asyncio.gather(
            *(client.call_tool("echo", {"text": f"c{i}"}) for i in range(200))
        )
        assert [text(r) for r in many] == [f"c{i}" for i in range(200)]


async def test_an_error_answer_is_typed_and_the_next_call_works() -> None:
    async with open_peer() as client:
        with pytest.raises(RpcError) as raised:
            await client.call_tool("no-such-tool")
        assert raised.value.code == -32602
        assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"


async def test_a_cancelled_call_tells_the_peer() -> None:
    async with open_peer() as client:
        task = asyncio.ensure_future(client.call_tool("hang"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        seen: list[Any] = []
        for _ in range(500):
            seen = json.loads(text(await client.call_tool("cancelled")))
            if seen:
                break
            await asyncio.sleep(0.01)
        assert len(seen) == 1, seen
        assert text(await client.call_tool("echo", {"text": "after"})) == "after"


async def test_malformed_and_oversized_lines_are_dropped_and_the_next_message_read() -> None:
    async with open_peer() as client:
        assert text(await client.call_tool("garbage")) == "after the garbage"
        assert text(await client.call_tool("echo", {"text": "next"})) == "next"


async def test_a_peer_that_dies_mid_call_fails_the_call() -> None:
    client = await open_peer()
    pid = await peer_pid(client)
    with pytest.raises(ConnectionClosedError):
        await client.call_tool("die")
    with pytest.raises(McpError):
        await client.call_tool("echo", {"text": "too late"})
    await client.close()
    assert await asyncio.to_thread(wait_gone, pid)


async def test_a_silent_peer_times_out_and_the_session_goes_on() -> None:
    async with open_peer() as client:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("hang", timeout=0.2)
        assert text(await client.call_tool("echo", {"text": "ok"})) == "ok"


async def test_closing_with_calls_in_flight_fails_them_and_reaps_the_child() -> None:
    client = await open_peer()
    pid = await peer_pid(client)
    calls = [asyncio.ensure_future(client.call_tool("hang")) for _ in range(3)]
    await asyncio.sleep(0)
    await client.close()
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(o, ConnectionClosedError) for o in outcomes), outcomes
    assert await asyncio.to_thread(wait_gone, pid)
    # A closed client refuses new calls with a typed error, hosted or not.
    with pytest.raises(McpError):
        await client.call_tool("echo", {"text": "closed"})


def test_a_loop_closed_under_an_open_client_lets_the_child_go() -> None:
    async def leave_open() -> int:
        client = await open_peer()
        assert client._native.is_hosted
        pid = await peer_pid(client)
        # A call still waiting when the loop goes: dropped with it, never settled.
        hanging = asyncio.ensure_future(client.call_tool("hang"))
        await asyncio.sleep(0)
        assert not hanging.done()
        return pid

    pid = asyncio.run(leave_open())
    assert wait_gone(pid), "the child outlived its client's loop"


async def test_two_clients_on_one_loop() -> None:
    async with open_peer() as a, open_peer() as b:
        assert a._native.is_hosted and b._native.is_hosted
        assert await peer_pid(a) != await peer_pid(b)
        out = await asyncio.gather(
            *(
                c.call_tool("echo", {"text": f"{n}{i}"})
                for i in range(50)
                for n, c in (("a", a), ("b", b))
            )
        )
        assert [text(r) for r in out] == [f"{n}{i}" for i in range(50) for n in "ab"]
        await a.close()
        # One client closing leaves the other alone.
        assert text(await b.call_tool("echo", {"text": "b alone"})) == "b alone"


def test_clients_on_two_loops_in_two_threads() -> None:
    results: dict[int, Any] = {}

    def run(k: int) -> None:
        async def work() -> list[str]:
            async with open_peer() as client:
                assert client._native.is_hosted
                return [
                    text(await client.call_tool("echo", {"text": f"{k}-{i}"})) for i in range(100)
                ]

        try:
            results[k] = asyncio.run(work())
        except BaseException as e:  # reported by the assertion below
            results[k] = e

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for k in range(2):
        assert results[k] == [f"{k}-{i}" for i in range(100)], results[k]


async def test_a_client_used_from_another_loop_goes_through_tokio() -> None:
    async with open_peer() as client:

        def elsewhere() -> str:
            async def call() -> str:
                return text(await client.call_tool("echo", {"text": "from another loop"}))

            return asyncio.run(call())

        assert await asyncio.to_thread(elsewhere) == "from another loop"
        assert text(await client.call_tool("echo", {"text": "home"})) == "home"


async def test_a_client_inside_a_sync_handler_falls_back_to_tokio() -> None:
    async with Client.stdio(PY, [NESTED, RAW_PEER], inherit_env=True) as server:
        out = json.loads(text(await server.call_tool("relay", {"text": "nested"})))
        assert out == {"text": "nested", "hosted": False}
        # A bad argument to the same tool is refused, not relayed.
        result = await server.call_tool("relay", {"text": 5})
        assert result.get("isError") is True
