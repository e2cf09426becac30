//! Choosing the era on connect: probe `server/discover` (stateless, 2026-07-28) and fall back
//! to `initialize` (the handshake era), or speak the one era the options ask for. A slow
//! stateless server that missed the probe is recognised by how it refuses `initialize`.

use std::time::Duration;

use serde_json::json;

use super::{ClientOptions, ProtocolMode, ServerDetails};
use crate::{
    Error, Result,
    jsonrpc::{ErrorObject, codes},
    protocol::{
        ClientCapabilities, DiscoverResult, InitializeRequestParams, InitializeResult, JsonObject,
        ProtocolVersion, meta, methods,
    },
    session::{Phase, RequestOptions, Session},
};

/// The `_meta` a stateless request carries: our version, capabilities, identity and log level.
pub(super) fn stateless_meta(options: &ClientOptions, version: ProtocolVersion) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert(meta::PROTOCOL_VERSION.into(), json!(version.as_str()));
    m.insert(
        meta::CLIENT_CAPABILITIES.into(),
        json!(options.capabilities),
    );
    m.insert(meta::CLIENT_INFO.into(), json!(options.info));
    if let Some(level) = options.log_level {
        m.insert(meta::LOG_LEVEL.into(), json!(level));
    }
    m
}

/// Connects in the era `options` ask for, and says what the server told us.
pub(super) async fn negotiate(session: &Session, options: &ClientOptions) -> Result<ServerDetails> {
    match &options.protocol {
        ProtocolMode::Handshake(v) => initialize(session, options, *v).await,
        ProtocolMode::Stateless(v) => {
            discover(session, options, *v, options.session.request_timeout)
                .await?
                .ok_or_else(|| Error::UnsupportedProtocolVersion {
                    requested: v.as_str().into(),
                    supported: Vec::new(),
                })
        }
        ProtocolMode::Auto => {
            let ours = ProtocolVersion::ALL
                .iter()
                .rev()
                .copied()
                .find(|v| v.is_stateless() && options.accepted_versions.contains(v));
            let Some(modern) = ours else {
                return initialize(session, options, newest_handshake(options)?).await;
            };
            match discover(session, options, modern, options.probe_timeout).await {
                Ok(Some(details)) => Ok(details),
                Ok(None) => initialize(session, options, newest_handshake(options)?).await,
                Err(Error::Rpc(e)) if is_stateless_error(e.code) => Err(Error::Rpc(e)),
                Err(Error::Rpc(_)) => {
                    initialize(session, options, newest_handshake(options)?).await
                }
                Err(Error::Timeout { .. }) => {
                    // A silent probe usually means a legacy server, but a stateless server that
                    // is slow to start (`uvx`/`npx` installing on first run) answers late and
                    // then refuses `initialize` with the versions it speaks: probe again.
                    match initialize(session, options, newest_handshake(options)?).await {
                        Err(Error::Rpc(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
                            let listed = supported_in(&e);
                            let again = options.accepted_versions.iter().rev().copied().find(|v| {
                                v.is_stateless() && listed.iter().any(|s| s == v.as_str())
                            });
                            match again {
                                Some(v) => {
                                    discover(session, options, v, options.session.request_timeout)
                                        .await?
                                        .ok_or(Error::Rpc(e))
                                }
                                None => Err(Error::Rpc(e)),
                            }
                        }
                        other => other,
                    }
                }
                Err(e) => Err(e),
            }
        }
    }
}

/// Our capabilities, without the ones `version` does not define (a server speaking it could
/// not make sense of them, and should never send the requests they announce).
fn capabilities_for(
    capabilities: &ClientCapabilities,
    version: ProtocolVersion,
) -> ClientCapabilities {
    let mut caps = capabilities.clone();
    if version < ProtocolVersion::V2025_06_18 {
        caps.elicitation = None;
    }
    if version < ProtocolVersion::V2025_11_25 {
        caps.tasks = None;
        if let Some(elicitation) = caps.elicitation.as_mut() {
            elicitation.remove("url");
        }
        if let Some(sampling) = caps.sampling.as_mut() {
            sampling.remove("tools");
            sampling.remove("context");
        }
    }
    caps
}

/// Whether a code is one of the errors only a stateless (2026-07-28) server sends: such a
/// server is modern, so the client must not fall back to `initialize`.
fn is_stateless_error(code: i64) -> bool {
    (codes::UNSUPPORTED_PROTOCOL_VERSION..=codes::HEADER_MISMATCH).contains(&code)
}

/// The `supported` list of an `UnsupportedProtocolVersion` error.
fn supported_in(e: &ErrorObject) -> Vec<String> {
    e.data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default()
}

/// The newest handshake-era revision we accept.
fn newest_handshake(options: &ClientOptions) -> Result<ProtocolVersion> {
    options
        .accepted_versions
        .iter()
        .rev()
        .copied()
        .find(|v| v.uses_handshake())
        .ok_or_else(|| {
            Error::InvalidArgument(
                "no handshake-era protocol version is accepted by this client".into(),
            )
        })
}

/// `server/discover` with `version`; on `UnsupportedProtocolVersion`, once more with the best
/// stateless version the server listed. `Ok(None)` means "fall back to the handshake" (only in
/// auto mode: the server is modern but shares no stateless version with us).
async fn discover(
    session: &Session,
    options: &ClientOptions,
    version: ProtocolVersion,
    timeout: Duration,
) -> Result<Option<ServerDetails>> {
    let mut version = version;
    for attempt in 0..2 {
        let params = json!({ "_meta": stateless_meta(options, version) });
        let reply = session
            .request(
                methods::DISCOVER,
                Some(params),
                RequestOptions::with_timeout(timeout),
            )
            .await;
        match reply {
            Ok(value) => {
                let result: DiscoverResult = match serde_json::from_value(value) {
                    Ok(result) => result,
                    // Some legacy servers answer any method with an empty result: not a
                    // stateless server, so fall back to the handshake.
                    Err(_) if options.protocol == ProtocolMode::Auto => return Ok(None),
                    Err(e) => {
                        return Err(Error::Protocol(format!(
                            "invalid `server/discover` result: {e}"
                        )));
                    }
                };
                let listed =
                    |v: &ProtocolVersion| result.supported_versions.iter().any(|s| s == v.as_str());
                if !listed(&version) {
                    let better = options
                        .accepted_versions
                        .iter()
                        .rev()
                        .copied()
                        .find(|v| v.is_stateless() && listed(v));
                    match better {
                        Some(v) if attempt == 0 => {
                            version = v;
                            continue;
                        }
                        _ if options.protocol == ProtocolMode::Auto => return Ok(None),
                        _ => {
                            return Err(Error::UnsupportedProtocolVersion {
                                requested: version.as_str().into(),
                                supported: result.supported_versions,
                            });
                        }
                    }
                }
                let info = result
                    .meta
                    .as_ref()
                    .and_then(|m| m.get(meta::SERVER_INFO))
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_default();
                return Ok(Some(ServerDetails {
                    protocol_version: version,
                    info,
                    capabilities: result.capabilities,
                    instructions: result.instructions,
                    supported_versions: result.supported_versions,
                }));
            }
            Err(Error::Rpc(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
                let supported = supported_in(&e);
                // Retry once with the best version the server lists; that can be the one just
                // refused (behind a load balancer another instance may have answered), and the
                // second refusal is final.
                let better = options
                    .accepted_versions
                    .iter()
                    .rev()
                    .copied()
                    .find(|v| v.is_stateless() && supported.iter().any(|s| s == v.as_str()));
                match better {
                    Some(v) if attempt == 0 => version = v,
                    _ if options.protocol == ProtocolMode::Auto => return Ok(None),
                    _ => {
                        return Err(Error::UnsupportedProtocolVersion {
                            requested: version.as_str().into(),
                            supported,
                        });
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// The handshake: `initialize` asking for `requested`, then `notifications/initialized`.
async fn initialize(
    session: &Session,
    options: &ClientOptions,
    requested: ProtocolVersion,
) -> Result<ServerDetails> {
    let params = InitializeRequestParams {
        protocol_version: requested.as_str().to_owned(),
        capabilities: capabilities_for(&options.capabilities, requested),
        client_info: options.info.clone(),
        meta: None,
        extra: Default::default(),
    };
    let params =
        serde_json::to_value(&params).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    session.update_state(|s| s.phase = Phase::Initializing);
    let reply = session
        .request(methods::INITIALIZE, Some(params), RequestOptions::default())
        .await;
    let value = match reply {
        Ok(value) => value,
        Err(e) => {
            session.update_state(|s| s.phase = Phase::Fresh);
            return Err(e);
        }
    };
    let result: InitializeResult = serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("invalid `initialize` result: {e}")))?;
    let version = ProtocolVersion::parse(&result.protocol_version)
        .filter(|v| v.uses_handshake() && options.accepted_versions.contains(v))
        .ok_or_else(|| Error::UnsupportedProtocolVersion {
            requested: result.protocol_version.clone(),
            supported: options
                .accepted_versions
                .iter()
                .filter(|v| v.uses_handshake())
                .map(|v| v.as_str().to_owned())
                .collect(),
        })?;
    let capabilities = serde_json::to_value(&result.capabilities).ok();
    session.update_state(|s| {
        s.phase = Phase::Ready;
        s.protocol_version = Some(version);
        s.peer_info = Some(result.server_info.clone());
        s.peer_capabilities = capabilities;
    });
    session.notify(methods::INITIALIZED, None).await?;
    Ok(ServerDetails {
        protocol_version: version,
        info: result.server_info,
        capabilities: result.capabilities,
        instructions: result.instructions,
        supported_versions: Vec::new(),
    })
}
