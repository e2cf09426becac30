// Tasks through the Node binding (issue 38): a tool registered with `task`, called with
// `client.callToolAsTask`, followed with `status()`, `for await` and `result()`, cancelled
// from either side, collected by another client, and run from a Host; each beside the typed
// error its bad input gets. The engine is the core's (core/tests/tasks/ covers the protocol);
// this suite checks what crosses the binding: options, values, errors, the handler's
// `ctx.signal`, `ctx.startTask()`, `ctx.taskId`, `ctx.reportStatus()`. Both eras run where
// they differ: 2025-11-25 (experimental tasks) and 2026-07-28 (the tasks extension). Last, the
// official TypeScript SDK's tasks client drives the Node conformance fixture (stdio and HTTP).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import {
  CancelledError,
  Client,
  ErrorCode,
  Host,
  InvalidArgumentError,
  McpError,
  RpcError,
  Server,
  TaskHandle,
  TaskRequiredError,
} from 'oxmcp';
import { freePort } from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.join(HERE, 'conformance_server.mjs');
const SDK_TASKS_CLIENT = path.join(HERE, 'tasks_client.mjs');
const ERAS = ['2025-11-25', '2026-07-28'];
const NO_ARGS = { type: 'object', properties: {} };
const text = (r) => r.content.map((c) => c.text).join('');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What the handlers saw, by tool call: `started`, `aborted`, the ids `startTask` gave. */
const seen = [];

/** Waits (polling, up to 10 s) until `check()` is truthy. */
async function until(check, what) {
  for (let i = 0; i < 200; i++) {
    const got = await check();
    if (got) return got;
    await sleep(50);
  }
  assert.fail(`timed out waiting for ${what}`);
}

function jobs() {
  const server = new Server({ name: 'jobs', version: '1.0.0' });
  server.tool('render', {
    description: 'Reports its status, sleeps, and answers with its task id',
    inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
    task: 'optional',
  }, async ({ ms = 300 }, ctx) => {
    await ctx.reportStatus('rendering');
    await sleep(ms);
    return `rendered in task ${ctx.taskId}`;
  });
  server.tool('watched', {
    description: 'Says it started, then runs until its signal aborts',
    inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
    task: 'optional',
  }, async ({ tag }, ctx) => {
    seen.push(`${tag}: started`);
    await ctx.reportStatus(`${tag} is waiting`);
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    seen.push(`${tag}: aborted (${ctx.signal.reason?.name})`);
    return 'stopped';
  });
  server.tool('must_be_task', { description: 'Only as a task', inputSchema: NO_ARGS, task: 'required' }, (_a, ctx) =>
    `task ${ctx.taskId}`);
  server.tool('fails', { description: 'Throws', inputSchema: NO_ARGS, task: 'optional' }, async () => {
    await sleep(50);
    throw new Error('the render farm is on fire');
  });
  server.tool('breaks', { description: 'Throws an McpError', inputSchema: NO_ARGS, task: 'optional' }, async () => {
    throw new McpError(ErrorCode.InternalError, 'Internal error: broken on purpose');
  });
  server.tool('confirm', { description: 'Asks, then answers', inputSchema: NO_ARGS, task: 'optional' }, async (_a, ctx) => {
    const answer = await ctx.elicit({
      message: 'Go on?',
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    });
    return `confirmed: ${answer.content?.ok}`;
  });
  server.tool('deferred', {
    description: 'Becomes a task when it says so',
    inputSchema: NO_ARGS,
    task: 'optional',
    taskStart: 'deferred',
  }, async (_a, ctx) => {
    const before = ctx.taskId;
    const id = await ctx.startTask();
    seen.push(`deferred: ${before} -> ${id}`);
    return `id ${id}, taskId ${ctx.taskId}`;
  });
  server.tool('plain', { description: 'Never a task', inputSchema: NO_ARGS }, async (_a, ctx) => {
    await ctx.reportStatus('ignored');
    return `plain: ${ctx.taskId} ${await ctx.startTask()}`;
  });
  return server;
}

let stateful;
let stateless;
let statefulUrl;
let statelessUrl;
const clients = [];

before(async () => {
  stateful = jobs();
  stateless = jobs();
  statefulUrl = (await stateful.runHttp({ port: 0 })).url;
  statelessUrl = (await stateless.runHttp({ port: 0, stateless: true })).url;
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await stateful.close();
  await stateless.close();
});

