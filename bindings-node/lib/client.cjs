'use strict';
// `Client`: connect to a server (a child process over stdio, Streamable HTTP or WebSocket) and make
// requests under the TypeScript SDK's names. Results are plain objects with the wire's keys.

const native = require('../native.cjs');
const { fromNative, abortError } = require('./errors.cjs');
const { wrap } = require('./handlers.cjs');
const { clientAuth } = require('./auth.cjs');
const { TaskHandle, taskOptions } = require('./tasks.cjs');
const { isMainThread } = require('node:worker_threads');

/** A client-side handler `(params, {signal}) => result` for the addon. */
function answer(fn, what) {
  if (fn === undefined || fn === null) return undefined;
  if (typeof fn !== 'function') throw new TypeError(`Client: \`${what}\` must be a function`);
  return wrap((params, cancellation) => {
    const controller = new AbortController();
    cancellation.wait().then(
      (c) => c && controller.abort(new DOMException('The server cancelled the request', 'AbortError')),
      () => {},
    );
    return fn(params, { signal: controller.signal });
  });
}

const LIST_CHANGED = {
  'notifications/tools/list_changed': 'tools',
  'notifications/resources/list_changed': 'resources',
  'notifications/prompts/list_changed': 'prompts',
};

/** The notification callback: dispatches to onLogMessage, onListChanged, onNotification. */
function notifications(options) {
  const { onNotification, onLogMessage, onListChanged, onResourceUpdated } = options;
  if (!onNotification && !onLogMessage && !onListChanged && !onResourceUpdated) return undefined;
  return (method, paramsJson) => {
    const params = JSON.parse(paramsJson) ?? undefined;
    try {
      if (method === 'notifications/message' && onLogMessage) onLogMessage(params);
      else if (method in LIST_CHANGED && onListChanged) onListChanged(LIST_CHANGED[method]);
      else if (method === 'notifications/resources/updated' && onResourceUpdated) onResourceUpdated(params);
      if (onNotification) onNotification(method, params);
    } catch (e) {
      // A listener's bug must not vanish silently, nor take the connection down.
      queueMicrotask(() => {
        throw e;
      });
    }
  };
}

function connectArgs(options) {
  const { sampling, elicitation, roots, onNotification, onLogMessage, onListChanged, onResourceUpdated, ...rest } =
    options;
  return [
    JSON.stringify(rest),
    answer(sampling, 'sampling'),
    answer(elicitation, 'elicitation'),
    answer(roots, 'roots'),
    notifications({ onNotification, onLogMessage, onListChanged, onResourceUpdated }),
  ];
}

async function nativeCall(p) {
  try {
    return await p;
  } catch (e) {
    throw fromNative(e);
  }
}

const rethrow = (e) => {
  throw fromNative(e);
};

/** `{signal, timeout, onProgress}` around one native request. */
function withOptions(options, start) {
  if (options === undefined) {
    // The common call has no signal to listen to and nothing to clean up: no async frame.
    try {
      return start(undefined, undefined, undefined).then(JSON.parse, rethrow);
    } catch (e) {
      return Promise.reject(fromNative(e));
    }
  }
  return withFullOptions(options, start);
}

