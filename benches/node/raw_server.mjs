// The JavaScript ceiling for a stdio server: no MCP library, only what any Node server must do
// (read stdin through a stream, split lines, JSON.parse, JSON.stringify, write). It answers
// the driver's `initialize` and `tools/call echo` and nothing else. A reference row: it shows
// how far a JS-hosted server can go on this machine, not a server anyone should run.
import fs from "node:fs";

let pending = "";
const out = (message) => fs.writeSync(1, JSON.stringify(message) + "\n");
process.stdin.on("data", (chunk) => {
  pending += chunk.toString("utf8");
  let nl;
  while ((nl = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.id === undefined) continue;
    if (m.method === "initialize") {
      out({ jsonrpc: "2.0", id: m.id, result: {
        protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
        serverInfo: { name: "raw-js", version: "1" } } });
    } else if (m.method === "tools/call") {
      out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: m.params.arguments.text }] } });
    } else {
      out({ jsonrpc: "2.0", id: m.id, result: {} });
    }
  }
});
