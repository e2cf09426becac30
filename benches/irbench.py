#!/usr/bin/env python3
"""Instructions per call of a stdio server, counted by callgrind (deterministic, unlike timings
on a shared machine).

    python3 benches/irbench.py [--calls N] [--keep DIR] -- CMD ARGS...

Runs the server under `valgrind --tool=callgrind` twice per mode: handshake only, then the
handshake and N `echo` calls, one in flight (`seq`) or 16 in flight (`pipe16`), over real pipes
(the server sees what `mcpload` gives it). The difference divided by N is the per-call cost,
without startup. Every answer is checked (id and echoed text). `--keep DIR` leaves each run's
callgrind output in DIR (`seq-0.callgrind`, `seq-2000.callgrind`, …) for `callgrind_annotate`.
"""
import argparse
import json
import re
import subprocess
import tempfile

TEXT = "hello from the benchmark"


def line(obj):
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def call(i):
    return line({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                 "params": {"name": "echo", "arguments": {"text": TEXT}}})


def instructions(cmd, mode, calls, keep=None):
    with tempfile.NamedTemporaryFile(suffix=".callgrind", dir=keep,
                                     prefix=f"{mode}-{calls}-", delete=keep is None) as out:
        p = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}"] + cmd,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def answer():
            while True:
                raw = p.stdout.readline()
                if not raw:
                    raise SystemExit(f"the server closed stdout: {p.stderr.read()[-2000:]!r}")
                reply = json.loads(raw)
                if "id" in reply and ("result" in reply or "error" in reply):
                    return reply

        def send(data):
            p.stdin.write(data)
            p.stdin.flush()

        send(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "irbench", "version": "1"}}}))
        answer()
        send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        send(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        answer()
        width = 1 if mode == "seq" else 16
        next_id = 2
        for _ in range(calls // width):
            ids = range(next_id, next_id + width)
            send(b"".join(call(i) for i in ids))
            replies = {}
            for _ in ids:
                r = answer()
                replies[r["id"]] = r
            for i in ids:
                text = replies[i]["result"]["content"][0]["text"]
                assert text == TEXT, replies[i]
            next_id += width
        p.stdin.close()
        p.stdout.read()
        p.wait()
        found = re.search(rb"Collected : (\d+)", p.stderr.read())
        if not found:
            raise SystemExit("callgrind reported no total")
        return int(found.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--keep", metavar="DIR", help="keep the callgrind outputs in DIR")
    parser.add_argument("cmd", nargs="+")
    args = parser.parse_args()
    for mode in ("seq", "pipe16"):
        base = instructions(args.cmd, mode, 0, args.keep)
        total = instructions(args.cmd, mode, args.calls, args.keep)
        print(f"{mode}: {(total - base) / args.calls:,.0f} Ir/call "
              f"(startup {base:,}, {args.calls} calls {total - base:,})")


if __name__ == "__main__":
    main()
