// `translate.toPrompt` (models without function calling) from the installed tarball: the golden
// vectors of tests/fixtures/prompt-tools (the very files core/tests/prompt_tools.rs reads) give
// the same calls, errors, system text and result messages in Node; bad input is an error value
// or a typed error; and `host.runAgent(..., {provider: 'prompt'})` drives the Rust weather
// server from a scripted text-only model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { translate, Host, PromptTranslation, Translation, InvalidArgumentError } from 'oxmcp';

const ROOT = process.env.OXMCP_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'tests/fixtures/prompt-tools');
const json = (p) => JSON.parse(readFileSync(path.join(FIXTURES, p), 'utf8'));
const GOOD = json('good.json');
const BAD = json('bad.json');
const TOOLS = GOOD.tools;

function subset(expected, actual, at) {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    for (const [k, v] of Object.entries(expected)) subset(v, actual?.[k], `${at}.${k}`);
  } else {
    assert.deepStrictEqual(actual, expected, at);
  }
}

test('the good vectors give the calls and content of the Rust suite', () => {
  assert.ok(GOOD.cases.length >= 20);
  for (const c of GOOD.cases) {
    const t = translate.toPrompt(TOOLS, { format: c.format });
    assert.ok(t instanceof PromptTranslation && t instanceof Translation);
    const calls = t.calls(c.text);
    assert.equal(calls.length, c.calls.length, c.id);
    c.calls.forEach((e, i) => {
      subset(e, calls[i], `${c.id} call ${i}`);
      assert.equal(calls[i].id, `call_${i + 1}`);
      assert.equal(calls[i].error, undefined);
      assert.equal(calls[i].server, undefined, 'a bare tool list is not namespaced');
    });
    const reply = t.reply(c.text);
    assert.equal(reply.content, c.content, c.id);
    if ('reasoning' in c) assert.equal(reply.reasoning, c.reasoning, c.id);
    if ('answer' in c) assert.equal(reply.answer, c.answer, c.id);
  }
});

test('the bad vectors give the errors of the Rust suite, word for word', () => {
  for (const c of BAD.cases) {
    const calls = translate.toPrompt(TOOLS, { format: c.format }).calls(c.text);
    assert.deepStrictEqual(calls, c.calls, c.id);
    assert.ok(calls.some((x) => 'error' in x), c.id);
  }
});

test('the system text is the golden one, for every format', () => {
  for (const format of translate.PROMPT_FORMATS) {
    const t = translate.toPrompt(TOOLS, { format });
    assert.equal(t.system, readFileSync(path.join(FIXTURES, `render/${format}.txt`), 'utf8'), format);
    assert.equal(t.format, format);
    assert.equal(t.provider, `prompt:${format}`);
    assert.deepStrictEqual(t.tools, []);
    assert.deepStrictEqual(t.stop, format === 'react' ? ['\nObservation:'] : []);
  }
  assert.equal(translate.toPrompt(TOOLS).format, 'hermes');
});

test('results go back as text in the format, the malformed call with its own error', () => {
  for (const c of json('results.json').cases) {
    const t = translate.toPrompt(TOOLS, { format: c.format });
    assert.deepStrictEqual(t.results(c.outcomes.map((o) => [{ id: null, name: o.name }, o.result])), c.messages, c.id);
    assert.deepStrictEqual(t.results(c.outcomes.map((o) => ({ call: { name: o.name }, result: o.result }))), c.messages, c.id);
  }
  const t = translate.toPrompt(TOOLS);
  const [good, bad] = t.calls('<tool_call>{"name":"list_dir","arguments":{}}</tool_call><tool_call>{"name":"x","arguments":{}}</tool_call>');
  const [message] = t.results([[good, { content: [{ type: 'text', text: 'a.txt' }] }], [bad, bad.error]]);
  assert.equal(message.role, 'user');
  assert.match(message.content, /"content": "a\.txt"/);
  assert.match(message.content, /Error: x is not a valid tool, try one of \[read_file, get_weather, list_dir\]\./);
});

