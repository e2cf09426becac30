'use strict';
// Finds the native engine (the napi-rs addon) for this platform.
//
// The published `oxmcp` package holds no binary: each platform's `.node` ships in its own
// package, `@oxmcp/<platform>-<arch>[-<abi>]`, which `oxmcp` lists in optionalDependencies with
// its exact version, so npm installs only the one whose `os`/`cpu`/`libc` match. A checkout
// (after `make node-build`) has `oxmcp.<triple>.node` next to this file, which wins.
//
// When neither is there the user gets one error that names the platform and the package it
// wanted, not a stack of require() failures. Written by hand (napi's generated loader tries
// two dozen triples we do not publish and falls back to a WASI package we do not ship).

const fs = require('node:fs');
const path = require('node:path');

const { version } = require('./package.json');

// What `napi build --platform` names each target; the same names as bindings-node/npm/*.
const SUPPORTED = [
  'linux-x64-gnu',
  'linux-arm64-gnu',
  'linux-x64-musl',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64-msvc',
];

function isMusl() {
  // ldd is a script on glibc systems and the musl loader itself on musl ones: reading it is
  // cheaper than the process report, which is the fallback.
  try {
    const ldd = fs.readFileSync('/usr/bin/ldd', 'latin1');
    if (ldd.includes('musl')) return true;
    if (ldd.includes('GNU C Library') || ldd.includes('glibc')) return false;
  } catch {
    // No ldd (a slim container): ask the process report.
  }
  try {
    if (process.report) {
      process.report.excludeNetwork = true;
      // glibc reports its version in the report's header; musl does not.
      return !process.report.getReport().header.glibcVersionRuntime;
    }
  } catch {
    // process.report can be disabled.
  }
  return false;
}

function platformTriple() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function missing(message, cause) {
  const error = new Error(message, cause ? { cause } : undefined);
  error.code = 'OXMCP_NATIVE_MISSING';
  return error;
}

function load() {
  const triple = platformTriple();
  const local = path.join(__dirname, `oxmcp.${triple}.node`);
  if (fs.existsSync(local)) return require(local);

  const wanted = `@oxmcp/${triple}`;
  if (!SUPPORTED.includes(triple)) {
    throw missing(
      `oxmcp ${version} has no native engine for ${triple}; it ships for ${SUPPORTED.join(', ')}`,
    );
  }
  let binding;
  try {
    binding = require(wanted);
  } catch (cause) {
    const notInstalled = cause && cause.code === 'MODULE_NOT_FOUND' && String(cause.message).includes(wanted);
    throw missing(
      notInstalled
        ? `oxmcp ${version}: the native engine for ${triple} is the package ${wanted}, which is not ` +
            `installed. npm installs it as an optional dependency of oxmcp; it is missing after ` +
            `--omit=optional, or with a lockfile written on another platform (npm/cli#4828). ` +
            `Install it with: npm install ${wanted}@${version}`
        : `oxmcp ${version}: ${wanted} is installed but its native engine did not load on ${triple}: ` +
            `${cause && cause.message}`,
      cause,
    );
  }
  const installed = require(`${wanted}/package.json`).version;
  if (installed !== version) {
    throw missing(
      `oxmcp ${version} needs ${wanted}@${version}, but ${installed} is installed: ` +
        `npm install ${wanted}@${version}`,
    );
  }
  return binding;
}

module.exports = load();
