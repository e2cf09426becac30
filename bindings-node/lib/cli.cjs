#!/usr/bin/env node
'use strict';
// The `oxmcp` command, as the npm package's `bin`: `npx oxmcp tools --config mcp.json`.
//
// It is the core's CLI (`oxmcp::cli::run`) running on the addon's own threads, so the Rust
// binary, the wheel's console script and this `bin` are one program: JSON on stdout,
// everything for the human on stderr, the same documented exit codes.

const native = require('../native.cjs');

/** Runs a command line (without the program name); resolves with the exit code. */
function run(argv) {
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
    return Promise.reject(new TypeError('run: argv must be an array of strings'));
  }
  return native.runCli(argv);
}

if (require.main === module) {
  run(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`oxmcp: ${e && e.message ? e.message : e}\n`);
      process.exitCode = 1;
    },
  );
}

module.exports = { run };
