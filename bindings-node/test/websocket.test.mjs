// WebSocket in the Node binding: `server.runWebSocket`, `runHttp({websocket: true})` and
// `Client.websocket`, over real sockets on 127.0.0.1. Each happy path has a bad-input
// neighbour: a bad URL, nothing listening, a silent server, an aborted signal, a server gone
// mid-call, a foreign Origin, an oversized message. The rules themselves are the core's (see
// core/src/transport/ws); this checks that the binding passes options through and maps errors.
// Hostile raw clients (frames written by hand over node:http, no WebSocket library) run the
// cases of tests/fixtures/websocket/hostile.json, shared with the Python suite, and after each
// the same server must serve a fresh client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

import { Server, Client, McpError, InvalidArgumentError, AuthError, TimeoutError } from 'oxmcp';
import { freePort, gone } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// Both bindings-node/test and the scratch copy target/node-test sit two levels below the root.
const ROOT = process.env.OXMCP_ROOT ?? path.join(here, '../..');
const FIXTURE = path.join(here, 'fixtures', 'server.mjs');
const text = (r) => r.content.map((c) => c.text).join('');

function testServer(name = 'ws-test') {
  return new Server({ name, version: '1.0.0' })
    .tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, async ({ text }) => {
      await new Promise((r) => setTimeout(r, 5));
      return text;
    })
    .tool('progress', {}, async (_args, ctx) => {
      for (let i = 1; i <= 3; i++) await ctx.reportProgress(i, 3, `step ${i}`);
      return 'done';
    })
    .tool('fails', {}, async () => {
      throw new Error('failed on purpose');
    });
}

/** Starts the fixture server with `args`; resolves {url, child} once it prints its URL. */
function listen(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    const look = (d) => {
      seen += d;
      const m = seen.match(/listening on (\S+)/);
      if (m) resolve({ url: m[1], child });
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${seen}`)));
  });
}

/**
 * A raw upgrade request offering the subprotocols `offer` (none: no header); resolves
 * {status, headers, socket?, head?} (socket and the bytes already read past the 101 only on 101).
 * A `Host` in `headers` replaces the real one.
 */
function rawUpgrade(url, headers = {}, offer = ['mcp']) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...(offer?.length ? { 'Sec-WebSocket-Protocol': offer.join(', ') } : {}),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket, head) => resolve({ status: res.statusCode, headers: res.headers, socket, head }));
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode, headers: res.headers });
    });
    req.on('error', reject);
    req.end();
  });
}

test('websocket: our client and our server: tools, an async tool, progress, an error result', async () => {
  const server = testServer();
  const { url } = await server.runWebSocket({ port: 0 });
  assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const client = await Client.websocket(url);
  try {
    assert.equal(client.getServerVersion().name, 'ws-test');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['echo', 'fails', 'progress']);
    assert.equal(text(await client.callTool('echo', { text: 'over a socket' })), 'over a socket');
    const seen = [];
    const done = await client.callTool('progress', {}, { onProgress: (p) => seen.push(p.progress) });
    assert.equal(text(done), 'done');
    assert.deepEqual(seen, [1, 2, 3]);
    const failed = await client.callTool('fails', {});
    assert.equal(failed.isError, true);
    assert.match(text(failed), /failed on purpose/);
    assert.equal(server.sessionCount, 1);
  } finally {
    await client.close();
    await server.close();
  }
});

test('websocket: bad options and a bad URL reject with the typed error', async () => {
  const server = testServer();
  await assert.rejects(server.runWebSocket({ host: 'localhost' }), InvalidArgumentError);
  await assert.rejects(server.runWebSocket({ maxMessageBytes: -1 }), InvalidArgumentError);
  await assert.rejects(server.runWebSocket({ pingIntervalMs: 'soon' }), McpError);
  await assert.rejects(Client.websocket('not a url'), (e) => e instanceof McpError && e.kind !== undefined);
  await assert.rejects(Client.websocket('http://127.0.0.1:1/mcp'), McpError);
  await assert.rejects(Client.websocket('ws://127.0.0.1:1/mcp', { timeout: -5 }), InvalidArgumentError);
  await assert.rejects(Client.websocket('ws://127.0.0.1:1/mcp', { headers: { 'bad name': 'x' } }), InvalidArgumentError);
  await assert.rejects(Client.websocket('ws://127.0.0.1:1/mcp', { signal: 'abort' }), TypeError);
  await server.close();
});

test('websocket: a server in a child process, reached by Client.websocket', async () => {
  const { url, child } = await listen(['--ws']);
  try {
    assert.match(url, /^ws:\/\//);
    const client = await Client.websocket(url, { name: 'ws-client' });
    assert.equal(client.getServerVersion().name, 'fixture');
    assert.equal(text(await client.callTool('echo', { text: 'hi' })), 'hi');
    await client.close();
  } finally {
    child.kill();
    assert.deepEqual(await gone([child.pid]), []);
  }
});

test('websocket: a server gone mid-call fails the pending call with a typed error, no hang', async () => {
  const { url, child } = await listen(['--ws']);
  try {
    const client = await Client.websocket(url);
    const pending = client.callTool('never', {});
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    child.kill('SIGKILL');
    await assert.rejects(pending, McpError);
    assert.ok(Date.now() - started < 10_000);
    await client.closed;
  } finally {
    child.kill();
    assert.deepEqual(await gone([child.pid]), []);
  }
});

test('websocket: nothing listening rejects at once; a silent server within the timeout', async () => {
  const port = await freePort();
  let started = Date.now();
  await assert.rejects(Client.websocket(`ws://127.0.0.1:${port}/mcp`, { timeout: 2000 }), McpError);
  assert.ok(Date.now() - started < 2000 + 1000);

  // Accepts TCP, never answers the upgrade.
  const held = [];
  const silent = net.createServer((s) => held.push(s));
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  try {
    started = Date.now();
    await assert.rejects(
      Client.websocket(`ws://127.0.0.1:${silent.address().port}/mcp`, { timeout: 300 }),
      TimeoutError,
    );
    const took = Date.now() - started;
    assert.ok(took >= 250 && took < 3000, `took ${took} ms`);
  } finally {
    for (const s of held) s.destroy();
    silent.close();
  }
});

