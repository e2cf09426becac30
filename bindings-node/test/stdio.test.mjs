// stdio sessions hosted on the JavaScript thread (the server reads its stdin, the client its
// child's stdout, through Node's own loop): many and concurrent calls, a slow handler beside
// quick ones, bad input, a child dying mid-call, and what keeps a process alive afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync, mkdtempSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Client, ConnectionClosedError, InvalidArgumentError, RpcError } from 'oxmcp';
import { gone } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name) => path.join(here, 'fixtures', name);
const SERVER = fixture('stdio_server.mjs');

/** The fixture server on raw pipes: send lines, read answers by id. */
function rawServer(nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, SERVER], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buffered = '';
  let stderr = '';
  const answers = new Map();
  const waiting = new Map();
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buffered += d;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const msg = JSON.parse(line);
      const w = waiting.get(msg.id);
      if (w) {
        waiting.delete(msg.id);
        w(msg);
      } else answers.set(msg.id, msg);
    }
  });
  const exited = once(child, 'exit');
  return {
    child,
    exited,
    stderr: () => stderr,
    send: (obj) => child.stdin.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n'),
    answer: (id) =>
      answers.has(id)
        ? Promise.resolve(answers.get(id))
        : new Promise((resolve) => waiting.set(id, resolve)),
    seen: (id) => answers.has(id),
  };
}

