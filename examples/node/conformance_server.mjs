// The conformance fixture on the Node binding: exactly the tools, resources and prompts of
// examples/rust/conformance/fixture.rs (names, arguments, outputs the official suite checks),
// 2026-07-28 multi round-trip tools and the tasks tools (conformance/tasks.rs) included.
//
//   node examples/node/conformance_server.mjs                    stdio
//   node examples/node/conformance_server.mjs --http --port N    Streamable HTTP (--stateless too)
//   ... --store redis://HOST:PORT/ --state-key HEX               one replica of several sharing
//                                                                 sessions through Redis
//
//   node examples/node/conformance_server.mjs --ws --port N      WebSocket (with --http: both)
// Over HTTP it prints `listening on http://127.0.0.1:PORT/mcp` on stderr once it listens.
import { ErrorCode, McpError, Server } from 'oxmcp';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const WAV = 'UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==';
const NO_ARGS = { type: 'object', properties: {} };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const textResource = (uri, mimeType, text) => ({ type: 'resource', resource: { uri, mimeType, text } });
const form = (message, field, type) => ({
  message,
  requestedSchema: { type: 'object', properties: { [field]: { type } }, required: [field] },
});
const question = (text, maxTokens) => ({ messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens });
const field = (result, name) => {
  const v = result.content?.[name];
  return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
};
const sampledText = (r) => (r.content && typeof r.content.text === 'string' ? r.content.text : '');
const completed = (r) => `Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;

const args = process.argv.slice(2);
/** The value after `flag`, if the flag is given. */
function flag(name) {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  if (i + 1 >= args.length) {
    console.error(`${name} needs a value`);
    process.exit(2);
  }
  return args[i + 1];
}
const stateKey = flag('--state-key');
const store = flag('--store');

const server = new Server({ name: 'oxmcp-conformance', version: '0.1.0', ...(stateKey ? { stateKey } : {}) });
const tool = (name, description, inputSchema, handler) => server.tool(name, { description, inputSchema }, handler);

// --- tools ------------------------------------------------------------------------------------
tool('test_simple_text', 'Returns a simple text response', NO_ARGS, () => 'This is a simple text response for testing.');
tool('test_image_content', 'Returns an image (a 1x1 red PNG)', NO_ARGS, () => ({ type: 'image', data: PNG, mimeType: 'image/png' }));
tool('test_audio_content', 'Returns audio (a short WAV)', NO_ARGS, () => ({ type: 'audio', data: WAV, mimeType: 'audio/wav' }));
tool('test_embedded_resource', 'Returns an embedded resource', NO_ARGS, () =>
  textResource('test://embedded-resource', 'text/plain', 'This is an embedded resource content.'));
tool('test_multiple_content_types', 'Returns text, an image and a resource', NO_ARGS, () => [
  { type: 'text', text: 'Multiple content types test:' },
  { type: 'image', data: PNG, mimeType: 'image/png' },
  textResource('test://mixed-content-resource', 'application/json', '{"test":"data","value":123}'),
]);
tool('test_tool_with_logging', 'Sends three log messages while it runs', NO_ARGS, async (_a, ctx) => {
  const messages = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];
  for (const [i, message] of messages.entries()) {
    if (i > 0) await sleep(50);
    await ctx.log('info', message, 'conformance');
  }
  return 'Tool with logging executed successfully';
});
tool('test_error_handling', 'Always fails', NO_ARGS, () => {
  throw new Error('This tool intentionally returns an error for testing');
});
tool('test_tool_with_progress', 'Reports progress 0, 50, 100 of 100', NO_ARGS, async (_a, ctx) => {
  for (const [i, progress] of [0, 50, 100].entries()) {
    if (i > 0) await sleep(50);
    await ctx.reportProgress(progress, 100);
  }
  return 'Tool with progress executed successfully';
});
tool('json_schema_2020_12_tool', 'Tool with JSON Schema 2020-12 features', {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
}, (args) => `Received: ${JSON.stringify(args)}`);
tool('test_custom_header_tool', 'Tool whose arguments are mirrored into Mcp-Param headers on HTTP (SEP-2243)', {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    priority: { type: 'integer', 'x-mcp-header': 'Priority' },
    note: { type: 'string' },
  },
  required: ['region'],
}, ({ region }) => `Routed to region ${region ?? ''}`);
tool('test_reconnection', 'Cuts its HTTP response stream, then answers on the resumed one', NO_ARGS, async (_a, ctx) => {
  await ctx.closeStream();
  await sleep(200);
  return 'Reconnection test completed';
});

// --- tools that ask the client ----------------------------------------------------------------
tool('test_sampling', "Asks the client's model to answer a prompt",
  { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  async ({ prompt }, ctx) => {
    const r = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 });
    const text = r.content && typeof r.content.text === 'string' ? r.content.text : JSON.stringify(r.content);
    return `LLM response: ${text}`;
  });
tool('test_elicitation', 'Asks the user for a username and email',
  { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  async ({ message }, ctx) => {
    const r = await ctx.elicit({
      message,
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    });
    return `User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;
  });
