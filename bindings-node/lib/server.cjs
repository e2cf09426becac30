'use strict';
// `Server`: register tools, resources, prompts and completions at runtime, then serve stdio or
// Streamable HTTP or WebSocket. Every call goes straight to the native core; this file only shapes
// definitions into the wire's JSON and wraps handlers with the envelope shim.

const native = require('../native.cjs');
const { fromNative } = require('./errors.cjs');
const { wrapHandler } = require('./handlers.cjs');
const { toJsonSchema } = require('./schema.cjs');
const { Context } = require('./context.cjs');
const { serverAuth } = require('./auth.cjs');
const { isMainThread } = require('node:worker_threads');

function guard(f) {
  try {
    return f();
  } catch (e) {
    throw fromNative(e);
  }
}

async function guardAsync(p) {
  try {
    return await p;
  } catch (e) {
    throw fromNative(e);
  }
}

function needFunction(handler, what) {
  if (typeof handler !== 'function') throw new TypeError(`${what}: the handler must be a function`);
}

/** Completion handlers (`complete: {arg: fn}`) registered after the owner exists. */
function completions(complete, what) {
  if (complete === undefined) return [];
  if (complete === null || typeof complete !== 'object') {
    throw new TypeError(`${what}: \`complete\` must map names to functions`);
  }
  return Object.entries(complete).map(([name, fn]) => {
    needFunction(fn, `${what} complete.${name}`);
    return [name, wrapHandler((p, n) => fn(p.value, { arguments: p.context, ctx: new Context(n) }))];
  });
}

/** While stdio carries the protocol, console output and stray stdout writes go to stderr. */
function routeStdoutToStderr() {
  const saved = {
    log: console.log,
    info: console.info,
    debug: console.debug,
    write: process.stdout.write,
  };
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  process.stdout.write = process.stderr.write.bind(process.stderr);
  return () => {
    console.log = saved.log;
    console.info = saved.info;
    console.debug = saved.debug;
    process.stdout.write = saved.write;
  };
}

class Server {
  /**
   * `stateKey` (64 hex digits) seals multi round-trip request state; replicas sharing a
   * store must share it, so round 1 on one and round 2 on another both work.
   * @param {{name: string, version: string, instructions?: string, pageSize?: number, stateKey?: string}} info
   */
  constructor(info) {
    if (!info || typeof info.name !== 'string' || typeof info.version !== 'string') {
      throw new TypeError('new Server({name, version}): name and version must be strings');
    }
    this._native = guard(() => new native.NativeServer(JSON.stringify(info)));
    this._running = null;
  }

  /**
   * Registers (or replaces) a tool. `handler(args, ctx)` may be sync or async; what it
   * returns becomes the result (string → text, object → structuredContent plus its JSON, content
   * blocks as given); a thrown error becomes an `isError` result; a thrown `McpError` with a
   * numeric code becomes that protocol error.
   *
   * `config.task` (`'optional'` or `'required'`; default `'forbidden'`) lets calls run as
   * tasks; `config.taskStart: 'deferred'` makes a call a task only when the handler calls
   * `ctx.startTask()`.
   */
  tool(name, config, handler) {
    if (typeof config === 'function') [config, handler] = [{}, config];
    needFunction(handler, `tool \`${name}\``);
    const c = config ?? {};
    const def = {
      name,
      title: c.title,
      description: c.description,
      inputSchema: toJsonSchema(c.inputSchema, 'input') ?? { type: 'object' },
      outputSchema: toJsonSchema(c.outputSchema, 'output'),
      annotations: c.annotations,
      icons: c.icons,
      _meta: c._meta,
    };
    const plain = c.task === undefined && c.taskStart === undefined;
    const options = plain ? undefined : JSON.stringify({ task: c.task, taskStart: c.taskStart });
    guard(() =>
      this._native.addTool(JSON.stringify(def), wrapHandler((args, n) => handler(args, new Context(n))), options),
    );
    return this;
  }

  /** Removes a tool; whether it existed (connected clients are told the list changed). */
  removeTool(name) {
    return this._native.removeTool(name);
  }

  /**
   * A resource with a fixed URI. `handler(uri, ctx)` returns `{contents: [...]}`.
   * @param {string} uri
   */
  resource(uri, config, handler) {
    if (typeof config === 'function') [config, handler] = [{}, config];
    needFunction(handler, `resource \`${uri}\``);
    const def = { name: uri, ...config, uri };
    guard(() => this._native.addResource(JSON.stringify(def), wrapHandler((p, n) => handler(p.uri, new Context(n)))));
    return this;
  }

  /** Removes a fixed resource. */
  removeResource(uri) {
    return this._native.removeResource(uri);
  }

