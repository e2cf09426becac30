// `translate` from the installed tarball: the golden vectors of tests/fixtures/schema-translation
// (the very files core/tests/schema_translation.rs reads) give identical results in Node, and
// the way back: tool calls → `tools/call` arguments with strict-mode nulls stripped, results →
// provider messages; bad input is a typed error or text for the model, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { translate, Translation, InvalidArgumentError } from 'oxmcp';

// Both bindings-node/test and the scratch copy target/node-test sit two levels below the root.
const ROOT = process.env.OXMCP_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'tests/fixtures/schema-translation');
const json = (p) => JSON.parse(readFileSync(p, 'utf8'));

const BY_PROVIDER = {
  openai: (tools) => translate.toOpenAI(tools),
  responses: (tools) => translate.toResponses(tools),
  anthropic: (tools) => translate.toAnthropic(tools),
  gemini: (tools) => translate.toGemini(tools),
  'gemini-openapi': (tools) => translate.toGemini(tools, { openapi: true }),
  langchain: (tools) => translate.toLangChain(tools),
};

test('every golden tool vector comes out identical to the Rust suite', () => {
  const inputs = readdirSync(path.join(FIXTURES, 'input')).filter((f) => f.endsWith('.json')).sort();
  assert.ok(inputs.length >= 5, `fixtures missing: ${inputs}`);
  let compared = 0;
  for (const file of inputs) {
    const stem = file.replace(/\.json$/, '');
    const { tools } = json(path.join(FIXTURES, 'input', file));
    for (const [provider, run] of Object.entries(BY_PROVIDER)) {
      // The Rust suite names the server after the input file, with the default options.
      const t = run({ [stem]: tools });
      assert.ok(t instanceof Translation);
      assert.equal(t.provider, provider);
      const expected = json(path.join(FIXTURES, 'expected', `${stem}.${provider}.json`));
      assert.deepStrictEqual({ tools: t.tools, reports: t.reports }, expected, `${stem}.${provider}`);
      // What index.d.ts declares, so the providers' SDK types accept them (test/usage.ts).
      for (const tool of t.tools) {
        if (provider === 'openai') assert.equal(tool.function.parameters.type, 'object');
        if (provider === 'responses') assert.equal(tool.parameters.type, 'object');
        if (provider === 'anthropic') assert.equal(tool.input_schema.type, 'object');
      }
      compared++;
    }
  }
  assert.equal(compared, inputs.length * 6);
  assert.deepEqual([...translate.PROVIDERS].sort(), Object.keys(BY_PROVIDER).sort());
});

test('every golden result vector comes out identical to the Rust suite', () => {
  const { results } = json(path.join(FIXTURES, 'results/input.json'));
  assert.equal(Object.keys(results).length, 8);
  for (const provider of translate.PROVIDERS) {
    const actual = {};
    for (const [name, result] of Object.entries(results)) {
      const call = { id: `call_${name}`, name: `srv__${name}`, arguments: {} };
      actual[name] = translate.resultMessages(provider, [{ call, result }]);
    }
    const expected = json(path.join(FIXTURES, `results/expected.${provider}.json`));
    assert.deepStrictEqual(actual, expected, provider);
  }
});

const BOOK = [
  {
    name: 'book_trip',
    inputSchema: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        nights: { type: 'integer', default: 1 },
        note: { type: 'string' },
      },
      required: ['city'],
    },
  },
];

