// `Host` from the installed tarball against real servers: the official reference servers
// from npm (tests/host, `make host-deps`), our Node weather example and a fixture server, all
// over stdio from one config. A missing and a crashing server are reported by name with the
// stderr tail while the others work; one session per server; a crashed server restarts; the
// agent loop with an async JS model; bad configs and bad calls are typed errors.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { Host, Server, Translation, ConfigError, ConnectionClosedError, InvalidArgumentError, SpawnError } from 'oxmcp';
import { alive } from './helpers.mjs';

const HERE = fileURLToPath(new URL('./', import.meta.url));
const ROOT = process.env.OXMCP_ROOT ?? path.join(HERE, '../..');
const REFERENCE = path.join(ROOT, 'tests/host/node_modules/@modelcontextprotocol');
const node = process.execPath;

// The weather example, copied beside a link to the tests' node_modules so that its `oxmcp`
// is the installed tarball, not the source tree.
const work = mkdtempSync(path.join(tmpdir(), 'oxmcp-host-'));
after(() => rmSync(work, { recursive: true, force: true }));
const weatherDir = path.join(work, 'weather-server');
cpSync(path.join(ROOT, 'examples/node/weather-server'), weatherDir, { recursive: true });
symlinkSync(path.join(HERE, 'node_modules'), path.join(work, 'node_modules'), 'dir');

const config = {
  mcpServers: {
    weather: { command: node, args: [path.join(weatherDir, 'bin/oxmcp-weather.mjs')] },
    fixture: { command: node, args: [path.join(HERE, 'fixtures/host_server.mjs')] },
    memory: {
      command: node,
      args: [path.join(REFERENCE, 'server-memory/dist/index.js')],
      env: { MEMORY_FILE_PATH: path.join(work, 'memory.jsonl') },
    },
    filesystem: { command: node, args: [path.join(REFERENCE, 'server-filesystem/dist/index.js'), work] },
    missing: { command: path.join(work, 'no-such-server') },
    crashing: { command: node, args: ['-e', "console.error('fatal: cannot open the database'); process.exit(3)"] },
    off: { command: node, args: ['-e', ''], disabled: true },
  },
};
const configPath = path.join(work, 'mcp.json');
writeFileSync(configPath, JSON.stringify(config));

let host;

test('a config file starts every server; the dead ones are named with their stderr', { timeout: 120_000 }, async () => {
  host = await Host.fromConfig(configPath, { timeout: 60_000 });
  assert.deepEqual(host.servers, ['weather', 'fixture', 'memory', 'filesystem', 'missing', 'crashing']);
  const status = Object.fromEntries((await host.status()).map((s) => [s.name, s]));
  for (const name of ['weather', 'fixture', 'memory', 'filesystem']) {
    assert.equal(status[name].state, 'connected', `${name}: ${status[name].error}`);
    assert.ok(status[name].protocol_version);
  }
  assert.equal(status.missing.state, 'failed');
  assert.equal(status.missing.error_kind, 'spawn');
  assert.equal(status.crashing.state, 'failed');
  assert.match(status.crashing.stderr, /fatal: cannot open the database/);
  assert.equal(status.off.state, 'disabled');
});

test('tools are namespaced across the working servers', async () => {
  const tools = await host.tools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes('weather__get_weather'), names.join(', '));
  assert.ok(names.includes('filesystem__write_file'));
  assert.ok(names.includes('memory__create_entities'));
  assert.ok(names.includes('fixture__whoami'));
  assert.ok(!names.some((n) => n.startsWith('missing__') || n.startsWith('crashing__')));
  const weather = tools.find((t) => t.name === 'weather__get_weather');
  assert.equal(weather.server, 'weather');
  assert.equal(weather.tool.name, 'get_weather');
  assert.equal(weather.tool.inputSchema.type, 'object');
  // From the cache: the same list again.
  assert.deepEqual(await host.tools(), tools);
  const t = await host.translate('anthropic');
  assert.ok(t instanceof Translation);
  assert.ok(t.tools.some((x) => x.name === 'weather__get_weather' && x.input_schema));
});

test('callTool routes to the server over one long-lived session', async () => {
  const r = await host.callTool('weather', 'get_weather', { city: '北京' });
  assert.equal(r.content[0].text, 'Beijing: 3.0 °C, clear, humidity 28%, wind 14 km/h');
  const a = (await host.callTool('fixture', 'whoami')).structuredContent;
  const b = (await host.callTool('fixture', 'whoami')).structuredContent;
  assert.equal(a.pid, b.pid, 'one process, one session');
  assert.equal(b.calls, a.calls + 1);
  const unknownTool = await host.callTool('weather', 'no_such_tool', {}).then((x) => x, (e) => e);
  assert.ok(unknownTool.isError === true || unknownTool instanceof Error, 'an unknown tool is an error result or a protocol error');
});

