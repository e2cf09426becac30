// Scale-out through the Node binding: five replicas of the Node conformance server
// (`conformance_server.mjs --store redis://… --state-key HEX`, copied here by `make node-test`;
// three answering JSON, two SSE) share sessions through a private redis-server on a free
// loopback port. Each request goes to a chosen replica on its own connection, so "initialized
// on A, served by B" is exact.
//
// redis-server comes from Debian (`make scale-out-deps`); without it the suite skips, and
// fails under OXMCP_REQUIRE_INTEROP=1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { InvalidArgumentError, IoError, Server } from 'oxmcp';
import { freePort } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.join(here, 'conformance_server.mjs');
const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
if (!haveRedis && process.env.OXMCP_REQUIRE_INTEROP === '1') {
  throw new Error('redis-server is not on PATH (make scale-out-deps installs it)');
}
const skip = haveRedis ? false : 'redis-server is not on PATH (make scale-out-deps installs it)';

async function waitForPort(port, child, what) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode})`);
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const children = [];
let redisUrl;
const replicas = [];
const sseReplicas = [];
const STATE_KEY = randomBytes(32).toString('hex');

before(async () => {
  if (skip) return;
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  children.push(redis);
  await waitForPort(port, redis, 'redis-server');
  redisUrl = `redis://127.0.0.1:${port}/`;
  // JSON responses: a POST's answer carries nothing else, so notifications go to the GET stream.
  for (let i = 0; i < 3; i++) replicas.push(await startReplica(['--json-response']));
  // SSE responses: a tool's requests to the client ride on its call's stream.
  for (let i = 0; i < 2; i++) sseReplicas.push(await startReplica([]));
});

async function startReplica(extra) {
  const p = await freePort();
  const child = spawn(
    process.execPath,
    [FIXTURE, '--http', '--port', String(p), ...extra, '--store', redisUrl, '--state-key', STATE_KEY],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  children.push(child);
  await waitForPort(p, child, 'a replica');
  return `http://127.0.0.1:${p}/mcp`;
}

after(async () => {
  for (const c of children.reverse()) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    }
  }
});

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** One JSON-RPC message to `url` on a fresh connection; resolves the fetch Response. */
function send(url, session, message) {
  const headers = { ...HEADERS, connection: 'close' };
  if (session) {
    headers['mcp-session-id'] = session;
    headers['mcp-protocol-version'] = '2025-11-25';
  }
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
}

async function initialize(url) {
  const r = await send(url, undefined, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 't', version: '1' } },
  });
  assert.equal(r.status, 200);
  const session = r.headers.get('mcp-session-id');
  assert.ok(session);
  await r.json();
  return session;
}

/** Reads SSE events (`{id, data}`) off a streaming Response body. */
async function* events(response) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = {};
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) event.id = line.slice(3).trim();
        if (line.startsWith('data:')) event.data = (event.data ?? '') + line.slice(5).trim();
      }
      yield event;
    }
  }
}

test('scale-out: a session initialized on A is served by B and C', { skip }, async () => {
  const [A, B, C] = replicas;
  const session = await initialize(A);
  const initialized = await send(B, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(initialized.status, 202);
  const listed = await (await send(C, session, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).json();
  assert.ok(listed.result.tools.some((t) => t.name === 'scale_out_touch'));
  const called = await (
    await send(B, session, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } })
  ).json();
  assert.equal(called.result.content[0].text, 'This is a simple text response for testing.');

  // A session id nobody issued is not found on any replica.
  for (const url of replicas) {
    const r = await send(url, 'f'.repeat(32), { jsonrpc: '2.0', id: 4, method: 'tools/list' });
    assert.equal(r.status, 404);
    await r.text();
  }
});

test('scale-out: a GET stream held on A receives the progress of a tool running on B', { skip }, async () => {
  const [A, B, C] = replicas;
  const session = await initialize(C);
  await (await send(A, session, { jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  const controller = new AbortController();
  const get = await fetch(A, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    signal: controller.signal,
  });
  assert.equal(get.status, 200);
  const stream = events(get);
  const priming = await stream.next();
  assert.ok(priming.value.id !== undefined, 'a priming event with an id');
  try {
    const called = await (
      await send(B, session, {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p-b' } },
      })
    ).json();
    assert.equal(called.result.content[0].text, 'Tool with progress executed successfully');
    const progress = [];
    while (progress.length < 3) {
      const { value, done } = await stream.next();
      assert.ok(!done, 'the GET stream goes on');
      if (!value.data) continue;
      const message = JSON.parse(value.data);
      if (message.method === 'notifications/progress') {
        assert.equal(message.params.progressToken, 'p-b');
        progress.push(message.params.progress);
      }
    }
    assert.deepEqual(progress, [0, 50, 100]);
  } finally {
    controller.abort();
    await stream.return?.().catch(() => {});
  }
});

test('scale-out: an elicitation asked on D and answered through E reaches the handler', { skip }, async () => {
  const [A] = replicas;
  const [D, E] = sseReplicas;
  const session = await initialize(A);
  await (await send(E, session, { jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  const call = await send(D, session, {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'test_elicitation', arguments: { message: 'Who are you?' } },
  });
  assert.equal(call.status, 200);
  assert.match(call.headers.get('content-type') ?? '', /text\/event-stream/);
  const stream = events(call);
  const next = async () => {
    for (;;) {
      const { value, done } = await stream.next();
      assert.ok(!done, 'the call stream ended early');
      if (value.data) return JSON.parse(value.data);
    }
  };
  const asked = await next();
  assert.equal(asked.method, 'elicitation/create');
  // An answer to a request nobody asked is dropped; the real one still arrives.
  const stray = await send(E, session, { jsonrpc: '2.0', id: 987654321, result: { action: 'decline' } });
  assert.equal(stray.status, 202);
  const answer = await send(E, session, {
    jsonrpc: '2.0',
    id: asked.id,
    result: { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } },
  });
  assert.equal(answer.status, 202);
  let done = await next();
  while (done.id !== 7) done = await next();
  const said = done.result.content.map((c) => c.text).join('');
  assert.ok(said.includes('action=accept') && said.includes('ada@example.com'), said);
});

test('scale-out: a bad or unreachable store is a typed error and the server still serves', async () => {
  const s = new Server({ name: 'x', version: '1' });
  await assert.rejects(s.runHttp({ store: 'memcached://127.0.0.1:1/' }), InvalidArgumentError);
  await assert.rejects(s.runHttp({ store: 'redis://[not-a-host' }), InvalidArgumentError);
  // Port 9 (discard) on loopback: nothing listens, the connect is refused at once.
  await assert.rejects(s.runHttp({ store: 'redis://127.0.0.1:9/' }), IoError);
  await assert.rejects(s.runHttp({ stateKey: STATE_KEY }), TypeError);
  assert.throws(() => new Server({ name: 'x', version: '1', stateKey: 'abc' }), InvalidArgumentError);
  assert.throws(() => new Server({ name: 'x', version: '1', stateKey: 'zz'.repeat(32) }), InvalidArgumentError);
  const { url } = await s.runHttp({});
  assert.match(url, /^http:\/\//);
  await s.close();
});
