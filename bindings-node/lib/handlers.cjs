'use strict';
// The shim between user handlers and the addon's threadsafe functions.
//
// The addon calls `(payloadJson, nativeCtx)` and gets a JSON envelope: the string itself when
// the handler finished synchronously (no Promise and no `then` per call), a Promise of it when
// the handler returned a thenable (`wrapHandler`, for server handlers, answers PENDING instead
// and delivers the envelope through the call handle). `wrap` makes any user function fit: sync or async, a
// returned value or a thrown error, a result JSON cannot carry. Because the envelope is built
// here, native code never sees a JavaScript exception or a circular object (JSON.stringify
// rejects it with a clear TypeError, reported as the handler's failure).

const native = require('../native.cjs');
const { McpError } = require('./errors.cjs');

/** The envelope for a thrown value: a protocol error for McpError, a failure otherwise. */
function thrown(e) {
  if (e instanceof McpError && typeof e.code === 'number') {
    return JSON.stringify({ rpc: { code: e.code, message: e.message, data: e.data ?? null } });
  }
  const message = e instanceof Error ? e.message : String(e);
  return JSON.stringify({ threw: message });
}

// A string result (the commonest: a tool's text) is sent as itself behind this tag, never as
// JSON: no stringify here, no parse in native code. Envelopes otherwise start with `{`.
const STRING_TAG = '\u0001';

function settle(value) {
  if (typeof value === 'string') return STRING_TAG + value;
  try {
    return JSON.stringify({ ok: value === undefined ? null : value });
  } catch (e) {
    return thrown(new Error(`the handler's result cannot be sent as JSON: ${e.message}`));
  }
}

function isThenable(out) {
  return out !== null && (typeof out === 'object' || typeof out === 'function') && typeof out.then === 'function';
}

/**
 * @param {(payload: any, nativeCtx: any) => any} call gets the parsed payload and native ctx
 * @returns {(payloadJson: string, nativeCtx: any) => string | Promise<string>}
 */
function wrap(call) {
  return (payloadJson, nativeCtx) => {
    let out;
    try {
      out = call(JSON.parse(payloadJson), nativeCtx);
    } catch (e) {
      return thrown(e);
    }
    if (isThenable(out)) return Promise.resolve(out).then(settle, thrown);
    return settle(out);
  };
}

// What a server handler's wrapper returns while the handler's promise is pending.
const PENDING = '\u0002';

/**
 * `wrap` for server handlers, whose second argument is a call handle. An `async` handler
 * (the common case) answers PENDING at once and hands its envelope over later through
 * `native.settleCall(handle, envelope)`: two closures here instead of a Promise that native
 * code must convert, and the answer is written as soon as the reactions have run.
 *
 * @param {(payload: any, handle: any) => any} call gets the parsed payload and call handle
 * @returns {(payloadJson: string, handle: any) => string}
 */
function wrapHandler(call) {
  return (payloadJson, handle) => {
    let out;
    try {
      out = call(JSON.parse(payloadJson), handle);
      if (isThenable(out)) {
        // settleCall never throws, so neither reaction can reject.
        out.then(
          (value) => native.settleCall(handle, settle(value)),
          (e) => native.settleCall(handle, thrown(e)),
        );
        return PENDING;
      }
    } catch (e) {
      // The handler threw, or its thenable's `then` did.
      return thrown(e);
    }
    return settle(out);
  };
}

module.exports = { wrap, wrapHandler };