test('namespaced tools name their server; history is rewritten', () => {
  const t = translate.toPrompt({ files: TOOLS }, { format: 'json' });
  assert.deepStrictEqual(t.calls('{"name": "files__read_file", "parameters": {"path": "x"}}'), [
    { id: 'call_1', name: 'files__read_file', server: 'files', tool: 'read_file', arguments: { path: 'x' } },
  ]);
  const out = t.history([
    { role: 'assistant', content: 'ok', tool_calls: [{ id: 'c', function: { name: 'files__list_dir', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c', content: 'a' },
  ]);
  assert.deepStrictEqual(out, [
    { role: 'assistant', content: 'ok\n{"name": "files__list_dir", "parameters": {}}' },
    { role: 'user', content: '{"name": "files__list_dir", "output": "a"}' },
  ]);
});

test('a mebibyte of <tool_call> or of { returns in under a second', () => {
  const t = translate.toPrompt(TOOLS);
  for (const text of ['<tool_call>'.repeat(Math.ceil(2 ** 20 / 11)), '{'.repeat(2 ** 20)]) {
    const started = performance.now();
    const calls = t.calls(text);
    assert.ok(performance.now() - started < 1000);
    assert.ok(calls.length <= 1);
  }
});

test('bad input is a typed error or nothing found, never a crash', () => {
  assert.throws(() => translate.toPrompt(TOOLS, { format: 'pythonic' }), TypeError);
  assert.throws(() => translate.toPrompt('nope'), InvalidArgumentError);
  assert.throws(() => translate.translate('prompt:yaml', TOOLS), InvalidArgumentError);
  const t = translate.toPrompt(TOOLS);
  assert.deepStrictEqual(t.calls(42), []);
  assert.deepStrictEqual(t.calls({ choices: [{ message: { content: 'plain text' } }] }), []);
  assert.throws(() => t.results('x'), TypeError);
  assert.throws(() => t.history({}), TypeError);
  assert.throws(() => t.calls(undefined), TypeError);
});

test('runAgent with provider prompt: a scripted text-only model answers through the weather server', { timeout: 60_000 }, async () => {
  const weather = process.env.OXMCP_RUST_WEATHER ?? path.join(ROOT, 'target/debug/examples/weather_server');
  const host = await Host.fromConfig({ mcpServers: { weather: { command: weather } } });
  try {
    const seen = [];
    // SCRIPTED MODEL (not an LLM) without function calling: text in, text out.
    const model = async (request) => {
      seen.push(request);
      if (request.step === 1) {
        return '<tool_call>\n{"name": "weather__get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>';
      }
      return { role: 'assistant', content: `Answer: ${request.messages.at(-1).content}` };
    };
    const t = await host.runAgent(model, [{ role: 'user', content: '北京今天天气怎么样?' }], { provider: 'prompt' });
    assert.equal(t.stop, 'final');
    assert.equal(t.steps, 2);
    assert.equal(t.calls.length, 1);
    assert.equal(t.calls[0].server, 'weather');
    assert.equal(t.calls[0].is_error, false);
    assert.equal(typeof seen[0].tools, 'string');
    assert.deepStrictEqual(seen[0].messages[0], { role: 'system', content: seen[0].tools });
    assert.match(t.final_text, /^Answer: <tool_response>/);
    const translation = await host.translate('prompt:xml');
    assert.ok(translation instanceof PromptTranslation);
    assert.match(translation.system, /<tool_use>/);

    const broken = async () => '<tool_call>{"name": "weather__get_weather", "arguments": {"city": </tool_call>';
    const stopped = await host.runAgent(broken, [], { provider: 'prompt:hermes', maxSteps: 10 });
    assert.equal(stopped.stop, 'format_errors');
    assert.equal(stopped.steps, 3);
    assert.match(stopped.reason, /3 replies in a row/);
  } finally {
    await host.close();
  }
});
