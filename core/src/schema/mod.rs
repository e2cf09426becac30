//! JSON Schema handling: validation of tool arguments and structured output.
//!
//! Schemas come from peers (a client validating a server's `outputSchema`) as well as from our
//! own users, so compilation is bounded: nesting is capped before compiling, `$ref` never
//! reaches the network or the file system, and patterns run on a linear-time regex engine.

mod validate;

pub use validate::{MAX_SCHEMA_DEPTH, SchemaValidator};
