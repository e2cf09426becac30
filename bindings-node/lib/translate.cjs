'use strict';
// `translate`: MCP tools into each LLM API's function-calling format (OpenAI Chat Completions
// and Responses, Anthropic, Gemini's two paths, LangChain), and the way back: the model's tool
// calls into `tools/call` arguments (strict-mode nulls stripped so server defaults apply) and
// `CallToolResult`s into the provider's tool-result messages.
//
// All of it is the core's `oxmcp::schema`; a `Translation` keeps the native object, so the way
// back strips nulls against the source schemas without sending them across again.

const native = require('../native.cjs');
const { fromNative } = require('./errors.cjs');

const PROVIDERS = Object.freeze(['openai', 'responses', 'anthropic', 'gemini', 'gemini-openapi', 'langchain']);
const PROMPT_FORMATS = Object.freeze(['hermes', 'json', 'react', 'xml']);

/** JSON text for the addon; `undefined`, functions and cycles are a TypeError naming `what`. */
function text(value, what) {
  let out;
  try {
    out = JSON.stringify(value);
  } catch (e) {
    throw new TypeError(`${what} cannot be sent as JSON: ${e.message}`);
  }
  if (out === undefined) throw new TypeError(`${what} must be a JSON value, not ${typeof value}`);
  return out;
}

/** Runs a synchronous native call, mapping its error. */
function sync(f) {
  try {
    return f();
  } catch (e) {
    throw fromNative(e);
  }
}

/** The `{strict, namespace}` options, with anything else left for the core to refuse. */
function optionsText(options, what) {
  if (options === undefined || options === null) return '{}';
  if (typeof options !== 'object') throw new TypeError(`${what}: options must be an object`);
  return text(options, `${what} options`);
}

/** Tools in one provider's format (`tools`, `names`, `reports`) and the way back. */
class Translation {
  constructor(nativeTranslation, provider) {
    Object.defineProperty(this, '_native', { value: nativeTranslation });
    const { tools, names, reports } = JSON.parse(sync(() => nativeTranslation.toJson()));
    /** The provider these tools are for. */
    this.provider = provider;
    /** The value of the API request's `tools` field. */
    this.tools = tools;
    /** Provider-facing name → `{server, tool}`. */
    this.names = names;
    /** Per tool: strict or not and why, keywords moved into descriptions, or why it was left out. */
    this.reports = reports;
  }

  /** The tool calls in an assistant turn (a message or a whole API response). */
  toolCalls(turn) {
    return JSON.parse(sync(() => this._native.toolCalls(text(turn, 'toolCalls: the turn'))));
  }

  /**
   * One call (from `toolCalls`) → `{server, tool, arguments}` ready for `tools/call`, or
   * `{error}`: text to send back to the model as an error result (unknown tool, bad JSON).
   */
  route(call) {
    return JSON.parse(sync(() => this._native.route(text(call, 'route: the call'))));
  }

  /** `[{call, result}]` → this provider's tool-result messages, in order. */
  resultMessages(outcomes) {
    return resultMessages(this.provider, outcomes);
  }
}

/**
 * Tools as system-prompt text for a model without function calling, and the way back: calls
 * read out of the reply text (malformed ones as `{error}` for the model), results as text.
 */
class PromptTranslation extends Translation {
  constructor(nativeTranslation, provider) {
    super(nativeTranslation, provider);
    /** `hermes`, `json`, `react` or `xml`. */
    this.format = provider.includes(':') ? provider.split(':')[1] : 'hermes';
    /** The text to put in (or append to) the system message. */
    this.system = nativeTranslation.system() ?? '';
    /** Stop sequences to send with the request (`react`: `\nObservation:`). */
    this.stop = nativeTranslation.stop();
    // No `tools` field: the tools are in the text.
    this.tools = [];
  }

  /** The whole reading of a reply (text, a message or a Chat Completions response). */
  reply(turn) {
    return JSON.parse(sync(() => this._native.reply(text(turn, 'reply: the reply'))));
  }

  /** The calls in a reply, each routed, or `{index, error, kind, tool}` for a malformed one. */
  calls(turn) {
    return this.reply(turn).calls;
  }

  /**
   * `[[call, result]]` (or `[{call, result}]`) → the `user` message carrying the results back as
   * text in the format. A malformed call may be paired with its `error` text (a string).
   */
  results(outcomes) {
    if (!Array.isArray(outcomes)) throw new TypeError('results: outcomes must be an array of [call, result]');
    const items = outcomes.map((o, i) => {
      const [call, result] = Array.isArray(o) ? o : [o?.call, o?.result];
      if (call === null || typeof call !== 'object') throw new TypeError(`results: outcome ${i} has no call`);
      const name = call.name ?? call.tool ?? '';
      const res = typeof result === 'string' ? { content: [{ type: 'text', text: result }], isError: true } : result;
      return { call: { id: call.id ?? null, name }, result: res };
    });
    return resultMessages(this.provider, items);
  }

  /** An OpenAI-shaped conversation rewritten into the format (`tool_calls` and `tool` messages as text). */
  history(messages) {
    if (!Array.isArray(messages)) throw new TypeError('history: messages must be an array');
    return JSON.parse(sync(() => native.promptHistory(this.format, text(messages, 'history: messages'))));
  }
}

/** Translates `tools` (a `tools/list` array, or `{server: tools}`) for `provider`. */
function translate(provider, tools, options) {
  const t = sync(() => native.translate(String(provider), text(tools, 'tools'), optionsText(options, 'translate')));
  return String(provider).startsWith('prompt') ? new PromptTranslation(t, provider) : new Translation(t, provider);
}

/** Tools for a model without function calling, in `format` (default `hermes`). */
function toPrompt(tools, options) {
  const { format = 'hermes', ...rest } = options ?? {};
  if (!PROMPT_FORMATS.includes(format)) {
    throw new TypeError(`toPrompt: unknown format \`${format}\` (one of: ${PROMPT_FORMATS.join(', ')})`);
  }
  return translate(`prompt:${format}`, tools, rest);
}

const toOpenAI = (tools, options) => translate('openai', tools, options);
const toResponses = (tools, options) => translate('responses', tools, options);
const toAnthropic = (tools, options) => translate('anthropic', tools, options);
const toLangChain = (tools, options) => translate('langchain', tools, options);

/** Gemini: `parametersJsonSchema` by default, the legacy OpenAPI-subset `parameters` with `{openapi: true}`. */
function toGemini(tools, options) {
  const { openapi, ...rest } = options ?? {};
  if (openapi !== undefined && typeof openapi !== 'boolean') throw new TypeError('toGemini: `openapi` must be a boolean');
  return translate(openapi ? 'gemini-openapi' : 'gemini', tools, rest);
}

/** The tool calls in an assistant turn of `provider`. */
function toolCalls(provider, turn) {
  return JSON.parse(sync(() => native.toolCalls(String(provider), text(turn, 'toolCalls: the turn'))));
}

/** `[{call, result}]` → `provider`'s tool-result messages. */
function resultMessages(provider, outcomes) {
  if (!Array.isArray(outcomes)) throw new TypeError('resultMessages: outcomes must be an array of {call, result}');
  return JSON.parse(sync(() => native.resultMessages(String(provider), text(outcomes, 'resultMessages: outcomes'))));
}

module.exports = {
  PROVIDERS,
  PROMPT_FORMATS,
  Translation,
  PromptTranslation,
  toPrompt,
  text,
  translate,
  toOpenAI,
  toResponses,
  toAnthropic,
  toGemini,
  toLangChain,
  toolCalls,
  resultMessages,
};
