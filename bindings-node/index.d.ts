// Types of the npm package `oxmcp` (hand-written; checked by `tsc --noEmit --strict` on a usage
// file in the tests). Results are plain objects with the wire's keys.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
export type JsonSchema = { [key: string]: unknown };
export type RequestId = string | number;
export type LoggingLevel =
  | 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

export interface Implementation { name: string; version: string; title?: string; [key: string]: unknown }

export type ContentBlock =
  | { type: 'text'; text: string; annotations?: unknown; _meta?: JsonObject }
  | { type: 'image'; data: string; mimeType: string; annotations?: unknown; _meta?: JsonObject }
  | { type: 'audio'; data: string; mimeType: string; annotations?: unknown; _meta?: JsonObject }
  | { type: 'resource'; resource: ResourceContents; annotations?: unknown; _meta?: JsonObject }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string; [key: string]: unknown };

export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: JsonObject;
  isError?: boolean;
  _meta?: JsonObject;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  _meta?: JsonObject;
  [key: string]: unknown;
}

export interface ResourceContents { uri: string; mimeType?: string; text?: string; blob?: string; _meta?: JsonObject }
export interface Resource { uri: string; name: string; title?: string; description?: string; mimeType?: string; [key: string]: unknown }
export interface ResourceTemplate { uriTemplate: string; name: string; title?: string; description?: string; mimeType?: string; [key: string]: unknown }
export interface ReadResourceResult { contents: ResourceContents[]; _meta?: JsonObject }

export interface PromptArgument { name: string; description?: string; required?: boolean }
export interface Prompt { name: string; title?: string; description?: string; arguments?: PromptArgument[]; [key: string]: unknown }
export interface PromptMessage { role: 'user' | 'assistant'; content: ContentBlock }
export interface GetPromptResult { description?: string; messages: PromptMessage[]; _meta?: JsonObject }

export interface Completion { values: string[]; total?: number; hasMore?: boolean }
export interface CompleteResult { completion: Completion }

export interface SamplingMessage { role: 'user' | 'assistant'; content: ContentBlock | ContentBlock[] }
export interface CreateMessageParams {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  [key: string]: unknown;
}
export interface CreateMessageResult { role: 'user' | 'assistant'; content: ContentBlock | ContentBlock[]; model: string; stopReason?: string; [key: string]: unknown }
export interface ElicitParams {
  message: string;
  mode?: 'form' | 'url';
  requestedSchema?: JsonSchema;
  url?: string;
  [key: string]: unknown;
}
export interface ElicitResult { action: 'accept' | 'decline' | 'cancel'; content?: JsonObject }
export interface Root { uri: string; name?: string }
export interface ListRootsResult { roots: Root[] }
/** Whether a tool's calls may, must or must not run as tasks (`execution.taskSupport`). */
export type TaskSupport = 'forbidden' | 'optional' | 'required';
/** Where a task is in its life; `completed`, `failed` and `cancelled` are final. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
/** A task as the server describes it (durations in ms, whichever era the server speaks). */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt?: string;
  /** How long the server keeps it from creation, in ms (absent: no limit). */
  ttl?: number;
  /** Suggested time between polls, in ms. */
  pollInterval?: number;
  /** 2026-07-28: the questions waiting for answers (the client's handlers answer them). */
  inputRequests?: Record<string, JsonObject>;
  /** 2026-07-28, a completed task: the tool's result. */
  result?: CallToolResult;
  /** 2026-07-28, a failed task: its JSON-RPC error. */
  error?: { code: number; message: string; data?: unknown };
  _meta?: JsonObject;
  [key: string]: unknown;
}

export interface ProgressParams { progressToken: RequestId; progress: number; total?: number; message?: string }
export interface LogMessageParams { level: LoggingLevel; logger?: string; data: unknown }

// ---- errors ----------------------------------------------------------------------------

