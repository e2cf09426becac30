'use strict';
// The shim between user handlers and the addon's threadsafe functions.
//
// The addon calls `(payloadJson, nativeCtx)` and gets a JSON envelope: the string itself when
// the handler finished synchronously (no Promise and no `then` per call), a Promise of it when
// the handler returned a thenable. `wrap` makes any user function fit: sync or async, a
// returned value or a thrown error, a result JSON cannot carry. Because the envelope is built
// here, native code never sees a JavaScript exception or a circular object (JSON.stringify
// rejects it with a clear TypeError, reported as the handler's failure).

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
    if (out !== null && (typeof out === 'object' || typeof out === 'function') && typeof out.then === 'function') {
      return Promise.resolve(out).then(settle, thrown);
    }
    return settle(out);
  };
}

module.exports = { wrap };
