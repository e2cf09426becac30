'use strict';
// `TaskHandle`: a tool call running as a task on the server (`client.callToolAsTask`,
// `client.task(id)`). The native handle wraps the core's, which speaks the server's form of
// tasks, polls at the interval it suggests and answers the task's questions with the client's
// handlers; this file only parses JSON, maps errors, makes the change stream an async
// iterator, and ties an `AbortSignal` to `tasks/cancel`.

const { fromNative, InvalidArgumentError } = require('./errors.cjs');

async function nativeCall(p) {
  try {
    return await p;
  } catch (e) {
    throw fromNative(e);
  }
}

/**
 * The options of a task call besides `signal`, as JSON for the addon (which refuses unknown
 * names and a bad `ttlMs`). What JSON would silently drop or turn into `null` (a function,
 * `NaN`, `Infinity`) is refused here instead.
 */
function taskOptions(options, what) {
  for (const [name, value] of Object.entries(options)) {
    if (typeof value === 'function') throw new TypeError(`${what}: \`${name}\` is not an option of a task call`);
    if (typeof value === 'number' && !Number.isFinite(value)) {
      const e = new InvalidArgumentError('invalid_argument', `${what}: \`${name}\` must be a finite number, not ${value}`);
      e.kind = 'invalid_argument';
      throw e;
    }
  }
  return JSON.stringify(options);
}

class TaskHandle {
  /** @param {any} nativeHandle the addon's NativeTaskHandle */
  constructor(nativeHandle) {
    this._native = nativeHandle;
    this._signal = undefined;
    this._onAbort = undefined;
    /** The task's id; `null` when the server answered at once and there is no task. */
    this.id = nativeHandle.id ?? null;
  }

  /** The task as the server describes it now (`tasks/get`). */
  async status() {
    return JSON.parse(await nativeCall(this._native.status()));
  }

  /**
   * Waits for the task to end: the tool's result (a tool error is an `isError` result), or a
   * rejection with the task's error (`RpcError`), or `CancelledError` when it was cancelled.
   */
  async result() {
    try {
      return JSON.parse(await nativeCall(this._native.result()));
    } finally {
      // Over either way: an abort after this has nothing left to cancel.
      this._release();
    }
  }

  /** Asks the server to cancel the task (harmless on a finished one). */
  async cancel() {
    this._release();
    await nativeCall(this._native.cancel());
  }

  /** The task's status each time it changes; the last one is final. */
  [Symbol.asyncIterator]() {
    const updates = this._native.watch();
    const release = () => this._release();
    return {
      async next() {
        let json;
        try {
          json = await nativeCall(updates.next());
        } catch (e) {
          updates.close();
          throw e;
        }
        if (json === null || json === undefined) {
          release();
          return { done: true, value: undefined };
        }
        return { done: false, value: JSON.parse(json) };
      },
      // `break` out of `for await`: stop polling now.
      async return() {
        updates.close();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** Cancels the task when `signal` aborts, until the task is known to be over. */
  _cancelOn(signal) {
    if (signal.aborted) {
      this.cancel().catch(() => {});
      return;
    }
    // An unobserved failure to cancel (the connection went away) must not crash the process.
    this._onAbort = () => {
      this.cancel().catch(() => {});
    };
    this._signal = signal;
    signal.addEventListener('abort', this._onAbort, { once: true });
  }

  _release() {
    if (this._signal !== undefined) {
      this._signal.removeEventListener('abort', this._onAbort);
      this._signal = undefined;
      this._onAbort = undefined;
    }
  }
}

module.exports = { TaskHandle, taskOptions };