/** Every error this package raises on purpose. `code` is the JSON-RPC code for protocol errors. */
export class McpError extends Error {
  constructor(code: number | string, message: string, data?: unknown);
  code: number | string;
  data: unknown;
  /** The core's error kind (`rpc`, `timeout`, …) when the error came from the engine. */
  kind?: string;
}
export class RpcError extends McpError { code: number }
export class TimeoutError extends McpError {}
export class CancelledError extends McpError {}
export class ConnectionClosedError extends McpError {}
export class SpawnError extends McpError {}
export class IoError extends McpError {}
export class ProtocolError extends McpError {}
export class UnsupportedProtocolVersionError extends McpError {}
export class InvalidSchemaError extends McpError {}
export class InvalidArgumentError extends McpError {}
export class ConfigError extends McpError {}
export class AuthError extends McpError {}
/** A tool that runs only as a task was called plainly: use `callToolAsTask`. */
export class TaskRequiredError extends McpError { code: 'task_required'; data: { tool: string } }
/** A request to the client was not sent: the client had not finished its handshake in time. */
export class HandshakeIncompleteError extends McpError { code: 'handshake_incomplete' }
export const ErrorCode: {
  readonly ParseError: -32700;
  readonly InvalidRequest: -32600;
  readonly MethodNotFound: -32601;
  readonly InvalidParams: -32602;
  readonly InternalError: -32603;
  readonly ResourceNotFound: -32002;
  readonly UrlElicitationRequired: -32042;
};

// ---- server ----------------------------------------------------------------------------

/** What a handler gets as its last argument. */
export interface Context {
  readonly requestId: RequestId;
  readonly meta: JsonObject | undefined;
  readonly protocolVersion: string | undefined;
  /** Aborted when the client cancels the request, or the task it runs as. */
  readonly signal: AbortSignal;
  /** The id of the task this call runs as, once it is one. */
  readonly taskId: string | null;
  /** Makes a deferred task tool's call a task now: its id, or `null` when the call is not a task. */
  startTask(): Promise<string | null>;
  /** Sets the task's `statusMessage` (nothing for a plain call). */
  reportStatus(message: string): Promise<void>;
  reportProgress(progress: number, total?: number, message?: string): Promise<void>;
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void>;
  /** Whether the client declared a capability (`sampling`, `elicitation`, `roots`, …). */
  clientSupports(capability: string): boolean;
  /** Ends this request's HTTP response stream early (the client resumes it); no-op elsewhere. */
  closeStream(): Promise<void>;
  // In 2026-07-28 a question ends the round and the handler runs again on the client's retry:
  // work done before asking must be safe to repeat. `key` names the question in the round.
  sample(params: CreateMessageParams, options?: { key?: string }): Promise<CreateMessageResult>;
  elicit(params: ElicitParams, options?: { key?: string }): Promise<ElicitResult>;
  listRoots(options?: { key?: string }): Promise<ListRootsResult>;
}

/** A zod 4 schema (structural: any object carrying zod's `_zod` marker). */
export interface ZodLike { _zod: unknown }
export type SchemaInput = JsonSchema | ZodLike | { [key: string]: ZodLike };

/** string/number/boolean → text; object → structuredContent plus its JSON; content blocks or a whole result as given. */
export type ToolReturn = string | number | boolean | null | undefined | JsonObject | ContentBlock | ContentBlock[] | CallToolResult;

export interface ToolConfig {
  title?: string;
  description?: string;
  inputSchema?: SchemaInput;
  outputSchema?: SchemaInput;
  annotations?: ToolAnnotations;
  _meta?: JsonObject;
  /** Whether calls may (`optional`) or must (`required`) run as tasks (default `forbidden`). */
  task?: TaskSupport;
  /** `deferred`: a call becomes a task when the handler calls `ctx.startTask()` (default `immediately`). */
  taskStart?: 'immediately' | 'deferred';
}

export type CompleteFn = (value: string, info: { arguments: Record<string, string>; ctx: Context }) =>
  string[] | Completion | Promise<string[] | Completion>;