test('websocket: an AbortSignal cancels the connect', async () => {
  const server = testServer();
  const { url } = await server.runWebSocket({ port: 0 });
  // Not aborted: connects as usual.
  const ok = await Client.websocket(url, { signal: new AbortController().signal });
  await ok.close();
  await assert.rejects(Client.websocket(url, { signal: AbortSignal.abort() }), { name: 'AbortError' });
  await server.close();

  const held = [];
  const silent = net.createServer((s) => held.push(s));
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  try {
    const controller = new AbortController();
    const connecting = Client.websocket(`ws://127.0.0.1:${silent.address().port}/mcp`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await assert.rejects(connecting, { name: 'AbortError' });
    assert.ok(Date.now() - started < 2000);
  } finally {
    for (const s of held) s.destroy();
    silent.close();
  }
});

test('websocket: an allowed Origin connects, a foreign one is refused (403)', async () => {
  const server = testServer();
  const { url } = await server.runWebSocket({ port: 0, allowedOrigins: ['http://good.example'] });
  try {
    const good = await Client.websocket(url, { headers: { Origin: 'http://good.example' } });
    assert.equal(text(await good.callTool('echo', { text: 'ok' })), 'ok');
    await good.close();
    await assert.rejects(Client.websocket(url, { headers: { Origin: 'http://evil.example' } }), AuthError);
    const raw = await rawUpgrade(url, { Origin: 'http://evil.example' });
    assert.equal(raw.status, 403);
  } finally {
    await server.close();
  }
});

test('websocket: a message over maxMessageBytes closes the connection (1009)', async () => {
  const server = testServer();
  const { url } = await server.runWebSocket({ port: 0, maxMessageBytes: 4096 });
  try {
    const client = await Client.websocket(url);
    assert.equal(text(await client.callTool('echo', { text: 'x'.repeat(1000) })), 'x'.repeat(1000));
    await assert.rejects(client.callTool('echo', { text: 'x'.repeat(10_000) }), McpError);
    await client.closed;

    // On the wire: a frame header announcing 1 MiB is answered by a close frame with 1009.
    const raw = await rawUpgrade(url);
    assert.equal(raw.status, 101);
    const header = Buffer.alloc(14);
    header[0] = 0x81; // FIN, text
    header[1] = 0x80 | 127; // masked, 64-bit length
    header.writeBigUInt64BE(1n << 20n, 2);
    raw.socket.write(header);
    let got = Buffer.alloc(0);
    for await (const chunk of raw.socket) {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 4) break;
    }
    raw.socket.destroy();
    assert.equal(got[0], 0x88, 'a close frame');
    assert.equal(got.readUInt16BE(2), 1009);
  } finally {
    await server.close();
  }
});

