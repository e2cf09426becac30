//! The documentation's Rust blocks, compiled and run as doctests.
//!
//! README.md and the guides under docs/ promise that their snippets work as printed. Each
//! file with a ```` ```rust ```` block is included below as the doc of an item that exists
//! only under `cfg(doctest)`, so `cargo test --doc -p oxmcp docs::` compiles every block and
//! runs those not marked `no_run` or `ignore`. `tests/docs/snippets.py` fails when a Markdown
//! file has a rust block and is missing here.

#[doc = include_str!("../../README.md")]
pub struct Readme;

#[doc = include_str!("../../docs/getting-started/rust.md")]
pub struct GettingStartedRust;

#[doc = include_str!("../../docs/guides/servers.md")]
pub struct GuideServers;

#[doc = include_str!("../../docs/guides/clients.md")]
pub struct GuideClients;

#[doc = include_str!("../../docs/guides/http.md")]
pub struct GuideHttp;

#[doc = include_str!("../../docs/guides/host.md")]
pub struct GuideHost;
