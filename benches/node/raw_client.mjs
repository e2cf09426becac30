// The JavaScript ceiling for a stdio client: no MCP library, only what any Node client must do
// (spawn, write a JSON line to stdin, read stdout through a stream, split lines, JSON.parse,
// resolve a promise by id). Same warm-up, stop rule and output as the other client
// benchmarks. A reference row: how far a JS-hosted client can go on this machine.
import { spawn } from "node:child_process";

const env = (name, d) => Number(process.env[name] ?? d);
const [MIN_CALLS, MIN_SECS, MAX_SECS] = [env("BENCH_MIN_CALLS", 10000), env("BENCH_MIN_SECS", 1), env("BENCH_MAX_SECS", 3)];
const done = (calls, secs) => secs >= MAX_SECS || (calls >= MIN_CALLS && secs >= MIN_SECS);
const cpuUs = () => { const u = process.cpuUsage(); return u.user + u.system; };
const now = () => Number(process.hrtime.bigint()) / 1e9;

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
for (let i = 0; i < 200; i++) await call();
let [c0, t0, seq] = [cpuUs(), now(), 0];
while (!done(seq, now() - t0)) { await call(); seq++; }
const [seqSecs, seqCpu] = [now() - t0, cpuUs() - c0];
let [c1, t1, conc] = [cpuUs(), now(), 0];
while (!done(conc, now() - t1)) { await Promise.all(Array.from({ length: 16 }, call)); conc += 16; }
const [concSecs, concCpu] = [now() - t1, cpuUs() - c1];
console.log(JSON.stringify({
  seq_calls_s: seq / seqSecs, seq_cpu_us: seqCpu / seq,
  conc16_calls_s: conc / concSecs, conc16_cpu_us: concCpu / conc,
}));
child.stdin.end();
