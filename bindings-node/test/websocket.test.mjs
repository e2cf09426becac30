// WebSocket in the Node binding: `server.runWebSocket`, `runHttp({websocket: true})` and
// `Client.websocket`, over real sockets on 127.0.0.1. Each happy path has a bad-input
// neighbour: a bad URL, nothing listening, a silent server, an aborted signal, a server gone
// mid-call, a foreign Origin, an oversized message. The rules themselves are the core's (see
// core/src/transport/ws); this checks that the binding passes options through and maps errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

import { Server, Client, McpError, InvalidArgumentError, AuthError, TimeoutError } from 'oxmcp';
import { freePort, gone } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
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

/** A raw upgrade request; resolves {status, socket?} (socket only on 101). */
function rawUpgrade(url, headers = {}) {
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
        'Sec-WebSocket-Protocol': 'mcp',
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => resolve({ status: res.statusCode, socket }));
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode });
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
  const ROOT = process.env.OXMCP_ROOT ?? path.join(here, '../..');
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