async function connect(url, protocolVersion, options = {}) {
  const c = await Client.http(url, {
    protocolVersion,
    elicitation: async () => ({ action: 'accept', content: { ok: true } }),
    ...options,
  });
  clients.push(c);
  return c;
}

for (const era of ERAS) {
  test(`${era}: a task is created, followed to its end and collected`, async () => {
    const c = await connect(statefulUrl, era);
    const handle = await c.callToolAsTask('render', { ms: 300 }, { ttlMs: 60_000 });
    assert.ok(handle instanceof TaskHandle);
    assert.match(handle.id, /^[A-Za-z0-9_-]{22}$/);
    const first = await handle.status();
    assert.equal(first.taskId, handle.id);
    assert.ok(['working', 'completed'].includes(first.status), first.status);
    assert.ok(!Number.isNaN(Date.parse(first.createdAt)), first.createdAt);
    assert.equal(typeof first.pollInterval, 'number');
    const statuses = [];
    for await (const s of handle) statuses.push(s);
    assert.ok(statuses.length >= 1);
    assert.ok(statuses.every((s) => s.taskId === handle.id));
    assert.equal(statuses.at(-1).status, 'completed', JSON.stringify(statuses));
    assert.ok(statuses.slice(0, -1).every((s) => s.status === 'working'), JSON.stringify(statuses));
    const result = await handle.result();
    assert.equal(text(result), `rendered in task ${handle.id}`);
    // Collected again: the result is kept for the task's TTL.
    assert.deepEqual(await handle.result(), result);
  });

  test(`${era}: bad task call options and an unknown task id are typed errors`, async () => {
    const c = await connect(statefulUrl, era);
    for (const ttlMs of [0, -5, Number.NaN, Infinity, 1e300, 'soon']) {
      await assert.rejects(c.callToolAsTask('render', {}, { ttlMs }), InvalidArgumentError, `ttlMs ${ttlMs}`);
    }
    await assert.rejects(c.callToolAsTask('render', {}, { ttl: 5000 }), (e) => e instanceof InvalidArgumentError && /ttl/.test(e.message));
    await assert.rejects(c.callToolAsTask('render', [1, 2]), InvalidArgumentError);
    await assert.rejects(c.callToolAsTask('render', {}, { onProgress: () => {} }), TypeError);
    await assert.rejects(c.callToolAsTask('render', {}, { signal: 'stop' }), TypeError);
    await assert.rejects(c.callToolAsTask(42, {}), TypeError);
    assert.throws(() => c.task(7), TypeError);
    // An unknown id, and one of another client's (a new session, handshake era).
    await assert.rejects(c.task('no-such-task').status(), (e) => e instanceof RpcError && e instanceof McpError && e.code === -32602);
    await assert.rejects(c.task('no-such-task').result(), (e) => e instanceof RpcError && e.code === -32602);
    // Arguments its schema refuses are answered at once, as a plain call: an isError result, no task.
    const bad = await c.callToolAsTask('render', { ms: 'slow' });
    assert.equal(bad.id, null);
    assert.equal((await bad.result()).isError, true);
  });

  test(`${era}: a required tool called plainly is a TaskRequiredError; as a task it runs`, async () => {
    const c = await connect(statefulUrl, era);
    await assert.rejects(c.callTool('must_be_task', {}), (e) => {
      assert.ok(e instanceof TaskRequiredError && e instanceof McpError, `${e}`);
      assert.equal(e.code, 'task_required');
      assert.deepEqual(e.data, { tool: 'must_be_task' });
      return true;
    });
    const handle = await c.callToolAsTask('must_be_task', {});
    assert.equal(text(await handle.result()), `task ${handle.id}`);
    // An optional tool called plainly is a plain call: no task, no status.
    assert.equal(text(await c.callTool('plain', {})), 'plain: null null');
  });

  test(`${era}: a throwing handler leaves the task as the era says; an McpError is the task's error`, async () => {
    const c = await connect(statefulUrl, era);
    const failing = await c.callToolAsTask('fails', {});
    const result = await failing.result();
    assert.equal(result.isError, true);
    assert.match(text(result), /the render farm is on fire/);
    const status = await failing.status();
    // 2025-11-25 counts a tool error as `failed`; 2026-07-28 as `completed` with an isError result.
    assert.equal(status.status, era === '2025-11-25' ? 'failed' : 'completed');
    if (era !== '2025-11-25') assert.equal(status.result.isError, true);

    const broken = await c.callToolAsTask('breaks', {});
    await assert.rejects(broken.result(), (e) => {
      assert.ok(e instanceof RpcError, `${e}`);
      assert.equal(e.code, -32603);
      assert.match(e.message, /broken on purpose/);
      return true;
    });
    assert.equal((await broken.status()).status, 'failed');
  });

  test(`${era}: cancel() stops the task and its handler sees ctx.signal abort`, async () => {
    const c = await connect(statefulUrl, era);
    const tag = `cancel-${era}`;
    const handle = await c.callToolAsTask('watched', { tag });
    // The handler's reportStatus shows in tasks/get.
    await until(async () => (await handle.status()).statusMessage === `${tag} is waiting`, 'the status message');
    await handle.cancel();
    assert.equal((await handle.status()).status, 'cancelled');
    await assert.rejects(handle.result(), CancelledError);
    await until(() => seen.includes(`${tag}: aborted (AbortError)`), 'the handler to see its signal abort');
    // Cancelling again, or a finished task, is harmless.
    await handle.cancel();
    const done = await c.callToolAsTask('render', { ms: 0 });
    const result = await done.result();
    await done.cancel();
    assert.equal((await done.status()).status, 'completed');
    assert.deepEqual(await done.result(), result);
  });

  test(`${era}: aborting the signal cancels the task; an aborted signal creates none`, async () => {
    const c = await connect(statefulUrl, era);
    const tag = `abort-${era}`;
    const ac = new AbortController();
    const handle = await c.callToolAsTask('watched', { tag }, { signal: ac.signal });
    await until(() => seen.includes(`${tag}: started`), 'the handler to start');
    const pending = handle.result();
    ac.abort();
    await assert.rejects(pending, CancelledError);
    assert.equal((await handle.status()).status, 'cancelled');
    await until(() => seen.includes(`${tag}: aborted (AbortError)`), 'the handler to see its signal abort');

    const gone = new AbortController();
    gone.abort();
    await assert.rejects(
      c.callToolAsTask('watched', { tag: `${tag}-never` }, { signal: gone.signal }),
      (e) => e.name === 'AbortError',
    );
    await sleep(200);
    assert.ok(!seen.includes(`${tag}-never: started`), 'an aborted signal still created a task');
  });

  test(`${era}: the task's questions are answered by the client's handlers`, async () => {
    const c = await connect(statefulUrl, era);
    const handle = await c.callToolAsTask('confirm', {});
    assert.equal(text(await handle.result()), 'confirmed: true');
    // A client without an elicitation handler declares no such capability: the handler's
    // question fails, and so does the tool.
    const mute = await connect(statefulUrl, era, { elicitation: undefined });
    const unanswered = await (await mute.callToolAsTask('confirm', {})).result();
    assert.equal(unanswered.isError, true);
    assert.match(text(unanswered), /did not declare the `elicitation` capability/);
  });

  test(`${era}: a deferred tool becomes a task when its handler calls ctx.startTask()`, async () => {
    const c = await connect(statefulUrl, era);
    const handle = await c.callToolAsTask('deferred', {});
    assert.ok(handle.id, 'it became a task');
    assert.equal(text(await handle.result()), `id ${handle.id}, taskId ${handle.id}`);
    assert.ok(seen.includes(`deferred: null -> ${handle.id}`), seen.join('\n'));
    // Called plainly, startTask() resolves null and the handler answers the call.
    assert.equal(text(await c.callTool('deferred', {})), 'id null, taskId null');
  });

  test(`${era}: breaking out of for-await stops following; the task goes on`, async () => {
    const c = await connect(statefulUrl, era);
    const handle = await c.callToolAsTask('render', { ms: 600 });
    for await (const s of handle) {
      assert.equal(s.taskId, handle.id);
      break;
    }
    assert.equal(text(await handle.result()), `rendered in task ${handle.id}`);
  });
}

