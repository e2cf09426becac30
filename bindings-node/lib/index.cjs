'use strict';
// The package `oxmcp` (CommonJS entry). `index.mjs` re-exports these same objects, so the
// classes are identical, and `instanceof` holds, whichever way the package is loaded.

const native = require('../native.cjs');
const errors = require('./errors.cjs');

errors.checkKinds(native.errorKinds());

const { Server } = require('./server.cjs');
const { Client } = require('./client.cjs');
const { TaskHandle } = require('./tasks.cjs');
const { Host } = require('./host.cjs');
const translate = require('./translate.cjs');
const cli = require('./cli.cjs');

module.exports = {
  Server,
  Client,
  Host,
  TaskHandle,
  translate: Object.freeze({
    toOpenAI: translate.toOpenAI,
    toResponses: translate.toResponses,
    toAnthropic: translate.toAnthropic,
    toGemini: translate.toGemini,
    toLangChain: translate.toLangChain,
    toPrompt: translate.toPrompt,
    translate: translate.translate,
    toolCalls: translate.toolCalls,
    resultMessages: translate.resultMessages,
    PROVIDERS: translate.PROVIDERS,
    PROMPT_FORMATS: translate.PROMPT_FORMATS,
  }),
  Translation: translate.Translation,
  PromptTranslation: translate.PromptTranslation,
  runCli: cli.run,
  McpError: errors.McpError,
  RpcError: errors.RpcError,
  TimeoutError: errors.TimeoutError,
  CancelledError: errors.CancelledError,
  ConnectionClosedError: errors.ConnectionClosedError,
  SpawnError: errors.SpawnError,
  IoError: errors.IoError,
  ProtocolError: errors.ProtocolError,
  UnsupportedProtocolVersionError: errors.UnsupportedProtocolVersionError,
  InvalidSchemaError: errors.InvalidSchemaError,
  InvalidArgumentError: errors.InvalidArgumentError,
  ConfigError: errors.ConfigError,
  AuthError: errors.AuthError,
  TaskRequiredError: errors.TaskRequiredError,
  HandshakeIncompleteError: errors.HandshakeIncompleteError,
  ErrorCode: errors.ErrorCode,
};
