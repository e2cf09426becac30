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
