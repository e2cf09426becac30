// `oxmcp/langchain` from the installed tarball: a LangChain.js chat model (a tiny scripted
// BaseChatModel subclass) emits tool calls; the tools `getTools(host)` made run them against a
// real MCP server over the host's one session, keep `outputSchema` and `structuredContent`
// (content and artifact), pass argument names such as `config` through, and report errors
// as ToolMessages with status "error".
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { DynamicStructuredTool } from '@langchain/core/tools';

import { Host } from 'oxmcp';
import { getTools } from 'oxmcp/langchain';

const HERE = fileURLToPath(new URL('./', import.meta.url));

/** Answers each turn with the next scripted function of the conversation so far. */
class ScriptedChatModel extends BaseChatModel {
  constructor(script) {
    super({});
    this.script = script;
    this.bound = [];
  }

  _llmType() {
    return 'scripted (test)';
  }

  bindTools(tools) {
    this.bound = tools;
    return this;
  }

  async _generate(messages) {
    const next = this.script.shift();
    if (!next) throw new Error('the script ran out');
    const message = next(messages);
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

const host = await Host.fromConfig({
  mcpServers: { fixture: { command: process.execPath, args: [path.join(HERE, 'fixtures/host_server.mjs')] } },
});
after(() => host.close());

async function agent(model, tools, question) {
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const messages = [new HumanMessage(question)];
  for (let step = 0; step < 8; step++) {
    const ai = await model.invoke(messages);
    messages.push(ai);
    if (!ai.tool_calls?.length) return messages;
    for (const call of ai.tool_calls) messages.push(await byName[call.name].invoke(call));
  }
  throw new Error('no final answer');
}

test('a LangChain chat model drives a real MCP server through getTools, over one session', { timeout: 60_000 }, async () => {
  const tools = await getTools(host);
  assert.ok(tools.every((t) => t instanceof DynamicStructuredTool), 'ES module callers get their own classes');
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['fixture__configure', 'fixture__crash', 'fixture__fails', 'fixture__never', 'fixture__progress', 'fixture__stats', 'fixture__whoami']);
  const stats = tools.find((t) => t.name === 'fixture__stats');
  assert.equal(stats.responseFormat, 'content_and_artifact');
  assert.deepEqual(stats.metadata.output_schema.required, ['sum', 'count']);
  assert.equal(stats.metadata.mcp_name, 'stats');

  const model = new ScriptedChatModel([
    () => new AIMessage({ content: '', tool_calls: [
      { id: 'a', name: 'fixture__whoami', args: {}, type: 'tool_call' },
      { id: 'b', name: 'fixture__configure', args: { config: 'prod', runManager: 'rm', callbacks: 'cb', signal: 'sig' }, type: 'tool_call' },
      { id: 'c', name: 'fixture__stats', args: { values: [1, 2, 3.5] }, type: 'tool_call' },
    ] }),
    () => new AIMessage({ content: '', tool_calls: [{ id: 'd', name: 'fixture__whoami', args: {}, type: 'tool_call' }] }),
    (messages) => new AIMessage(`done after ${messages.filter((m) => ToolMessage.isInstance(m)).length} tool results`),
  ]).bindTools(tools);
  const messages = await agent(model, tools, 'go');
  assert.equal(messages.at(-1).content, 'done after 4 tool results');
  const results = Object.fromEntries(messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, m]));
  assert.ok(results.a instanceof ToolMessage);
  assert.equal(results.a.status, 'success');
  assert.equal(results.a.name, 'fixture__whoami');
  // The same server process served both whoami calls: the session is kept, not re-opened.
  const first = results.a.artifact.structured_content;
  const second = results.d.artifact.structured_content;
  assert.equal(first.pid, second.pid);
  assert.equal(second.calls, first.calls + 1);
  // Every argument name reached the server.
  assert.deepEqual(results.b.artifact.structured_content.received, { config: 'prod', runManager: 'rm', callbacks: 'cb', signal: 'sig' });
  // structuredContent as the artifact.
  assert.deepEqual(results.c.artifact, { structured_content: { sum: 6.5, count: 3 } });
});

test('plain invoke gives the content; bad arguments and a crashed server are errors the agent sees', { timeout: 60_000 }, async () => {
  const tools = await getTools(host, { namespace: 'never' });
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.ok(byName.whoami && byName.stats);
  const text = await byName.stats.invoke({ values: [2, 2] });
  assert.equal(JSON.parse(text).sum, 4);
  // LangChain validates against the server's JSON Schema before anything is sent.
  await assert.rejects(byName.stats.invoke({ values: 'nope' }), /did not match expected schema/);
  await assert.rejects(byName.configure.invoke({}), /did not match expected schema/);
  // A server crashing mid-call rejects that call; the next call restarts it.
  await assert.rejects(byName.crash.invoke({ id: 'x', name: 'crash', args: {}, type: 'tool_call' }), { name: 'ConnectionClosedError' });
  const again = await byName.whoami.invoke({ id: 'y', name: 'whoami', args: {}, type: 'tool_call' });
  assert.equal(again.status, 'success');
  assert.equal(again.artifact.structured_content.calls, 1);
});

test('an isError result is a ToolMessage with status "error"', { timeout: 60_000 }, async () => {
  const fails = (await getTools(host)).find((t) => t.name === 'fixture__fails');
  const msg = await fails.invoke({ id: 'e', name: 'fixture__fails', args: {}, type: 'tool_call' });
  assert.ok(ToolMessage.isInstance(msg));
  assert.equal(msg.tool_call_id, 'e');
  assert.equal(msg.status, 'error');
  assert.equal(msg.content, 'Unknown city: Atlantis');
});

test('getTools refuses what is not a Host; the CommonJS entry works too', async () => {
  await assert.rejects(getTools({}), TypeError);
  await assert.rejects(getTools(host, { namespace: 'sometimes' }), { name: 'InvalidArgumentError' });
  const require = createRequire(import.meta.url);
  const cjs = require('oxmcp/langchain');
  const tools = await cjs.getTools(host);
  assert.equal(tools.length, 7);
  assert.equal(typeof tools[0].invoke, 'function');
});
