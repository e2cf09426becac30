#!/usr/bin/env python3
"""Runs oxmcp side by side with the official MCP SDKs and a raw limit, in one run, and writes
`benches/RESULTS.md`, `benches/calls-per-second.png` and `benches/growth.png`.

    python3 benches/run.py [--rounds 3] [--only stdio,http,scaleout,clients,split,sessions,growth] [--quick]

Every server is driven by the same fixed driver (`mcpload`: raw JSON-RPC, no MCP library)
calling an `echo` tool; every client calls `echo` on the same raw server. Rounds are
interleaved (each target once per round, the limits first), cells are medians with min–max,
and ratios are paired per round before the median is taken, because this machine is shared
and absolute figures drift between rounds while side-by-side ratios hold.

Driver and server are pinned to CPU 0 for the headline (calls/s then ranks CPU cost per
message: a cross-core wake-up costs ~35 µs here); `split` repeats a few rows with the server
on CPU 1 as a sensitivity check. `growth` (once, after the rounds) measures how cost grows:
1 KiB to 1 MiB results, a 10,000-tool catalogue, and 1 to 256 concurrent HTTP clients.
`make bench` builds and installs everything first.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import goals

HERE = Path(__file__).resolve().parent
BIN = HERE / "target" / "release"
PY = HERE / "python" / ".venv" / "bin" / "python"
NODE = "node"
RESULTS = HERE / "results"

# (name, kind, command). kind: "limit", "oxmcp" or "anchor".
STDIO_SERVERS = [
    ("raw limit (serde_json, blocking std I/O)", "limit", [BIN / "raw_stdio"]),
    ("raw tokio pipe", "reference", [BIN / "raw_stdio", "pipe"]),
    # The ceilings of the binding languages: the least a Node or Python program must do.
    ("raw JavaScript (no MCP library)", "reference", [NODE, HERE / "node" / "raw_server.mjs"]),
    ("raw Python (no MCP library)", "reference", [PY, HERE / "python" / "raw_server.py"]),
    ("oxmcp (Rust)", "oxmcp", [BIN / "oxmcp_echo"]),
    ("rmcp 3.11 stdio()", "anchor", [BIN / "rmcp_echo", "stdio"]),
    ("rmcp 3.11 stdio_pipes()", "anchor", [BIN / "rmcp_echo", "pipes"]),
    ("TypeScript SDK 1.32 McpServer", "anchor", [NODE, HERE / "node" / "anchor_server.mjs", "stdio"]),
    ("Python SDK 2.3 low-level", "anchor", [PY, HERE / "python" / "anchor_server.py", "lowlevel", "stdio"]),
    ("Python SDK 2.3 MCPServer", "anchor", [PY, HERE / "python" / "anchor_server.py", "mcpserver", "stdio"]),
    ("FastMCP 4.2", "anchor", [PY, HERE / "python" / "anchor_server.py", "fastmcp", "stdio"]),
]

HTTP_SERVERS = [
    ("raw limit (hyper, JSON)", "limit", [BIN / "raw_http", "{port}"]),
    ("oxmcp (Rust) SSE", "oxmcp", [BIN / "oxmcp_echo", "--http", "{port}"]),
    ("oxmcp (Rust) JSON", "oxmcp", [BIN / "oxmcp_echo", "--http", "{port}", "--json"]),
    ("rmcp 3.11 + TCP_NODELAY", "anchor", [BIN / "rmcp_echo", "http", "{port}"]),
    ("TypeScript SDK 1.32 SSE", "anchor", [NODE, HERE / "node" / "anchor_server.mjs", "http", "{port}"]),
    ("TypeScript SDK 1.32 JSON", "anchor", [NODE, HERE / "node" / "anchor_server.mjs", "http-json", "{port}"]),
    ("Python SDK 2.3 low-level SSE", "anchor", [PY, HERE / "python" / "anchor_server.py", "lowlevel", "http", "{port}"]),
    ("Python SDK 2.3 low-level JSON", "anchor", [PY, HERE / "python" / "anchor_server.py", "lowlevel", "http-json", "{port}"]),
    ("Python SDK 2.3 MCPServer", "anchor", [PY, HERE / "python" / "anchor_server.py", "mcpserver", "http", "{port}"]),
    ("FastMCP 4.2", "anchor", [PY, HERE / "python" / "anchor_server.py", "fastmcp", "http", "{port}"]),
]

RAW = [BIN / "raw_stdio"]
CLIENTS = [
    ("oxmcp (Rust)", "oxmcp", [BIN / "oxmcp_client", *RAW]),
    ("raw JavaScript (no MCP library)", "reference", [NODE, HERE / "node" / "raw_client.mjs", *RAW]),
    ("raw Python asyncio (no MCP library)", "reference", [PY, HERE / "python" / "raw_client.py", *RAW]),
    ("rmcp 3.11", "anchor", [BIN / "rmcp_client", *RAW]),
    ("TypeScript SDK 1.32 Client", "anchor", [NODE, HERE / "node" / "anchor_client.mjs", *RAW]),
    ("Python SDK 2.3 Client", "anchor", [PY, HERE / "python" / "anchor_client.py", *RAW]),
]

SESSION_SERVERS = [
    ("oxmcp (Rust)", "oxmcp", [BIN / "oxmcp_echo", "--http", "{port}"], "1000,10000"),
    # The bindings' rows are inserted here by extra_targets().
    ("TypeScript SDK 1.32", "anchor", [NODE, HERE / "node" / "anchor_server.mjs", "http", "{port}"], "1000"),
    ("Python SDK 2.3 low-level", "anchor", [PY, HERE / "python" / "anchor_server.py", "lowlevel", "http", "{port}"], "1000"),
]

# The scale-out rows (issue 12): one replica with sessions in memory, then with the Redis store,
# then 1–3 replicas behind the round-robin proxy (benches/cluster.py starts redis-server, the
# replicas and the proxy). JSON answers; not pinned, since a cluster spans both cores.
CLUSTER = HERE / "cluster.py"
MEMORY_ONE = "1 replica, sessions in memory"
REDIS_ONE = "1 replica, Redis store"
SCALE_OUT = [
    (MEMORY_ONE, "oxmcp", [BIN / "oxmcp_echo", "--http", "{port}", "--json"]),
    (REDIS_ONE, "oxmcp", [sys.executable, CLUSTER, "1", "{port}", "--direct"]),
    ("proxy + 1 replica, Redis", "oxmcp", [sys.executable, CLUSTER, "1", "{port}"]),
    ("proxy + 2 replicas, Redis", "oxmcp", [sys.executable, CLUSTER, "2", "{port}"]),
    ("proxy + 3 replicas, Redis", "oxmcp", [sys.executable, CLUSTER, "3", "{port}"]),
]

# The catalogue rows: servers that can register tools at run time (BENCH_TOOLS). rmcp declares
# its tools at compile time through its macros, so it has no row.
CATALOGUE_TOOLS = 10_000
CATALOGUE_NAMES = {"oxmcp (Rust)", "TypeScript SDK 1.32 McpServer", "Python SDK 2.3 low-level",
                   "Python SDK 2.3 MCPServer", "FastMCP 4.2"}
CONC_CLIENTS = [1, 8, 64, 256]
PAYLOADS = [("payload-1k", "1 KiB"), ("payload-64k", "64 KiB"), ("payload-1m", "1 MiB")]

SPLIT_NAMES = {"raw limit (serde_json, blocking std I/O)", "oxmcp (Rust)", "rmcp 3.11 stdio_pipes()",
               "TypeScript SDK 1.32 McpServer", "Python SDK 2.3 low-level"}


def extra_targets() -> None:
    """The bindings' rows, when their packages are built (`make bench` builds them), right
    after the Rust row of each table."""
    def after_rust(table: list, row: tuple) -> None:
        at = next(i for i, r in enumerate(table) if r[0].startswith("oxmcp (Rust)")) + 1
        while at < len(table) and table[at][0].startswith("oxmcp"):
            at += 1
        table.insert(at, row)

    py_bind = HERE / "bindings" / "oxmcp_python_echo.py"
    venv = HERE / "python" / ".venv-oxmcp" / "bin" / "python"
    node_bind = HERE / "bindings" / "oxmcp_node_echo.mjs"
    if node_bind.exists() and (HERE / "bindings" / "node_modules" / "oxmcp").exists():
        # The async handler first: it is how the README (and most users) write one.
        for flavour in ["async", "sync"]:
            name = f"oxmcp-Node ({flavour} handler)"
            after_rust(STDIO_SERVERS, (name, "oxmcp", [NODE, node_bind, flavour, "stdio"]))
            after_rust(HTTP_SERVERS, (name, "oxmcp", [NODE, node_bind, flavour, "http", "{port}"]))
        after_rust(CLIENTS, ("oxmcp-Node", "oxmcp", [NODE, HERE / "bindings" / "oxmcp_node_client.mjs", *RAW]))
        after_rust(SESSION_SERVERS, ("oxmcp-Node (async handler)", "oxmcp",
                                     [NODE, node_bind, "async", "http", "{port}"], "1000,10000"))
        CATALOGUE_NAMES.add("oxmcp-Node (async handler)")
    if py_bind.exists() and venv.exists():
        for flavour in ["def", "async def"]:
            name = f"oxmcp-Python ({flavour} handler)"
            after_rust(STDIO_SERVERS, (name, "oxmcp", [venv, py_bind, flavour.split()[0], "stdio"]))
            after_rust(HTTP_SERVERS, (name, "oxmcp", [venv, py_bind, flavour.split()[0], "http", "{port}"]))
        after_rust(CLIENTS, ("oxmcp-Python", "oxmcp", [venv, HERE / "bindings" / "oxmcp_python_client.py", *RAW]))
        after_rust(SESSION_SERVERS, ("oxmcp-Python (def handler)", "oxmcp",
                                     [venv, py_bind, "def", "http", "{port}"], "1000,10000"))
        CATALOGUE_NAMES.add("oxmcp-Python (def handler)")


def run_json_lines(cmd: list, timeout: float = 180) -> list[dict]:
    cmd = [str(c) for c in cmd]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  timed out: {' '.join(cmd)}", file=sys.stderr)
        return []
    if out.returncode != 0:
        print(f"  failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}", file=sys.stderr)
    rows = []
    for line in out.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return rows


def drive(mode: str, cmd: list, pin: str = "same", extra: list | None = None,
          timeout: float = 180) -> list[dict]:
    return run_json_lines([BIN / "mcpload", mode, "--pin", pin, *(extra or []), "--", *cmd], timeout)


def client(cmd: list) -> list[dict]:
    # The client and its raw server share CPU 0, as driver and server do.
    return run_json_lines(["taskset", "-c", "0", *cmd])


def measure(rounds: int, only: set[str], log) -> list[dict]:
    rows = []

    def record(group, name, kind, rnd, results, pin="same"):
        for r in results:
            r.update({"group": group, "target": name, "kind": kind, "round": rnd, "pin": pin})
            rows.append(r)
            log.write(json.dumps(r) + "\n")
            log.flush()

    for rnd in range(rounds):
        print(f"round {rnd + 1}/{rounds}", file=sys.stderr)
        if "stdio" in only:
            for name, kind, cmd in STDIO_SERVERS:
                print(f"  stdio  {name}", file=sys.stderr)
                record("stdio", name, kind, rnd, drive("stdio", cmd))
        if "http" in only:
            for name, kind, cmd in HTTP_SERVERS:
                print(f"  http   {name}", file=sys.stderr)
                record("http", name, kind, rnd, drive("http", cmd))
        if "scaleout" in only:
            for name, kind, cmd in SCALE_OUT:
                print(f"  scale-out {name}", file=sys.stderr)
                record("scaleout", name, kind, rnd, drive("http", cmd, pin="none"), pin="none")
        if "clients" in only:
            for name, kind, cmd in CLIENTS:
                print(f"  client {name}", file=sys.stderr)
                record("clients", name, kind, rnd, client(cmd))
    if "split" in only:
        print("split-core sensitivity run", file=sys.stderr)
        for name, kind, cmd in STDIO_SERVERS:
            if name in SPLIT_NAMES:
                print(f"  split  {name}", file=sys.stderr)
                record("split", name, kind, 0, drive("stdio", cmd, pin="split"), pin="split")
    if "sessions" in only:
        for name, kind, cmd, counts in SESSION_SERVERS:
            print(f"  idle sessions {name}", file=sys.stderr)
            record("sessions", name, kind, 0, drive("sessions", cmd, extra=["--counts", counts]))
    if "growth" in only:
        print("growth", file=sys.stderr)
        for name, kind, cmd in STDIO_SERVERS:
            print(f"  payload {name}", file=sys.stderr)
            record("payload", name, kind, 0, drive("payload", cmd))
        for name, kind, cmd in STDIO_SERVERS:
            if name in CATALOGUE_NAMES:
                print(f"  catalogue {name}", file=sys.stderr)
                record("catalogue", name, kind, 0,
                       drive("catalogue", cmd, extra=["--tools", str(CATALOGUE_TOOLS)], timeout=600))
        for name, kind, cmd in HTTP_SERVERS:
            print(f"  concurrency {name}", file=sys.stderr)
            record("conc", name, kind, 0,
                   drive("conc", cmd, extra=["--clients", ",".join(map(str, CONC_CLIENTS))]))
    return rows


# ------------------------------------------------------------------------------------------
# Reporting


def cells(rows, group, target, scenario, field):
    return [r[field] for r in rows if r["group"] == group and r["target"] == target
            and r.get("scenario") == scenario and field in r]


def med(values):
    return statistics.median(values) if values else None


def fmt(v, digits=0):
    if v is None:
        return "–"
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def spread(values, digits=0):
    if not values:
        return "–"
    if len(values) == 1:
        return fmt(values[0], digits)
    return f"{fmt(med(values), digits)} ({fmt(min(values), digits)}–{fmt(max(values), digits)})"


def paired_ratio(rows, group, num, den, scenario):
    """median over rounds of calls/s(num) / calls/s(den), paired by round."""
    ratios = []
    for rnd in {r["round"] for r in rows if r["group"] == group}:
        a = [r["calls_s"] for r in rows if r["group"] == group and r["target"] == num
             and r.get("scenario") == scenario and r["round"] == rnd and "calls_s" in r]
        b = [r["calls_s"] for r in rows if r["group"] == group and r["target"] == den
             and r.get("scenario") == scenario and r["round"] == rnd and "calls_s" in r]
        if a and b and b[0] > 0:
            ratios.append(a[0] / b[0])
    return med(ratios)


def server_table(rows, group, targets, scenarios, md):
    limit = next((n for n, k, *_ in targets if k == "limit"), None)
    head = "| server | " + " | ".join(
        f"{s} calls/s | ×best anchor | ÷limit" for s in scenarios) + " | p50 µs | p99 µs | srv CPU µs/call | ctx-sw/call |"
    md.append(head)
    md.append("|" + "---|" * (1 + 3 * len(scenarios) + 4))
    for name, kind, *_ in targets:
        line = [f"**{name}**" if kind == "oxmcp" else name]
        for s in scenarios:
            line.append(spread(cells(rows, group, name, s, "calls_s")))
            anchors = [n for n, k, *_ in targets if k == "anchor"]
            best = max(anchors, key=lambda a: med(cells(rows, group, a, s, "calls_s")) or 0, default=None)
            line.append(fmt(paired_ratio(rows, group, name, best, s), 2) + "×" if best and kind == "oxmcp" else "")
            line.append(fmt(paired_ratio(rows, group, name, limit, s), 2) if limit and kind != "limit" else "")
        s0 = scenarios[0]
        line += [fmt(med(cells(rows, group, name, s0, "p50_us")), 1), fmt(med(cells(rows, group, name, s0, "p99_us")), 1),
                 fmt(med(cells(rows, group, name, s0, "cpu_us")), 1), fmt(med(cells(rows, group, name, s0, "ctxsw")), 1)]
        md.append("| " + " | ".join(line) + " |")


def process_table(rows, group, targets, scenario, md):
    md.append("| server | startup to first answer ms | RSS after init MiB | peak RSS MiB |")
    md.append("|---|---|---|---|")
    for name, kind, *_ in targets:
        st = cells(rows, group, name, scenario, "startup_ms")
        rss = [v / 1024 for v in cells(rows, group, name, scenario, "rss_init_kib")]
        hwm = [v / 1024 for v in cells(rows, group, name, scenario, "peak_rss_kib")]
        md.append(f"| {name} | {spread(st, 1)} | {spread(rss, 1)} | {spread(hwm, 1)} |")


def client_table(rows, md):
    md.append("| client | seq calls/s | seq CPU µs/call | 16 in flight calls/s | 16 in flight CPU µs/call |")
    md.append("|---|---|---|---|---|")
    for name, kind, *_ in CLIENTS:
        label = f"**{name}**" if kind == "oxmcp" else name
        md.append(f"| {label} | {spread(cells(rows, 'clients', name, None, 'seq_calls_s'))} | "
                  f"{fmt(med(cells(rows, 'clients', name, None, 'seq_cpu_us')), 1)} | "
                  f"{spread(cells(rows, 'clients', name, None, 'conc16_calls_s'))} | "
                  f"{fmt(med(cells(rows, 'clients', name, None, 'conc16_cpu_us')), 1)} |")


def chart(rows, path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(14, 6))
    for ax, (group, targets, scenario, title) in zip(axes, [
        ("stdio", STDIO_SERVERS, "seq-small", "stdio, sequential (calls/s, log scale)"),
        ("http", HTTP_SERVERS, "http-seq", "Streamable HTTP, sequential (calls/s, log scale)"),
    ]):
        names, values, colors = [], [], []
        for name, kind, *_ in targets:
            v = med(cells(rows, group, name, scenario, "calls_s"))
            if v:
                names.append(name)
                values.append(v)
                colors.append({"limit": "#888888", "oxmcp": "#d9480f", "reference": "#bbbbbb"}.get(kind, "#1c7ed6"))
        ax.barh(names[::-1], values[::-1], color=colors[::-1])
        ax.set_xscale("log")
        ax.set_title(title)
        for i, v in enumerate(values[::-1]):
            ax.text(v, i, f" {v:,.0f}", va="center", fontsize=8)
    fig.suptitle("oxmcp vs the official MCP SDKs (one run, pinned to one core; orange = oxmcp, grey = limit)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def growth_tables(rows, md):
    """The growth sections: result size, catalogue size, concurrent clients."""
    limit = STDIO_SERVERS[0][0]
    if any(r["group"] == "payload" for r in rows):
        md += ["## Growth: result size (stdio, sequential `echo`, one run)", "",
               "| server | " + " | ".join(f"{label} calls/s | ÷limit" for _, label in PAYLOADS)
               + " | MiB/s at 1 MiB | srv CPU µs/KiB at 1 MiB |",
               "|---|" + "---|---|" * len(PAYLOADS) + "---|---|"]
        for name, kind, *_ in STDIO_SERVERS:
            line = [f"**{name}**" if kind == "oxmcp" else name]
            for scenario, _ in PAYLOADS:
                line.append(fmt(med(cells(rows, "payload", name, scenario, "calls_s"))))
                line.append(fmt(paired_ratio(rows, "payload", name, limit, scenario), 2)
                            if kind != "limit" else "")
            big = med(cells(rows, "payload", name, "payload-1m", "calls_s"))
            cpu = med(cells(rows, "payload", name, "payload-1m", "cpu_us"))
            line += [fmt(big, 0) if big else "–", fmt(cpu / 1024, 2) if cpu else "–"]
            md.append("| " + " | ".join(line) + " |")
        md += ["", "The request carries the same text as the result (`echo`), so each call moves "
               "twice the size named; MiB/s counts the result only.", ""]
    if any(r["group"] == "catalogue" for r in rows):
        md += [f"## Growth: a catalogue of {CATALOGUE_TOOLS:,} tools (stdio, one run)", "",
               "| server | full tools/list ms | pages | startup to first answer ms | RSS MiB | "
               "bytes per tool |", "|---|---|---|---|---|---|"]
        for name, kind, *_ in STDIO_SERVERS:
            found = [r for r in rows if r["group"] == "catalogue" and r["target"] == name]
            if not found:
                continue
            r = found[0]
            label = f"**{name}**" if kind == "oxmcp" else name
            md.append(f"| {label} | {fmt(r['list_ms'], 1)} | {r['pages']} | {fmt(r['startup_ms'], 0)} | "
                      f"{r['rss_kib'] / 1024:.1f} | {fmt(r['bytes_per_tool'])} |")
        md += ["", "A full listing follows `nextCursor` to the end. Bytes per tool: RSS with the "
               "catalogue minus RSS of the same server without it, over the tool count. rmcp declares "
               "its tools at compile time (macros), so it has no row.", ""]
    if any(r["group"] == "conc" for r in rows):
        md += ["## Growth: concurrent Streamable HTTP clients (one run)", "",
               "| server | " + " | ".join(f"{n} calls/s | {n} p99 ms" for n in CONC_CLIENTS) + " |",
               "|---|" + "---|---|" * len(CONC_CLIENTS)]
        for name, kind, *_ in HTTP_SERVERS:
            line = [f"**{name}**" if kind == "oxmcp" else name]
            for n in CONC_CLIENTS:
                line.append(fmt(med(cells(rows, "conc", name, f"conc-{n}", "calls_s"))))
                p99 = med(cells(rows, "conc", name, f"conc-{n}", "p99_us"))
                line.append(fmt(p99 / 1000, 2) if p99 else "–")
            md.append("| " + " | ".join(line) + " |")
        md += ["", "Each client is a session on its own keep-alive connection; driver and server "
               "share CPU 0, so throughput cannot grow with clients: the table shows what the "
               "extra connections cost and how latency spreads.", ""]


def growth_chart(rows, path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not any(r["group"] in {"payload", "conc", "catalogue"} for r in rows):
        return False
    fig, axes = plt.subplots(2, 2, figsize=(14, 10))
    style = {"limit": dict(color="#555555", lw=2.5, ls="--"), "reference": dict(color="#bbbbbb", ls=":")}

    def line_style(kind, i):
        if kind == "oxmcp":
            return dict(lw=2.2, marker="o", color=["#d9480f", "#f08c00", "#e8590c", "#c2255c", "#ae3ec9"][i % 5])
        return style.get(kind, dict(marker=".", alpha=0.8))

    ax = axes[0][0]
    sizes = [1, 64, 1024]
    for i, (name, kind, *_) in enumerate(STDIO_SERVERS):
        ys = [med(cells(rows, "payload", name, sc, "calls_s")) for sc, _ in PAYLOADS]
        if all(ys):
            ax.plot(sizes, [y * s / 1024 for y, s in zip(ys, sizes)], label=name, **line_style(kind, i))
    ax.set(xscale="log", yscale="log", xlabel="result size (KiB)", ylabel="MiB/s of results",
           title="Result size (stdio): throughput in bytes")
    ax.legend(fontsize=7)
    ax = axes[0][1]
    for i, (name, kind, *_) in enumerate(HTTP_SERVERS):
        ys = [med(cells(rows, "conc", name, f"conc-{n}", "calls_s")) for n in CONC_CLIENTS]
        if all(ys):
            ax.plot(CONC_CLIENTS, ys, label=name, **line_style(kind, i))
    ax.set(xscale="log", yscale="log", xlabel="concurrent HTTP clients", ylabel="calls/s",
           title="Concurrent clients (Streamable HTTP): throughput")
    ax.legend(fontsize=7)
    ax = axes[1][0]
    for i, (name, kind, *_) in enumerate(HTTP_SERVERS):
        ys = [med(cells(rows, "conc", name, f"conc-{n}", "p99_us")) for n in CONC_CLIENTS]
        if all(ys):
            ax.plot(CONC_CLIENTS, [y / 1000 for y in ys], label=name, **line_style(kind, i))
    ax.set(xscale="log", yscale="log", xlabel="concurrent HTTP clients", ylabel="p99 latency (ms)",
           title="Concurrent clients (Streamable HTTP): p99 latency")
    ax.legend(fontsize=7)
    ax = axes[1][1]
    bars = [(f"{r['target']} (tool)", r["bytes_per_tool"], r["kind"]) for r in rows if r["group"] == "catalogue"]
    idle = {}
    for r in rows:
        if r["group"] == "sessions":
            idle[r["target"]] = (max(idle.get(r["target"], (0,))[0], r["bytes_per_session"]), r["kind"])
    bars += [(f"{t} (idle session)", v, k) for t, (v, k) in idle.items()]
    if bars:
        ax.barh([b[0] for b in bars][::-1], [b[1] / 1024 for b in bars][::-1],
                color=["#d9480f" if b[2] == "oxmcp" else "#1c7ed6" for b in bars][::-1])
        ax.set(xlabel="KiB", title=f"Memory per tool ({CATALOGUE_TOOLS:,} registered) and per idle HTTP session")
        for i, b in enumerate(bars[::-1]):
            ax.text(b[1] / 1024, i, f" {b[1] / 1024:.1f}", va="center", fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle("How cost grows: oxmcp (orange) beside the official SDKs (blue) and the limits (grey)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return True


def versions() -> dict:
    def cmd(*c):
        try:
            return subprocess.run(c, capture_output=True, text=True, timeout=30).stdout.strip()
        except OSError:
            return "?"
    pins = {}
    req = HERE / "python" / "requirements.txt"
    for line in req.read_text().splitlines():
        if line.split("==")[0] in {"mcp", "fastmcp", "pydantic", "uvicorn"}:
            k, v = line.split("==")
            pins[k] = v
    return {
        "rustc": cmd("rustc", "--version"),
        "node": cmd(NODE, "--version"),
        "python": cmd(str(PY), "--version"),
        "python packages": ", ".join(f"{k} {v}" for k, v in pins.items()),
        "npm packages": "@modelcontextprotocol/sdk 1.32.2, zod 4.6.7",
        "rmcp": "3.11.0",
    }


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} × {model}, {mem:.1f} GiB, Linux {platform.release()}"


def report(rows, rounds, started, elapsed, load):
    md = ["# Benchmark results", "",
          f"Latest `make bench`: {started:%Y-%m-%d %H:%M} UTC, {rounds} interleaved rounds, "
          f"{elapsed / 60:.1f} min. Machine: {machine()}. 1-min load average at start/end: {load[0]} / {load[1]} "
          "(the machine is shared: read ratios, which are paired per round, not absolute figures).", ""]
    for k, v in versions().items():
        md.append(f"- {k}: {v}")
    md += ["", "Cells are median (min–max) over rounds. **×best anchor** = oxmcp calls/s ÷ the fastest official "
           "SDK's in the same round (higher is better); **÷limit** = calls/s ÷ the raw limit's (1.0 is the limit). "
           "Driver and server share CPU 0.", "",
           "![calls per second](calls-per-second.png)", ""]
    if any(r["group"] == "stdio" for r in rows):
        md += ["## Servers over stdio", ""]
        server_table(rows, "stdio", STDIO_SERVERS, ["seq-small", "seq-10k", "pipe16-small"], md)
        md += ["", "p50/p99, CPU and context switches are for seq-small.", ""]
        process_table(rows, "stdio", STDIO_SERVERS, "process", md)
        md.append("")
    if any(r["group"] == "http" for r in rows):
        md += ["## Servers over Streamable HTTP (stateful sessions)", ""]
        server_table(rows, "http", HTTP_SERVERS, ["http-seq", "http-conc8"], md)
        md += ["", "conc8 is 8 sessions, each on its own keep-alive connection. p50/p99, CPU and switches are for seq.", ""]
        process_table(rows, "http", HTTP_SERVERS, "process-http", md)
        md.append("")
    if any(r["group"] == "scaleout" for r in rows):
        md += ["## Scale-out: replicas sharing sessions through Redis (JSON answers, not pinned)", "",
               "| setup | http-seq calls/s | ÷ memory | http-conc8 calls/s | ÷ memory | ÷ proxy + 1 replica (conc8) |",
               "|---|---|---|---|---|---|"]
        for name, *_ in SCALE_OUT:
            line = [name]
            for sc in ["http-seq", "http-conc8"]:
                line.append(spread(cells(rows, "scaleout", name, sc, "calls_s")))
                line.append(fmt(paired_ratio(rows, "scaleout", name, MEMORY_ONE, sc), 2) if name != MEMORY_ONE else "")
            line.append(fmt(paired_ratio(rows, "scaleout", name, SCALE_OUT[2][0], "http-conc8"), 2)
                        if name.startswith("proxy") else "")
            md.append("| " + " | ".join(line) + " |")
        md += ["", "Each session keeps its keep-alive connection, so the proxy spreads sessions (conc8: 8 of them) "
               "over the replicas, not the requests of one session. Redis, the replicas, the proxy and the driver "
               "share the machine's cores, so more replicas cannot add CPU here: the rows show what the shared "
               "store and the extra hop cost, not how far a real deployment scales.", ""]
    if any(r["group"] == "clients" for r in rows):
        md += ["## Clients over stdio (each calls `echo` on the raw limit server)", ""]
        client_table(rows, md)
        md += ["", "CPU is the client process's own (getrusage), not its server's.", ""]
    if any(r["group"] == "split" for r in rows):
        md += ["## Sensitivity: server on CPU 1, driver on CPU 0 (stdio seq-small, one round)", "",
               "| server | calls/s | p50 µs | srv CPU µs/call |", "|---|---|---|---|"]
        for name in [n for n, *_ in STDIO_SERVERS if n in SPLIT_NAMES]:
            md.append(f"| {name} | {spread(cells(rows, 'split', name, 'seq-small', 'calls_s'))} | "
                      f"{fmt(med(cells(rows, 'split', name, 'seq-small', 'p50_us')), 1)} | "
                      f"{fmt(med(cells(rows, 'split', name, 'seq-small', 'cpu_us')), 1)} |")
        md.append("")
    if any(r["group"] == "sessions" for r in rows):
        md += ["## Memory per idle Streamable HTTP session", "",
               "| server | sessions | RSS MiB | bytes per idle session |", "|---|---|---|---|"]
        for r in [r for r in rows if r["group"] == "sessions"]:
            md.append(f"| {r['target']} | {r['sessions']:,} | {r['rss_kib'] / 1024:.1f} | {r['bytes_per_session']:,.0f} |")
        md.append("")
    if any(r["group"] in {"payload", "catalogue", "conc"} for r in rows):
        md += ["![how cost grows](growth.png)", ""]
        growth_tables(rows, md)
    goals.table(rows, md)
    notes = HERE / "NOTES.md"
    if notes.exists():
        md += [notes.read_text().strip(), ""]
    md += ["## Reproduce", "", "```sh", "make bench            # builds, installs the pinned anchors, runs 3 rounds and the growth rows (~15 min)",
           "python3 benches/run.py --rounds 1 --only stdio   # one group, after make bench built everything", "```",
           "", "Raw rows of this run: `benches/results/<stamp>/raw.jsonl` (not committed)."]
    return "\n".join(md) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="stdio,http,scaleout,clients,split,sessions,growth")
    parser.add_argument("--quick", action="store_true", help="short stop rule, for trying the harness")
    args = parser.parse_args()
    if args.quick:
        os.environ.update({"BENCH_MIN_CALLS": "500", "BENCH_MIN_SECS": "0.2", "BENCH_MAX_SECS": "0.5"})
    else:
        os.environ.setdefault("BENCH_MAX_SECS", "2")
    extra_targets()
    started = datetime.now(timezone.utc)
    stamp = started.strftime("%Y%m%d-%H%M%S")
    out = RESULTS / stamp
    out.mkdir(parents=True, exist_ok=True)
    load0 = f"{os.getloadavg()[0]:.2f}"
    t0 = time.monotonic()
    with open(out / "raw.jsonl", "w") as log:
        rows = measure(args.rounds, set(args.only.split(",")), log)
    load1 = f"{os.getloadavg()[0]:.2f}"
    text = report(rows, args.rounds, started, time.monotonic() - t0, (load0, load1))
    (out / "RESULTS.md").write_text(text)
    if "scaleout" in args.only and not shutil.which("redis-server"):
        print("bench: redis-server is not installed (make scale-out-deps); no scale-out rows", file=sys.stderr)
    full = set(args.only.split(",")) >= {"stdio", "http", "clients"}
    if not args.quick and full:
        (HERE / "RESULTS.md").write_text(text)
        chart(rows, HERE / "calls-per-second.png")
        growth_chart(rows, HERE / "growth.png")
    else:
        chart(rows, out / "calls-per-second.png")
        growth_chart(rows, out / "growth.png")
    print(text)
    print(f"bench: {len(rows)} rows in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
