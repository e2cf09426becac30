"""The Python ceiling for a stdio server: no MCP library, only what any Python server must do
(read stdin lines, json.loads, json.dumps, write). It answers the driver's `initialize` and
`tools/call echo` and nothing else. A reference row: how far a Python-hosted server can go on
this machine, not a server anyone should run."""

import json
import sys


def main() -> None:
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        m = json.loads(line)
        if "id" not in m:
            continue
        if m["method"] == "initialize":
            result = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "raw-python", "version": "1"}}
        elif m["method"] == "tools/call":
            result = {"content": [{"type": "text", "text": m["params"]["arguments"]["text"]}]}
        else:
            result = {}
        out.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