tool('test_elicitation_sep1034_defaults', 'Elicits with a default for every primitive type', NO_ARGS, async (_a, ctx) =>
  completed(await ctx.elicit({
    message: 'Please review and update the form fields with defaults',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
    },
  })));
tool('test_elicitation_sep1330_enums', 'Elicits with all five enum schema forms', NO_ARGS, async (_a, ctx) =>
  completed(await ctx.elicit({
    message: 'Please select options from the enum fields',
    requestedSchema: {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', description: 'Titled single-select', oneOf: [
          { const: 'value1', title: 'First Option' },
          { const: 'value2', title: 'Second Option' },
          { const: 'value3', title: 'Third Option' }] },
        legacyEnum: { type: 'string', description: 'Legacy titled enum', enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', description: 'Untitled multi-select',
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', description: 'Titled multi-select', items: { anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' }] } },
      },
    },
  })));
tool('test_missing_capability', "Needs the client's sampling capability", NO_ARGS, async (_a, ctx) =>
  `sampled with ${(await ctx.sample(question('ping', 10))).model}`);

// --- 2026-07-28 multi round-trip tools (ordinary requests in the handshake era) ---------------
tool('test_input_required_result_elicitation', 'Asks for a name', NO_ARGS, async (_a, ctx) =>
  `Hello, ${field(await ctx.elicit(form('What is your name?', 'name', 'string'), { key: 'user_name' }), 'name')}!`);
tool('test_input_required_result_sampling', 'Asks the model a question', NO_ARGS, async (_a, ctx) =>
  `Model said: ${sampledText(await ctx.sample(question('What is the capital of France?', 100), { key: 'capital_question' }))}`);
tool('test_input_required_result_list_roots', "Asks for the client's roots", NO_ARGS, async (_a, ctx) =>
  `Roots: ${(await ctx.listRoots({ key: 'client_roots' })).roots.map((r) => r.uri).join(', ')}`);
for (const name of ['test_input_required_result_request_state', 'test_input_required_result_tampered_state']) {
  tool(name, 'Asks for a confirmation; its state is signed', NO_ARGS, async (_a, ctx) =>
    `state-ok: confirmed=${field(await ctx.elicit(form('Please confirm', 'ok', 'boolean'), { key: 'confirm' }), 'ok')}`);
}
tool('test_input_required_result_multiple_inputs', 'Asks three things at once', NO_ARGS, async (_a, ctx) => {
  const [name, greeting, roots] = await Promise.all([
    ctx.elicit(form('What is your name?', 'name', 'string'), { key: 'user_name' }),
    ctx.sample(question('Generate a greeting', 50), { key: 'greeting' }),
    ctx.listRoots({ key: 'client_roots' }),
  ]);
  return `${field(name, 'name')} / ${sampledText(greeting)} / ${roots.roots.length} roots`;
});
tool('test_input_required_result_multi_round', 'Asks two things, one after the other', NO_ARGS, async (_a, ctx) => {
  const name = await ctx.elicit(form('Step 1: What is your name?', 'name', 'string'), { key: 'step1' });
  const color = await ctx.elicit(form('Step 2: What is your favorite color?', 'color', 'string'), { key: 'step2' });
  return `${field(name, 'name')} likes ${field(color, 'color')}`;
});
tool('test_input_required_result_capabilities', 'Asks only what the client can answer', NO_ARGS, async (_a, ctx) => {
  const got = [];
  if (ctx.clientSupports('sampling')) {
    got.push(`sampling=${sampledText(await ctx.sample(question('Say hi', 20), { key: 'sampling_question' }))}`);
  }
  if (ctx.clientSupports('elicitation')) {
    got.push(`elicitation=${field(await ctx.elicit(form('Your name?', 'name', 'string'), { key: 'elicitation_question' }), 'name')}`);
  }
  if (ctx.clientSupports('roots')) {
    got.push(`roots=${(await ctx.listRoots({ key: 'roots_question' })).roots.length}`);
  }
  return got.length ? got.join(', ') : 'nothing to ask';
});
tool('test_streaming_elicitation', 'Elicits; its answer stream carries no independent request', NO_ARGS, async (_a, ctx) =>
  `noted: ${field(await ctx.elicit(form('Anything to add?', 'note', 'string')), 'note')}`);
