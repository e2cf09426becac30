//! The native half of the npm package `oxmcp`: napi-rs classes over the Rust core.
//!
//! This crate only converts values, adapts JavaScript callbacks to core handler traits and
//! maps errors; every protocol rule lives in `oxmcp` (the core). The hand-written JavaScript
//! layer in `bindings-node/lib/` gives it the public API (`Server`, `Client`, `McpError`).
//!
//! Values cross the boundary as JSON text: V8's `JSON.parse`/`JSON.stringify` convert a whole
//! payload in one pass, which is faster than building objects property by property through
//! N-API, and a value JavaScript cannot represent as JSON (a circular object, a `BigInt`) fails
//! with a clear `TypeError` on the JavaScript side instead of recursing in native code.
//!
//! Modules mirror the core: [`auth`] (OAuth options and the authorize / verify-token
//! callbacks), [`server`] (registries, serving, handler adapters and the request
//! context), [`client`] (connecting and requests, client-side handlers), [`error`] (the one
//! mapper from `oxmcp::Error`), [`cancel`] (cancellation shared by both roles), [`schema`]
//! (tool translation for LLM APIs and back), [`host`] (many servers, the agent loop),
//! [`cli`] (the `oxmcp` command for the package's `bin`), and [`embed`] with [`watch`]
//! (stdio sessions run on the JavaScript thread itself, their input watched by Node's loop).

// Under `cfg(test)` napi-derive registers no exports, so the `#[napi]` items look unused to a
// test build (clippy's `--all-targets`); the real build uses them all.
#![cfg_attr(test, allow(dead_code))]

mod auth;
mod cancel;
mod cli;
mod client;
mod embed;
mod error;
mod host;
mod json;
mod schema;
mod server;
mod watch;
