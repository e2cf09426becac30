//! Arbitrary bytes as one inbound JSON-RPC message: `decode` under the server caps must never
//! panic, must accept exactly the valid JSON texts, and everything it decodes must survive a
//! re-encode. The checks live in `oxmcp::fuzzing` so `cargo test` replays the corpus too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| oxmcp::fuzzing::jsonrpc_envelope(data));
