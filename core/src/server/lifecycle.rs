//! The lifecycle answers of a server in both eras: `initialize`, `server/discover`, the era of
//! each request, capabilities, and how results are finished for the era they go to.

use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json, value::RawValue};

use super::Inner;
use crate::{
    jsonrpc::{ErrorObject, codes},
    protocol::{
        CacheScope, DiscoverResult, InitializeRequestParams, InitializeResult,
        ListChangedCapability, ProtocolVersion, ResourcesCapability, ServerCapabilities, meta,
        methods,
    },
    session::{HandlerResult, Phase, RequestContext},
};

/// The stateless revision a request declares in `_meta`, if it declares one.
pub(crate) fn stateless_version(
    server: &Inner,
    ctx: &RequestContext,
) -> Result<Option<ProtocolVersion>, ErrorObject> {
    let Some(declared) = ctx.meta().and_then(|m| m.get(meta::PROTOCOL_VERSION)) else {
        return Ok(None);
    };
    let Some(declared) = declared.as_str() else {
        return Err(ErrorObject::invalid_params(format!(
            "Invalid params: `_meta[\"{}\"]` must be a string",
            meta::PROTOCOL_VERSION
        )));
    };
    match ProtocolVersion::parse(declared) {
        Some(v) if v.is_stateless() && server.versions.contains(&v) => {
            let caps = ctx.meta().and_then(|m| m.get(meta::CLIENT_CAPABILITIES));
            if !caps.is_some_and(Value::is_object) {
                return Err(ErrorObject::invalid_params(format!(
                    "Invalid params: `_meta[\"{}\"]` must be an object",
                    meta::CLIENT_CAPABILITIES
                )));
            }
            Ok(Some(v))
        }
        // A handshake-era client that also tags its requests with the negotiated version.
        Some(v) if v.uses_handshake() && ctx.session().protocol_version() == Some(v) => Ok(None),
        _ => Err(unsupported_version(server, declared)),
    }
}

fn unsupported_version(server: &Inner, requested: &str) -> ErrorObject {
    ErrorObject::new(
        codes::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({ "requested": requested, "supported": supported_versions(server) }))
}

/// Every revision the server speaks, newest first.
pub(crate) fn supported_versions(server: &Inner) -> Vec<&'static str> {
    server.versions.iter().rev().map(|v| v.as_str()).collect()
}

pub(crate) fn parse_params<T: DeserializeOwned + Default>(
    method: &str,
    params: Option<&RawValue>,
) -> Result<T, ErrorObject> {
    match params {
        None => Ok(T::default()),
        Some(raw) => parse_required(method, Some(raw)),
    }
}

pub(crate) fn parse_required<T: DeserializeOwned>(
    method: &str,
    params: Option<&RawValue>,
) -> Result<T, ErrorObject> {
    let Some(raw) = params else {
        return Err(ErrorObject::invalid_params(format!(
            "Invalid params for `{method}`: params are required"
        )));
    };
    serde_json::from_str(raw.get()).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line").next().unwrap_or(&msg);
        ErrorObject::invalid_params(format!("Invalid params for `{method}`: {msg}"))
    })
}

/// Serializes a result; stateless results get `resultType` and the server's identity.
pub(crate) fn respond<T: Serialize>(
    server: &Inner,
    stateless: Option<ProtocolVersion>,
    result: &T,
) -> HandlerResult {
    let internal = |e: serde_json::Error| ErrorObject::internal(format!("Internal error: {e}"));
    if stateless.is_none() {
        return serde_json::value::to_raw_value(result).map_err(internal);
    }
    let mut value = serde_json::to_value(result).map_err(internal)?;
    if let Value::Object(map) = &mut value {
        map.entry("resultType").or_insert_with(|| json!("complete"));
        let meta = map.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(meta::SERVER_INFO.into(), json!(server.info));
        }
    }
    serde_json::value::to_raw_value(&value).map_err(internal)
}