test('strict mode: optional properties become nullable, and the nulls are stripped on the way back', () => {
  const t = translate.toOpenAI({ travel: BOOK }, { strict: true });
  const fn = t.tools[0].function;
  assert.equal(fn.name, 'travel__book_trip');
  assert.equal(fn.strict, true);
  assert.deepEqual([...fn.parameters.required].sort(), ['city', 'nights', 'note']);
  assert.equal(fn.parameters.additionalProperties, false);
  assert.deepEqual(t.names, { travel__book_trip: { server: 'travel', tool: 'book_trip' } });

  const turn = {
    choices: [{ message: { role: 'assistant', content: null, tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'travel__book_trip', arguments: '{"city":"Beijing","nights":null,"note":null}' } },
    ] } }],
  };
  const [call] = t.toolCalls(turn);
  assert.deepEqual(call, { id: 'c1', name: 'travel__book_trip', arguments: { city: 'Beijing', nights: null, note: null } });
  // The server's default for `nights` applies because the null is gone.
  assert.deepEqual(t.route(call), { server: 'travel', tool: 'book_trip', arguments: { city: 'Beijing' } });

  // Non-strict keeps what the model sent.
  const loose = translate.toOpenAI({ travel: BOOK }, { strict: false });
  assert.equal(loose.tools[0].function.strict, false);
  assert.deepEqual(loose.route(call).arguments, { city: 'Beijing', nights: null, note: null });
});

test('a schema that cannot be strict falls back with a stated reason', () => {
  const open = [{ name: 'tag', inputSchema: { type: 'object', additionalProperties: { type: 'string' } } }];
  const t = translate.toResponses(open);
  assert.equal(t.tools[0].strict, false);
  assert.equal(t.reports[0].strict, false);
  assert.equal(typeof t.reports[0].fallback_reason, 'string');
  assert.ok(t.reports[0].fallback_reason.length > 0);
});

test('the way back for Anthropic and Gemini, and a bare tool list keeps plain names', () => {
  const a = translate.toAnthropic(BOOK);
  assert.equal(a.tools[0].name, 'book_trip');
  const calls = a.toolCalls({ role: 'assistant', content: [
    { type: 'text', text: 'booking' },
    { type: 'tool_use', id: 'tu1', name: 'book_trip', input: { city: 'Oslo' } },
  ] });
  assert.deepEqual(calls, [{ id: 'tu1', name: 'book_trip', arguments: { city: 'Oslo' } }]);
  assert.deepEqual(a.route(calls[0]), { server: '', tool: 'book_trip', arguments: { city: 'Oslo' } });
  const [msg] = a.resultMessages([{ call: calls[0], result: { content: [{ type: 'text', text: 'booked' }] } }]);
  assert.equal(msg.role, 'user');
  assert.equal(msg.content[0].type, 'tool_result');
  assert.equal(msg.content[0].tool_use_id, 'tu1');

  const g = translate.toGemini({ travel: BOOK });
  assert.ok(g.tools[0].functionDeclarations[0].parametersJsonSchema);
  const legacy = translate.toGemini({ travel: BOOK }, { openapi: true });
  assert.ok(legacy.tools[0].functionDeclarations[0].parameters);
  assert.equal(legacy.provider, 'gemini-openapi');
  const gcalls = g.toolCalls({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'travel__book_trip', args: { city: 'Paris' } } }] } }] });
  assert.deepEqual(gcalls, [{ id: null, name: 'travel__book_trip', arguments: { city: 'Paris' } }]);
});

test('invalid JSON arguments and unknown names become text for the model, not exceptions', () => {
  const t = translate.toOpenAI({ travel: BOOK });
  const [bad] = t.toolCalls({ role: 'assistant', tool_calls: [
    { id: 'x', type: 'function', function: { name: 'travel__book_trip', arguments: '{"city": "Bei' } },
  ] });
  assert.equal(bad.id, 'x');
  assert.match(bad.error, /invalid JSON/);
  const routed = t.route(bad);
  assert.match(routed.error, /arguments for `travel__book_trip` were not usable/);
  assert.match(t.route({ name: 'nope', arguments: {} }).error, /no tool named `nope`.*travel__book_trip/);
  assert.match(t.route({ name: 'travel__book_trip', arguments: '[1,2]' }).error, /expected a JSON object/);
  // The error result reaches the model as a tool message.
  const [msg] = t.resultMessages([{ call: bad, result: { content: [{ type: 'text', text: routed.error }], isError: true } }]);
  assert.equal(msg.role, 'tool');
  assert.equal(msg.tool_call_id, 'x');
});

