'use strict';
// `oxmcp/langchain`: a host's tools as LangChain.js tools (`@langchain/core`, an optional peer).
//
// The faults this avoids (langchain-mcp-adapters, hosts.md): every tool call goes through the
// host's one long-lived session per server, never a new session per call; `outputSchema`
// rides in the tool's `metadata.output_schema` and `structuredContent` in the ToolMessage's
// `artifact` (`responseFormat: "content_and_artifact"`); the arguments are one object
// validated against the server's JSON Schema, so names such as `config`, `runManager` or
// `callbacks` reach the server untouched. The shapes (names, ToolMessage content, status) are
// the core's `langchain` translation, the same in Python and Rust.

const { Host } = require('./host.cjs');

const MISSING = 'oxmcp/langchain needs the optional peer dependency `@langchain/core`: npm install @langchain/core';

function missing(e) {
  return e && (e.code === 'MODULE_NOT_FOUND' || e.code === 'ERR_MODULE_NOT_FOUND') && /@langchain\/core/.test(e.message);
}

/** `@langchain/core` as CommonJS (the ES module entry passes its own, so classes match the caller's). */
async function requireLangChain() {
  try {
    return { tools: require('@langchain/core/tools'), messages: require('@langchain/core/messages') };
  } catch (e) {
    throw missing(e) ? new Error(MISSING, { cause: e }) : e;
  }
}

/**
 * The tools of every connected server of `host` as `DynamicStructuredTool`s, named like the
 * host's translation (`server__tool` by default; `{namespace: "collision" | "never"}`).
 */
async function getToolsWith(load, host, options) {
  if (!(host instanceof Host)) throw new TypeError('getTools: pass an oxmcp Host');
  const { tools: lcTools, messages: lcMessages } = await load();
  const translation = await host.translate('langchain', options ?? {});
  return translation.tools.map((def) => {
    const name = def.name;
    return new lcTools.DynamicStructuredTool({
      name,
      description: def.description,
      schema: def.args_schema,
      responseFormat: 'content_and_artifact',
      metadata: def.metadata,
      func: async (input, _runManager, config) => {
        const toolCall = config?.toolCall;
        const call = { id: toolCall?.id ?? null, name, arguments: input ?? {} };
        const routed = translation.route(call);
        const result =
          'error' in routed
            ? { content: [{ type: 'text', text: routed.error }], isError: true }
            : await host.callTool(routed.server, routed.tool, routed.arguments, { signal: config?.signal });
        const [message] = translation.resultMessages([{ call, result }]);
        if (toolCall?.id) {
          // A ToolMessage of our own keeps the `error` status of an isError result.
          return [
            new lcMessages.ToolMessage({
              content: message.content,
              artifact: message.artifact,
              status: message.status,
              tool_call_id: message.tool_call_id,
              name: message.name,
            }),
            message.artifact,
          ];
        }
        return [message.content, message.artifact];
      },
    });
  });
}

const getTools = (host, options) => getToolsWith(requireLangChain, host, options);

module.exports = { getTools, getToolsWith, MISSING, missing };