export interface ServerInfo {
  name: string;
  version: string;
  instructions?: string;
  pageSize?: number;
  /** 64 hex digits sealing multi round-trip request state; replicas sharing a store share it. */
  stateKey?: string;
}

/** What a token verifier learned about a bearer token (the core then checks expiry, audience, scopes). */
export interface AccessClaims {
  subject?: string;
  clientId?: string;
  /** Granted scopes: a list, or one space-separated string. */
  scopes?: string[] | string;
  /** The resource(s) the token is for; must include the server's `resource`. */
  audience?: string[] | string;
  /** Seconds since the Unix epoch. */
  expiresAt?: number;
}

/** `(token) => claims`, or `null` for an unknown token; a throw also refuses it (401). */
export type VerifyToken = (token: string) => AccessClaims | null | Promise<AccessClaims | null>;

/** WebSocket settings, the same on both sides. */
export interface WebSocketSettings {
  /** Largest inbound message (default 16 MiB); a larger one closes the socket (1009). */
  maxMessageBytes?: number;
  /** How often to ping, in ms (default 20 000; 0: never). */
  pingIntervalMs?: number;
  /** How long past a ping the peer may stay silent, in ms (default 20 000). */
  pingTimeoutMs?: number;
}

export interface HttpOptions extends WebSocketSettings {
  /** Also accept WebSocket upgrades on `path` (with the WebSocket settings). */
  websocket?: boolean;
  host?: string;
  port?: number;
  path?: string;
  stateless?: boolean;
  jsonResponse?: boolean;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** The `retry:` hint of SSE streams, in ms. */
  sseRetryMs?: number;
  /** Share sessions with the other replicas using this store: `redis://HOST:PORT/`. */
  store?: string;
  /** Protect the endpoint with OAuth bearer tokens (401/403 with `WWW-Authenticate`). */
  auth?: VerifyToken;
  /** The MCP URL clients use (default, with a fixed `port`: `http://HOST:PORT/PATH`). */
  resource?: string;
  /** Issuers of the authorization servers minting tokens for it (required with `auth`). */
  authorizationServers?: string[];
  /** Scopes every token must carry (403 `insufficient_scope` otherwise). */
  requiredScopes?: string[];
  /** Published in the protected-resource metadata (default: `requiredScopes`). */
  scopesSupported?: string[];
  resourceName?: string;
}

export interface WebSocketOptions extends WebSocketSettings {
  host?: string;
  port?: number;
  /** Default `/mcp`. */
  path?: string;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** Bearer tokens checked on the upgrade request (401/403 with `WWW-Authenticate`). */
  auth?: VerifyToken;
  /** The MCP URL clients use (default, with a fixed `port`: `ws://HOST:PORT/PATH`). */
  resource?: string;
  authorizationServers?: string[];
  requiredScopes?: string[];
  scopesSupported?: string[];
  resourceName?: string;
}

export class Server {
  constructor(info: ServerInfo);
  tool(name: string, handler: (args: any, ctx: Context) => ToolReturn | Promise<ToolReturn>): this;
  tool(name: string, config: ToolConfig, handler: (args: any, ctx: Context) => ToolReturn | Promise<ToolReturn>): this;
  removeTool(name: string): boolean;
  resource(uri: string, config: Partial<Omit<Resource, 'uri'>>, handler: (uri: string, ctx: Context) => ReadResourceResult | Promise<ReadResourceResult>): this;
  removeResource(uri: string): boolean;
  resourceTemplate(
    uriTemplate: string,
    config: Partial<Omit<ResourceTemplate, 'uriTemplate'>> & { complete?: Record<string, CompleteFn> },
    handler: (uri: string, variables: Record<string, string | string[]>, ctx: Context) => ReadResourceResult | Promise<ReadResourceResult>,
  ): this;
  prompt(
    name: string,
    config: Partial<Omit<Prompt, 'name'>> & { complete?: Record<string, CompleteFn> },
    handler: (args: Record<string, string>, ctx: Context) => GetPromptResult | Promise<GetPromptResult>,
  ): this;
  removePrompt(name: string): boolean;
  notifyResourceUpdated(uri: string): void;
  readonly sessionCount: number;
  runStdio(): Promise<void>;
  runHttp(options?: HttpOptions): Promise<{ url: string }>;
  /** Resolves with the `ws://` URL once listening. */
  runWebSocket(options?: WebSocketOptions): Promise<{ url: string }>;
  close(): Promise<void>;
}