/// Adds the 2026-07-28 cache hints to a list or read result.
pub(crate) fn cacheable(
    server: &Inner,
    stateless: Option<ProtocolVersion>,
    extra: &mut crate::protocol::JsonObject,
) {
    if stateless.is_some() {
        extra.insert("ttlMs".into(), json!(server.list_ttl.as_millis() as u64));
        extra.insert("cacheScope".into(), json!(CacheScope::Private));
    }
}

/// What the server offers a client of `version`.
pub(crate) fn capabilities(server: &Inner, version: ProtocolVersion) -> ServerCapabilities {
    let has_resources = !server.resources.read().is_empty() || server.advertise.resources;
    let has_prompts = !server.prompts.read().order.is_empty() || server.advertise.prompts;
    let listed = || ListChangedCapability {
        list_changed: Some(true),
        ..Default::default()
    };
    ServerCapabilities {
        tools: Some(listed()),
        resources: has_resources.then(|| ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
            ..Default::default()
        }),
        prompts: has_prompts.then(listed),
        completions: (has_resources || has_prompts).then(Default::default),
        logging: Some(Default::default()),
        // Tasks: the experimental capability of 2025-11-25, the extension of 2026-07-28
        // (never both: SEP-2663 forbids the legacy slot where the extension exists).
        tasks: (version.uses_handshake() && version >= ProtocolVersion::V2025_11_25).then(|| {
            let mut tasks = crate::protocol::JsonObject::new();
            tasks.insert("list".into(), json!({}));
            tasks.insert("cancel".into(), json!({}));
            tasks.insert("requests".into(), json!({ "tools": { "call": {} } }));
            tasks
        }),
        extensions: version.is_stateless().then(|| {
            let mut extensions = crate::protocol::JsonObject::new();
            extensions.insert(crate::protocol::tasks::EXTENSION.into(), json!({}));
            extensions
        }),
        ..Default::default()
    }
}

pub(crate) fn initialize(
    server: &Inner,
    params: Option<&RawValue>,
    ctx: &RequestContext,
) -> HandlerResult {
    let session = ctx.session();
    if session.state().is_initialized() {
        return Err(ErrorObject::invalid_request(
            "Invalid request: the session is already initialized",
        ));
    }
    let p: InitializeRequestParams = parse_required(methods::INITIALIZE, params)?;
    let offered: Vec<ProtocolVersion> = server
        .versions
        .iter()
        .copied()
        .filter(|v| v.uses_handshake())
        .collect();
    let Some(newest) = offered.last().copied() else {
        return Err(ErrorObject::invalid_params(format!(
            "This server does not support `initialize`; it speaks protocol versions {} (use `server/discover`)",
            supported_versions(server).join(", ")
        ))
        .with_data(json!({ "supported": supported_versions(server) })));
    };
    let chosen = ProtocolVersion::parse(&p.protocol_version)
        .filter(|v| offered.contains(v))
        .unwrap_or(newest);
    let peer_capabilities = serde_json::to_value(&p.capabilities).ok();
    session.update_state(|s| {
        s.phase = Phase::Initializing;
        s.protocol_version = Some(chosen);
        s.peer_info = Some(p.client_info.clone());
        s.peer_capabilities = peer_capabilities;
    });
    let result = InitializeResult {
        protocol_version: chosen.as_str().to_owned(),
        capabilities: capabilities(server, chosen),
        server_info: server.info.clone(),
        instructions: server.instructions.clone(),
        meta: None,
        extra: Default::default(),
    };
    respond(server, None, &result)
}

pub(crate) fn discover(server: &Inner) -> DiscoverResult {
    DiscoverResult {
        supported_versions: supported_versions(server)
            .into_iter()
            .map(str::to_owned)
            .collect(),
        capabilities: capabilities(
            server,
            server
                .versions
                .iter()
                .copied()
                .filter(|v| v.is_stateless())
                .max()
                .unwrap_or(ProtocolVersion::LATEST),
        ),
        instructions: server.instructions.clone(),
        ttl_ms: server.list_ttl.as_millis() as u64,
        cache_scope: CacheScope::Private,
        meta: None,
        extra: Default::default(),
    }
}
