//! Randomness from the operating system's CSPRNG, for session ids and keys.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};

/// Fills `buf` from the operating system's CSPRNG.
pub(crate) fn fill(buf: &mut [u8]) {
    if getrandom::fill(buf).is_err() {
        // No entropy source at all is not a state this process can work in safely.
        panic!("the operating system's random number generator is unavailable");
    }
}

/// A random 128-bit identifier, base64url (22 visible ASCII characters).
pub(crate) fn id128() -> String {
    let mut bytes = [0u8; 16];
    fill(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// One million session ids: no repeat, each 22 base64url characters of 16 random bytes.
    /// Kept as `u128`s (16 MB) rather than strings, so the check stays fast.
    #[test]
    fn a_million_ids_never_collide() {
        const N: usize = 1_000_000;
        let mut seen: HashSet<u128> = HashSet::with_capacity(N);
        for _ in 0..N {
            let id = id128();
            assert_eq!(id.len(), 22, "{id}");
            assert!(
                id.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "not visible base64url ASCII: {id:?}"
            );
            let bytes: [u8; 16] = URL_SAFE_NO_PAD
                .decode(&id)
                .expect("base64url")
                .try_into()
                .expect("16 bytes");
            assert!(seen.insert(u128::from_le_bytes(bytes)), "repeated id {id}");
        }
        // The ids use the whole alphabet's range, not a constant prefix: every bit position
        // takes both values across the sample (a stuck bit would make ids guessable).
        let (ones, zeros) = seen
            .iter()
            .fold((0u128, 0u128), |(o, z), v| (o | v, z | !v));
        assert_eq!(ones, u128::MAX);
        assert_eq!(zeros, u128::MAX);
    }
}