// ---- client ----------------------------------------------------------------------------

export interface ClientHandlers {
  sampling?: (params: CreateMessageParams, extra: { signal: AbortSignal }) => CreateMessageResult | Promise<CreateMessageResult>;
  elicitation?: (params: ElicitParams, extra: { signal: AbortSignal }) => ElicitResult | Promise<ElicitResult>;
  roots?: (params: JsonObject, extra: { signal: AbortSignal }) => ListRootsResult | Promise<ListRootsResult>;
  onNotification?: (method: string, params: any) => void;
  onLogMessage?: (params: LogMessageParams) => void;
  onListChanged?: (kind: 'tools' | 'resources' | 'prompts') => void;
  onResourceUpdated?: (params: { uri: string }) => void;
}

export interface ConnectOptions extends ClientHandlers {
  name?: string;
  version?: string;
  /** Speak this revision (`'2025-11-25'`, `'2026-07-28'`, …) instead of probing `server/discover`. */
  protocolVersion?: string;
  /** Or pin just the era, speaking its newest revision; also skips the probe. */
  era?: 'handshake' | 'stateless';
  logLevel?: LoggingLevel;
}

export interface StdioOptions extends ConnectOptions {
  /** Added to the safe default environment (PATH, HOME, …). */
  env?: Record<string, string>;
  /** Pass the whole environment of this process. */
  inheritEnv?: boolean;
  cwd?: string;
}

/** OAuth 2.1 for `Client.http`: on a 401 the core discovers, registers, authorizes and retries. */
export interface OAuthOptions {
  /** Shown on the consent screen (default: the client's `name`). */
  clientName?: string;
  /** Where the authorization server sends the user back (default `http://localhost/callback`). */
  redirectUri?: string;
  /** Pre-registered credentials (otherwise a client ID metadata document or dynamic registration). */
  clientId?: string;
  clientSecret?: string;
  tokenEndpointAuth?: 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';
  /** An https URL serving this client's metadata document, used as its id where supported. */
  clientMetadataUrl?: string;
  applicationType?: 'native' | 'web';
  grant?: 'authorization_code' | 'client_credentials';
  /** An ES256 private key (PKCS#8 PEM) for `private_key_jwt`. */
  privateKeyPem?: string;
  keyId?: string;
  /** Enterprise-managed authorization (SEP-990): the user's IdP ID token is exchanged. */
  enterprise?: { idpTokenEndpoint: string; idpClientId: string; idToken: string };
  /** Ask for `offline_access` (a refresh token) where offered (default true). */
  offlineAccess?: boolean;
  /** Let discovery and token requests reach loopback (development) or private addresses. */
  allowLoopback?: boolean;
  allowPrivate?: boolean;
  allowOrigins?: string[];
  /** A directory keeping registrations and tokens in 0600 files (default: memory). */
  tokenStore?: string;
  /**
   * The user step: open `url` (already checked: http(s), no CR/LF) and resolve with the URL
   * the authorization server redirected to. Absent: the redirect is followed headlessly.
   */
  authorize?: (url: string) => string | URL | Promise<string | URL>;
}

export interface HttpClientOptions extends ConnectOptions {
  headers?: Record<string, string>;
  auth?: OAuthOptions;
}

export interface WebSocketClientOptions extends ConnectOptions, WebSocketSettings {
  /** Extra headers on the upgrade request (`Authorization`, say). */
  headers?: Record<string, string>;
  /** How long connecting may take, in ms (default 10 000). */
  timeout?: number;
  /** Aborting rejects with an `AbortError` and abandons the connect. */
  signal?: AbortSignal;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Milliseconds without an answer or progress (default 60 000). */
  timeout?: number;
  onProgress?: (progress: ProgressParams) => void;
}

