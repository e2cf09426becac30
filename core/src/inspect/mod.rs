//! `oxmcp inspect`: a web page on 127.0.0.1 over the host, for people who build or debug an
//! MCP server.
//!
//! The official MCP Inspector is a second process tree (a proxy plus a page) whose history
//! is a list of ways a web page could drive it (`guard` says which, and what stops them
//! here). This one is the CLI's own host behind a small JSON API, with the page compiled
//! into the binary. The parts:
//!
//! - [`guard`]: the Host, Origin and token checks every request passes first;
//! - [`events`]: the trace, logs, notifications, progress and questions, long-polled;
//! - [`questions`]: sampling, elicitation and roots answered by the person;
//! - [`servers`]: one host per config server, so each connects and reconnects alone;
//! - [`api`]: the JSON routes; [`page`]: the page and its assets; [`http`]: hyper.
//!
//! The browser names servers, never commands: every process started is one the config
//! given on the command line names.

pub(crate) mod api;
pub(crate) mod events;
pub(crate) mod guard;
pub(crate) mod http;
pub(crate) mod page;
pub(crate) mod questions;
pub(crate) mod servers;

pub(crate) use http::Inspector;