async function withFullOptions(options, start) {
  const { signal, timeout, onProgress } = options ?? {};
  if (signal?.aborted) throw abortError(signal);
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new TypeError('onProgress must be a function');
  }
  const cancellation = signal ? new native.Cancellation() : undefined;
  const onAbort = () => cancellation.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  const progress = onProgress ? (json) => onProgress(JSON.parse(json)) : undefined;
  try {
    return JSON.parse(await start(timeout ?? undefined, cancellation, progress));
  } catch (e) {
    if (signal?.aborted) throw abortError(signal);
    throw fromNative(e);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

class Client {
  constructor(nativeClient) {
    this._native = nativeClient;
    this._details = JSON.parse(nativeClient.serverDetails);
    // Pending while the connection is open: keeps Node alive exactly as long as it is.
    this.closed = nativeClient.closed().then(
      (reason) => reason ?? undefined,
      () => undefined,
    );
  }

  /**
   * Starts `command args` (never through a shell) and connects over its stdio.
   * @param {string} command
   * @param {string[]} [args]
   * @param {object} [options] `{env, cwd, inheritEnv, name, version, protocolVersion, logLevel, sampling, elicitation, roots, onNotification, onLogMessage, onListChanged, onResourceUpdated}`
   */
  static async stdio(command, args = [], options = {}) {
    if (typeof command !== 'string') throw new TypeError('Client.stdio: command must be a string');
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
      throw new TypeError('Client.stdio: args must be an array of strings');
    }
    // On the main thread the session runs on this thread (see `runStdio`). Bad options
    // throw before a Promise exists: mapped here like a rejection.
    let connecting;
    try {
      connecting = native.connectStdio(command, args, isMainThread, ...connectArgs(options));
    } catch (e) {
      throw fromNative(e);
    }
    return new Client(await nativeCall(connecting));
  }

  /**
   * Connects to a Streamable HTTP endpoint (falls back to legacy HTTP+SSE). With `auth`, a
   * 401 from the server runs the OAuth 2.1 flow (headless unless `auth.authorize` is given)
   * and the request is sent again with the token.
   * @param {string | URL} url
   * @param {object} [options] `{headers, auth, name, version, protocolVersion, logLevel, sampling, ...}`
   */
  static async http(url, options = {}) {
    const { auth, ...rest } = options ?? {};
    const [json, ...callbacks] = connectArgs(rest);
    const [authJson, authorize] = clientAuth(auth);
    const withAuth = authJson === undefined ? json : JSON.stringify({ ...JSON.parse(json), auth: authJson });
    return new Client(await nativeCall(native.connectHttp(String(url), withAuth, ...callbacks, authorize)));
  }

  /**
   * Connects to a WebSocket server (`ws://` or `wss://`). `timeout` (ms, default 10 s) bounds
   * the connect; an aborted `signal` rejects with an `AbortError` and abandons it.
   * @param {string | URL} url
   * @param {object} [options] `{headers, timeout, signal, maxMessageBytes, pingIntervalMs, pingTimeoutMs, name, version, protocolVersion, logLevel, sampling, ...}`
   */
  static async websocket(url, options = {}) {
    const { signal, ...rest } = options ?? {};
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError('Client.websocket: `signal` must be an AbortSignal');
    }
    if (signal?.aborted) throw abortError(signal);
    const cancellation = signal ? new native.Cancellation() : undefined;
    const onAbort = () => cancellation.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const connecting = native.connectWebSocket(String(url), ...connectArgs(rest), cancellation);
      return new Client(await connecting);
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      throw fromNative(e);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The negotiated protocol revision. */
  get protocolVersion() {
    return this._details.protocolVersion;
  }

  /** `{name, version, ...}` of the server. */
  getServerVersion() {
    return this._details.serverInfo;
  }

  /** The server's capabilities. */
  getServerCapabilities() {
    return this._details.capabilities;
  }

  /** The server's instructions for the model. */
  getInstructions() {
    return this._details.instructions ?? undefined;
  }

  /** Any request by method name (params and result as plain objects). */
  request(method, params, options) {
    return withOptions(options, (t, c, p) =>
      this._native.request(method, params === undefined ? undefined : JSON.stringify(params), t, c, p),
    );
  }

  ping() {
    return nativeCall(this._native.ping()).then(() => ({}));
  }

  async listTools(params) {
    return JSON.parse(await nativeCall(this._native.listTools(params?.cursor)));
  }

  /**
   * Calls a tool: `callTool(name, args, {signal, timeout, onProgress})`, or the TypeScript
   * SDK's `callTool({name, arguments}, resultSchema?, options)`. Aborting rejects with an
   * `AbortError` and sends `notifications/cancelled`.
   */
  callTool(name, args, options) {
    if (name !== null && typeof name === 'object') {
      options = options ?? (args && typeof args === 'object' && !('parse' in args) ? args : undefined);
      args = name.arguments;
      name = name.name;
    }
    if (typeof name !== 'string') return Promise.reject(new TypeError('callTool: the tool name must be a string'));
    const argsJson = args === undefined ? undefined : JSON.stringify(args);
    return withOptions(options, (t, c, p) => this._native.callTool(name, argsJson, t, c, p));
  }

  /**
   * Calls a tool as a task and resolves with its handle once the server created it:
   * `callToolAsTask(name, args, {ttlMs, signal})`. Aborting `signal` before then rejects with
   * an `AbortError`; after, it cancels the task (`tasks/cancel`). A server without tasks gets
   * a plain call, whose result the handle holds (its `id` is then `null`).
   */
  async callToolAsTask(name, args, options) {
    if (typeof name !== 'string') throw new TypeError('callToolAsTask: the tool name must be a string');
    const { signal, ...rest } = options ?? {};
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError('callToolAsTask: `signal` must be an AbortSignal');
    }
    if (signal?.aborted) throw abortError(signal);
    const argsJson = args === undefined ? undefined : JSON.stringify(args);
    const optionsJson = taskOptions(rest, 'callToolAsTask');
    const cancellation = signal ? new native.Cancellation() : undefined;
    const onAbort = () => cancellation.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    let created;
    try {
      created = new TaskHandle(
        await this._native.callToolAsTask(name, argsJson, optionsJson, cancellation),
      );
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      throw fromNative(e);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (signal) created._cancelOn(signal);
    return created;
  }

  /** A handle on a task created earlier, by this connection or another (after a reconnect). */
  task(id) {
    if (typeof id !== 'string') throw new TypeError('task: the task id must be a string');
    try {
      return new TaskHandle(this._native.task(id));
    } catch (e) {
      throw fromNative(e);
    }
  }

  listResources(params, options) {
    return this.request('resources/list', params, options);
  }

  listResourceTemplates(params, options) {
    return this.request('resources/templates/list', params, options);
  }

  /** `readResource({uri})` or `readResource(uri)`. */
  readResource(params, options) {
    return this.request('resources/read', typeof params === 'string' ? { uri: params } : params, options);
  }

  async subscribeResource(params) {
    const uri = typeof params === 'string' ? params : params?.uri;
    await nativeCall(this._native.subscribeResource(uri));
    return {};
  }

  async unsubscribeResource(params) {
    const uri = typeof params === 'string' ? params : params?.uri;
    await nativeCall(this._native.unsubscribeResource(uri));
    return {};
  }

  listPrompts(params, options) {
    return this.request('prompts/list', params, options);
  }

  /** `getPrompt({name, arguments})` or `getPrompt(name, arguments)`. */
  getPrompt(params, args, options) {
    if (typeof params === 'string') params = { name: params, arguments: args ?? {} };
    else options = args;
    return this.request('prompts/get', params, options);
  }

  /** `complete({ref, argument: {name, value}, context?})`. */
  complete(params, options) {
    return this.request('completion/complete', params, options);
  }

  async setLoggingLevel(level) {
    await nativeCall(this._native.setLoggingLevel(level));
    return {};
  }

  /** Tells the server the roots changed (handshake era). */
  sendRootsListChanged() {
    return nativeCall(this._native.sendRootsListChanged());
  }

  /** Closes the connection; a child server goes through close stdin → SIGTERM → SIGKILL. */
  async close() {
    await this._native.close();
    await this.closed;
  }
}

module.exports = { Client, withOptions };
