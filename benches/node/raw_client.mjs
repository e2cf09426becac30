// The JavaScript ceiling for a stdio client: no MCP library, only what any Node client must do
// (spawn, write a JSON line to stdin, read stdout through a stream, split lines, JSON.parse,
// resolve a promise by id). Same warm-up, stop rule and output as the other client
// benchmarks. A reference row: how far a JS-hosted client can go on this machine.
import { spawn } from "node:child_process";
import { timeCalls } from "./client_timing.mjs";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const waiting = new Map();
let pending = "";
let nextId = 0;
child.stdout.on("data", (chunk) => {
  pending += chunk.toString("utf8");
  let nl;
  while ((nl = pending.indexOf("\n")) >= 0) {
    const m = JSON.parse(pending.slice(0, nl));
    pending = pending.slice(nl + 1);
    const resolve = waiting.get(m.id);
    if (resolve) { waiting.delete(m.id); resolve(m); }
  }
});
const request = (method, params) => new Promise((resolve) => {
  const id = nextId++;
  waiting.set(id, resolve);
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
});
await request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw-js", version: "1" } });
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
const call = () => request("tools/call", { name: "echo", arguments: { text: "hello from the benchmark" } });
await timeCalls(call);
child.stdin.end();
