"""A hand-written MCP server of the 2025 era for the host-safety tests: a real process on
stdio that behaves like an old server in every way the tests need.

- It never answers `server/discover` (as servers written before 2026 do not), so a client that
  probes waits for its probe timeout.
- Its lists hold entries that do not parse next to good ones: a tool whose `inputSchema` is a
  string, one spelled `input_schema`, a resource whose name is a number, a prompt whose
  arguments are a string.
- Its tools carry annotations: `peek` is read-only, `wipe` destructive, `write` neither.
- Every message it gets is appended to the log file (argv[1]) as `<pid> <method> <params>`,
  so a test can see what reached it, and from which run.
- The tool `crash` exits at once (to make the host start it again).
"""

import json
import os
import sys

LOG = sys.argv[1]
OBJECT = {"type": "object", "properties": {"path": {"type": "string"}}}


def log(method, params):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()} {method} {json.dumps(params, sort_keys=True)}\n")


def tool(name, **extra):
    return {"name": name, "description": f"the {name} tool", "inputSchema": OBJECT, **extra}


TOOLS = [
    tool("peek", annotations={"readOnlyHint": True}),
    tool("wipe", annotations={"destructiveHint": True, "readOnlyHint": False}),
    tool("write", annotations={"readOnlyHint": False, "destructiveHint": False}),
    tool("secret"),
    tool("crash"),
    {"name": "broken", "inputSchema": "object"},
    {"name": "snake", "description": "spelled as in the docs", "input_schema": OBJECT},
]
RESOURCES = [
    {"uri": "file:///ok.txt", "name": "ok"},
    {"uri": "file:///bad.txt", "name": 5},
]
PROMPTS = [{"name": "hello"}, {"name": "bad", "arguments": "none"}]
NAMES = {t["name"] for t in TOOLS}


def answer(message):
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        known = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
        return {
            "protocolVersion": asked if asked in known else "2025-06-18",
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "old-server", "version": "0.9"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "resources/list":
        return {"resources": RESOURCES}
    if method == "prompts/list":
        return {"prompts": PROMPTS}
    if method == "tools/call":
        name = params.get("name")
        if name == "crash":
            sys.exit(3)
        if name not in NAMES:
            raise LookupError(f"Unknown tool: {name}")
        args = json.dumps(params.get("arguments") or {}, sort_keys=True)
        return {"content": [{"type": "text", "text": f"{name} ran with {args}"}]}
    raise NotImplementedError(method)


def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        log(method, message.get("params"))
        if "id" not in message or method is None or method == "server/discover":
            continue  # notifications, responses, and the probe an old server ignores
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = answer(message)
        except LookupError as e:
            reply["error"] = {"code": -32602, "message": str(e)}
        except NotImplementedError as e:
            reply["error"] = {"code": -32601, "message": f"Method not found: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


main()
