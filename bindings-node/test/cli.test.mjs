// The npm package's `bin`: `npx --yes -p <packed tarball> oxmcp ...` runs the core's CLI
// through the addon. JSON on stdout, the failed server named on stderr while the others are
// listed, and the documented exit codes for bad input.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { runCli } from 'oxmcp';

// The main package and this platform's package (the main one holds no binary).
const { OXMCP_TARBALL, OXMCP_PLATFORM_TARBALL } = process.env;
const HERE = fileURLToPath(new URL('./', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'oxmcp-cli-'));
after(() => rmSync(work, { recursive: true, force: true }));

const fixture = { command: process.execPath, args: [path.join(HERE, 'fixtures/host_server.mjs')] };
const write = (name, value) => {
  const p = path.join(work, name);
  writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
  return p;
};
const good = write('good.json', { mcpServers: { fixture } });
const partial = write('partial.json', { mcpServers: { fixture, missing: { command: path.join(work, 'no-such-server') } } });
const bad = write('bad.json', { mcpServers: { fixture: { command: 'node', args: 'not a list' } } });

/** Runs `oxmcp ...argv` from the tarball under npx; resolves {code, stdout, stderr}. */
function oxmcp(...argv) {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['--yes', '-p', OXMCP_TARBALL, '-p', OXMCP_PLATFORM_TARBALL, 'oxmcp', ...argv], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const opts = { skip: !OXMCP_TARBALL && 'OXMCP_TARBALL not set', timeout: 180_000 };

test('oxmcp tools prints the tools in a provider format', opts, async () => {
  const r = await oxmcp('tools', '--config', good, '--format', 'anthropic');
  assert.equal(r.code, 0, r.stderr);
  const tools = JSON.parse(r.stdout);
  const whoami = tools.find((t) => t.name === 'fixture__whoami');
  assert.ok(whoami, r.stdout);
  assert.equal(whoami.input_schema.type, 'object');
  const openai = await oxmcp('tools', '--config', good);
  assert.equal(openai.code, 0, openai.stderr);
  assert.ok(JSON.parse(openai.stdout).every((t) => t.type === 'function' && t.function.strict !== undefined));
});

test('a server that cannot start is named on stderr; the others are still listed (exit 4)', opts, async () => {
  const r = await oxmcp('tools', '--config', partial, '--format', 'mcp');
  assert.equal(r.code, 4);
  assert.match(r.stderr, /missing/);
  const listed = JSON.stringify(JSON.parse(r.stdout));
  assert.match(listed, /whoami/);
});

test('oxmcp call prints the result; an error result exits 1', opts, async () => {
  const r = await oxmcp('call', '--config', good, 'fixture', 'stats', '{"values":[1,2]}');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).structuredContent, { sum: 3, count: 2 });
  const traced = await oxmcp('call', '--trace', '--config', good, 'fixture', 'progress');
  assert.equal(traced.code, 0, traced.stderr);
  assert.equal(JSON.parse(traced.stdout).content[0].text, 'done', 'stdout stays JSON only');
  assert.match(traced.stderr, /\[trace fixture\].*"method":"tools\/call"/);
  assert.match(traced.stderr, /notifications\/progress/);
  const failed = await oxmcp('call', '--config', good, 'fixture', 'fails');
  assert.equal(failed.code, 1);
  assert.match(failed.stdout, /Unknown city: Atlantis/);
});

test('bad input gives the documented exit codes and a message on stderr', opts, async () => {
  const format = await oxmcp('tools', '--config', good, '--format', 'cohere');
  assert.equal(format.code, 2);
  assert.match(format.stderr, /unknown --format `cohere`/);
  assert.equal(format.stdout, '');
  const args = await oxmcp('call', '--config', good, 'fixture', 'stats', '{"values": [1,');
  assert.equal(args.code, 2);
  assert.match(args.stderr, /not valid JSON/);
  const config = await oxmcp('tools', '--config', bad);
  assert.equal(config.code, 3);
  assert.match(config.stderr, /fixture/);
  const absent = await oxmcp('servers', '--config', path.join(work, 'absent.json'));
  assert.equal(absent.code, 3);
  const unknown = await oxmcp('frobnicate');
  assert.equal(unknown.code, 2);
});

test('runCli runs the same CLI in this process and resolves with the exit code', async () => {
  // Only paths that write to stderr: stdout belongs to the test runner here.
  assert.equal(await runCli(['tools', '--format', 'cohere']), 2);
  assert.equal(await runCli(['servers', '--config', path.join(work, 'absent.json')]), 3);
  await assert.rejects(runCli('tools'), TypeError);
  await assert.rejects(runCli([1]), TypeError);
});
