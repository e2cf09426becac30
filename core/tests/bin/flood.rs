//! The stderr flood that `mcp_fixture flood-stderr BYTES` writes and `child_lifecycle` checks:
//! one definition of the bytes, so the test can rebuild exactly what the fixture wrote.

/// `flood line NNNNNNNN\n` lines until at least `bytes`, then `END-OF-FLOOD\n`.
pub fn flood_bytes(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 64);
    let mut i = 0u64;
    while out.len() < bytes {
        out.extend_from_slice(format!("flood line {i:08}\n").as_bytes());
        i += 1;
    }
    out.extend_from_slice(b"END-OF-FLOOD\n");
    out
}
