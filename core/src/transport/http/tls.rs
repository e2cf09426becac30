//! TLS for the HTTP client: hosted MCP servers speak `https://`.
//!
//! rustls with the `ring` provider (no OpenSSL to find at build or run time). A server
//! certificate is trusted when it chains to the Mozilla roots compiled in (so a minimal
//! container without a CA bundle still works), to the operating system's store (so a
//! company CA installed on the machine works), or to a root the caller adds.

use std::sync::{Arc, OnceLock};

use rustls::{ClientConfig, RootCertStore, pki_types::CertificateDer};

use crate::Error;

/// The client's TLS settings: the usual roots plus `extra_roots` (DER certificates). Without
/// extra roots every client shares one configuration (reading the system store once).
pub(crate) fn client_config(extra_roots: &[Vec<u8>]) -> Result<Arc<ClientConfig>, Error> {
    static SHARED: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    if extra_roots.is_empty() {
        if let Some(config) = SHARED.get() {
            return Ok(config.clone());
        }
        let config = build(&[])?;
        return Ok(SHARED.get_or_init(|| config).clone());
    }
    build(extra_roots)
}

fn build(extra_roots: &[Vec<u8>]) -> Result<Arc<ClientConfig>, Error> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    // The system store is a bonus: a machine without one (or with unreadable entries) still
    // has the compiled-in roots.
    let native = rustls_native_certs::load_native_certs();
    let (added, _ignored) = roots.add_parsable_certificates(native.certs);
    tracing::debug!(target: "oxmcp::http", "{added} certificates from the system store");
    for der in extra_roots {
        roots.add(CertificateDer::from(der.clone())).map_err(|e| {
            Error::InvalidArgument(format!("an extra root certificate is invalid: {e}"))
        })?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::InvalidArgument(format!("TLS setup failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