tool('test_logging_tool', 'Logs at every level (sent only when the request asks)', NO_ARGS, async (_a, ctx) => {
  for (const level of ['debug', 'info', 'warning', 'error']) await ctx.log(level, `${level} message`, 'conformance');
  return 'logged';
});

// --- tasks (the tasks-* scenarios), as examples/rust/conformance/tasks.rs ------------------------
// The longest slow_compute sleeps, whatever it is asked (a fixture must not be a way to hold a
// server's task slots forever).
const MAX_SECONDS = 600;
/** Sleeps `ms` unless `signal` aborts first (then rejects). */
const sleepUnless = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('cancelled'));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('cancelled'));
    }, { once: true });
  });
const answerField = (answer, name) => answer.content?.[name];

server.tool('greet', {
  description: 'Greets someone (never a task)',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
}, ({ name }) => `Hello, ${typeof name === 'string' ? name : 'World'}!`);
server.tool('slow_compute', {
  description: 'Sleeps `seconds` (a task when the client asks for one) and says so',
  inputSchema: {
    type: 'object',
    properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } },
    required: ['seconds'],
  },
  task: 'optional',
}, async ({ seconds, label }, ctx) => {
  const s = Math.min(Math.max(Number(seconds) || 0, 0), MAX_SECONDS);
  await sleepUnless(s * 1000, ctx.signal);
  return `${typeof label === 'string' ? label : 'compute'}: computed after ${s} s`;
});
server.tool('failing_job', {
  description: 'A task that fails with a tool error after about a second',
  inputSchema: NO_ARGS,
  task: 'required',
}, async () => {
  await sleep(1000);
  throw new Error('the job failed (as this fixture always does)');
});
server.tool('protocol_error_job', {
  description: 'A task that ends in a protocol error',
  inputSchema: NO_ARGS,
  task: 'optional',
}, async () => {
  await sleep(200);
  // An McpError with a numeric code is a JSON-RPC error, not an isError result.
  throw new McpError(ErrorCode.InternalError, 'Internal error: the job broke (as this fixture always does)');
});
server.tool('confirm_delete', {
  description: 'Asks the user to confirm, then pretends to delete the file',
  inputSchema: { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] },
  task: 'optional',
}, async ({ filename }, ctx) => {
  const answer = await ctx.elicit(form(`Delete ${filename}?`, 'confirm', 'boolean'));
  const confirmed = answer.action === 'accept' && answerField(answer, 'confirm') === true;
  return confirmed ? `Deleted ${filename}` : `Kept ${filename}`;
});
server.tool('multi_input', {
  description: 'Asks two questions at once, then reports both answers',
  inputSchema: NO_ARGS,
  task: 'optional',
}, async (_a, ctx) => {
  const [name, confirm] = await Promise.all([
    ctx.elicit(form('Your name?', 'name', 'string')),
    ctx.elicit(form('Go ahead?', 'confirm', 'boolean')),
  ]);
  const shown = (answer, key) => JSON.stringify(answerField(answer, key) ?? null);
  return `name: ${shown(name, 'name')}, confirm: ${shown(confirm, 'confirm')}`;
});
server.tool('test_tool_with_task', {
  description: 'Asks for a name within the request, then finishes as a task',
  inputSchema: NO_ARGS,
  task: 'required',
  taskStart: 'deferred',
}, async (_a, ctx) => {
  const answer = await ctx.elicit(form('What is your name?', 'name', 'string'), { key: 'user_name' });
  const name = answerField(answer, 'name');
  await ctx.startTask();
  await sleep(100);
  return `Hello, ${typeof name === 'string' ? name : 'stranger'}! (from the task)`;
});