export interface ListParams { cursor?: string }

export interface TaskCallOptions {
  /** How long the server should keep the task, in ms (it may clamp it). */
  ttlMs?: number;
  /** Aborting cancels the task (`tasks/cancel`), or abandons its creation with an `AbortError`. */
  signal?: AbortSignal;
}

/** A tool call running as a task. `for await` yields each status change; the last is final. */
export class TaskHandle implements AsyncIterable<Task> {
  private constructor();
  /** `null` when the server answered at once and there is no task. */
  readonly id: string | null;
  status(): Promise<Task>;
  /** The tool's result; rejects with the task's `RpcError`, or `CancelledError` when it was cancelled. */
  result(): Promise<CallToolResult>;
  /** Harmless on a finished task. */
  cancel(): Promise<void>;
  [Symbol.asyncIterator](): AsyncIterator<Task>;
}

export class Client {
  private constructor();
  static stdio(command: string, args?: string[], options?: StdioOptions): Promise<Client>;
  static http(url: string | URL, options?: HttpClientOptions): Promise<Client>;
  static websocket(url: string | URL, options?: WebSocketClientOptions): Promise<Client>;
  /** Settles when the connection ends (with the reason, if it failed). */
  readonly closed: Promise<string | undefined>;
  readonly protocolVersion: string;
  getServerVersion(): Implementation;
  getServerCapabilities(): JsonObject;
  getInstructions(): string | undefined;
  request(method: string, params?: JsonObject, options?: RequestOptions): Promise<any>;
  ping(): Promise<{}>;
  listTools(params?: ListParams): Promise<{ tools: Tool[]; nextCursor?: string }>;
  callTool(name: string, args?: JsonObject, options?: RequestOptions): Promise<CallToolResult>;
  callTool(params: { name: string; arguments?: JsonObject }, resultSchema?: unknown, options?: RequestOptions): Promise<CallToolResult>;
  /** Calls a tool as a task; resolves with its handle once the server created it. */
  callToolAsTask(name: string, args?: JsonObject, options?: TaskCallOptions): Promise<TaskHandle>;
  /** A handle on a task created earlier, by this connection or another. */
  task(id: string): TaskHandle;
  listResources(params?: ListParams, options?: RequestOptions): Promise<{ resources: Resource[]; nextCursor?: string }>;
  listResourceTemplates(params?: ListParams, options?: RequestOptions): Promise<{ resourceTemplates: ResourceTemplate[]; nextCursor?: string }>;
  readResource(params: string | { uri: string }, options?: RequestOptions): Promise<ReadResourceResult>;
  subscribeResource(params: string | { uri: string }): Promise<{}>;
  unsubscribeResource(params: string | { uri: string }): Promise<{}>;
  listPrompts(params?: ListParams, options?: RequestOptions): Promise<{ prompts: Prompt[]; nextCursor?: string }>;
  getPrompt(name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }, options?: RequestOptions): Promise<GetPromptResult>;
  complete(
    params: {
      ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
      argument: { name: string; value: string };
      context?: { arguments?: Record<string, string> };
    },
    options?: RequestOptions,
  ): Promise<CompleteResult>;
  setLoggingLevel(level: LoggingLevel): Promise<{}>;
  sendRootsListChanged(): Promise<void>;
  close(): Promise<void>;
}

// --- translate: MCP tools into LLM function-calling formats, and back ---------------------

/** How a model without function calling writes its calls: `hermes` (`<tool_call>{…}</tool_call>`,
 * the default), `json` (Llama 3.1 `{"name", "parameters"}`), `react` (`Action:` / `Action Input:`),
 * `xml` (`<tool_use>`). */
export type PromptFormat = 'hermes' | 'json' | 'react' | 'xml';