test('2026-07-28 over stateless HTTP: a task outlives its client and another collects it by id', async () => {
  const first = await Client.http(statelessUrl, { protocolVersion: '2026-07-28' });
  const handle = await first.callToolAsTask('render', { ms: 500 });
  const id = handle.id;
  await first.close();
  // Anonymous clients share a scope: the id alone finds the task.
  const second = await connect(statelessUrl, '2026-07-28');
  const again = second.task(id);
  assert.equal(again.id, id);
  assert.equal(text(await again.result()), `rendered in task ${id}`);
  assert.equal((await again.status()).status, 'completed');
  // Its neighbour: a handshake-era client on the stateful server, another session, sees nothing.
  const owner = await connect(statefulUrl, '2025-11-25');
  const mine = await owner.callToolAsTask('render', { ms: 0 });
  const stranger = await connect(statefulUrl, '2025-11-25');
  await assert.rejects(stranger.task(mine.id).status(), (e) => e instanceof RpcError && e.code === -32602);
  await mine.result();
});

test('server.tool refuses bad task options; ctx.reportStatus wants a string', async () => {
  const s = new Server({ name: 'bad', version: '1.0.0' });
  for (const config of [{ task: 'sometimes' }, { task: true }, { taskStart: 'later' }, { task: 'optional', taskStart: 1 }]) {
    assert.throws(() => s.tool('t', config, () => 'x'), InvalidArgumentError, JSON.stringify(config));
  }
  s.tool('ok', { task: 'required', taskStart: 'deferred' }, () => 'x');
  s.tool('status', { task: 'optional' }, async (_a, ctx) => {
    await assert.rejects(ctx.reportStatus(42), TypeError);
    return 'checked';
  });
  const { url } = await s.runHttp({ port: 0 });
  try {
    const c = await connect(url, '2025-11-25');
    const { tools } = await c.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.ok.execution, { taskSupport: 'required' });
    assert.deepEqual(byName.status.execution, { taskSupport: 'optional' });
    assert.equal(text(await (await c.callToolAsTask('status', {})).result()), 'checked');
  } finally {
    await s.close();
  }
});

