// Process lifetime: what keeps Node alive, what never crashes it, and no orphan children.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { gone } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name) => path.join(here, 'fixtures', name);

/** Runs node on a script; resolves with {code, signal, stdout, stderr}. A generous cap turns a hang into a failure. */
function run(args, { onStdout, capMs = 60_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      onStdout?.(stdout, child);
    });
    child.stderr.on('data', (d) => (stderr += d));
    const cap = setTimeout(() => child.kill('SIGKILL'), capMs);
    child.on('exit', (code, signal) => {
      clearTimeout(cap);
      resolve({ code, signal, stdout, stderr, hung: signal === 'SIGKILL' });
    });
  });
}

test('a script that only registers handlers exits on its own', async () => {
  const r = await run([fixture('register_only.cjs')]);
  assert.equal(r.hung, false, 'the process hung');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'registered');
});

for (const how of ['exit', 'throw', 'sigterm']) {
  test(`live stdio clients leave no orphan when the host ends by ${how}`, async () => {
    let pids = null;
    const r = await run([fixture('parent.mjs'), how], {
      onStdout: (out, child) => {
        const line = out.split('\n').find((l) => l.startsWith('['));
        if (line && !pids) {
          pids = JSON.parse(line);
          if (how === 'sigterm') child.kill('SIGTERM');
        }
      },
    });
    assert.equal(r.hung, false, 'the host hung');
    assert.ok(pids && pids.length === 2, `no pids printed: ${r.stderr}`);
    if (how === 'exit') assert.equal(r.code, 3);
    if (how === 'throw') assert.match(r.stderr, /uncaught on purpose/);
    if (how === 'sigterm') assert.equal(r.signal, 'SIGTERM');
    assert.deepEqual(await gone(pids), [], 'server processes outlived their host');
  });
}

test('worker threads load the addon and serve and call from there', async () => {
  const r = await run([fixture('worker.mjs')]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ['hi from a worker', 'hi from a worker']);
});
