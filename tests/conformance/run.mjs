// Runs the official MCP conformance harness (pinned in package.json) against oxmcp's Rust
// fixture server and conformance client, and prints one line per scenario and a final
// `conformance: N passed, M failed`.
//
//   node tests/conformance/run.mjs --server CMD --client CMD [--out DIR] [--only RUN[,RUN]]
//                                  [--expected FILE]
//
// CMD is a program and its arguments separated by spaces (`--server "python3 fixture.py"`), so
// the Python and Node fixtures run through the same runner as the Rust one; a relative program
// path is resolved against the current directory. FILE defaults to expected-failures.json.
//
// Runs:
//   server-0.1.16          `server --suite all` against `BIN --http --port 0`
//   server-2025-11-25      0.2.0-alpha.12 `--requirements 2025-11-25`, same server
//   server-2026-07-28      0.2.0-alpha.12 `--requirements 2026-07-28`, same server
//   server-2026-07-28-stateless   the same against `BIN --http --stateless`
//   client-0.1.16          every client scenario, one at a time (sse-retry is timing
//                          sensitive and must not share the machine with a parallel suite)
//   client-2026-07-28      every client scenario 0.2.0-alpha.12 requires for 2026-07-28
//
// A scenario fails when any of its checks is FAILURE. expected-failures.json lists, per run,
// the scenarios known to fail and why; the run fails on any other failure and on a listed
// scenario that passes (a stale entry hides a regression later).

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const node = join(here, "node_modules", "node", "bin", "node");
const harness = {
  "0.1.16": join(here, "node_modules", "conformance-0.1.16", "dist", "index.js"),
  "0.2.0": join(here, "node_modules", "conformance-0.2.0-alpha.12", "dist", "index.js"),
};

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** A command line split on spaces, its program resolved when it is a relative path. */
function command(line) {
  const [program, ...args] = line.trim().split(/\s+/);
  const resolved = program.includes("/") ? resolve(program) : program;
  return [resolved, ...args];
}

const [serverBin, ...serverArgs] = command(arg("--server", "target/debug/examples/conformance_server"));
const clientCmd = command(arg("--client", "target/debug/examples/conformance_client"));
const out = resolve(arg("--out", "target/conformance"));
const only = arg("--only", null)?.split(",");
const expectedFile = resolve(arg("--expected", join(here, "expected-failures.json")));
const { _comment, ...expected } = JSON.parse(readFileSync(expectedFile, "utf8"));

const programs = [serverBin, clientCmd[0]].filter((p) => p.includes("/"));
for (const path of [node, ...Object.values(harness), ...programs]) {
  if (!existsSync(path)) {
    console.error(`conformance: missing ${path} (run \`make conformance-deps\` and build the examples)`);
    process.exit(2);
  }
}

/** Runs a command to completion; resolves with its exit code and output. */
function run(cmd, args, { timeoutMs = 600_000, env = {} } = {}) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

/** Starts the fixture server on a free port; resolves with its URL and a stop function. */
function startServer(extra) {
  return new Promise((done, fail) => {
    const child = spawn(serverBin, [...serverArgs, "--http", "--port", "0", ...extra], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    const timer = setTimeout(() => fail(new Error(`the server did not start:\n${err}`)), 30_000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        // The harness's DNS-rebinding scenario needs a `localhost` URL.
        const url = m[1].replace("127.0.0.1", "localhost");
        done({ url, stop: () => new Promise((r) => { child.on("close", r); child.kill("SIGTERM"); }) });
      }
    });
    child.on("close", (code) => fail(new Error(`the server exited (${code}):\n${err}`)));
  });
}