async function initialize(s) {
  s.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  assert.equal((await s.answer(0)).result.protocolVersion, '2025-11-25');
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

const call = (id, name, args = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

test('a hosted client and a hosted server: many sequential and concurrent calls', async () => {
  const client = await Client.stdio(process.execPath, [SERVER]);
  try {
    for (let i = 0; i < 300; i++) {
      const r = await client.callTool('echo', { text: `seq ${i}` });
      assert.equal(r.content[0].text, `seq ${i}`);
    }
    const texts = await Promise.all(Array.from({ length: 200 }, (_, i) => client.callTool('echo', { text: `c${i}` })));
    assert.deepEqual(texts.map((r) => r.content[0].text), Array.from({ length: 200 }, (_, i) => `c${i}`));
    // Its bad-input neighbour: arguments the schema refuses come back as an error result,
    // and the session goes on.
    const bad = await client.callTool('echo', { text: 5 });
    assert.equal(bad.isError, true);
    // Arguments that are not one object are refused before anything is sent (the text goes
    // to the engine unparsed, and the engine checks it).
    for (const notAnObject of [[1, 2], 'text', 42, true]) {
      await assert.rejects(client.callTool('echo', notAnObject), InvalidArgumentError);
    }
    assert.equal((await client.callTool('echo', { text: 'after' })).content[0].text, 'after');
  } finally {
    await client.close();
  }
});

test('a slow async handler does not hold up quick ones', async () => {
  const client = await Client.stdio(process.execPath, [SERVER]);
  try {
    const order = [];
    const slow = client.callTool('slow', { ms: 400 }).then((r) => order.push(r.content[0].text));
    const quick = Promise.all(
      Array.from({ length: 20 }, (_, i) => client.callTool('echo', { text: `q${i}` }).then(() => order.push('quick'))),
    );
    await Promise.all([slow, quick]);
    assert.equal(order.length, 21);
    assert.equal(order.at(-1), 'slow done', `order: ${order}`);
  } finally {
    await client.close();
  }
});

test('a pipelined flood is answered in full, in order (input paused and resumed)', async () => {
  const s = rawServer();
  await initialize(s);
  // Written at once: more frames than the feeder holds back before pausing the watch.
  let burst = '';
  for (let id = 1; id <= 5000; id++) burst += `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`;
  s.child.stdin.write(burst);
  for (let id = 1; id <= 5000; id++) assert.deepEqual((await s.answer(id)).result, {});
  s.child.stdin.end();
  const [code] = await s.exited;
  assert.equal(code, 0, s.stderr());
});

test('odd promises from async handlers settle once, as the first outcome says', async () => {
  const client = await Client.stdio(process.execPath, [SERVER]);
  try {
    const thenThrows = await client.callTool('then_throws', {});
    assert.equal(thenThrows.isError, true);
    assert.match(thenThrows.content[0].text, /then refused/);
    assert.equal((await client.callTool('settles_twice', {})).content[0].text, 'first wins');
    const circular = await client.callTool('async_circular', {});
    assert.equal(circular.isError, true);
    assert.match(circular.content[0].text, /cannot be sent as JSON/);
    // The handle's bad-input neighbour: a value that is no live call is refused quietly.
    assert.deepEqual(JSON.parse((await client.callTool('bad_settle', {})).content[0].text), [false, false, false, false]);
    // And the session goes on.
    assert.equal((await client.callTool('echo', { text: 'still here' })).content[0].text, 'still here');
  } finally {
    await client.close();
  }
});

test('a context first used after its call ended still knows its request', async () => {
  const s = rawServer(['--expose-gc']);
  await initialize(s);
  s.send({ ...call(7, 'keep'), params: { name: 'keep', arguments: {}, _meta: { progressToken: 'p' } } });
  assert.equal((await s.answer(7)).result.content[0].text, 'kept');
  s.send(call(8, 'peek'));
  const seen = JSON.parse((await s.answer(8)).result.content[0].text);
  assert.equal(seen.requestId, 7);
  assert.equal(seen.protocolVersion, '2025-11-25');
  assert.deepEqual(seen.meta, { progressToken: 'p' });
  assert.equal(seen.roots, false);
  assert.equal(seen.aborted, false);
  // Its bad-input neighbour: anything but a live call's handle is refused, with no crash.
  s.send(call(9, 'bad_handle'));
  const refused = JSON.parse((await s.answer(9)).result.content[0].text);
  assert.equal(refused.length, 4);
  for (const message of refused) assert.match(message, /not a request context handle|expected/i);
  s.child.stdin.end();
  const [code] = await s.exited;
  assert.equal(code, 0, s.stderr());
});

test('malformed and oversized lines are answered or dropped and the next message is read', async () => {
  const s = rawServer();
  await initialize(s);
  s.send('this is not json {');
  // Over the 4 MiB cap: skipped as it arrives, never buffered whole.
  s.send(JSON.stringify(call(2, 'echo', { text: 'x'.repeat(5 << 20) })));
  s.send('{"jsonrpc":"2.0","id":3,"method":7}');
  const wrong = await s.answer(3);
  assert.equal(wrong.error.code, -32600);
  s.send(call(4, 'echo', { text: 'still here' }));
  assert.equal((await s.answer(4)).result.content[0].text, 'still here');
  assert.equal(s.seen(2), false, 'the oversized request was answered');
  // A last line without a newline, then end of input: still read, then a clean exit.
  s.child.stdin.end(JSON.stringify(call(5, 'echo', { text: 'last' })));
  assert.equal((await s.answer(5)).result.content[0].text, 'last');
  const [code] = await s.exited;
  assert.equal(code, 0, s.stderr());
  assert.match(s.stderr(), /session over/);
});

test('stdin from a regular file is served on the fallback path and the process exits', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'oxmcp-stdio-'));
  const input = path.join(dir, 'requests.jsonl');
  const lines = [
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'file', version: '0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    call(1, 'echo', { text: 'from a file' }),
  ];
  writeFileSync(input, lines.map((l) => JSON.stringify(l)).join('\n') + '\nnot json\n' + JSON.stringify(call(2, 'echo', { text: 'after junk' })) + '\n');
  const fd = openSync(input, 'r');
  const child = spawn(process.execPath, [SERVER], { stdio: [fd, 'pipe', 'pipe'] });
  closeSync(fd);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, err);
  // Off the hosted path, calls run concurrently and may be answered in any order.
  const answers = out.trim().split('\n').map((l) => JSON.parse(l)).sort((a, b) => a.id - b.id);
  assert.deepEqual(answers.map((a) => a.id), [0, 1, 2]);
  assert.equal(answers[1].result.content[0].text, 'from a file');
  assert.equal(answers[2].result.content[0].text, 'after junk');
});

