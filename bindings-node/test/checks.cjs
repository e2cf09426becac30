'use strict';
// The boundary checks, defined once and run twice: `esm.test.mjs` passes the package as
// imported, `cjs.test.cjs` as required. Every server here is a real child process (or an HTTP
// listener on 127.0.0.1) built on the installed tarball.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const FIXTURE = path.join(__dirname, 'fixtures', 'server.mjs');

function text(result) {
  return result.content.map((c) => c.text).join('');
}

module.exports = function define(ox, label) {
  const { Client, Server, McpError, RpcError, SpawnError, InvalidArgumentError, InvalidSchemaError, TimeoutError } = ox;

  const connect = (options = {}) =>
    Client.stdio(process.execPath, [FIXTURE], {
      sampling: async (params) => ({ role: 'assistant', content: { type: 'text', text: `echo ${params.messages[0].content.text}` }, model: 'm' }),
      elicitation: async () => ({ action: 'accept', content: { name: 'Ada' } }),
      roots: async () => ({ roots: [{ uri: 'file:///tmp/root', name: 'tmp' }] }),
      ...options,
    });

  test(`${label}: stdio round trip and value coercion`, async () => {
    const c = await connect();
    try {
      assert.equal(c.getServerVersion().name, 'fixture');
      assert.equal(c.getInstructions(), 'Test fixture.');
      const { tools } = await c.listTools();
      assert.ok(tools.some((t) => t.name === 'echo'));
      assert.equal(text(await c.callTool('echo', { text: 'hi 北京' })), 'hi 北京');
      assert.equal(text(await c.callTool('sync_number', {})), '42');
      const obj = await c.callTool('object', {});
      assert.deepEqual(obj.structuredContent, { temp: 21, city: 'Beijing' });
      assert.deepEqual(JSON.parse(text(obj)), { temp: 21, city: 'Beijing' });
      assert.deepEqual((await c.callTool('image', {})).content, [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }]);
      const whole = await c.callTool({ name: 'whole', arguments: {} });
      assert.equal(whole.isError, true);
      assert.equal(text(whole), 'no');
      await c.ping();
    } finally {
      await c.close();
    }
  });

  test(`${label}: handler failures are isError results and the server keeps serving`, async () => {
    const c = await connect();
    try {
      for (const [tool, message] of [
        ['throws_sync', 'boom sync'],
        ['throws_async', 'boom async'],
        ['throws_string', 'a bare string'],
      ]) {
        const r = await c.callTool(tool, {});
        assert.equal(r.isError, true, tool);
        assert.match(text(r), new RegExp(message));
      }
      const circ = await c.callTool('circular', {});
      assert.equal(circ.isError, true);
      assert.match(text(circ), /cannot be sent as JSON.*circular/i);
      const big = await c.callTool('bigint', {});
      assert.equal(big.isError, true);
      assert.match(text(big), /BigInt/);
      await assert.rejects(c.callTool('never', {}, { timeout: 300 }), (e) => e instanceof TimeoutError && e instanceof McpError);
      // An McpError thrown on purpose is that protocol error.
      await assert.rejects(c.callTool('mcp_error', {}), (e) => {
        assert.ok(e instanceof RpcError);
        assert.equal(e.code, -32602);
        assert.equal(e.message, 'bad on purpose');
        assert.deepEqual(e.data, { field: 'x' });
        return true;
      });
      const unknown = await c.callTool('no_such_tool', {}).catch((e) => e);
      assert.ok(unknown instanceof McpError || unknown.isError, 'unknown tool is reported');
      // Validation happens in Rust: bad arguments are an isError result.
      const bad = await c.callTool('echo', { text: 5 });
      assert.equal(bad.isError, true);
      assert.equal(text(await c.callTool('echo', { text: 'still here' })), 'still here');
    } finally {
      await c.close();
    }
  });

  test(`${label}: zod schemas are converted and checked`, async () => {
    const c = await connect();
    try {
      const { tools } = await c.listTools();
      const add = tools.find((t) => t.name === 'zod_add');
      assert.equal(add.inputSchema.type, 'object');
      assert.deepEqual(Object.keys(add.inputSchema.properties), ['a', 'b']);
      assert.equal(add.outputSchema.properties.sum.type, 'number');
      assert.deepEqual((await c.callTool('zod_add', { a: 2, b: 3 })).structuredContent, { sum: 5 });
      assert.equal((await c.callTool('zod_add', { a: 'two', b: 3 })).isError, true);
    } finally {
      await c.close();
    }
  });

  test(`${label}: 1,000 concurrent callTool resolve once each with their own result`, async () => {
    const c = await connect();
    try {
      const n = 1000;
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) => c.callTool('echo', { text: `call ${i}` })),
      );
      assert.equal(results.length, n);
      results.forEach((r, i) => assert.equal(text(r), `call ${i}`));
    } finally {
      await c.close();
    }
  });

  test(`${label}: abort rejects with AbortError, cancels the peer's handler signal`, async () => {
    const c = await connect();
    try {
      const ac = new AbortController();
      const pending = c.callTool('wait_for_cancel', {}, { signal: ac.signal });
      setTimeout(() => ac.abort(), 200);
      await assert.rejects(pending, (e) => e.name === 'AbortError');
      // The server saw notifications/cancelled: its handler's signal fired.
      let ids = [];
      for (let i = 0; i < 100 && ids.length === 0; i++) {
        ids = (await c.callTool('cancelled_ids', {})).structuredContent.ids;
        if (ids.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(ids.length, 1);
      // An already-aborted signal never sends the request.
      await assert.rejects(c.callTool('echo', { text: 'x' }, { signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
    } finally {
      await c.close();
    }
  });

  // Both eras: `2025-11-25` (handshake; questions are server-to-client requests) and the
  // default probe, which finds our server stateless (2026-07-28; questions are input rounds
  // and the handler runs again on the retry).
  for (const era of ['2025-11-25', '2026-07-28']) {
    test(`${label}: progress, logging, sampling, elicitation and roots through ctx (${era})`, async () => {
      const logs = [];
      const c = await connect({ protocolVersion: era, logLevel: 'info', onLogMessage: (p) => logs.push(p) });
      try {
        assert.equal(c.protocolVersion, era);
        const progress = [];
        assert.equal(text(await c.callTool('progress', {}, { onProgress: (p) => progress.push(p.progress) })), 'done');
        assert.deepEqual(progress, [1, 2, 3]);
        assert.equal(text(await c.callTool('log', {})), 'logged');
        for (let i = 0; i < 100 && logs.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(logs[0], { level: 'warning', logger: 'fixture', data: { hello: 'log' } });
        const asked = await c.callTool('ask', {});
        assert.deepEqual(asked.structuredContent, { sampled: 'echo hi?', elicited: 'Ada', roots: ['file:///tmp/root'] });
      } finally {
        await c.close();
      }
    });

    test(`${label}: a client without handlers gets a clear failure from ctx.sample (${era})`, async () => {
      const c = await Client.stdio(process.execPath, [FIXTURE], { protocolVersion: era });
      try {
        if (era === '2026-07-28') {
          // The round fails with the revision's missing-capability error.
          await assert.rejects(c.callTool('ask', {}), (e) => e instanceof RpcError && e.code === -32021 && /sampling/.test(e.message));
        } else {
          const r = await c.callTool('ask', {});
          assert.equal(r.isError, true);
          assert.match(text(r), /sampling/);
        }
      } finally {
        await c.close();
      }
    });
  }

  test(`${label}: resources, templates, prompts, completions, list_changed`, async () => {
    const changed = [];
    // list_changed notifications are a handshake-era session feature.
    const c = await connect({ protocolVersion: '2025-11-25', onListChanged: (kind) => changed.push(kind) });
    try {
      const { resources } = await c.listResources();
      assert.ok(resources.some((r) => r.uri === 'test://static'));
      assert.equal((await c.readResource({ uri: 'test://static' })).contents[0].text, 'static text');
      assert.equal((await c.readResource('test://items/42')).contents[0].text, 'item 42');
      await assert.rejects(c.readResource('test://missing'), (e) => e instanceof RpcError && e.code === -32002);
      await assert.rejects(c.readResource('test://nothing/here'), (e) => e instanceof RpcError);
      const { resourceTemplates } = await c.listResourceTemplates();
      assert.equal(resourceTemplates[0].uriTemplate, 'test://items/{id}');
      const prompt = await c.getPrompt('greet', { who: 'Ada' });
      assert.equal(prompt.messages[0].content.text, 'Hello, Ada!');
      await assert.rejects(c.getPrompt('greet', {}), (e) => e instanceof RpcError);
      const done = await c.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'A' } });
      assert.deepEqual(done.completion.values, ['Ada', 'Alan']);
      const items = await c.complete({ ref: { type: 'ref/resource', uri: 'test://items/{id}' }, argument: { name: 'id', value: 'ap' } });
      assert.deepEqual(items.completion.values, ['apple', 'apricot']);
      await c.callTool('add_tool', {});
      assert.ok((await c.listTools()).tools.some((t) => t.name === 'added_later'));
      assert.equal(text(await c.callTool('remove_tool', {})), 'true');
      assert.ok(!(await c.listTools()).tools.some((t) => t.name === 'added_later'));
      for (let i = 0; i < 100 && changed.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(changed.slice(0, 2), ['tools', 'tools']);
    } finally {
      await c.close();
    }
  });

  test(`${label}: console.log in a stdio handler never reaches the protocol stream`, async () => {
    const c = await connect();
    try {
      assert.equal(text(await c.callTool('console', {})), 'printed');
      assert.equal(text(await c.callTool('echo', { text: 'after' })), 'after');
    } finally {
      await c.close();
    }
  });

  test(`${label}: Streamable HTTP in-process, both eras`, async () => {
    const server = new Server({ name: 'http-fixture', version: '1.0.0' });
    server.tool('hello', { inputSchema: { type: 'object', properties: { who: { type: 'string' } } } }, ({ who }) => `hello ${who}`);
    const { url } = await server.runHttp({ port: 0 });
    try {
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      for (const protocolVersion of [undefined, '2025-11-25', '2025-03-26', '2026-07-28']) {
        const c = await Client.http(url, { protocolVersion });
        try {
          if (protocolVersion) assert.equal(c.protocolVersion, protocolVersion);
          assert.equal(text(await c.callTool('hello', { who: 'http' })), 'hello http');
        } finally {
          await c.close();
        }
      }
    } finally {
      await server.close();
    }
  });

  test(`${label}: a server dying mid-call rejects the call with ConnectionClosedError`, async () => {
    const c = await connect();
    await assert.rejects(c.callTool('die', {}), (e) => {
      assert.ok(e instanceof ox.ConnectionClosedError, `${e.name}: ${e.message}`);
      assert.match(e.message, /dying mid-call on purpose/, 'the message carries the stderr tail');
      return true;
    });
    await c.closed;
    await c.close();
  });

  test(`${label}: bad input gets typed errors`, async () => {
    await assert.rejects(Client.stdio('/nonexistent/oxmcp-server', []), (e) => e instanceof SpawnError && e instanceof McpError);
    await assert.rejects(Client.http('http://127.0.0.1:1/mcp'), (e) => e instanceof McpError);
    await assert.rejects(Client.http('not a url'), (e) => e instanceof McpError);
    const s = new Server({ name: 's', version: '1' });
    assert.throws(() => s.tool('bad name!', {}, () => 1), (e) => e instanceof InvalidArgumentError);
    assert.throws(() => s.tool('bad_schema', { inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } }, () => 1), (e) => e instanceof InvalidSchemaError);
    assert.throws(() => s.tool('no_handler', {}), TypeError);
    assert.throws(() => s.resourceTemplate('test://{unclosed', {}, () => ({ contents: [] })), (e) => e instanceof McpError);
    assert.throws(() => new Server({ name: 1 }), TypeError);
    await assert.rejects(s.runHttp({ host: 'not-an-ip' }), (e) => e instanceof InvalidArgumentError);
    const c = await connect();
    try {
      await assert.rejects(c.callTool('echo', { text: 'x' }, { timeout: -1 }), (e) => e instanceof InvalidArgumentError);
      await assert.rejects(c.request('no/such/method', {}), (e) => e instanceof RpcError && e.code === -32601);
    } finally {
      await c.close();
    }
    await assert.rejects(c.callTool('echo', { text: 'closed' }), (e) => e instanceof McpError);
  });
};