/** The prompt provider (a model without function calling); `prompt` alone is `prompt:hermes`. */
export type PromptProvider = 'prompt' | `prompt:${PromptFormat}`;

/** `openai` (Chat Completions), `responses`, `anthropic`, `gemini` (`parametersJsonSchema`),
 * `gemini-openapi` (the legacy OpenAPI-subset `parameters`), `langchain`, and `prompt` (tools as
 * system-prompt text for a model without function calling). */
export type Provider = 'openai' | 'responses' | 'anthropic' | 'gemini' | 'gemini-openapi' | 'langchain' | PromptProvider;

export interface TranslateOptions {
  /** OpenAI strict mode (Chat Completions and Responses; default true). */
  strict?: boolean;
  /** Which names get the `server__` prefix (default `always`; a bare tool list is never prefixed). */
  namespace?: 'always' | 'collision' | 'never';
}

export interface GeminiOptions extends TranslateOptions {
  /** The legacy OpenAPI-subset `parameters` instead of `parametersJsonSchema`. */
  openapi?: boolean;
}

/** A keyword moved out of a schema into its description. */
export interface Note { path: string; keyword: string; value: JsonValue }

/** What happened to one tool. */
export interface ToolReport {
  name: string;
  server: string;
  tool: string;
  /** Whether strict mode applies (OpenAI formats only). */
  strict?: boolean;
  /** Why strict mode was asked for but not used. */
  fallback_reason?: string;
  notes?: Note[];
  /** Why the tool was left out (a schema refused as hostile or invalid). */
  error?: string;
}

export interface ToolRef { server: string; tool: string }

export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema & { type: 'object' }; strict: boolean };
}
export interface ResponsesTool { type: 'function'; name: string; description: string; parameters: JsonSchema & { type: 'object' }; strict: boolean }
export interface AnthropicTool { name: string; description: string; input_schema: JsonSchema & { type: 'object' } }
export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parametersJsonSchema?: JsonSchema;
  responseJsonSchema?: JsonSchema;
  parameters?: JsonSchema;
}
export interface GeminiTool { functionDeclarations: GeminiFunctionDeclaration[] }
export interface LangChainToolDefinition {
  name: string;
  description: string;
  args_schema: JsonSchema;
  response_format: 'content_and_artifact';
  metadata: { mcp_name: string; annotations?: ToolAnnotations; output_schema?: JsonSchema };
}

export interface ProviderTools {
  openai: OpenAIChatTool;
  responses: ResponsesTool;
  anthropic: AnthropicTool;
  gemini: GeminiTool;
  'gemini-openapi': GeminiTool;
  langchain: LangChainToolDefinition;
  /** The prompt provider has no `tools` field: its tools are in the system text. */
  prompt: never;
  'prompt:hermes': never;
  'prompt:json': never;
  'prompt:react': never;
  'prompt:xml': never;
}

/** A tool call read from an assistant turn: its arguments, or why they were unusable. */
export type ToolCall =
  | { id: string | null; name: string; arguments: JsonObject }
  | { id: string | null; name: string; error: string };

/** A call to route or report: `arguments` may be the raw JSON string OpenAI sends. */
export interface ToolCallInput { id?: string | null; name: string; arguments?: JsonObject | string; error?: string }

/** Where a call goes (strict-mode nulls stripped), or the text to return to the model. */
export type RoutedCall = { server: string; tool: string; arguments: JsonObject } | { error: string };

export interface ToolOutcome { call: ToolCallInput; result: CallToolResult }

/** MCP tools: a `tools/list` array (names kept, only sanitised) or `{server: tools}` (namespaced). */
export type ToolsInput = Tool[] | Record<string, Tool[]>;

export class Translation<P extends Provider = Provider> {
  /** Made by `translate.*` and `host.translate` only (protected so PromptTranslation extends it). */
  protected constructor();
  readonly provider: P;
  /** The API request's `tools` value. */
  readonly tools: ProviderTools[P][];
  /** Provider-facing name → server and tool. */
  readonly names: Record<string, ToolRef>;
  readonly reports: ToolReport[];
  toolCalls(turn: unknown): ToolCall[];
  route(call: ToolCallInput): RoutedCall;
  resultMessages(outcomes: ToolOutcome[]): JsonObject[];
}

