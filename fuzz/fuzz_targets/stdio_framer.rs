//! Arbitrary bytes, cut into arbitrary reads, through the stdio line reader with a small cap:
//! the frames must match a reference line model whatever the chunking. The checks live in
//! `oxmcp::fuzzing` so `cargo test` replays the corpus too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| oxmcp::fuzzing::stdio_framer(data));