/** Scenario name → { failures, warnings, checks } from the harness's checks.json files. */
function readResults(dir) {
  const results = new Map();
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === "checks.json") {
        // <dir>/<scenario>-<timestamp>/checks.json; auth scenarios nest under auth/.
        const rel = dirname(path).slice(dir.length + 1);
        // The harness prefixes the side (`server-`, `client-`) to the scenario's name.
        const name = rel
          .replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "")
          .replace(/^(server|client)-/, "");
        const checks = JSON.parse(readFileSync(path, "utf8"));
        results.set(name, {
          checks: checks.length,
          failures: checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? ""}`),
          warnings: checks.filter((c) => c.status === "WARNING").length,
        });
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return results;
}

async function listScenarios(version, args) {
  const { output } = await run(node, [harness[version], "list", ...args]);
  const client = output.split("Client scenarios")[1] ?? "";
  const section = client.split(/Run and reported, but never scored/)[0];
  return [...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
}

const runs = [
  {
    id: "server-0.1.16",
    server: [],
    harness: (url, dir) => [harness["0.1.16"], "server", "--url", url, "--suite", "all", "-o", dir],
  },
  {
    id: "server-2025-11-25",
    server: [],
    harness: (url, dir) => [harness["0.2.0"], "server", "--url", url, "--requirements", "2025-11-25", "-o", dir],
  },
  {
    id: "server-2026-07-28",
    server: [],
    harness: (url, dir) => [harness["0.2.0"], "server", "--url", url, "--requirements", "2026-07-28", "-o", dir],
  },
  {
    id: "server-2026-07-28-stateless",
    server: ["--stateless"],
    harness: (url, dir) => [harness["0.2.0"], "server", "--url", url, "--requirements", "2026-07-28", "-o", dir],
  },
  { id: "client-0.1.16", version: "0.1.16", list: ["--client"] },
  { id: "client-2026-07-28", version: "0.2.0", list: ["--client", "--requirements", "2026-07-28"], flags: ["--spec-version", "2026-07-28"] },
];

let passed = 0;
let failed = 0;
let expectedFailures = 0;
const problems = [];

for (const r of runs) {
  if (only && !only.includes(r.id)) continue;
  const dir = join(out, r.id);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let logs = "";
  if (r.harness) {
    const server = await startServer(r.server);
    const result = await run(node, r.harness(server.url, dir));
    logs = result.output;
    await server.stop();
  } else {
    for (const scenario of await listScenarios(r.version, r.list)) {
      const result = await run(node, [
        harness[r.version], "client", "--command", clientCmd.join(" "), "--scenario", scenario, ...(r.flags ?? []), "-o", dir,
      ], { timeoutMs: 120_000 });
      logs += result.output;
    }
  }
  const results = readResults(dir);
  if (results.size === 0) {
    problems.push(`${r.id}: the harness produced no results\n${logs}`);
    failed += 1;
    continue;
  }
  const known = expected[r.id] ?? {};
  for (const [name, res] of [...results].sort()) {
    const ok = res.failures.length === 0;
    const why = known[name];
    let verdict;
    if (ok && why === undefined) {
      verdict = "PASS ";
      passed += 1;
    } else if (!ok && why !== undefined) {
      verdict = "XFAIL";
      expectedFailures += 1;
    } else if (ok) {
      verdict = "XPASS";
      failed += 1;
      problems.push(`${r.id} ${name}: passes but is listed in expected-failures.json (remove it)`);
    } else {
      verdict = "FAIL ";
      failed += 1;
      problems.push(`${r.id} ${name}:\n  ${res.failures.join("\n  ")}`);
    }
    const warn = res.warnings ? `, ${res.warnings} warning(s)` : "";
    console.log(`${verdict} ${r.id} ${name} (${res.checks} checks${warn})${why && !ok ? ` — ${why}` : ""}`);
  }
  for (const name of Object.keys(known)) {
    if (!results.has(name)) {
      failed += 1;
      problems.push(`${r.id} ${name}: listed in expected-failures.json but never ran`);
    }
  }
}

for (const p of problems) console.error(`\n${p}`);
console.log(`conformance: ${passed} passed, ${failed} failed (${expectedFailures} expected failures listed with reasons)`);
process.exit(failed === 0 ? 0 : 1);
