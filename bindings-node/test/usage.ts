// Type-checked with `tsc --noEmit --strict` against the installed package's index.d.ts: the
// README's shapes must compile, and misuse must not (see the @ts-expect-error lines).
import { AuthError, Client, ErrorCode, McpError, RpcError, Server, type AccessClaims, type CallToolResult, type Context, type VerifyToken } from 'oxmcp';

const server = new Server({ name: 'weather', version: '1.0.0', instructions: 'Weather.' });
server.tool(
  'get_weather',
  { description: 'Weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
  async (args: { city: string }, ctx: Context) => {
    await ctx.reportProgress(1, 2, 'looking');
    if (ctx.signal.aborted) throw new McpError(ErrorCode.InternalError, 'aborted');
    return { city: args.city, temperature_c: 21 };
  },
);
server.resource('test://a', { mimeType: 'text/plain' }, (uri) => ({ contents: [{ uri, text: 'a' }] }));
server.prompt('p', { arguments: [{ name: 'x', required: true }] }, (args) => ({
  messages: [{ role: 'user', content: { type: 'text', text: args.x ?? '' } }],
}));
// @ts-expect-error a Server needs a version
new Server({ name: 'x' });

async function main(): Promise<void> {
  const { url } = await server.runHttp({ port: 0, stateless: false });
  const client = await Client.http(url, { headers: { 'x-test': '1' } });
  const result: CallToolResult = await client.callTool('get_weather', { city: 'Oslo' }, { timeout: 5000, signal: AbortSignal.timeout(10_000) });
  const first = result.content[0];
  if (first.type === 'text') console.log(first.text.toUpperCase());
  const stdio = await Client.stdio('node', ['server.mjs'], { env: { A: 'b' }, cwd: '.' });
  await Client.stdio('old-server', [], { era: 'handshake' });
  await Client.http('http://127.0.0.1:1/mcp', { protocolVersion: '2025-06-18' });
  // @ts-expect-error an era is handshake or stateless
  await Client.stdio('old-server', [], { era: 'modern' });
  const { tools } = await stdio.listTools();
  console.log(tools.map((t) => t.inputSchema));
  try {
    await stdio.readResource({ uri: 'test://a' });
  } catch (e) {
    if (e instanceof RpcError) console.log(e.code.toFixed(0));
  }
  // @ts-expect-error arguments must be an object
  await stdio.callTool('get_weather', 'Oslo');
  await stdio.close();
  await client.close();
  await server.close();
  const ws = await server.runWebSocket({ port: 0, allowedOrigins: ['http://a.example'], maxMessageBytes: 1 << 20 });
  const overWs = await Client.websocket(ws.url, { headers: { Authorization: 'Bearer t' }, timeout: 5000, signal: AbortSignal.timeout(10_000) });
  await overWs.close();
  await server.runHttp({ websocket: true, pingIntervalMs: 0 });
  // @ts-expect-error the message cap is a number of bytes
  await server.runWebSocket({ maxMessageBytes: '1MB' });
  // @ts-expect-error signal is an AbortSignal
  await Client.websocket(ws.url, { signal: true });
}
void main;

async function authorization(): Promise<void> {
  const verify: VerifyToken = async (token) =>
    token === 'good' ? { subject: 'ada', scopes: ['mcp'], audience: 'https://mcp.example.com/mcp', expiresAt: 2_000_000_000 } : null;
  const secured = new Server({ name: 'secured', version: '1.0.0', stateKey: 'ab'.repeat(32) });
  await secured.runHttp({
    port: 8080,
    auth: verify,
    authorizationServers: ['https://auth.example.com'],
    requiredScopes: ['mcp'],
    resource: 'https://mcp.example.com/mcp',
    store: 'redis://127.0.0.1:6379/',
  });
  const claims: AccessClaims = { scopes: 'a b', audience: ['x'] };
  console.log(claims.scopes);
  // @ts-expect-error the verifier takes the token string
  await secured.runHttp({ auth: (token: number) => null });
  // @ts-expect-error the state key belongs to the server, not to runHttp
  await secured.runHttp({ stateKey: 'ab'.repeat(32) });

  try {
    const c = await Client.http('https://mcp.example.com/mcp', {
      auth: {
        clientId: 'pre-registered',
        clientSecret: 's3cret',
        tokenEndpointAuth: 'client_secret_post',
        redirectUri: 'http://127.0.0.1:8765/callback',
        tokenStore: '/tmp/oxmcp-tokens',
        authorize: async (url: string) => new URL(url),
      },
    });
    await c.close();
  } catch (e) {
    if (e instanceof AuthError) console.log(e.message);
  }
  // @ts-expect-error only the two user-facing grants are named
  await Client.http('https://x/mcp', { auth: { grant: 'password' } });
  // @ts-expect-error authorize returns the redirected URL
  await Client.http('https://x/mcp', { auth: { authorize: async () => 42 } });
}
void authorization;
// --- translate, Host, runAgent, oxmcp/langchain (issue 9) ----------------------------------
import { Host, translate, runCli, type Approval, type ApprovalRequest, type EntryIssue, type PromptTranslation, type Tool, type Transcript, type ModelRequest } from 'oxmcp';
import { getTools } from 'oxmcp/langchain';

async function hostUsage(tools: Tool[]): Promise<void> {
  const openai = translate.toOpenAI(tools, { strict: true });
  const strictFlags: boolean[] = openai.tools.map((t) => t.function.strict);
  console.log(strictFlags, openai.reports.map((r) => r.fallback_reason ?? ''));
  const anthropic = translate.toAnthropic({ weather: tools });
  console.log(anthropic.tools.map((t) => t.input_schema));
  const legacy = translate.toGemini(tools, { openapi: true });
  const legacyProvider: 'gemini-openapi' = legacy.provider;
  console.log(legacyProvider, legacy.tools[0].functionDeclarations[0].parameters);
  const [call] = openai.toolCalls({ role: 'assistant' });
  const routed = openai.route(call);
  if ('error' in routed) console.log(routed.error.length);
  else console.log(routed.server, routed.tool, routed.arguments);
  console.log(translate.resultMessages('anthropic', [{ call: { id: 'x', name: 'w' }, result: { content: [] } }]));
  // @ts-expect-error not a provider
  translate.translate('cohere', tools);
  // @ts-expect-error strict is a boolean
  translate.toResponses(tools, { strict: 'yes' });
  // The prompt provider: tools as text, calls read out of the reply text.
  const prompt: PromptTranslation = translate.toPrompt(tools, { format: 'react' });
  const system: string = prompt.system;
  for (const c of prompt.calls('Action: w\nAction Input: {}')) {
    if ('error' in c) console.log(c.index, c.kind, c.error);
    else console.log(c.tool, c.arguments, c.server ?? '');
  }
  console.log(system, prompt.stop, prompt.results([[{ id: 'call_1', name: 'w' }, 'failed']]), prompt.history([]));
  // @ts-expect-error not a prompt format
  translate.toPrompt(tools, { format: 'pythonic' });

  await using host = await Host.fromConfig('mcp.json', { timeout: 10_000 });
  const status = await host.status();
  console.log(status.filter((s) => s.state === 'failed').map((s) => `${s.name}: ${s.error} ${s.stderr ?? ''}`));
  const listed = await host.tools();
  console.log(listed.map((t) => `${t.name} -> ${t.server}/${t.tool.name}`));
  const result = await host.callTool('weather', 'get_weather', { city: 'Beijing' }, { timeout: 5000 });
  console.log(result.isError);
  const model = async (request: ModelRequest<'openai'>) => {
    console.log(request.tools.map((t) => t.function.name), request.step);
    return { role: 'assistant', content: 'done' };
  };
  const transcript: Transcript = await host.runAgent(model, [{ role: 'user', content: 'hi' }], { provider: 'openai', maxSteps: 4 });
  console.log(transcript.final_text, transcript.stop === 'step_limit', transcript.calls.map((c) => c.is_error));
  // @ts-expect-error maxSteps is a number
  await host.runAgent(model, [], { maxSteps: 'four' });
  const approved: Transcript = await host.runAgent(model, [], {
    approve: async (call: ApprovalRequest): Promise<Approval> =>
      call.annotations?.destructiveHint ? `no ${call.tool} on ${call.server}` : call.arguments,
  });
  await host.runAgent(model, [], { approve: () => true });
  // @ts-expect-error an approval is a boolean, a reason or the arguments
  await host.runAgent(model, [], { approve: () => 42 });
  const skipped: EntryIssue[] = status[0].skipped ?? [];
  console.log(approved.steps, skipped.map((s) => `${s.list} ${s.name ?? ''} ${s.field}`));
  const textModel = async (request: ModelRequest<'prompt'>) => `${request.tools.length} chars of tools`;
  const textRun: Transcript = await host.runAgent(textModel, [], { provider: 'prompt' });
  console.log(textRun.stop === 'format_errors', textRun.reason ?? '');
  const hostPrompt: PromptTranslation<'prompt:xml'> = await host.translate('prompt:xml');
  console.log(hostPrompt.system);
  const lcTools = await getTools(host, { namespace: 'collision' });
  console.log(lcTools.map((t) => t.name));
  const code: number = await runCli(['tools', '--config', 'mcp.json']);
  console.log(code);
}
void hostUsage;

// The translated tools are what the providers' own SDK types accept, as declared (the
// translate suite checks the runtime values carry the `type: "object"` these types demand).
import type { ChatCompletionFunctionTool, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool as ResponsesFunctionTool, Tool as ResponsesTool } from 'openai/resources/responses/responses';
import type { Tool as AnthropicSdkTool, ToolUnion as AnthropicToolUnion } from '@anthropic-ai/sdk/resources/messages/messages';

function providerTypes(tools: Tool[]): void {
  const chat: ChatCompletionFunctionTool[] = translate.toOpenAI(tools).tools;
  const chatRequest: ChatCompletionTool[] = translate.toOpenAI(tools, { strict: false }).tools;
  const responses: ResponsesFunctionTool[] = translate.toResponses(tools).tools;
  const responsesRequest: ResponsesTool[] = translate.toResponses(tools).tools;
  const anthropic: AnthropicSdkTool[] = translate.toAnthropic(tools).tools;
  const anthropicRequest: AnthropicToolUnion[] = translate.toAnthropic(tools).tools;
  console.log(chat, chatRequest, responses, responsesRequest, anthropic, anthropicRequest);
  // @ts-expect-error Anthropic tools are not Chat Completions tools
  const wrong: ChatCompletionFunctionTool[] = translate.toAnthropic(tools).tools;
  console.log(wrong);
}
void providerTypes;

// --- tasks (issue 38) -------------------------------------------------------------------------
import { CancelledError, TaskHandle, TaskRequiredError, type Task, type TaskStatus } from 'oxmcp';

async function taskUsage(client: Client, host: Host): Promise<void> {
  const jobs = new Server({ name: 'jobs', version: '1.0.0' });
  jobs.tool('render', { description: 'Renders', task: 'optional' }, async (_args, ctx) => {
    await ctx.reportStatus('rendering');
    const id: string | null = ctx.taskId;
    if (ctx.signal.aborted) throw new Error(`cancelled ${id ?? ''}`);
    return 'done';
  });
  jobs.tool('ask_first', { task: 'required', taskStart: 'deferred' }, async (_args, ctx) => {
    const id: string | null = await ctx.startTask();
    return id ?? 'a plain call';
  });
  // @ts-expect-error task support is one of three words
  jobs.tool('x', { task: true }, () => 'x');
  // @ts-expect-error tasks start immediately or deferred
  jobs.tool('y', { task: 'optional', taskStart: 'later' }, () => 'y');

  const handle: TaskHandle = await client.callToolAsTask('render', { pages: 3 }, { ttlMs: 60_000, signal: AbortSignal.timeout(5000) });
  const id: string | null = handle.id;
  const now: Task = await handle.status();
  const status: TaskStatus = now.status;
  console.log(id, status, now.statusMessage ?? '', now.pollInterval ?? 0);
  for await (const update of handle) console.log(update.status, update.lastUpdatedAt ?? '');
  try {
    const done: CallToolResult = await handle.result();
    console.log(done.isError);
  } catch (e) {
    if (e instanceof CancelledError) console.log('cancelled');
    else if (e instanceof RpcError) console.log(e.code.toFixed(0));
  }
  await handle.cancel();
  await client.task('abc').status();
  try {
    await client.callTool('ask_first', {});
  } catch (e) {
    if (e instanceof TaskRequiredError) console.log(e.data.tool);
  }
  const viaHost: CallToolResult = await host.callTool('jobs', 'render', {}, { task: true, ttlMs: 1000 });
  console.log(viaHost.content);
  // @ts-expect-error ttlMs is a number of ms
  await client.callToolAsTask('render', {}, { ttlMs: '1m' });
  // @ts-expect-error a task handle has no synchronous result
  console.log(handle.value);
  // @ts-expect-error progress is not followed for a task call: iterate the handle
  await host.callTool('jobs', 'render', {}, { task: true, onProgress: () => {} });
}
void taskUsage;
