// The boundary checks through the ES module entry.
import * as oxmcp from 'oxmcp';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url);
require('./checks.cjs')(oxmcp, 'esm');

test('esm: the ESM and CJS entries export the very same classes', () => {
  const cjs = require('oxmcp');
  assert.equal(oxmcp.McpError, cjs.McpError);
  assert.equal(oxmcp.Server, cjs.Server);
  const e = new oxmcp.RpcError(-32602, 'x');
  assert.ok(e instanceof cjs.McpError && e instanceof Error);
  assert.equal(e.name, 'RpcError');
});