test('a child that dies mid-call fails the call with a typed error and is reaped', async () => {
  const client = await Client.stdio(process.execPath, [SERVER]);
  const pid = Number((await client.callTool('pid', {})).content[0].text);
  await assert.rejects(client.callTool('die', {}), (e) => {
    assert.ok(e instanceof ConnectionClosedError, `${e?.constructor?.name}: ${e?.message}`);
    assert.match(e.message, /exit/);
    return true;
  });
  // Later calls fail the same way instead of hanging.
  await assert.rejects(client.callTool('echo', { text: 'x' }), ConnectionClosedError);
  await client.close();
  assert.deepEqual(await gone([pid]), [], 'the dead child was not reaped');
});

test('close releases the child, and a client script then exits on its own', async () => {
  const child = spawn(process.execPath, [fixture('stdio_client.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const cap = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await once(child, 'exit');
  clearTimeout(cap);
  assert.equal(signal, null, `the client script hung: ${err}`);
  assert.equal(code, 0, err);
  const seen = JSON.parse(out);
  assert.deepEqual([seen.count, seen.last], [20, 'n19']);
  assert.deepEqual(await gone([seen.pid]), [], 'the server child outlived close()');
});

test('a hosted server exits when its client hangs up, and on close() with stdin still open', async () => {
  const s = rawServer();
  await initialize(s);
  s.send(call(1, 'echo', { text: 'one' }));
  assert.equal((await s.answer(1)).result.content[0].text, 'one');
  // Hanging up in the middle of a slow call: the call finishes or is dropped, the process ends.
  s.send(call(2, 'slow', { ms: 100 }));
  s.child.stdin.end();
  const [code] = await s.exited;
  assert.equal(code, 0, s.stderr());
});

// A peer's error message and stderr laced with what would rewrite a terminal (an OSC title,
// BEL, CR, clear-screen, a bidi override): the exception's message shows them escaped, and the
// exact text stays in `data` / the stderr the error carries.
const HOSTILE = '\x1b]0;pwned\x07\r\x1b[2J\u202eoxmcp: logged in';
const HOSTILE_PEER = `
const EVIL = JSON.parse(process.argv[2]);
let buffered = '';
process.stdin.on('data', (d) => {
  buffered += d;
  let nl;
  while ((nl = buffered.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (m.id === undefined || !m.method) continue;
    let r;
    if (m.method === 'initialize') {
      r = { result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'evil', version: '1' } } };
    } else if (m.method === 'tools/call' && m.params.name === 'die') {
      process.stderr.write('last words' + EVIL + '\\n', () => process.exit(3));
      return;
    } else if (m.method === 'tools/call') {
      r = { error: { code: -32000, message: 'refused' + EVIL, data: { why: EVIL } } };
    } else {
      r = { error: { code: -32601, message: 'method not found' } };
    }
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...r }) + '\\n');
  }
});
`;

function rawControl(text) {
  return [...text].filter((c) => {
    const n = c.codePointAt(0);
    return (n < 0x20 && n !== 0x0a) || (n >= 0x7f && n <= 0x9f) || n === 0x202e;
  });
}

test("a peer's text in an exception message is sanitized; the exact text stays in data", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'oxmcp-hostile-'));
  const script = path.join(dir, 'hostile.cjs');
  writeFileSync(script, HOSTILE_PEER);
  const client = await Client.stdio(process.execPath, [script, JSON.stringify(HOSTILE)]);
  try {
    const refused = await client.callTool('anything', {}).then(() => null, (e) => e);
    assert.ok(refused instanceof RpcError, String(refused));
    assert.deepEqual(rawControl(refused.message), [], JSON.stringify(refused.message));
    assert.ok(refused.message.includes('\\x1b]0;pwned\\x07\\r') && refused.message.includes('\\u202e'), refused.message);
    assert.deepEqual(refused.data, { why: HOSTILE });
    const closed = await client.callTool('die', {}).then(() => null, (e) => e);
    assert.ok(closed instanceof ConnectionClosedError, String(closed));
    assert.deepEqual(rawControl(closed.message), [], JSON.stringify(closed.message));
  } finally {
    await client.close();
  }
});
