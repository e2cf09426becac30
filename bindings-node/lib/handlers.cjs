'use strict';
// The shim between user handlers and the addon's threadsafe functions.
//
// The addon calls `(payloadJson, nativeCtx)` and awaits a Promise of a JSON envelope. `wrap`
// makes any user function fit: sync or async, a returned value or a thrown error, a result
// JSON cannot carry. Because the envelope is built here, native code never sees a JavaScript
// exception, a non-Promise return, or a circular object (JSON.stringify rejects it with a
// clear TypeError, reported as the handler's failure).

const { McpError } = require('./errors.cjs');

/** The envelope for a thrown value: a protocol error for McpError, a failure otherwise. */
function thrown(e) {
  if (e instanceof McpError && typeof e.code === 'number') {
    return JSON.stringify({ rpc: { code: e.code, message: e.message, data: e.data ?? null } });
  }
  const message = e instanceof Error ? e.message : String(e);
  return JSON.stringify({ threw: message });
}

function settle(value) {
  try {
    return JSON.stringify({ ok: value === undefined ? null : value });
  } catch (e) {
    return thrown(new Error(`the handler's result cannot be sent as JSON: ${e.message}`));
  }
}

/**
 * @param {(payload: any, nativeCtx: any) => any} call gets the parsed payload and native ctx
 * @returns {(payloadJson: string, nativeCtx: any) => Promise<string>}
 */
function wrap(call) {
  return (payloadJson, nativeCtx) => {
    let out;
    try {
      out = call(JSON.parse(payloadJson), nativeCtx);
    } catch (e) {
      return Promise.resolve(thrown(e));
    }
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') {
      return Promise.resolve(out).then(settle, thrown);
    }
    return Promise.resolve(settle(out));
  };
}

module.exports = { wrap };
