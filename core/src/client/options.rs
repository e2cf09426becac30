//! How a client connects: its identity and capabilities, which era to speak, the handlers
//! for what the server asks of it, and the engine's settings.

use std::{sync::Arc, time::Duration};

use serde_json::{Value, json};

use super::{ElicitationHandler, RootsHandler, SamplingHandler, dispatch::Handlers};
use crate::{
    embed::Spawner,
    protocol::{
        ClientCapabilities, Implementation, LoggingLevel, ProtocolVersion, RootsCapability,
    },
    session::{Role, SessionConfig},
};

/// Called with every notification the server sends that the engine does not consume.
pub type NotificationCallback = Arc<dyn Fn(&str, Option<Value>) + Send + Sync>;

/// Which era to speak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolMode {
    /// Probe `server/discover`, fall back to `initialize` (the default).
    Auto,
    /// Skip the probe; `initialize` asking for this revision.
    Handshake(ProtocolVersion),
    /// Skip the fallback; speak this stateless revision or fail.
    Stateless(ProtocolVersion),
}

impl ProtocolMode {
    /// The mode that speaks exactly `version` (its era follows from it).
    pub fn of(version: ProtocolVersion) -> Self {
        if version.is_stateless() {
            Self::Stateless(version)
        } else {
            Self::Handshake(version)
        }
    }

    /// A pinned revision as configs and the bindings spell it: `protocol_version` (one
    /// revision) or `era` (`handshake` / `stateless`: the newest revision of that era); both
    /// absent is `None` (probe). The error says what was wrong, for the caller to place.
    pub fn pinned(version: Option<&str>, era: Option<&str>) -> Result<Option<Self>, String> {
        match (version, era) {
            (Some(_), Some(_)) => Err("give a protocol version or an era, not both".into()),
            (Some(v), None) => ProtocolVersion::parse(v)
                .map(|v| Some(Self::of(v)))
                .ok_or_else(|| {
                    format!(
                        "unknown revision `{}` (expected one of {})",
                        crate::sanitize::line(v),
                        ProtocolVersion::ALL.map(|v| v.as_str()).join(", ")
                    )
                }),
            (None, Some("handshake")) => Ok(Some(Self::of(ProtocolVersion::LATEST_HANDSHAKE))),
            (None, Some("stateless")) => Ok(Some(Self::of(ProtocolVersion::LATEST))),
            (None, Some(other)) => Err(format!(
                "unknown era `{}` (expected `handshake` or `stateless`)",
                crate::sanitize::line(other)
            )),
            (None, None) => Ok(None),
        }
    }
}

/// How a client connects.
#[derive(Clone)]
pub struct ClientOptions {
    /// Our identity.
    pub info: Implementation,
    /// Our capabilities.
    pub capabilities: ClientCapabilities,
    /// Era selection.
    pub protocol: ProtocolMode,
    /// Handshake-era revisions we accept from the server.
    pub accepted_versions: Vec<ProtocolVersion>,
    /// How long the `server/discover` probe may take before we assume a legacy server.
    pub probe_timeout: Duration,
    /// Engine settings.
    pub session: SessionConfig,
    /// Receives server notifications (those not delivered to a [`Subscription`](super::Subscription)).
    pub on_notification: Option<NotificationCallback>,
    /// The log level asked for: `logging/setLevel` after the handshake, or `_meta` on every
    /// stateless request (which otherwise get no log messages).
    pub log_level: Option<LoggingLevel>,
    /// Most rounds of one multi round-trip request before giving up.
    pub max_input_rounds: usize,
    /// Where the session's own tasks run: tokio, or a host loop whose thread reads the
    /// transport (see [`crate::embed`]).
    pub spawner: Spawner,
    pub(super) handlers: Handlers,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("info", &self.info)
            .field("protocol", &self.protocol)
            .field("accepted_versions", &self.accepted_versions)
            .field("probe_timeout", &self.probe_timeout)
            .finish_non_exhaustive()
    }
}

impl ClientOptions {
    /// Defaults for a client with this name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientOptions {
            info: Implementation::new(name, version),
            capabilities: ClientCapabilities::default(),
            protocol: ProtocolMode::Auto,
            accepted_versions: ProtocolVersion::ALL.to_vec(),
            probe_timeout: Duration::from_secs(10),
            session: SessionConfig::for_role(Role::Client),
            on_notification: None,
            log_level: None,
            max_input_rounds: 16,
            spawner: Spawner::Tokio,
            handlers: Handlers::default(),
        }
    }

    /// Answers sampling requests, and declares the `sampling` capability (with tool use).
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.handlers.sampling = Some(Arc::new(handler));
        self.capabilities.sampling =
            Some(serde_json::from_value(json!({ "tools": {} })).unwrap_or_default());
        self
    }

    /// Answers elicitation requests, and declares the `elicitation` capability (form and URL).
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.handlers.elicitation = Some(Arc::new(handler));
        self.capabilities.elicitation =
            Some(serde_json::from_value(json!({ "form": {}, "url": {} })).unwrap_or_default());
        self
    }

    /// Answers `roots/list`, and declares the `roots` capability.
    pub fn roots(mut self, handler: impl RootsHandler) -> Self {
        self.handlers.roots = Some(Arc::new(handler));
        self.capabilities.roots = Some(RootsCapability {
            list_changed: Some(true),
            ..Default::default()
        });
        self
    }

    /// Asks for log messages at `level` and above.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Sets the era selection.
    pub fn protocol(mut self, mode: ProtocolMode) -> Self {
        self.protocol = mode;
        self
    }

    /// Sets the notification callback.
    pub fn on_notification(
        mut self,
        callback: impl Fn(&str, Option<Value>) + Send + Sync + 'static,
    ) -> Self {
        self.on_notification = Some(Arc::new(callback));
        self
    }

    /// Sets the engine settings.
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.session = config;
        self
    }
}
