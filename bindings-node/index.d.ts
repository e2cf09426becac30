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
  /** Aborted when the client cancels the request. */
  readonly signal: AbortSignal;
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

export interface HttpOptions {
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
  /** Speak this revision (`'2025-11-25'`, `'2026-07-28'`, …) instead of probing. */
  protocolVersion?: string;
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

export interface RequestOptions {
  signal?: AbortSignal;
  /** Milliseconds without an answer or progress (default 60 000). */
  timeout?: number;
  onProgress?: (progress: ProgressParams) => void;
}

export interface ListParams { cursor?: string }

export class Client {
  private constructor();
  static stdio(command: string, args?: string[], options?: StdioOptions): Promise<Client>;
  static http(url: string | URL, options?: HttpClientOptions): Promise<Client>;
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
