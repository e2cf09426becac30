// The package `oxmcp` (ES module entry): the very objects of the CommonJS entry, so an
// `McpError` thrown through one is `instanceof McpError` in the other.
import cjs from './index.cjs';

export const {
  Server,
  Client,
  Host,
  TaskHandle,
  translate,
  Translation,
  PromptTranslation,
  runCli,
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
} = cjs;
export default cjs;