test('websocket: runHttp({websocket: true}) takes upgrades on its path; without it, none', async () => {
  const server = testServer();
  const { url } = await server.runHttp({ port: 0, websocket: true });
  try {
    const ws = await Client.websocket(url.replace(/^http/, 'ws'));
    assert.equal(text(await ws.callTool('echo', { text: 'upgraded' })), 'upgraded');
    const plain = await Client.http(url);
    assert.equal(text(await plain.callTool('echo', { text: 'posted' })), 'posted');
    await ws.close();
    await plain.close();
  } finally {
    await server.close();
  }
  const httpOnly = testServer();
  const { url: url2 } = await httpOnly.runHttp({ port: 0 });
  try {
    await assert.rejects(Client.websocket(url2.replace(/^http/, 'ws'), { timeout: 5000 }), McpError);
  } finally {
    await httpOnly.close();
  }
});

/** Starts `node args…` and resolves with the child and the ws:// URL it announces on stderr. */
function announcing(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let seen = '';
    child.stderr.on('data', (d) => {
      seen += d;
      const m = seen.match(/listening on (ws:\/\/\S+)/);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before listening: ${seen}`)));
  });
}

test('websocket: the conformance fixture and the weather example take --ws --port N (issue 39)', async (t) => {
  const fixture = path.join(here, 'conformance_server.mjs');
  // The weather example, copied beside a link to the tests' node_modules (so its `oxmcp` is
  // the installed tarball), as host.test.mjs does.
  const work = mkdtempSync(path.join(tmpdir(), 'oxmcp-ws-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  cpSync(path.join(ROOT, 'examples/node/weather-server'), path.join(work, 'weather-server'), { recursive: true });
  symlinkSync(path.join(here, 'node_modules'), path.join(work, 'node_modules'), 'dir');
  const weather = path.join(work, 'weather-server', 'bin', 'oxmcp-weather.mjs');
  for (const [args, tool, input, expect] of [
    [[fixture, '--ws', '--port', String(await freePort())], 'test_simple_text', {}, 'This is a simple text response'],
    [[weather, '--ws', '--port', String(await freePort())], 'get_weather', { city: 'Beijing' }, 'Beijing:'],
  ]) {
    const { child, url } = await announcing(args);
    try {
      const client = await Client.websocket(url);
      assert.ok(text(await client.callTool(tool, input)).startsWith(expect));
      await client.close();
    } finally {
      child.kill();
      assert.deepEqual(await gone([child.pid]), []);
    }
  }
  // Both on one port; the neighbour: that port, taken, fails a second start.
  const port = await freePort();
  const { child, url } = await announcing([fixture, '--http', '--ws', '--port', String(port)]);
  try {
    const overWs = await Client.websocket(url);
    assert.ok(text(await overWs.callTool('test_simple_text', {})));
    await overWs.close();
    const overHttp = await Client.http(url.replace('ws://', 'http://'));
    assert.ok(text(await overHttp.callTool('test_simple_text', {})));
    await overHttp.close();
    const second = spawn(process.execPath, [fixture, '--ws', '--port', String(port)], { stdio: 'ignore' });
    const [code] = await once(second, 'exit');
    assert.notEqual(code, 0);
  } finally {
    child.kill();
    assert.deepEqual(await gone([child.pid]), []);
  }
});

// --- Hostile clients: the shared cases of tests/fixtures/websocket/hostile.json --------------

const HOSTILE = JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/websocket/hostile.json'), 'utf8'));
// How long any single step may take (a guard against hangs, not a timed assertion).
const STEP = 10_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A WebSocket client written by hand on an upgraded socket, so a test sends exactly the frames
 * it is about: masked frames out; the server's frames parsed, pings answered (unless silent),
 * pongs skipped, fragments joined.
 */
class RawSocket {
  constructor(socket, head) {
    this.socket = socket;
    this.buffer = head ?? Buffer.alloc(0);
    this.frames = [];
    this.partial = null;
    this.ended = false;
    this.answerPings = true;
    this.wake = () => {};
    socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    const end = () => {
      this.ended = true;
      this.wake();
    };
    socket.on('end', end);
    socket.on('close', end);
    // A write cut short by a server that closed on us (EPIPE, ECONNRESET) is the end, seen above.
    socket.on('error', () => {});
    this.parse();
  }

  parse() {
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) break;
      assert.equal(b[1] & 0x80, 0, 'a server frame must not be masked');
      let length = b[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (b.length < 4) break;
        length = b.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (b.length < 10) break;
        length = Number(b.readBigUInt64BE(2));
        offset = 10;
      }
      if (b.length < offset + length) break;
      const payload = b.subarray(offset, offset + length);
      this.buffer = b.subarray(offset + length);
      const fin = (b[0] & 0x80) !== 0;
      const opcode = b[0] & 0x0f;
      if (opcode === 0x9) {
        if (this.answerPings && !this.ended) this.write(0xa, payload);
      } else if (opcode === 0x8) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        this.frames.push({ type: 'close', code, reason: payload.subarray(2).toString('utf8') });
      } else if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
        if (opcode !== 0x0) this.partial = { type: opcode === 0x1 ? 'text' : 'binary', parts: [] };
        this.partial.parts.push(payload);
        if (fin) {
          const data = Buffer.concat(this.partial.parts);
          this.frames.push({ type: this.partial.type, data: this.partial.type === 'text' ? data.toString('utf8') : data });
          this.partial = null;
        }
      }
    }
    this.wake();
  }

  /** Writes one masked frame (FIN set). */
  write(opcode, payload) {
    const mask = randomBytes(4);
    const n = payload.length;
    const size = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const frame = Buffer.allocUnsafe(size + 4 + n);
    frame[0] = 0x80 | opcode;
    if (n < 126) frame[1] = 0x80 | n;
    else if (n < 65536) {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(n, 2);
    } else {
      frame[1] = 0x80 | 127;
      frame.writeBigUInt64BE(BigInt(n), 2);
    }
    mask.copy(frame, size);
    for (let i = 0; i < n; i++) frame[size + 4 + i] = payload[i] ^ mask[i & 3];
    if (!this.socket.destroyed) this.socket.write(frame);
  }

  sendText(text) {
    this.write(0x1, Buffer.from(text, 'utf8'));
  }

  sendJson(message) {
    this.sendText(JSON.stringify(message));
  }

  /** The next text, binary or close frame; null once the socket ended with none left. */
  async next(what) {
    const deadline = Date.now() + STEP;
    while (this.frames.length === 0 && !this.ended) {
      const left = deadline - Date.now();
      assert.ok(left > 0, `${what}: no frame within ${STEP} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.frames.shift() ?? null;
  }

  async nextJson(what) {
    const frame = await this.next(what);
    assert.equal(frame?.type, 'text', `${what}: expected a text frame, got ${JSON.stringify(frame)?.slice(0, 200)}`);
    return JSON.parse(frame.data);
  }

  /** The next frame is a close frame with `code`; answers it and waits for the end. */
  async expectClose(code, what) {
    const frame = await this.next(what);
    assert.equal(frame?.type, 'close', `${what}: expected a close frame, got ${JSON.stringify(frame)?.slice(0, 200)}`);
    assert.equal(frame.code, code, `${what}: closed with ${frame.code} (${frame.reason})`);
    await this.finish(code);
  }

  /** Sends a close frame with `code` and waits (briefly) for the server to hang up. */
  async finish(code = 1000) {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.write(0x8, payload);
    const deadline = Date.now() + STEP;
    while (!this.ended && Date.now() < deadline) {
      this.frames.length = 0;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.socket.destroy();
  }
}

/** The value at a dotted path (array indexes as numbers), or undefined. */
const at = (value, dotted) =>
  dotted.split('.').reduce((v, part) => (v !== null && typeof v === 'object' && Object.hasOwn(v, part) ? v[part] : undefined), value);

function checkJson(message, step, what) {
  for (const [dotted, expected] of Object.entries(step.expect_json)) {
    assert.deepEqual(at(message, dotted), expected, `${what}: ${dotted} in ${JSON.stringify(message)}`);
  }
  for (const dotted of step.absent ?? []) {
    assert.equal(at(message, dotted), undefined, `${what}: ${dotted} in ${JSON.stringify(message)}`);
  }
}

/** The fixture's tools, and what its `wait_for_cancel` handler went through. */
function hostileServer() {
  const seen = new Set();
  const server = new Server({ name: 'ws-hostile', version: '1.0.0' })
    .tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, async ({ text }) => text)
    .tool('wait_for_cancel', {}, async (_args, ctx) => {
      seen.add('started');
      await new Promise((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', resolve, { once: true });
      });
      seen.add('cancelled');
      return 'cancelled';
    });
  return { server, seen };
}

async function runSteps(raw, c, seen) {
  const init = HOSTILE.initialize;
  raw.sendJson(init.request);
  checkJson(await raw.nextJson('initialize'), { expect_json: init.expect }, 'initialize');
  raw.sendJson(init.initialized);
  let done = false;
  for (const [i, step] of c.steps.entries()) {
    const what = `${c.name}, step ${i}`;
    if ('send_json' in step) raw.sendJson(step.send_json);
    else if ('send_text' in step) raw.sendText(step.send_text);
    else if ('send_binary_json' in step) raw.write(0x2, Buffer.from(JSON.stringify(step.send_binary_json)));
    else if ('send_echo_bytes' in step) {
      // The server may close while the frame is still going out.
      raw.sendJson({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x'.repeat(step.send_echo_bytes) } },
      });
    } else if ('expect_json' in step) checkJson(await raw.nextJson(what), step, what);
    else if ('expect_close' in step) {
      await raw.expectClose(step.expect_close, what);
      done = true;
    } else if ('await_handler' in step) {
      const deadline = Date.now() + STEP;
      while (!seen.has(step.await_handler)) {
        assert.ok(Date.now() < deadline, `${what}: the handler never reached ${step.await_handler}`);
        await sleep(10);
      }
    } else if ('drop' in step) {
      if (step.drop === 'reset') raw.socket.destroy();
      else await raw.finish(1000);
      done = true;
    } else if ('silent_ms' in step) {
      // Nothing read, so no ping answered (the raw client pings nothing itself).
      raw.answerPings = false;
      raw.socket.pause();
      await sleep(step.silent_ms);
      raw.socket.resume();
    } else assert.fail(`${what}: unknown step ${JSON.stringify(step)}`);
  }
  if (!done) await raw.finish(1000);
}

for (const c of HOSTILE.cases) {
  test(`websocket: a hostile client gets the Rust server's answer: ${c.name}`, async () => {
    const { server, seen } = hostileServer();
    const options = { port: 0 };
    if (c.server) {
      options.pingIntervalMs = c.server.ping_interval_ms;
      options.pingTimeoutMs = c.server.ping_timeout_ms;
    }
    const { url } = await server.runWebSocket(options);
    try {
      const up = await rawUpgrade(url, c.headers ?? {}, c.offer ?? []);
      assert.equal(up.status, c.upgrade.status, c.name);
      if (up.socket) {
        const echoed = c.upgrade.subprotocol;
        assert.equal(up.headers['sec-websocket-protocol'], echoed ?? undefined, c.name);
        await runSteps(new RawSocket(up.socket, up.head), c, seen);
      }
      // The server stays up: a fresh client is served end to end.
      const client = await Client.websocket(url, { timeout: STEP });
      assert.equal(text(await client.callTool('echo', { text: 'still here' })), 'still here');
      await client.close();
    } finally {
      await server.close();
    }
  });
}