test('host.callTool with {task: true} runs the call as a task', { timeout: 120_000 }, async () => {
  const host = await Host.fromConfig({ mcpServers: { fixture: { command: process.execPath, args: [FIXTURE] } } });
  try {
    const r = await host.callTool('fixture', 'slow_compute', { seconds: 0.2, label: 'host' }, { task: true, ttlMs: 60_000 });
    assert.equal(text(r), 'host: computed after 0.2 s');
    // A task-required tool through the host: as a task it runs, plainly it is refused.
    const failed = await host.callTool('fixture', 'failing_job', {}, { task: true });
    assert.equal(failed.isError, true);
    await assert.rejects(host.callTool('fixture', 'failing_job', {}), TaskRequiredError);
    await assert.rejects(host.callTool('fixture', 'slow_compute', { seconds: 1 }, { task: true, ttlMs: -1 }), InvalidArgumentError);
    await assert.rejects(host.callTool('fixture', 'slow_compute', { seconds: 1 }, { task: true, onProgress: () => {} }), TypeError);
    await assert.rejects(host.callTool('fixture', 'slow_compute', { seconds: 1 }, { task: true, timeout: 5 }), InvalidArgumentError);
    const ac = new AbortController();
    const pending = host.callTool('fixture', 'slow_compute', { seconds: 60 }, { task: true, signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await assert.rejects(pending, (e) => e.name === 'AbortError');
  } finally {
    await host.close();
  }
});

/** Runs the official SDK's tasks client; resolves with {code, stdout, stderr}. */
function sdkTasksClient(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SDK_TASKS_CLIENT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const cap = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('exit', (code) => {
      clearTimeout(cap);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts the Node fixture over HTTP; resolves {url, child} once it listens. */
async function fixtureOverHttp() {
  const port = await freePort();
  const child = spawn(process.execPath, [FIXTURE, '--http', '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let seenErr = '';
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      seenErr += d;
      if (/listening on http:/.test(seenErr)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`fixture exited (${code}): ${seenErr}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

test('the official TypeScript SDK tasks client drives the Node fixture over stdio', { timeout: 150_000 }, async () => {
  const r = await sdkTasksClient(['stdio', process.execPath, FIXTURE]);
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout + r.stderr, /tasks\/cancel: status cancelled/);
  // Its neighbour: the client refuses to run without a server to drive.
  const usage = await sdkTasksClient(['stdio']);
  assert.equal(usage.code, 2, usage.stderr);
});

test('the official TypeScript SDK tasks client drives the Node fixture over HTTP', { timeout: 150_000 }, async () => {
  const { url, child } = await fixtureOverHttp();
  try {
    const r = await sdkTasksClient(['http', url]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout + r.stderr, /a plain call of a task-required tool is refused/);
  } finally {
    child.kill();
  }
});