test('bad calls are typed errors; a server that never started is tried again by name', async () => {
  await assert.rejects(host.callTool('nope', 'x', {}), (e) => e instanceof InvalidArgumentError && /no server named `nope`/.test(e.message));
  await assert.rejects(host.callTool('missing', 'x', {}), SpawnError);
  await assert.rejects(host.callTool('weather', 'get_weather', 'Beijing'), InvalidArgumentError);
  await assert.rejects(host.callTool(1, 'x'), TypeError);
  const circular = {};
  circular.self = circular;
  await assert.rejects(host.callTool('weather', 'get_weather', circular), TypeError);
});

test('callTool: progress reaches onProgress; an abort rejects with AbortError and the session lives on', { timeout: 60_000 }, async () => {
  const seen = [];
  const r = await host.callTool('fixture', 'progress', {}, { onProgress: (p) => seen.push(p.progress) });
  assert.equal(r.content[0].text, 'done');
  assert.deepEqual(seen, [1, 2, 3]);
  const controller = new AbortController();
  const pending = host.callTool('fixture', 'never', {}, { signal: controller.signal });
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(pending, { name: 'AbortError' });
  assert.ok((await host.callTool('fixture', 'whoami')).structuredContent.calls >= 1);
  await assert.rejects(host.callTool('fixture', 'whoami', {}, { timeout: -5 }), InvalidArgumentError);
});

test('a server that crashes mid-call fails that call only and restarts on the next', { timeout: 60_000 }, async () => {
  const before = (await host.callTool('fixture', 'whoami')).structuredContent;
  await assert.rejects(host.callTool('fixture', 'crash', {}), ConnectionClosedError);
  const weather = await host.callTool('weather', 'get_weather', { city: 'Oslo' });
  assert.match(weather.content[0].text, /^Oslo/);
  const again = (await host.callTool('fixture', 'whoami')).structuredContent;
  assert.notEqual(again.pid, before.pid);
  assert.equal(again.calls, 1);
  assert.ok(!alive(before.pid), 'the crashed child is gone');
  const fixture = (await host.status()).find((s) => s.name === 'fixture');
  assert.equal(fixture.state, 'connected');
  assert.equal(fixture.restarts, 1);
});

/** Whether `check` comes true within a generous 20 s (a guard against hanging, not a timing claim). */
async function eventually(check) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

function openaiCall(id, name, args) {
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}

test('runAgent: a scripted async model drives real tool calls, concurrently in one turn', { timeout: 60_000 }, async () => {
  const seen = [];
  const target = path.join(work, 'answer.txt');
  const model = async (request, { signal }) => {
    seen.push(request);
    assert.equal(signal, undefined);
    if (request.step === 1) {
      return {
        role: 'assistant',
        content: null,
        tool_calls: [
          openaiCall('c1', 'weather__get_weather', { city: '北京' }),
          openaiCall('c2', 'filesystem__write_file', { path: target, content: 'sunny' }),
          openaiCall('c3', 'nope__nothing', {}),
          openaiCall('c4', 'weather__get_weather', '{"city": '),
        ],
      };
    }
    const weather = request.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c1');
    return { choices: [{ message: { role: 'assistant', content: `Answer: ${weather.content}` } }] };
  };
  const transcript = await host.runAgent(model, [{ role: 'user', content: '北京今天天气怎么样?' }], { provider: 'openai' });
  assert.equal(transcript.stop, 'final');
  assert.equal(transcript.steps, 2);
  assert.match(transcript.final_text, /^Answer: Beijing: 3.0 °C/);
  assert.equal(readFileSync(target, 'utf8'), 'sunny', 'the filesystem server really wrote the file');
  assert.deepEqual(transcript.calls.map((c) => [c.name, c.server, c.is_error]), [
    ['weather__get_weather', 'weather', false],
    ['filesystem__write_file', 'filesystem', false],
    ['nope__nothing', null, true],
    ['weather__get_weather', null, true], // never sent: the arguments were not JSON
  ]);
  assert.match(transcript.calls[2].text, /no tool named `nope__nothing`/);
  assert.match(transcript.calls[3].text, /not usable/);
  assert.equal(seen.length, 2);
  assert.equal(seen[0].provider, 'openai');
  assert.ok(seen[0].tools.some((t) => t.function.name === 'weather__get_weather' && t.function.strict === true));
  // user, assistant, four tool messages, assistant.
  assert.equal(transcript.messages.length, 7);
});

test('runAgent: the step limit, another provider, and a model that returns nonsense', { timeout: 60_000 }, async () => {
  const looping = async (request) => ({
    role: 'assistant',
    content: [{ type: 'tool_use', id: `t${request.step}`, name: 'fixture__whoami', input: {} }],
  });
  const t = await host.runAgent(looping, [{ role: 'user', content: 'who?' }], { provider: 'anthropic', maxSteps: 3 });
  assert.equal(t.stop, 'step_limit');
  assert.equal(t.steps, 3);
  assert.equal(t.calls.length, 3);
  const nonsense = await host.runAgent(() => 42, [], {});
  assert.equal(nonsense.stop, 'final');
  assert.equal(nonsense.final_text, '');
});