  /**
   * A resource template (RFC 6570). `handler(uri, variables, ctx)` returns `{contents: [...]}`;
   * `config.complete` maps variable names to `(value, {arguments}) => string[]`.
   */
  resourceTemplate(uriTemplate, config, handler) {
    if (typeof config === 'function') [config, handler] = [{}, config];
    needFunction(handler, `resource template \`${uriTemplate}\``);
    const { complete, ...rest } = config ?? {};
    const done = completions(complete, `resource template \`${uriTemplate}\``);
    const def = { name: uriTemplate, ...rest, uriTemplate };
    guard(() =>
      this._native.addResourceTemplate(
        JSON.stringify(def),
        wrapHandler((p, n) => handler(p.uri, p.variables, new Context(n))),
      ),
    );
    for (const [variable, fn] of done) {
      guard(() => this._native.addTemplateCompletion(uriTemplate, variable, fn));
    }
    return this;
  }

  /**
   * A prompt. `config.arguments` is `[{name, description, required}]`; `handler(args, ctx)`
   * returns `{messages: [...]}`; `config.complete` maps argument names to completion functions.
   */
  prompt(name, config, handler) {
    if (typeof config === 'function') [config, handler] = [{}, config];
    needFunction(handler, `prompt \`${name}\``);
    const { complete, ...rest } = config ?? {};
    const done = completions(complete, `prompt \`${name}\``);
    const def = { ...rest, name };
    guard(() => this._native.addPrompt(JSON.stringify(def), wrapHandler((args, n) => handler(args, new Context(n)))));
    for (const [argument, fn] of done) {
      guard(() => this._native.addPromptCompletion(name, argument, fn));
    }
    return this;
  }

  /** Removes a prompt. */
  removePrompt(name) {
    return this._native.removePrompt(name);
  }

  /** Tells subscribed clients that a resource changed. */
  notifyResourceUpdated(uri) {
    this._native.notifyResourceUpdated(uri);
  }

  /** Open sessions. */
  get sessionCount() {
    return this._native.sessionCount;
  }

  /**
   * Serves this process's stdin/stdout; resolves when the client hangs up or `close()` runs.
   * Meanwhile `console.log` and `process.stdout.write` go to stderr, so nothing but protocol
   * reaches stdout.
   */
  async runStdio() {
    if (this._running) throw new TypeError('this server is already running');
    const restore = routeStdoutToStderr();
    this._running = 'stdio';
    try {
      // On the main thread the session runs on this thread (no thread hop per message). A
      // worker stays on the addon's threads: its env can be torn down mid-session, and that
      // path of the hosted loop is not covered by tests.
      await guardAsync(guard(() => this._native.serveStdio(isMainThread)));
    } finally {
      restore();
      this._running = null;
    }
  }

  /**
   * Serves Streamable HTTP (and legacy SSE) on 127.0.0.1 by default; resolves with
   * `{url}` once listening. The process stays alive until `close()`.
   *
   * `auth: async (token) => claims | null` protects the endpoint with OAuth bearer tokens
   * (with `authorizationServers`, `requiredScopes`, `resource`); `store: "redis://HOST:PORT/"`
   * shares sessions with the other replicas using that Redis; `websocket: true` also accepts
   * WebSocket upgrades on the same path (with `maxMessageBytes`, `pingIntervalMs`, `pingTimeoutMs`).
   * @param {object} [options] `{host, port, path, stateless, jsonResponse, allowedHosts, allowedOrigins, sseRetryMs, store, websocket, maxMessageBytes, auth, resource, authorizationServers, requiredScopes, scopesSupported, resourceName}`
   */
  async runHttp(options = {}) {
    if (this._running) throw new TypeError('this server is already running');
    if (options !== null && typeof options === 'object' && 'stateKey' in options) {
      // Silently ignoring it would make replicas disagree on every multi round-trip state.
      throw new TypeError('runHttp: `stateKey` belongs to the server: new Server({name, version, stateKey})');
    }
    const [plain, verify] = serverAuth(options ?? {});
    const url = await guardAsync(this._native.serveHttp(JSON.stringify(plain), verify));
    this._running = 'http';
    // A pending native promise keeps the event loop alive while HTTP is served.
    this._alive = this._native.waitClosed();
    return { url };
  }

  /**
   * Serves MCP over WebSocket alone (one socket, one session) on 127.0.0.1 by default;
   * resolves with `{url}` (`ws://…`) once listening. The process stays alive until `close()`.
   * The security rules are `runHttp`'s: `allowedHosts`, `allowedOrigins`, `auth` (checked on
   * the upgrade request). A message over `maxMessageBytes` (16 MiB) closes its socket.
   * @param {object} [options] `{host, port, path, allowedHosts, allowedOrigins, maxMessageBytes, pingIntervalMs, pingTimeoutMs, auth, resource, authorizationServers, requiredScopes, scopesSupported, resourceName}`
   */
  async runWebSocket(options = {}) {
    if (this._running) throw new TypeError('this server is already running');
    const [plain, verify] = serverAuth(options ?? {});
    const url = await guardAsync(this._native.serveWebSocket(JSON.stringify(plain), verify));
    this._running = 'websocket';
    this._alive = this._native.waitClosed();
    return { url };
  }

  /** Stops serving (HTTP or WebSocket listener, stdio session, listen streams). */
  async close() {
    await this._native.close();
    this._running = null;
  }
}

module.exports = { Server };
