'use strict';
// The error classes of the package and the one mapper from native errors to them.
//
// The native addon encodes every core error (`oxmcp::Error`) as JSON behind a marker in the
// message (see bindings-node/src/error.rs); `fromNative` turns it into the `McpError` subclass
// for its kind. ESM re-exports these very classes, so `instanceof` works in both module systems.

const MARKER = '\u0000oxmcp:';

/** Base class: every error this package raises on purpose. */
class McpError extends Error {
  /**
   * @param {number|string} code JSON-RPC code for protocol errors, else the kind's name
   * @param {string} message
   * @param {unknown} [data]
   */
  constructor(code, message, data) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.data = data;
  }
}

/** The peer answered with a JSON-RPC error (`code` is its number). */
class RpcError extends McpError {}
/** No answer in time; `notifications/cancelled` was sent. */
class TimeoutError extends McpError {}
/** The request was cancelled (by the peer, or a close). */
class CancelledError extends McpError {}
/** The connection ended (a child's stderr tail is in the message). */
class ConnectionClosedError extends McpError {}
/** A child process could not be started. */
class SpawnError extends McpError {}
/** An I/O error on the transport. */
class IoError extends McpError {}
/** The peer broke the protocol. */
class ProtocolError extends McpError {}
/** No protocol revision both sides speak. */
class UnsupportedProtocolVersionError extends McpError {}
/** A schema given to us is not a valid JSON Schema. */
class InvalidSchemaError extends McpError {}
/** The API was used in a way it does not allow. */
class InvalidArgumentError extends McpError {}
/** An `mcpServers` config is unusable (the message names the file, server and field). */
class ConfigError extends McpError {}
/** Authorization failed (discovery, registration, consent or a token request). */
class AuthError extends McpError {}
/** The tool runs only as a task: call it with `callToolAsTask` (`data.tool` names it). */
class TaskRequiredError extends McpError {}
/** A request to the client (sampling, elicitation, roots) was not sent: the client had not sent
 * `notifications/initialized` in time, and until it does a server may ask it nothing but ping. */
class HandshakeIncompleteError extends McpError {}

const BY_KIND = {
  rpc: RpcError,
  timeout: TimeoutError,
  cancelled: CancelledError,
  connection_closed: ConnectionClosedError,
  spawn: SpawnError,
  io: IoError,
  protocol: ProtocolError,
  unsupported_protocol_version: UnsupportedProtocolVersionError,
  invalid_schema: InvalidSchemaError,
  invalid_argument: InvalidArgumentError,
  config: ConfigError,
  auth: AuthError,
  task_required: TaskRequiredError,
  handshake_incomplete: HandshakeIncompleteError,
};

/** JSON-RPC error codes of the protocol, for `throw new McpError(ErrorCode.InvalidParams, ...)`. */
const ErrorCode = Object.freeze({
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ResourceNotFound: -32002,
  UrlElicitationRequired: -32042,
});

/** Turns an error from the addon into our class (other errors pass through unchanged). */
function fromNative(err) {
  const msg = err && typeof err.message === 'string' ? err.message : null;
  if (msg === null || !msg.startsWith(MARKER)) return err;
  let payload;
  try {
    payload = JSON.parse(msg.slice(MARKER.length));
  } catch {
    return err;
  }
  const Cls = BY_KIND[payload.kind] || McpError;
  const code = payload.kind === 'rpc' ? payload.code : payload.kind;
  const out = new Cls(code, payload.message, payload.data);
  out.kind = payload.kind;
  return out;
}

/** The error an aborted call rejects with: a DOMException named `AbortError`, like fetch. */
function abortError(signal) {
  if (signal && signal.reason instanceof Error && signal.reason.name === 'AbortError') {
    return signal.reason;
  }
  return new DOMException('The operation was aborted', 'AbortError');
}

/** Checks at load time that every kind the addon knows has a class here. */
function checkKinds(kinds) {
  for (const k of kinds) {
    if (!(k in BY_KIND)) throw new Error(`oxmcp: native error kind \`${k}\` has no class`);
  }
}

module.exports = {
  McpError,
  RpcError,
  TimeoutError,
  CancelledError,
  ConnectionClosedError,
  SpawnError,
  IoError,
  ProtocolError,
  UnsupportedProtocolVersionError,
  InvalidSchemaError,
  InvalidArgumentError,
  ConfigError,
  AuthError,
  TaskRequiredError,
  HandshakeIncompleteError,
  ErrorCode,
  fromNative,
  abortError,
  checkKinds,
};