test('runAgent: the model\'s own error comes back; an abort rejects with AbortError; bad options are typed', { timeout: 60_000 }, async () => {
  class ModelDown extends Error {}
  const boom = new ModelDown('rate limited');
  await assert.rejects(host.runAgent(async () => { throw boom; }, []), (e) => e === boom);
  await assert.rejects(host.runAgent(() => { throw boom; }, []), (e) => e === boom);
  const controller = new AbortController();
  const hanging = host.runAgent(() => new Promise(() => {}), [], { signal: controller.signal });
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(hanging, { name: 'AbortError' });
  await assert.rejects(host.runAgent(async () => ({}), [], { provider: 'cohere' }), InvalidArgumentError);
  await assert.rejects(host.runAgent(async () => ({}), [], { maxSteps: 0 }), InvalidArgumentError);
  await assert.rejects(host.runAgent(async () => ({}), [], { maxStep: 2 }), (e) => e instanceof InvalidArgumentError && /maxStep/.test(e.message));
  await assert.rejects(host.runAgent('model', []), TypeError);
  await assert.rejects(host.runAgent(async () => ({}), 'hi'), TypeError);
  // Still serving after all that.
  assert.match((await host.callTool('weather', 'get_weather', { city: 'Paris' })).content[0].text, /^Paris/);
});

test('close ends every child; later calls are typed errors; closing twice is fine', { timeout: 60_000 }, async () => {
  const { pid } = (await host.callTool('fixture', 'whoami')).structuredContent;
  await host.close();
  assert.ok(!alive(pid), 'no orphan after close');
  await host.close();
  await assert.rejects(host.callTool('fixture', 'whoami'), ConnectionClosedError);
  await assert.rejects(host.tools(), ConnectionClosedError);
});

test('a config object and Symbol.asyncDispose', { timeout: 60_000 }, async () => {
  const h = await Host.fromConfig({ mcpServers: { fixture: config.mcpServers.fixture } });
  const { pid } = (await h.callTool('fixture', 'whoami')).structuredContent;
  await h[Symbol.asyncDispose]();
  assert.ok(!alive(pid));
});

test('a url entry in the VS Code shape connects over Streamable HTTP', { timeout: 60_000 }, async () => {
  const server = new Server({ name: 'web', version: '2.0.0' });
  server.tool('hello', { inputSchema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] } }, ({ who }) => `hello ${who}`);
  const { url } = await server.runHttp({ port: 0 });
  try {
    const h = await Host.fromConfig({ servers: { web: { type: 'http', url } } });
    try {
      const [status] = await h.status();
      assert.equal(status.state, 'connected', status.error);
      assert.equal(status.server_info, 'web 2.0.0');
      assert.deepEqual((await h.tools()).map((t) => t.name), ['web__hello']);
      assert.equal((await h.callTool('web', 'hello', { who: 'Beijing' })).content[0].text, 'hello Beijing');
      // The cached list follows the server's list_changed (polled: the notice is async).
      server.tool('second', {}, () => 'two');
      assert.ok(await eventually(async () => (await h.tools()).some((t) => t.name === 'web__second')), 'a new tool appears');
      server.removeTool('hello');
      assert.ok(await eventually(async () => !(await h.tools()).some((t) => t.name === 'web__hello')), 'a removed tool goes');
    } finally {
      await h.close();
    }
  } finally {
    await server.close();
  }
  // Nothing listens there any more: reported as failed, not thrown.
  const gone = await Host.fromConfig({ servers: { web: { type: 'http', url } } }, { timeout: 10_000 });
  const [status] = await gone.status();
  assert.equal(status.state, 'failed');
  await gone.close();
});

test('bad configs reject with a ConfigError naming the file, server and field', async () => {
  await assert.rejects(Host.fromConfig(path.join(work, 'absent.json')), (e) => e instanceof ConfigError && /absent\.json/.test(e.message));
  const broken = path.join(work, 'broken.json');
  writeFileSync(broken, '{"mcpServers": {"a": ');
  await assert.rejects(Host.fromConfig(broken), (e) => e instanceof ConfigError && /not valid JSON/.test(e.message));
  await assert.rejects(Host.fromConfig({ mcpServers: { a: { command: 'x', args: 3 } } }), (e) => e instanceof ConfigError && /`a`/.test(e.message) && /args/.test(e.message));
  await assert.rejects(Host.fromConfig({ mcpServers: { a: {} } }), ConfigError);
  await assert.rejects(Host.fromConfig(42), TypeError);
  await assert.rejects(Host.fromConfig([]), TypeError);
  await assert.rejects(Host.fromConfig({ mcpServers: {} }, { timeout: -1 }), InvalidArgumentError);
  await assert.rejects(Host.fromConfig({ mcpServers: {} }, { timout: 5 }), (e) => e instanceof InvalidArgumentError && /timout/.test(e.message));
  assert.ok(existsSync(configPath));
});
