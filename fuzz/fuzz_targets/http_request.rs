//! Method, headers and body bytes into the HTTP server's request handler over an in-memory
//! pipe: every request gets exactly one answer that follows the POST rule, and a session
//! survives whatever it was sent. The checks live in `oxmcp::fuzzing` so `cargo test`
//! replays the corpus too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| oxmcp::fuzzing::http_request(data));
