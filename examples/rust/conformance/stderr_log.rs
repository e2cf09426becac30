//! Logging for the conformance binaries: to stderr, where it never mixes with protocol on
//! stdout, at `warn` unless `RUST_LOG` asks for more. Shared by the conformance client and
//! server so that both read their log level alike.

/// Installs the global subscriber.
pub fn init() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
}