// --- resources ---------------------------------------------------------------------------------
server.resource('test://static-text', { name: 'static-text', description: 'A static text resource', mimeType: 'text/plain' },
  (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] }));
server.resource('test://static-binary', { name: 'static-binary', description: 'A static binary resource (a PNG)', mimeType: 'image/png' },
  (uri) => ({ contents: [{ uri, mimeType: 'image/png', blob: PNG }] }));
server.resource('test://watched-resource', { name: 'watched-resource', description: 'A resource clients can subscribe to', mimeType: 'text/plain' },
  (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content.' }] }));
server.resourceTemplate('test://template/{id}/data', {
  name: 'template',
  description: 'A templated resource',
  mimeType: 'application/json',
  complete: { id: (value) => ['1', '2', '3', '42', '123'].filter((i) => i.startsWith(value)) },
}, (uri, { id }) => ({
  contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
}));

// --- prompts -----------------------------------------------------------------------------------
const user = (content) => ({ role: 'user', content });
server.prompt('test_simple_prompt', { description: 'A prompt without arguments', arguments: [] }, () => ({
  messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })],
}));
server.prompt('test_prompt_with_arguments', {
  description: 'A prompt with two required arguments',
  arguments: [
    { name: 'arg1', description: 'First test argument', required: true },
    { name: 'arg2', description: 'Second test argument', required: true },
  ],
  complete: { arg1: (value) => ['paris', 'park', 'party', 'hello', 'help'].filter((w) => w.startsWith(value)) },
}, ({ arg1, arg2 }) => ({
  messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${arg1 ?? ''}', arg2='${arg2 ?? ''}'` })],
}));
server.prompt('test_prompt_with_embedded_resource', {
  description: 'A prompt that embeds a resource',
  arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
}, ({ resourceUri }) => ({
  messages: [
    user(textResource(resourceUri ?? '', 'text/plain', 'Embedded resource content for testing.')),
    user({ type: 'text', text: 'Please process the embedded resource above.' }),
  ],
}));
server.prompt('test_prompt_with_image', { description: 'A prompt with an image', arguments: [] }, () => ({
  messages: [user({ type: 'image', data: PNG, mimeType: 'image/png' }), user({ type: 'text', text: 'Please analyze the image above.' })],
}));
server.prompt('test_input_required_result_prompt', { description: 'A prompt that asks for context first', arguments: [] }, async (_a, ctx) => {
  const answer = await ctx.elicit(form('What context should the prompt use?', 'context', 'string'), { key: 'user_context' });
  return { messages: [user({ type: 'text', text: `Use this context: ${field(answer, 'context')}` })] };
});

if (store) {
  // As the Rust fixture's: a change made on one replica reaches subscribers on every other.
  tool('scale_out_touch', 'Marks a resource as updated (its subscribers, on every replica, are told)', {
    type: 'object',
    properties: { uri: { type: 'string' } },
    required: ['uri'],
  }, ({ uri }) => {
    server.notifyResourceUpdated(uri);
    return `touched ${uri}`;
  });
}

if (args.includes('--http')) {
  const port = Number(flag('--port') ?? 3000);
  const websocket = args.includes('--ws');
  const { url } = await server.runHttp({
    port,
    stateless: args.includes('--stateless'),
    jsonResponse: args.includes('--json-response'),
    sseRetryMs: 500,
    ...(websocket ? { websocket: true } : {}),
    ...(store ? { store } : {}),
  });
  console.error(`conformance server listening on ${url}`);
  if (websocket) console.error(`conformance server listening on ${url.replace('http://', 'ws://')}`);
  process.on('SIGINT', () => server.close());
  process.on('SIGTERM', () => server.close());
} else if (args.includes('--ws')) {
  // WebSocket alone (`--ws --port N`): ws://127.0.0.1:N/mcp.
  const { url } = await server.runWebSocket({ port: Number(flag('--port') ?? 3000) });
  console.error(`conformance server listening on ${url}`);
  process.on('SIGINT', () => server.close());
  process.on('SIGTERM', () => server.close());
} else {
  await server.runStdio();
}
