'use strict';
// `Host`: the servers of one `mcpServers` config (Claude Desktop, Cursor, Claude Code, VS Code
// shapes) started concurrently, one session each, behind one set of namespaced tools; and the
// agent loop `runAgent(model, messages, {provider})` with the model as an async JS function.
//
// The core (`oxmcp::host`) does the work; a server that cannot start is reported by `status()`
// with its stderr tail and never fails the others. Data objects keep the core's keys, the same
// in Rust, Python and Node.

const native = require('../native.cjs');
const { fromNative, abortError, ConnectionClosedError } = require('./errors.cjs');
const { wrap } = require('./handlers.cjs');
const { withOptions } = require('./client.cjs');
const { taskOptions } = require('./tasks.cjs');
const { PromptTranslation, Translation, text } = require('./translate.cjs');

async function nativeCall(p) {
  try {
    return await p;
  } catch (e) {
    throw fromNative(e);
  }
}

class Host {
  constructor(nativeHost) {
    Object.defineProperty(this, '_native', { value: nativeHost });
    this._closed = null;
  }

  /**
   * Starts the servers of a config: a file path (or `file:` URL), or the config object itself
   * (`{mcpServers: {...}}`). Rejects only for a bad config (a `ConfigError` naming the server
   * and the field); a server that cannot start shows up in `status()`.
   */
  static async fromConfig(config, options) {
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw new TypeError('Host.fromConfig: options must be an object');
    }
    const opts = text(options ?? {}, 'Host options');
    if (config instanceof URL) {
      config = require('node:url').fileURLToPath(config);
    }
    if (typeof config === 'string') {
      return new Host(await nativeCall(native.hostFromFile(config, opts)));
    }
    if (config !== null && typeof config === 'object' && !Array.isArray(config)) {
      return new Host(await nativeCall(native.hostFromValue(text(config, 'the config'), opts)));
    }
    throw new TypeError('Host.fromConfig: pass a config file path or a config object');
  }

  /** The enabled servers' names, in config order. */
  get servers() {
    return this._native.serverNames;
  }

  _open() {
    if (this._closed) throw new ConnectionClosedError('connection_closed', 'the host is closed');
  }

  /** Every server's state: connected, failed (with `error`, `error_kind`, `stderr`) or disabled. */
  async status() {
    this._open();
    return JSON.parse(await nativeCall(this._native.status()));
  }

  /** The connected servers' tools, cached until a server says they changed: `[{name, server, tool}]`. */
  async tools() {
    this._open();
    return JSON.parse(await nativeCall(this._native.tools()));
  }

  /** `{server: Resource[]}` for the connected servers. */
  async resources() {
    this._open();
    return JSON.parse(await nativeCall(this._native.resources()));
  }

  /** `{server: Prompt[]}` for the connected servers. */
  async prompts() {
    this._open();
    return JSON.parse(await nativeCall(this._native.prompts()));
  }

  /** The tools of every connected server in `provider`'s format, with the way back. */
  async translate(provider, options) {
    this._open();
    const t = await nativeCall(this._native.translate(String(provider), text(options ?? {}, 'translate options')));
    return String(provider).startsWith('prompt') ? new PromptTranslation(t, provider) : new Translation(t, provider);
  }

  /**
   * `tools/call` on one server (a crashed stdio server is started again first). With
   * `{task: true}` (and `ttlMs`, `signal`) the call runs as a task where the server offers
   * tasks, and this resolves with its result: a long tool neither times out nor holds a
   * request open. Aborting `signal` cancels the task and rejects with an `AbortError`.
   */
  async callTool(server, tool, args, options) {
    this._open();
    if (typeof server !== 'string' || typeof tool !== 'string') {
      throw new TypeError('callTool(server, tool, args): server and tool must be strings');
    }
    const argsJson = args === undefined ? undefined : text(args, 'tool arguments');
    if (options?.task) return this._callToolAsTask(server, tool, argsJson, options);
    return withOptions(options, (t, c, p) => this._native.callTool(server, tool, argsJson, t, c, p));
  }

  async _callToolAsTask(server, tool, argsJson, options) {
    const { task: _task, signal, ...rest } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError('callTool: `signal` must be an AbortSignal');
    }
    if (signal?.aborted) throw abortError(signal);
    const optionsJson = taskOptions(rest, 'callTool with `task: true`');
    const cancellation = signal ? new native.Cancellation() : undefined;
    const onAbort = () => cancellation.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return JSON.parse(await this._native.callToolAsTask(server, tool, argsJson, optionsJson, cancellation));
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      throw fromNative(e);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async readResource(server, uri) {
    this._open();
    return JSON.parse(await nativeCall(this._native.readResource(String(server), String(uri))));
  }

  async getPrompt(server, name, args) {
    this._open();
    const argsJson = args === undefined ? undefined : text(args, 'prompt arguments');
    return JSON.parse(await nativeCall(this._native.getPrompt(String(server), String(name), argsJson)));
  }

  /**
   * The agent loop. `model(request, {signal})` gets `{provider, messages, tools, step}` (tools
   * ready for the API request) and returns the assistant turn in that provider's format (a
   * message or the whole API response). The tool calls of one turn run concurrently; failures
   * become error results the model sees. Rejects only when the model throws (with that very
   * error) or `signal` aborts.
   */
  async runAgent(model, messages, options) {
    this._open();
    if (typeof model !== 'function') throw new TypeError('runAgent: model must be a function');
    if (!Array.isArray(messages)) throw new TypeError('runAgent: messages must be an array');
    const { signal, approve, ...rest } = options ?? {};
    if (approve !== undefined && typeof approve !== 'function') {
      throw new TypeError('runAgent: approve must be a function (call) => true | false | reason | arguments');
    }
    if (signal?.aborted) throw abortError(signal);
    const agentOptions = { provider: 'openai', ...rest };
    let modelError;
    const turn = wrap(async (request) => {
      try {
        return await model(request, { signal });
      } catch (e) {
        // Kept so the caller gets the model's own error back, not a copy of its message.
        if (modelError === undefined) modelError = e;
        throw e;
      }
    });
    const cancellation = signal ? new native.Cancellation() : undefined;
    const onAbort = () => cancellation.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return JSON.parse(
        await this._native.runAgent(
          turn,
          text(messages, 'messages'),
          text(agentOptions, 'runAgent options'),
          cancellation,
          // A throw or a rejection keeps the call from running; the model is told why.
          approve && wrap(async (call) => (await approve(call, { signal })) ?? false),
        ),
      );
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      if (modelError !== undefined) throw modelError;
      throw fromNative(e);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Closes every session; children go through the shutdown ladder. Safe to call twice. */
  close() {
    if (!this._closed) this._closed = nativeCall(this._native.close());
    return this._closed;
  }

  [Symbol.asyncDispose]() {
    return this.close();
  }
}

module.exports = { Host };