/** A call read out of a reply, routed (`server` only when names are namespaced). */
export interface PromptCall { id: string; name: string; server?: string; tool: string; arguments: JsonObject }

/** A call the model got wrong: `error` is the text to send back as its result. */
export interface PromptError {
  index: number;
  error: string;
  kind: 'invalid_json' | 'malformed' | 'unknown_tool' | 'invalid_arguments';
  tool: string | null;
}

/** A whole reply: text outside calls, `<think>` text, ReAct's final answer, every call attempted. */
export interface PromptReply { content: string; reasoning: string; answer: string | null; calls: (PromptCall | PromptError)[] }

export interface PromptOptions { format?: PromptFormat; namespace?: TranslateOptions['namespace'] }

export class PromptTranslation<P extends PromptProvider = PromptProvider> extends Translation<P> {
  readonly format: PromptFormat;
  /** The text to put in (or append to) the system message. */
  readonly system: string;
  /** Stop sequences to send with the request (`react`: `\nObservation:`). */
  readonly stop: string[];
  reply(turn: unknown): PromptReply;
  calls(turn: unknown): (PromptCall | PromptError)[];
  results(outcomes: ([PromptCall | PromptError | ToolCallInput, CallToolResult | string] | { call: PromptCall | PromptError | ToolCallInput; result: CallToolResult | string })[]): JsonObject[];
  history(messages: JsonObject[]): JsonObject[];
}

export declare const translate: {
  toPrompt(tools: ToolsInput, options?: PromptOptions): PromptTranslation;
  toOpenAI(tools: ToolsInput, options?: TranslateOptions): Translation<'openai'>;
  toResponses(tools: ToolsInput, options?: TranslateOptions): Translation<'responses'>;
  toAnthropic(tools: ToolsInput, options?: TranslateOptions): Translation<'anthropic'>;
  toGemini(tools: ToolsInput, options?: GeminiOptions & { openapi?: false }): Translation<'gemini'>;
  toGemini(tools: ToolsInput, options: GeminiOptions & { openapi: true }): Translation<'gemini-openapi'>;
  toLangChain(tools: ToolsInput, options?: TranslateOptions): Translation<'langchain'>;
  translate<P extends Provider>(provider: P, tools: ToolsInput, options?: TranslateOptions): Translation<P>;
  toolCalls(provider: Provider, turn: unknown): ToolCall[];
  resultMessages(provider: Provider, outcomes: ToolOutcome[]): JsonObject[];
  readonly PROVIDERS: readonly Provider[];
  readonly PROMPT_FORMATS: readonly PromptFormat[];
};

// --- Host: many servers from one mcpServers config, and the agent loop --------------------

export interface HostOptions {
  /** Milliseconds one server may take to start and handshake (default 30 000; a config entry's `timeout` wins). */
  timeout?: number;
  /** Start a crashed stdio server again on the next call (default true). */
  restart?: boolean;
  clientName?: string;
  clientVersion?: string;
  /** Bytes of a failed server's stderr kept in its status (default 4096). */
  stderrTail?: number;
}

export interface ServerStatus {
  name: string;
  state: 'connected' | 'failed' | 'disabled';
  protocol_version?: string;
  /** `serverInfo` name and version. */
  server_info?: string;
  error?: string;
  error_kind?: string;
  /** The tail of its stderr, when it failed. */
  stderr?: string;
  restarts: number;
  /** List entries left out because they do not parse (the rest of each list works). */
  skipped?: EntryIssue[];
  /** List entries kept after repairing a slip (a tool schema spelled `input_schema`). */
  repaired?: EntryIssue[];
}

