// A host that is safe by default, from Node: `runAgent(..., {approve})` with every kind of
// answer (and a throw), the config's tool filters, list entries that do not parse reported by
// `status()`, and a pinned revision (`protocolVersion` / `era`) on `Client.stdio`. The server is
// the Rust suite's hand-written old server (core/tests/host_safety/old_server.py): it ignores
// `server/discover` and logs every message it gets.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { Client, Host, InvalidArgumentError, RpcError } from 'oxmcp';

const HERE = fileURLToPath(new URL('./', import.meta.url));
const ROOT = process.env.OXMCP_ROOT ?? path.join(HERE, '../..');
const OLD_SERVER = path.join(ROOT, 'core/tests/host_safety/old_server.py');
const work = mkdtempSync(path.join(tmpdir(), 'oxmcp-host-safety-'));
after(() => rmSync(work, { recursive: true, force: true }));
let logs = 0;

/** A fresh log and the config of the old server writing it (pinned: it ignores the probe). */
function oldServer(extra = {}) {
  const log = path.join(work, `log-${++logs}`);
  const entry = { command: 'python3', args: [OLD_SERVER, log], era: 'handshake', ...extra };
  return { log, config: { mcpServers: { old: entry } } };
}

function messages(log) {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {}
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, method, params] = line.match(/^\d+ (\S+) (.*)$/);
      return { method, params: JSON.parse(params) };
    });
}
const calls = (log) => messages(log).filter((m) => m.method === 'tools/call').map((m) => [m.params.name, m.params.arguments]);

/** A model that makes these calls in its first turn, then answers. */
const calling = (...calls) => async ({ messages }) =>
  messages.length > 1
    ? { role: 'assistant', content: 'done' }
    : {
        role: 'assistant',
        content: null,
        tool_calls: calls.map(([name, args], i) => ({ id: `c${i}`, type: 'function', function: { name, arguments: JSON.stringify(args) } })),
      };

test('approve allows, denies, edits, and is skipped for read-only and alwaysAllow tools', { timeout: 60_000 }, async () => {
  const { log, config } = oldServer({ alwaysAllow: ['secret'] });
  const asked = [];
  const approve = async (call) => {
    asked.push(call);
    if (call.tool === 'wipe') return 'not my files';
    if (call.arguments.path === '/etc/passwd') return false;
    if (call.tool === 'write') return { path: '/tmp/safe' };
    return true;
  };
  const model = calling(
    ['old__peek', { path: '/a' }],
    ['old__wipe', { path: '/' }],
    ['old__write', { path: '/home/me' }],
    ['old__write', { path: '/etc/passwd' }],
    ['old__secret', {}],
    ['old__snake', { path: '/b' }],
  );
  const host = await Host.fromConfig(config);
  try {
    const t = await host.runAgent(model, [{ role: 'user', content: 'go' }], { approve });
    assert.deepEqual(asked.map((c) => c.tool).sort(), ['snake', 'wipe', 'write', 'write']);
    const wipe = asked.find((c) => c.tool === 'wipe');
    assert.equal(wipe.server, 'old');
    assert.deepEqual(wipe.arguments, { path: '/' });
    assert.equal(wipe.annotations.destructiveHint, true);
    assert.deepEqual(calls(log).sort(), [
      ['peek', { path: '/a' }],
      ['secret', {}],
      ['snake', { path: '/b' }],
      ['write', { path: '/tmp/safe' }],
    ]);
    const declined = t.calls.find((c) => c.tool === 'wipe');
    assert.ok(declined.is_error && declined.text.includes('The user declined') && declined.text.includes('not my files'), declined.text);
    assert.ok(t.calls.find((c) => c.arguments.path === '/etc/passwd').is_error);
    assert.equal(t.final_text, 'done');
  } finally {
    await host.close();
  }
});

test('an approve that throws, answers nonsense or nothing runs nothing; a sync one works', { timeout: 60_000 }, async () => {
  const { log, config } = oldServer();
  const model = calling(['old__wipe', { path: '/x' }]);
  const host = await Host.fromConfig(config);
  try {
    const ran = await host.runAgent(model, [], { approve: () => true });
    assert.equal(ran.calls[0].is_error, false);
    for (const [approve, why] of [
      [async () => { throw new Error('the dialog crashed'); }, 'the dialog crashed'],
      [() => 42, 'not `42`'],
      [() => undefined, 'declined'],
    ]) {
      const t = await host.runAgent(model, [], { approve });
      assert.ok(t.calls[0].is_error && t.calls[0].text.includes(why), t.calls[0].text);
    }
    assert.equal(calls(log).length, 1, 'nothing more reached the server');
    await assert.rejects(host.runAgent(model, [], { approve: 'yes' }), TypeError);
  } finally {
    await host.close();
  }
});

test('hidden tools are neither listed nor called; bad entries are reported by status()', { timeout: 60_000 }, async () => {
  const { log, config } = oldServer({ excludeTools: ['secret'], disabledTools: ['crash'] });
  const host = await Host.fromConfig(config);
  try {
    const tools = await host.tools();
    assert.deepEqual(tools.map((t) => t.tool.name), ['peek', 'wipe', 'write', 'snake']);
    const hidden = await host.callTool('old', 'secret', {}).catch((e) => e);
    const missing = await host.callTool('old', 'nope', {}).catch((e) => e);
    assert.ok(hidden instanceof RpcError && missing instanceof RpcError);
    assert.equal(hidden.message, 'Unknown tool: secret');
    assert.equal(missing.message, 'Unknown tool: nope');
    assert.deepEqual(calls(log).map(([name]) => name), ['nope']);
    await host.resources();
    await host.prompts();
    const [status] = await host.status();
    assert.deepEqual(
      status.skipped.map((s) => [s.list, s.name, s.field]),
      [
        ['tools', 'broken', 'inputSchema'],
        ['resources', 'file:///bad.txt', 'name'],
        ['prompts', 'bad', 'arguments'],
      ],
    );
    assert.deepEqual(status.repaired.map((r) => [r.name, r.field]), [['snake', 'input_schema']]);
  } finally {
    await host.close();
  }
});

test('Client.stdio with protocolVersion or era skips the probe; a bad pin is refused', { timeout: 60_000 }, async () => {
  for (const [options, spoken] of [
    [{ era: 'handshake' }, '2025-11-25'],
    [{ protocolVersion: '2025-03-26' }, '2025-03-26'],
  ]) {
    const log = path.join(work, `pin-${spoken}`);
    const client = await Client.stdio('python3', [OLD_SERVER, log], options);
    try {
      assert.equal(client.protocolVersion, spoken);
      const page = await client.listTools();
      assert.deepEqual(page.tools.slice(0, 2).map((t) => t.name), ['peek', 'wipe']);
    } finally {
      await client.close();
    }
    const methods = messages(log).map((m) => m.method);
    assert.equal(methods[0], 'initialize');
    assert.ok(!methods.includes('server/discover'), methods.join());
  }
  for (const options of [{ era: 'modern' }, { protocolVersion: '1999-01-01' }, { era: 'stateless', protocolVersion: '2026-07-28' }]) {
    await assert.rejects(Client.stdio('python3', [OLD_SERVER, path.join(work, 'x')], options), (e) => {
      assert.ok(e instanceof InvalidArgumentError, `${e}`);
      assert.match(e.message, /protocolVersion \/ era/);
      return true;
    });
  }
});
