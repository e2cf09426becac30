"""A stdio MCP server written as raw JSON-RPC lines (no library), so a test can make it
misbehave in ways no real server library would: it answers `initialize` and `tools/call`, and
its tools are the misbehaviours.

- ``echo {text}``: the text back;
- ``hang``: never answered (a silent peer); the peer keeps reading;
- ``cancelled``: the request ids a ``notifications/cancelled`` named so far;
- ``garbage``: writes a line that is not JSON, a line over the client's 16 MiB cap, an answer
  to an id nobody asked for and a message of the wrong shape, then the real answer;
- ``die``: exits (status 3) without answering;
- ``pid``: the process id.

Other requests get "method not found" (the client's probe for the stateless era among them).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

OUT = sys.stdout


def send(message: dict[str, Any]) -> None:
    OUT.write(json.dumps(message) + "\n")
    OUT.flush()


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def main() -> None:
    cancelled: list[Any] = []
    for line in sys.stdin:
        if not line.strip():
            continue
        m = json.loads(line)
        method = m.get("method")
        if method == "notifications/cancelled":
            cancelled.append(m["params"]["requestId"])
            continue
        if "id" not in m:
            continue
        rid = m["id"]
        if method == "initialize":
            result = {
                "protocolVersion": m["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw-peer", "version": "1"},
            }
        elif method == "tools/call":
            name = m["params"]["name"]
            args = m["params"].get("arguments") or {}
            if name == "echo":
                result = text(args["text"])
            elif name == "hang":
                continue
            elif name == "cancelled":
                result = text(json.dumps(cancelled))
            elif name == "garbage":
                OUT.write("this is not json {\n")
                OUT.write('{"jsonrpc":"2.0","id":1,"result":"' + "x" * (17 << 20) + '"}\n')
                send({"jsonrpc": "2.0", "id": 987654, "result": {}})
                send({"jsonrpc": "2.0", "id": [1, 2], "result": 7})
                result = text("after the garbage")
            elif name == "die":
                OUT.flush()
                os._exit(3)
            elif name == "pid":
                result = text(str(os.getpid()))
            else:
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": name}})
                continue
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
            send({"jsonrpc": "2.0", "id": rid, "error": error})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
