// The official TypeScript SDK's client (1.32, StdioClientTransport) calling `echo` on the
// server command given as arguments: 200 warm-up calls, sequential calls, batches of 16
// concurrent calls. Prints one JSON line like the Rust client benchmarks.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const env = (name, d) => Number(process.env[name] ?? d);
const [MIN_CALLS, MIN_SECS, MAX_SECS] = [env("BENCH_MIN_CALLS", 10000), env("BENCH_MIN_SECS", 1), env("BENCH_MAX_SECS", 3)];
const done = (calls, secs) => secs >= MAX_SECS || (calls >= MIN_CALLS && secs >= MIN_SECS);
const cpuUs = () => { const u = process.cpuUsage(); return u.user + u.system; };
const now = () => Number(process.hrtime.bigint()) / 1e9;

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: "bench", version: "1.0" });
await client.connect(new StdioClientTransport({ command, args }));
const call = () => client.callTool({ name: "echo", arguments: { text: "hello from the benchmark" } });
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
await client.close();
