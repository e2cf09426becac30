'use strict';
// `ctx`, the second argument of every server handler: the request's id, an AbortSignal fired
// when the client cancels (the request, or the task it runs as), and the powers the core
// gives a handler (progress, logging, a task's status, and questions to the client that work
// in both protocol eras).

const native = require('../native.cjs');
const { fromNative } = require('./errors.cjs');

async function call(p) {
  try {
    return await p;
  } catch (e) {
    throw fromNative(e);
  }
}

class Context {
  /** @param {any} handle the addon's handle for this call (see `_native`) */
  constructor(handle) {
    this._handle = handle;
    this._nativeCtx = undefined;
    this._signal = undefined;
    this._batch = undefined;
  }

  // The addon's RequestContext, made on first use: most handlers never touch `ctx`, and the
  // handle (which keeps the call's context alive as long as this object) is cheaper to make.
  get _native() {
    if (this._nativeCtx === undefined) this._nativeCtx = native.requestContext(this._handle);
    return this._nativeCtx;
  }

  /** The JSON-RPC id of the request (a number or a string, as the client sent it). */
  get requestId() {
    return JSON.parse(this._native.requestId);
  }

  /** The request's `_meta`, if any. */
  get meta() {
    return JSON.parse(this._native.meta) ?? undefined;
  }

  /** The protocol revision of this request. */
  get protocolVersion() {
    return this._native.protocolVersion ?? undefined;
  }

  /** Aborted when the client cancels the request, or the task it runs as (created on first use). */
  get signal() {
    if (this._signal === undefined) {
      const controller = new AbortController();
      this._signal = controller.signal;
      this._native.cancellation.wait().then(
        (cancelled) => {
          if (cancelled) controller.abort(new DOMException('The client cancelled the request', 'AbortError'));
        },
        () => {},
      );
    }
    return this._signal;
  }

  /** The id of the task this call runs as, once it is one; `null` otherwise. */
  get taskId() {
    return this._native.taskId ?? null;
  }

  /**
   * Makes this call a task now (a tool registered with `taskStart: 'deferred'`): the client
   * gets the task's id and the handler goes on. Resolves with the id, or `null` when the call
   * is not a task (the client did not ask for one): the handler then simply answers.
   */
  async startTask() {
    return (await call(this._native.startTask())) ?? null;
  }

  /** Sets the task's `statusMessage` (clients see it in `tasks/get`); nothing for a plain call. */
  reportStatus(message) {
    if (typeof message !== 'string') return Promise.reject(new TypeError('reportStatus: the message must be a string'));
    return call(this._native.reportStatus(message));
  }

  /** Sends `notifications/progress` (if the client asked for progress). */
  reportProgress(progress, total, message) {
    return call(this._native.reportProgress(progress, total ?? undefined, message ?? undefined));
  }

  /** Sends a log message (if the client asked for this level). */
  log(level, data, logger) {
    return call(this._native.log(level, JSON.stringify(data ?? null), logger ?? undefined));
  }

  /** Whether the client declared a capability (`sampling`, `elicitation`, `roots`, ...). */
  clientSupports(capability) {
    return this._native.clientSupports(capability);
  }

  /** Ends this request's HTTP response stream early (the client resumes it); no-op elsewhere. */
  closeStream() {
    return call(this._native.closeStream());
  }

  // The questions below work in both eras. In 2026-07-28 (stateless) the first call of a round
  // ends the round; the client retries with the answer and the handler runs again from the
  // top, so work done before asking must be safe to repeat. `options.key` names the question
  // in the round's `inputRequests`.

  /** Asks the client's model (`sampling/createMessage`). */
  sample(params, options) {
    return this._ask('sample', params, options?.key);
  }

  /** Asks the user through the client (`elicitation/create`: `{message, requestedSchema}` or `{mode: 'url', ...}`). */
  elicit(params, options) {
    return this._ask('elicit', params, options?.key);
  }

  /** Asks for the client's roots (`roots/list`). */
  listRoots(options) {
    return this._ask('roots', {}, options?.key);
  }

  // Questions asked in the same tick (`Promise.all([ctx.elicit(..), ctx.sample(..)])`) go to
  // the addon in one call, so a stateless round registers them together before it ends.
  _ask(kind, params, key) {
    return new Promise((resolve, reject) => {
      if (this._batch === undefined) {
        this._batch = [];
        queueMicrotask(() => this._flush());
      }
      this._batch.push({ question: { kind, params: params ?? {}, key: key ?? undefined }, resolve, reject });
    });
  }

  _flush() {
    const batch = this._batch;
    this._batch = undefined;
    let pending;
    try {
      pending = this._native.askAll(JSON.stringify(batch.map((b) => b.question)));
    } catch (e) {
      const err = fromNative(e);
      for (const b of batch) b.reject(err);
      return;
    }
    pending.then(
      (json) => {
        JSON.parse(json).forEach((answer, i) => {
          if ('ok' in answer) batch[i].resolve(answer.ok);
          else batch[i].reject(fromNative(new Error(answer.error)));
        });
      },
      (e) => {
        const err = fromNative(e);
        for (const b of batch) b.reject(err);
      },
    );
  }
}

module.exports = { Context };
