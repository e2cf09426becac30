"""The speed goals (issue 11's, as issue 25 raised and added to them), checked against one
run's rows: each goal's ratio is paired per round (both
sides measured in the same round, on the same machine state) and the median over rounds is
what is compared with the target.

    python3 benches/goals.py benches/results/<stamp>/raw.jsonl   # prints the table

`run.py` appends the same table to RESULTS.md after every full run.
"""
import json
import statistics
import sys

PY_SDK_STDIO = ["Python SDK 2.3 low-level", "Python SDK 2.3 MCPServer", "FastMCP 4.2"]


def _value(rows, group, target, scenario, field, rnd):
    for r in rows:
        if (r["group"] == group and r["target"] == target and r.get("scenario") == scenario
                and r["round"] == rnd and field in r):
            return r[field]
    return None


def _rounds(rows, group):
    return sorted({r["round"] for r in rows if r["group"] == group})


def _paired(rows, group, num, den, scenario, field="calls_s", combine=lambda a, b: a / b):
    """median over rounds of combine(num's field, best of den's field); `num` and `den` are
    lists: the worse of `num` and the best of `den` in each round."""
    out = []
    for rnd in _rounds(rows, group):
        a = [v for t in num if (v := _value(rows, group, t, scenario, field, rnd)) is not None]
        b = [v for t in den if (v := _value(rows, group, t, scenario, field, rnd)) is not None]
        if a and b:
            # Throughput: the worse oxmcp variant against the best anchor. Other fields (CPU,
            # startup, memory) are compared one target with one.
            out.append(combine(min(a), max(b)) if field.endswith("calls_s") else combine(a[0], b[0]))
    return statistics.median(out) if out else None