/** A list entry that did not parse as it came. */
export interface EntryIssue {
  list: 'tools' | 'resources' | 'resourceTemplates' | 'prompts';
  /** Its name (or URI), when it has a readable one. */
  name?: string;
  /** The field at fault; `(entry)` when it is the entry as a whole. */
  field: string;
  reason: string;
}

/** A server's tool under its namespaced name `server__tool`. */
export interface HostTool { name: string; server: string; tool: Tool }

/** What the model is asked each step. */
export interface ModelRequest<P extends Provider = Provider> {
  provider: P;
  messages: JsonObject[];
  /** The API request's `tools` value (prompt provider: the system text, already in `messages`). */
  tools: P extends PromptProvider ? string : ProviderTools[P][];
  /** 1-based. */
  step: number;
}

/** The model: returns the assistant turn (a message or a whole API response) in the provider's format. */
export type Model<P extends Provider = Provider> = (
  request: ModelRequest<P>,
  context: { signal?: AbortSignal },
) => unknown;

/** One tool call the model made, waiting for `approve`. */
export interface ApprovalRequest {
  server: string;
  tool: string;
  arguments: JsonObject;
  /** The tool's annotations as the server listed them (`readOnlyHint`, `destructiveHint`, …). */
  annotations: ToolAnnotations | null;
}

/** `true` runs the call; `false` or a reason refuses it; an object runs it with those arguments. */
export type Approval = boolean | string | JsonObject;

export interface AgentOptions<P extends Provider = Provider> extends TranslateOptions {
  /** Default `openai`. */
  provider?: P;
  /** Most model turns (default 16). */
  maxSteps?: number;
  signal?: AbortSignal;
  /**
   * Asked before each tool call, unless the tool is marked `readOnlyHint: true` or the config
   * lists it in `alwaysAllow` / `autoApprove`. A refused call never reaches the server; the
   * model gets an error result saying the user declined it.
   */
  approve?: (call: ApprovalRequest, extra: { signal?: AbortSignal }) => Approval | Promise<Approval>;
}

export interface CallRecord {
  step: number;
  name: string;
  server: string | null;
  tool: string | null;
  /** The arguments sent (after nulls were stripped), or the problem with them. */
  arguments: JsonValue;
  is_error: boolean;
  text: string;
}

export interface Transcript {
  messages: JsonObject[];
  final_text: string;
  steps: number;
  stop: 'final' | 'step_limit' | 'format_errors';
  calls: CallRecord[];
  /** Why the run stopped when it did not end with an answer (the step limit; with the prompt provider, 3 replies in a row with a malformed call). */
  reason?: string;
}

export class Host implements AsyncDisposable {
  private constructor();
  /** A config file path (Claude Desktop, Cursor, Claude Code or VS Code shape) or the config object. */
  static fromConfig(config: string | URL | JsonObject, options?: HostOptions): Promise<Host>;
  /** The enabled servers' names, in config order. */
  readonly servers: string[];
  status(): Promise<ServerStatus[]>;
  tools(): Promise<HostTool[]>;
  resources(): Promise<Record<string, Resource[]>>;
  prompts(): Promise<Record<string, Prompt[]>>;
  translate<P extends Provider>(provider: P, options?: TranslateOptions): Promise<P extends PromptProvider ? PromptTranslation<P> : Translation<P>>;
  callTool(server: string, tool: string, args?: JsonObject, options?: RequestOptions & { task?: false }): Promise<CallToolResult>;
  /** Runs the call as a task (where the server offers tasks) and resolves with its result. */
  callTool(server: string, tool: string, args: JsonObject | undefined, options: TaskCallOptions & { task: true }): Promise<CallToolResult>;
  readResource(server: string, uri: string): Promise<ReadResourceResult>;
  getPrompt(server: string, name: string, args?: Record<string, string>): Promise<GetPromptResult>;
  runAgent<P extends Provider = 'openai'>(model: Model<P>, messages: JsonObject[], options?: AgentOptions<P>): Promise<Transcript>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Runs the `oxmcp` command line (without the program name); resolves with the exit code. */
export declare function runCli(argv: string[]): Promise<number>;
