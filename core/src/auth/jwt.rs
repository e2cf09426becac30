//! `private_key_jwt` client authentication (RFC 7523 §2.2, SEP-1046): a short-lived JWT
//! signed with the client's key, whose audience is the authorization server's issuer.
//!
//! Only what the flow needs: ES256 (ECDSA P-256 SHA-256) from a PKCS#8 PEM, signed by `ring`
//! (already in the build through rustls).

use base64::{Engine, engine::general_purpose::STANDARD, engine::general_purpose::URL_SAFE_NO_PAD};
use ring::{
    rand::SystemRandom,
    signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair},
};
use serde_json::json;

use super::token::now_secs;
use crate::Error;

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// A client's signing key for `private_key_jwt`.
pub struct ClientAssertionKey {
    pair: EcdsaKeyPair,
    key_id: Option<String>,
}

impl std::fmt::Debug for ClientAssertionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAssertionKey")
            .field("alg", &"ES256")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl ClientAssertionKey {
    /// Reads an ES256 key from a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub fn es256_from_pem(pem: &str, key_id: Option<String>) -> Result<Self, Error> {
        let body: String = pem
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("-----"))
            .collect();
        let der = STANDARD.decode(body.as_bytes()).map_err(|e| {
            Error::InvalidArgument(format!("the private key PEM is not base64: {e}"))
        })?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &SystemRandom::new())
                .map_err(|e| {
                    Error::InvalidArgument(format!("not a PKCS#8 P-256 private key: {e}"))
                })?;
        Ok(ClientAssertionKey { pair, key_id })
    }

    /// A fresh assertion for `client_id` at the authorization server `issuer`.
    pub(crate) fn assertion(&self, client_id: &str, issuer: &str) -> Result<String, Error> {
        let now = now_secs();
        let mut header = json!({ "alg": "ES256", "typ": "JWT" });
        if let Some(kid) = &self.key_id {
            header["kid"] = json!(kid);
        }
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": issuer,
            "iat": now,
            "exp": now + LIFETIME_SECS,
            "jti": crate::random::id128(),
        });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| Error::Auth("signing the client assertion failed".into()))?;
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junk_keys_are_refused_with_a_typed_error() {
        for pem in [
            "",
            "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----",
            "AAAA",
        ] {
            let e = ClientAssertionKey::es256_from_pem(pem, None).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        }
    }

    #[test]
    fn assertions_verify_with_the_public_key() {
        use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(doc.as_ref())
        );
        let key = ClientAssertionKey::es256_from_pem(&pem, None).unwrap();
        let jwt = key.assertion("client-1", "https://as.example").unwrap();
        let (input, sig) = jwt.rsplit_once('.').unwrap();
        let public = UnparsedPublicKey::new(
            &ECDSA_P256_SHA256_FIXED,
            key.pair.public_key().as_ref().to_vec(),
        );
        public
            .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap())
            .unwrap();
        let claims: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(input.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["aud"], "https://as.example");
        assert_eq!(claims["sub"], "client-1");
    }
}
