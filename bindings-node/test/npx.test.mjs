// The weather example runs under npx from the packed tarballs, exactly as a published server
// would, and answers exactly as the Rust weather_server example does (same tools/list entry,
// same results and error text), both driven by the official SDK client.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const { OXMCP_TARBALL, OXMCP_PLATFORM_TARBALL, OXMCP_WEATHER_TARBALL, OXMCP_RUST_WEATHER } = process.env;

async function session(command, args, body) {
  const c = new SdkClient({ name: 'npx-check', version: '1.0.0' });
  const stderr = [];
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  await c.connect(transport);
  try {
    return await body(c);
  } catch (e) {
    e.message += `\nserver stderr: ${stderr.join('')}`;
    throw e;
  } finally {
    await c.close();
  }
}

const CALLS = [{ city: 'Beijing' }, { city: '北京' }, { city: '  oslo ' }, { city: 'Paris' }, { city: 'Atlantis' }, {}];

async function observe(c) {
  const { tools } = await c.listTools();
  const results = [];
  for (const args of CALLS) {
    try {
      results.push(await c.callTool({ name: 'get_weather', arguments: args }));
    } catch (e) {
      results.push({ protocolError: e.code });
    }
  }
  return { server: c.getServerVersion(), instructions: c.getInstructions(), tools, results };
}

test('npx runs oxmcp-weather from the tarballs and the SDK client calls get_weather', { skip: !OXMCP_TARBALL && 'OXMCP_TARBALL not set' }, async () => {
  const node = await session('npx', ['--yes', '-p', OXMCP_TARBALL, '-p', OXMCP_PLATFORM_TARBALL, '-p', OXMCP_WEATHER_TARBALL, 'oxmcp-weather'], observe);
  const beijing = node.results[0];
  assert.equal(beijing.content[0].text, 'Beijing: 3.0 °C, clear, humidity 28%, wind 14 km/h');
  assert.deepEqual(beijing.structuredContent, { city: 'Beijing', temperature_c: 3, conditions: 'clear', humidity_pct: 28, wind_kmh: 14 });
  assert.deepEqual(node.results[1], beijing, '北京 is Beijing');
  assert.equal(node.results[4].isError, true);
  assert.match(node.results[4].content[0].text, /^No weather data for `Atlantis`\. Known cities: Beijing, Oslo/);
  if (OXMCP_RUST_WEATHER) {
    const rust = await session(OXMCP_RUST_WEATHER, [], observe);
    assert.deepEqual(node, rust, 'the Node weather server answers exactly as the Rust one');
  }
});
