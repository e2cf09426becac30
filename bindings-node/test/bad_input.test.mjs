// A Node server process against malformed input: every case of the shared corpus
// tests/fixtures/jsonrpc/malformed.json (the one core/tests/stdio_bad_input.rs replays against
// the Rust servers, and tests/python/test_bad_input.py against a Python one) is written to
// the stdio fixture server, followed by a `ping` probe, and exactly the replies the case
// expects must come back: none for bytes that are not JSON, one error with the right code and
// id for JSON that is not a valid request. The server must survive all of it, write nothing
// but JSON-RPC to stdout, and exit with status 0 when stdin closes.
//
// The corpus states each behaviour once; this file is only the Node runner for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = process.env.OXMCP_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const CORPUS = path.join(ROOT, 'tests/fixtures/jsonrpc/malformed.json');
const SERVER = fileURLToPath(new URL('./fixtures/stdio_server.mjs', import.meta.url));
// Generous: only turns a hang into a failure. Nothing here is timed.
const REPLY_TIMEOUT_MS = 60_000;

/** The corpus's cases with each line as bytes (the runner appends the newline). */
function loadCases() {
  const doc = JSON.parse(readFileSync(CORPUS, 'utf8'));
  return doc.cases.map((c) => {
    let line;
    if ('line' in c) line = Buffer.from(c.line, 'utf8');
    else if ('hex' in c) line = Buffer.from(c.hex, 'hex');
    else line = Buffer.from(c.generate.prefix + c.generate.repeat.repeat(c.generate.times) + c.generate.suffix, 'utf8');
    assert.equal(line.includes(0x0a), false, `${c.name}: a case is one line`);
    return { name: c.name, line, expect: c.expect, inFlight: c.in_flight, knownBug: c.known_bug };
  });
}

/** Whether `replies` are exactly what `expect` asks for. An expected id of null means the id
 * could not be read: the reply carries null or (2025-11-25 on) no id at all. */
function meets(expect, replies) {
  if (expect.reply === 'none') return replies.length === 0;
  if (replies.length !== 1) return false;
  const [reply] = replies;
  const id = reply.id ?? null;
  if (expect.reply === 'error') return !('result' in reply) && reply.error.code === expect.code && id === expect.id;
  return 'result' in reply && id === expect.id;
}

function checkResponseShape(reply) {
  assert.equal(reply.jsonrpc, '2.0', `not a JSON-RPC 2.0 message: ${JSON.stringify(reply)}`);
  assert.notEqual('result' in reply, 'error' in reply, `exactly one of result and error: ${JSON.stringify(reply)}`);
  if ('result' in reply) assert.ok('id' in reply, `a result without an id: ${JSON.stringify(reply)}`);
  else {
    assert.equal(typeof reply.error.code, 'number', JSON.stringify(reply));
    assert.equal(typeof reply.error.message, 'string', JSON.stringify(reply));
  }
}

/** The server on pipes, its stdout as an ordered queue of messages. */
function serverProcess() {
  const child = spawn(process.execPath, [SERVER], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buffered = Buffer.alloc(0);
  let stderr = '';
  let ended = false;
  const messages = [];
  let wake = null;
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buffered = Buffer.concat([buffered, d]);
    let nl;
    while ((nl = buffered.indexOf(0x0a)) >= 0) {
      const line = buffered.subarray(0, nl).toString('utf8');
      buffered = buffered.subarray(nl + 1);
      // Nothing but JSON-RPC on stdout: a line that is not JSON fails here.
      messages.push(JSON.parse(line));
    }
    wake?.();
  });
  child.stdout.on('end', () => {
    ended = true;
    wake?.();
  });
  const exited = once(child, 'exit');
  return {
    child,
    exited,
    stderr: () => stderr,
    unread: () => messages.length + buffered.length,
    send(line) {
      const bytes = Buffer.isBuffer(line) ? line : Buffer.from(JSON.stringify(line));
      child.stdin.write(Buffer.concat([bytes, Buffer.from('\n')]));
    },
    /** The next message, or null when none came in time or stdout ended. */
    async recv() {
      const deadline = Date.now() + REPLY_TIMEOUT_MS;
      while (messages.length === 0 && !ended && Date.now() < deadline) {
        await new Promise((resolve) => {
          wake = resolve;
          setTimeout(resolve, 1_000);
        });
        wake = null;
      }
      return messages.shift() ?? null;
    },
  };
}

async function initialize(s) {
  // Id 0, which some cases refer to.
  s.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bad_input', version: '0' } } });
  const reply = await s.recv();
  assert.equal(reply?.id, 0, JSON.stringify(reply));
  assert.equal(reply.result.protocolVersion, '2025-11-25');
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

async function runCases(s, cases) {
  const failures = [];
  for (const [n, c] of cases.entries()) {
    if (c.inFlight !== undefined) {
      // A request that stays in flight until cancelled, so the case can reuse its id.
      s.send({ jsonrpc: '2.0', id: c.inFlight, method: 'tools/call', params: { name: 'hang', arguments: {} } });
    }
    s.send(c.line);
    if (c.inFlight !== undefined) {
      // Before the probe, so by the probe's answer the session has seen it: the slow request
      // then ends without a reply, as a cancelled request must.
      s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: c.inFlight, reason: 'case done' } });
    }
    const probe = `probe-${n}`;
    s.send({ jsonrpc: '2.0', id: probe, method: 'ping' });
    // Replies to a line the session driver handles come before the probe's; replies from a
    // handler may come after it, so wait for both.
    const wanted = c.expect.reply === 'none' ? 0 : 1;
    const replies = [];
    let probed = false;
    while (!(probed && replies.length >= wanted)) {
      const reply = await s.recv();
      if (reply === null) break;
      checkResponseShape(reply);
      if (reply.id === probe) {
        assert.deepEqual(reply.result, {}, `${c.name}: probe answered ${JSON.stringify(reply)}`);
        probed = true;
      } else replies.push(reply);
    }
    if (!probed) {
      // Out of step from here on: stop at the first lost reply.
      failures.push(`${c.name}: no reply to the probe; got ${JSON.stringify(replies)}`);
      break;
    }
    const ok = meets(c.expect, replies);
    if (c.knownBug === undefined && !ok) failures.push(`${c.name}: expected ${JSON.stringify(c.expect)}, got ${JSON.stringify(replies)}`);
    else if (c.knownBug !== undefined && ok) failures.push(`${c.name}: now meets its expectation; remove \`known_bug\``);
  }
  assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases failed`);
}

test('the corpus loads, one line a case, with in-flight cases', () => {
  const cases = loadCases();
  assert.ok(cases.length >= 200, `only ${cases.length} cases`);
  assert.equal(new Set(cases.map((c) => c.name)).size, cases.length, 'duplicate case names');
  assert.ok(cases.some((c) => c.inFlight !== undefined));
});

test('a Node server answers bad input exactly as expected and survives', { timeout: 300_000 }, async () => {
  const s = serverProcess();
  try {
    await initialize(s);
    await runCases(s, loadCases());
    assert.equal(s.child.exitCode, null, 'the server exited under bad input');
    s.child.stdin.end();
    const [code] = await s.exited;
    assert.equal(code, 0, s.stderr());
    assert.equal(s.unread(), 0, 'replies after the last probe');
  } finally {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
  }
});