def goals(rows):
    """(goal, target text, value, met) for each goal that this run has rows for."""
    g = []

    def add(goal, target, value, ok, digits=2, unit=""):
        if value is not None:
            g.append((goal, target, f"{value:.{digits}f}{unit}", ok(value)))

    rust, limit = ["oxmcp (Rust)"], ["raw limit (serde_json, blocking std I/O)"]
    add("Rust server, stdio sequential ÷ limit", "≥ 0.85",
        _paired(rows, "stdio", rust, limit, "seq-small"), lambda v: v >= 0.85)
    add("Rust server CPU per call − limit's (stdio sequential)", "≤ ~1.5 µs",
        _paired(rows, "stdio", rust, limit, "seq-small", "cpu_us", lambda a, b: a - b),
        lambda v: v <= 1.5, 1, " µs")
    add("Rust server, stdio 16 in flight ÷ limit", "≥ 0.8",
        _paired(rows, "stdio", rust, limit, "pipe16-small"), lambda v: v >= 0.8)
    http_rust, hyper = ["oxmcp (Rust) SSE", "oxmcp (Rust) JSON"], ["raw limit (hyper, JSON)"]
    add("Rust server, HTTP sequential ÷ raw hyper (worse of SSE/JSON)", "≥ 0.85",
        _paired(rows, "http", http_rust, hyper, "http-seq"), lambda v: v >= 0.85, 3)
    add("Rust server, HTTP 8 sessions ÷ raw hyper (worse of SSE/JSON)", "≥ 0.85",
        _paired(rows, "http", http_rust, hyper, "http-conc8"), lambda v: v >= 0.85, 3)
    for name in ["oxmcp-Python (def handler)", "oxmcp-Python (async def handler)"]:
        add(f"{name} ÷ fastest Python SDK server, stdio", "≥ 15×",
            _paired(rows, "stdio", [name], PY_SDK_STDIO, "seq-small"), lambda v: v >= 15, 1, "×")
        add(f"{name}, HTTP sequential ÷ raw hyper (JSON responses)", "≥ 0.5",
            _paired(rows, "http", [name], hyper, "http-seq"), lambda v: v >= 0.5)
    lowlevel = ["Python SDK 2.3 low-level"]
    add("oxmcp-Python startup ÷ Python SDK low-level (stdio)", "< 0.25",
        _paired(rows, "stdio", ["oxmcp-Python (def handler)"], lowlevel, "process", "startup_ms"),
        lambda v: v < 0.25)
    add("oxmcp-Python peak RSS ÷ Python SDK low-level (stdio)", "≤ 0.5",
        _paired(rows, "stdio", ["oxmcp-Python (def handler)"], lowlevel, "process", "peak_rss_kib"),
        lambda v: v <= 0.5)
    # The async handler first: the README's form, and what most users write.
    for name in ["oxmcp-Node (async handler)", "oxmcp-Node (sync handler)"]:
        add(f"{name} ÷ TypeScript SDK, stdio", "≥ 3×",
            _paired(rows, "stdio", [name], ["TypeScript SDK 1.32 McpServer"], "seq-small"),
            lambda v: v >= 3, 1, "×")
        add(f"{name}, HTTP sequential ÷ raw hyper (JSON responses)", "≥ 0.5",
            _paired(rows, "http", [name], hyper, "http-seq"), lambda v: v >= 0.5)
        add(f"{name}, HTTP 8 sessions ÷ raw hyper (JSON responses)", "≥ 0.5",
            _paired(rows, "http", [name], hyper, "http-conc8"), lambda v: v >= 0.5)
    clients = [r for r in rows if r["group"] == "clients"]
    for r in clients:  # client rows carry no scenario; give them one so pairing works alike
        r.setdefault("scenario", "client")
    stdio_limit = []
    for rnd in _rounds(rows, "clients"):
        a = _value(rows, "clients", "oxmcp (Rust)", "client", "seq_calls_s", rnd)
        b = _value(rows, "stdio", limit[0], "seq-small", "calls_s", rnd)
        if a and b:
            stdio_limit.append(a / b)
    add("Rust client ÷ raw driver against the raw server (sequential)", "≥ 0.67",
        statistics.median(stdio_limit) if stdio_limit else None, lambda v: v >= 0.67)
    add("oxmcp-Python client ÷ Python SDK client (sequential)", "≥ 5×",
        _paired(rows, "clients", ["oxmcp-Python"], ["Python SDK 2.3 Client"], "client", "seq_calls_s"),
        lambda v: v >= 5, 1, "×")
    add("oxmcp-Node client ÷ TypeScript SDK client (sequential)", "≥ 2×",
        _paired(rows, "clients", ["oxmcp-Node"], ["TypeScript SDK 1.32 Client"], "client", "seq_calls_s"),
        lambda v: v >= 2, 2, "×")
    def idle(target):
        found = [r["bytes_per_session"] for r in rows if r["group"] == "sessions" and r["target"] == target]
        return max(found) if found else None

    rust_idle = idle("oxmcp (Rust)")
    add("idle HTTP session (oxmcp, worst of 1,000 and 10,000)", "≤ 16 KiB",
        rust_idle / 1024 if rust_idle is not None else None, lambda v: v <= 16, 1, " KiB")
    for name in ["oxmcp-Python (def handler)", "oxmcp-Node (async handler)"]:
        mine = idle(name)
        add(f"idle HTTP session, {name} ÷ Rust (worst of 1,000 and 10,000)", "≤ 2",
            mine / rust_idle if mine is not None and rust_idle else None, lambda v: v <= 2)
    return g


def table(rows, md):
    """Appends the goals table to `md` (a list of Markdown lines)."""
    found = goals(rows)
    if not found:
        return
    md += ["## The goals against this run (issues 11 and 25)", "",
           "Ratios paired per round, medians over rounds (the worse oxmcp variant against the fastest "
           "anchor of the same language in the same round); computed by `benches/goals.py` from this "
           "run's rows.", "", "| goal | target | this run | met |", "|---|---|---|---|"]
    for goal, target, value, ok in found:
        md.append(f"| {goal} | {target} | {value} | {'yes' if ok else '**no**'} |")
    md.append("")


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = [json.loads(line) for line in f if line.strip()]
    lines: list[str] = []
    table(data, lines)
    print("\n".join(lines))
