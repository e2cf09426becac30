#!/usr/bin/env python3
"""Two builds of one stdio server, side by side: is B slower than A?

A build setting (an opt-level, a profile, a dependency swap) changes the native module both
bindings load; `make bench` compares oxmcp with the official SDKs, not one build of oxmcp
with another. This runs the same echo server twice per round, once per build, in alternating
order, over real pipes, with the driver below (raw JSON-RPC lines, no MCP library), and
prints each side's median calls per second and the ratio B/A.

    python3 benches/ab.py --a "CMD ARGS" --b "CMD ARGS" [--calls N] [--rounds R] [--inflight K]

Each side starts, completes the handshake and a `tools/list`, warms up with N/10 calls, then
times N `echo` calls with K in flight. Every answer is checked (its id and the echoed text),
so a build that answers wrongly fails instead of looking fast. Run it on an idle machine;
docs/guides/publishing.md has what it showed for the release profile's opt-level.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import time

TEXT = "hello from the benchmark"


def line(obj: dict) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def call(i: int) -> bytes:
    return line(
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": TEXT}},
        }
    )


class Server:
    """One server process and the ids it still owes an answer."""

    def __init__(self, cmd: str) -> None:
        self.proc = subprocess.Popen(
            shlex.split(cmd),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def answer(self) -> dict:
        assert self.proc.stdout is not None
        while True:
            raw = self.proc.stdout.readline()
            if not raw:
                raise SystemExit("ab: the server closed stdout")
            reply = json.loads(raw)
            if "id" in reply and ("result" in reply or "error" in reply):
                return reply

    def handshake(self) -> None:
        self.send(
            line(
                {
                    "jsonrpc": "2.0",
                    "id": "init",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "ab", "version": "1"},
                    },
                }
            )
        )
        self.answer()
        self.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        self.send(line({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}))
        self.answer()

    def calls(self, n: int, inflight: int) -> float:
        """Seconds for `n` calls with `inflight` outstanding at a time."""
        start = time.perf_counter()
        sent = done = 0
        pending: set[int] = set()
        while done < n:
            burst = b""
            while sent < n and len(pending) < inflight:
                pending.add(self.next_id)
                burst += call(self.next_id)
                self.next_id += 1
                sent += 1
            if burst:
                self.send(burst)
            reply = self.answer()
            text = reply["result"]["content"][0]["text"]
            if reply["id"] not in pending or text != TEXT:
                raise SystemExit(f"ab: a wrong answer: {reply}")
            pending.discard(reply["id"])
            done += 1
        return time.perf_counter() - start

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def measure(cmd: str, calls: int, inflight: int) -> float:
    server = Server(cmd)
    try:
        server.handshake()
        server.calls(max(calls // 10, 1), inflight)
        return calls / server.calls(calls, inflight)
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="the baseline server command")
    parser.add_argument("--b", required=True, help="the candidate server command")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--inflight", type=int, default=1)
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"a": [], "b": []}
    for r in range(args.rounds):
        # Alternate who goes first, so a drift in the machine's state hits both sides.
        order = ("a", "b") if r % 2 == 0 else ("b", "a")
        for side in order:
            rates[side].append(measure(getattr(args, side), args.calls, args.inflight))
    a, b = statistics.median(rates["a"]), statistics.median(rates["b"])
    print(
        f"inflight {args.inflight}: A {a:,.0f} calls/s, B {b:,.0f} calls/s, "
        f"B/A {b / a:.3f} (medians of {args.rounds} rounds of {args.calls})"
    )


if __name__ == "__main__":
    main()
