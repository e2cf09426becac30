// The official TypeScript SDK as a peer, both directions, stdio and HTTP. The SDK (1.32.2)
// speaks the handshake era only (up to 2025-11-25), so that is the era exercised here; our own
// client against our own server covers 2026-07-28 in checks.cjs.
//
// - its Client drives our Node fixture server (fixtures/server.mjs) through every feature;
// - our Client drives its servers: feature_server.mjs (stdio) and http_server.mjs (Streamable
//   HTTP stateful/stateless, legacy SSE), copied from tests/interop/node by `make node-test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError as SdkMcpError,
} from '@modelcontextprotocol/sdk/types.js';
import { Client, RpcError } from 'oxmcp';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.join(here, 'fixtures', 'server.mjs');
const text = (r) => r.content.map((c) => c.text).join('');

/** Starts a script that prints `listening on URL` (stdout or stderr); resolves {url, child}. */
function listen(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    const look = (d) => {
      seen += d;
      const m = seen.match(/listening on (http:\/\/\S+)/);
      if (m) resolve({ url: m[1], child });
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${seen}`)));
  });
}

function sdkClient() {
  const c = new SdkClient(
    { name: 'sdk-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  c.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    role: 'assistant',
    content: { type: 'text', text: `echo ${req.params.messages[0].content.text}` },
    model: 'sdk-model',
  }));
  c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
  c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///tmp/root' }] }));
  return c;
}

async function driveOurServer(c) {
  const logs = [];
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  assert.equal(c.getServerVersion().name, 'fixture');
  const { tools } = await c.listTools();
  assert.ok(tools.find((t) => t.name === 'zod_add').outputSchema);
  assert.equal(text(await c.callTool({ name: 'echo', arguments: { text: '北京' } })), '北京');
  assert.deepEqual((await c.callTool({ name: 'zod_add', arguments: { a: 1, b: 2 } })).structuredContent, { sum: 3 });
  const failed = await c.callTool({ name: 'throws_async', arguments: {} });
  assert.equal(failed.isError, true);
  await assert.rejects(c.callTool({ name: 'mcp_error', arguments: {} }), (e) => e instanceof SdkMcpError && e.code === -32602);
  const progress = [];
  await c.callTool({ name: 'progress', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) });
  assert.deepEqual(progress, [1, 2, 3]);
  await c.setLoggingLevel('debug');
  await c.callTool({ name: 'log', arguments: {} });
  for (let i = 0; i < 100 && logs.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(logs[0].data.hello, 'log');
  const asked = await c.callTool({ name: 'ask', arguments: {} });
  assert.deepEqual(asked.structuredContent, { sampled: 'echo hi?', elicited: 'Ada', roots: ['file:///tmp/root'] });
  assert.equal((await c.readResource({ uri: 'test://items/7' })).contents[0].text, 'item 7');
  assert.equal((await c.listResourceTemplates()).resourceTemplates[0].uriTemplate, 'test://items/{id}');
  assert.equal((await c.getPrompt({ name: 'greet', arguments: { who: 'Bob' } })).messages[0].content.text, 'Hello, Bob!');
  const completion = await c.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'Al' } });
  assert.deepEqual(completion.completion.values, ['Alan']);
  // The SDK's abort sends notifications/cancelled; our handler's signal fires.
  const ac = new AbortController();
  const pending = c.callTool({ name: 'wait_for_cancel', arguments: {} }, undefined, { signal: ac.signal });
  setTimeout(() => ac.abort(), 200);
  await assert.rejects(pending);
  let ids = [];
  for (let i = 0; i < 100 && ids.length === 0; i++) {
    ids = (await c.callTool({ name: 'cancelled_ids', arguments: {} })).structuredContent.ids;
    if (!ids.length) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(ids.length, 1);
}

test('the SDK client drives our Node server over stdio', async () => {
  const c = sdkClient();
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
  try {
    await driveOurServer(c);
  } finally {
    await c.close();
  }
});

test('the SDK client drives our Node server over Streamable HTTP', async () => {
  const { url, child } = await listen([FIXTURE, '--http']);
  const c = sdkClient();
  try {
    await c.connect(new StreamableHTTPClientTransport(new URL(url)));
    await driveOurServer(c);
  } finally {
    await c.close();
    child.kill();
  }
});

test('the SDK client against our stateless HTTP server gets tools, and a clear error for questions', async () => {
  const { url, child } = await listen([FIXTURE, '--http', '--stateless']);
  const c = sdkClient();
  try {
    await c.connect(new StreamableHTTPClientTransport(new URL(url)));
    assert.equal(text(await c.callTool({ name: 'echo', arguments: { text: 'stateless' } })), 'stateless');
    const asked = await c.callTool({ name: 'ask', arguments: {} });
    assert.equal(asked.isError, true);
    assert.match(text(asked), /stateless HTTP|no session/);
  } finally {
    await c.close();
    child.kill();
  }
});

test('our client drives the SDK server over stdio', async () => {
  const logs = [];
  const updated = [];
  const c = await Client.stdio(process.execPath, [path.join(here, 'feature_server.mjs')], {
    sampling: async (p) => ({ role: 'assistant', content: { type: 'text', text: `re: ${p.messages[0].content.text}` }, model: 'ox-model', stopReason: 'endTurn' }),
    elicitation: async () => ({ action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }),
    roots: async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }),
    onLogMessage: (p) => logs.push(p),
    onResourceUpdated: (p) => updated.push(p.uri),
  });
  try {
    assert.equal(c.protocolVersion, '2025-11-25');
    assert.match(c.getServerVersion().version, /^sdk-/);
    const said = await c.callTool('ask_model', { prompt: 'hello' });
    assert.match(text(said), /model ox-model said "re: hello"/);
    assert.equal(text(await c.callTool('ask_user', { message: 'who?' })), 'accept: {"username":"ada","email":"ada@example.com"}');
    assert.equal(text(await c.callTool('list_client_roots', {})), '[{"uri":"file:///work","name":"work"}]');
    assert.equal((await c.readResource('test://static-text')).contents[0].text, 'Static text from the TypeScript SDK.');
    assert.equal((await c.readResource('test://static-binary')).contents[0].mimeType, 'image/png');
    assert.deepEqual(JSON.parse((await c.readResource('test://template/42/data')).contents[0].text), { id: '42', source: 'typescript' });
    const ids = await c.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '1' } });
    assert.deepEqual(ids.completion.values, ['1', '123']);
    const { prompts } = await c.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'greeting'));
    await assert.rejects(c.getPrompt('greeting', {}), (e) => e instanceof RpcError);
    await c.setLoggingLevel('info');
    await c.callTool('log_messages', {});
    await c.subscribeResource('test://watched');
    assert.match(text(await c.callTool('touch', { uri: 'test://watched' })), /1 subscription/);
    for (let i = 0; i < 100 && (logs.length < 3 || !updated.length); i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(logs.map((l) => l.level), ['info', 'warning', 'error']);
    assert.deepEqual(updated, ['test://watched']);
    const bad = await c.callTool('touch', { uri: 5 });
    assert.equal(bad.isError, true);
  } finally {
    await c.close();
  }
});

for (const mode of ['stateful', 'stateless', 'stateful-json', 'sse']) {
  test(`our client drives the SDK server over HTTP (${mode})`, async () => {
    const { url, child } = await listen([path.join(here, 'http_server.mjs'), mode]);
    try {
      const c = await Client.http(url, {
        sampling: async () => ({ role: 'assistant', content: { type: 'text', text: 'fine' }, model: 'ox' }),
      });
      try {
        assert.equal(text(await c.callTool('greet', { name: 'Ada' })), 'Hello, Ada!');
        assert.deepEqual((await c.callTool('add', { a: 2, b: 3 })).structuredContent, { sum: 5 });
        assert.equal((await c.callTool('fail', { reason: 'x' })).isError, true);
        if (mode === 'stateful') {
          const progress = [];
          assert.equal(text(await c.callTool('steps', { count: 2 }, { onProgress: (p) => progress.push(p.progress) })), 'did 2 steps');
          assert.deepEqual(progress, [1, 2]);
          assert.match(text(await c.callTool('ask_model', { prompt: 'ok?' })), /model ox said "fine"/);
        }
      } finally {
        await c.close();
      }
    } finally {
      child.kill();
    }
  });
}
