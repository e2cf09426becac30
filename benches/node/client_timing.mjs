// The measurement every Node client benchmark makes, so that their rows compare like with
// like: 200 warm-up calls, then sequential calls, then batches of 16 concurrent calls, each
// phase until the stop rule (BENCH_MIN_CALLS, BENCH_MIN_SECS, BENCH_MAX_SECS); then one JSON
// line on stdout, the same as the Rust and Python client benchmarks print.

const env = (name, d) => Number(process.env[name] ?? d);
const [MIN_CALLS, MIN_SECS, MAX_SECS] = [env("BENCH_MIN_CALLS", 10000), env("BENCH_MIN_SECS", 1), env("BENCH_MAX_SECS", 3)];
const done = (calls, secs) => secs >= MAX_SECS || (calls >= MIN_CALLS && secs >= MIN_SECS);
const cpuUs = () => { const u = process.cpuUsage(); return u.user + u.system; };
const now = () => Number(process.hrtime.bigint()) / 1e9;

/** Times `call` (one `echo` call, returning a promise) and prints the rates and CPU per call. */
export async function timeCalls(call) {
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
}