test('hostile schemas are refused per tool with a reason; the other tools still translate', () => {
  // Past the core's translate depth (64) yet within what crosses the boundary.
  let deep = { type: 'string' };
  for (let i = 0; i < 100; i++) deep = { type: 'array', items: deep };
  const tools = [
    { name: 'deep', inputSchema: { type: 'object', properties: { d: deep } } },
    { name: 'net', inputSchema: { type: 'object', properties: { x: { $ref: 'http://127.0.0.1:9/schema.json' } } } },
    { name: 'huge', inputSchema: { type: 'object', properties: { x: { type: 'string', description: 'x'.repeat(2 << 20) } } } },
    { name: 'ok', inputSchema: { type: 'object', properties: {} } },
  ];
  for (const provider of translate.PROVIDERS) {
    const t = translate.translate(provider, tools);
    const byTool = Object.fromEntries(t.reports.map((r) => [r.tool, r]));
    assert.ok(byTool.deep.error, `${provider}: deep refused`);
    assert.ok(byTool.net.error, `${provider}: network $ref refused`);
    assert.ok(byTool.huge.error, `${provider}: 2 MB schema refused`);
    assert.equal(byTool.ok.error, undefined);
    const count = provider.startsWith('gemini') ? t.tools[0].functionDeclarations.length : t.tools.length;
    assert.equal(count, 1, provider);
  }
});

test('values too deep to cross are refused at the boundary with a typed error', () => {
  const nest = (n) => {
    let deep = { type: 'string' };
    for (let i = 0; i < n; i++) deep = { type: 'array', items: deep };
    return [{ name: 'deep', inputSchema: { type: 'object', properties: { d: deep } } }];
  };
  // 1 000 levels: JSON text the addon refuses before building anything.
  assert.throws(() => translate.toOpenAI(nest(1_000)), (e) => e instanceof InvalidArgumentError && /recursion limit/.test(e.message));
  // 10 000 levels: past what JSON.stringify can write, named as such.
  assert.throws(() => translate.toOpenAI(nest(10_000)), (e) => e instanceof TypeError && /tools cannot be sent as JSON/.test(e.message));
});

test('bad input is a typed error naming the problem', () => {
  assert.throws(() => translate.translate('cohere', BOOK), (e) => e instanceof InvalidArgumentError && /unknown provider `cohere`/.test(e.message));
  assert.throws(() => translate.toOpenAI('tools'), InvalidArgumentError);
  assert.throws(() => translate.toOpenAI([{ inputSchema: {} }]), InvalidArgumentError);
  assert.throws(() => translate.toOpenAI({ a: 3 }), InvalidArgumentError);
  assert.throws(() => translate.toOpenAI(BOOK, { strcit: true }), (e) => e instanceof InvalidArgumentError && /strcit/.test(e.message));
  assert.throws(
    () => translate.toOpenAI(BOOK, { namespace: 'sometimes' }),
    (e) => e instanceof InvalidArgumentError && /unknown namespace `sometimes` \(one of: always, collision, never\)/.test(e.message),
  );
  assert.equal(translate.toOpenAI(BOOK, { namespace: 'collision' }).tools.length, 1);
  assert.throws(() => translate.toGemini(BOOK, { openapi: 'yes' }), TypeError);
  const circular = { name: 'c', inputSchema: { type: 'object' } };
  circular.inputSchema.self = circular;
  assert.throws(() => translate.toOpenAI([circular]), TypeError);
  assert.throws(() => translate.toOpenAI(undefined), TypeError);
  assert.throws(() => translate.resultMessages('openai', 'nope'), TypeError);
  assert.throws(
    () => translate.resultMessages('openai', [{ call: { id: 'a', name: 'x' }, result: { content: 'not a list' } }]),
    (e) => e instanceof InvalidArgumentError && /outcome 0/.test(e.message),
  );
  assert.throws(() => translate.toOpenAI(BOOK).route({ arguments: {} }), InvalidArgumentError);
  // A turn that is not a provider shape has no tool calls (never a crash).
  assert.deepEqual(translate.toolCalls('openai', 42), []);
  assert.deepEqual(translate.toolCalls('anthropic', { content: 'text only' }), []);
});
