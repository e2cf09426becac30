//! What a server does with each request, in either era.
//!
//! A request that declares a stateless revision in `_meta` is served from that `_meta` alone.
//! A request without one belongs to the handshake era and needs an initialized session.
//! Methods the 2026-07-28 revision removed (`initialize`, `ping`, `logging/setLevel`,
//! `resources/(un)subscribe`) are "method not found" when asked for statelessly, and keep
//! working for handshake-era clients.

use std::sync::Arc;

use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json, value::RawValue};

use super::{Inner, pagination, tools::finish_result};
use crate::{
    jsonrpc::{ErrorObject, Notification, codes},
    protocol::{
        CacheScope, CallToolRequestParams, CallToolResult, DiscoverResult, InitializeRequestParams,
        InitializeResult, ListChangedCapability, ListToolsResult, PaginatedRequestParams,
        ProtocolVersion, ServerCapabilities, meta, methods,
    },
    session::{Dispatch, HandlerResult, IncomingRequest, Phase, RequestContext, Session},
};

/// The dispatch of one server session.
pub(crate) struct ServerDispatch {
    server: Arc<Inner>,
    session_id: u64,
}

impl ServerDispatch {
    pub(crate) fn new(server: Arc<Inner>, session_id: u64) -> Self {
        ServerDispatch { server, session_id }
    }
}

impl Dispatch for ServerDispatch {
    fn request(
        &self,
        request: IncomingRequest,
        ctx: RequestContext,
    ) -> futures::future::BoxFuture<'static, HandlerResult> {
        let server = self.server.clone();
        Box::pin(async move { handle(&server, request, ctx).await })
    }

    fn is_sequential(&self, method: &str) -> bool {
        method == methods::INITIALIZE
    }

    fn notification(&self, notification: Notification, session: &Session) {
        if notification.method == methods::INITIALIZED {
            session.update_state(|s| {
                if s.phase == Phase::Initializing {
                    s.phase = Phase::Ready;
                }
            });
        }
    }

    fn closed(&self, _session: &Session) {
        self.server.sessions.lock().remove(&self.session_id);
    }
}

/// Methods that exist only in the handshake era.
const REMOVED_IN_STATELESS: &[&str] = &[
    methods::INITIALIZE,
    methods::PING,
    methods::LOGGING_SET_LEVEL,
    methods::RESOURCES_SUBSCRIBE,
    methods::RESOURCES_UNSUBSCRIBE,
];

async fn handle(server: &Inner, request: IncomingRequest, ctx: RequestContext) -> HandlerResult {
    let stateless = stateless_version(server, &ctx)?;
    let method = request.method.as_str();
    let params = request.params.as_deref();
    match (stateless, method) {
        (None, methods::INITIALIZE) => initialize(server, params, &ctx),
        (_, methods::DISCOVER) => respond(server, stateless, &discover(server)),
        (Some(_), m) if REMOVED_IN_STATELESS.contains(&m) => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: `{m}` does not exist in protocol version 2026-07-28"),
        )),
        (None, _) if !ctx.session().state().is_initialized() => {
            Err(ErrorObject::invalid_params(format!(
                "Invalid params for `{method}`: the request declares no `_meta[\"{}\"]` and the session \
                 is not initialized (send `initialize` first, or declare a protocol version)",
                meta::PROTOCOL_VERSION
            )))
        }
        (_, methods::TOOLS_LIST) => {
            let p: PaginatedRequestParams = parse_params(method, params)?;
            let result = list_tools(server, p.cursor.as_deref(), stateless)?;
            respond(server, stateless, &result)
        }
        (_, methods::TOOLS_CALL) => {
            let p: CallToolRequestParams = parse_params(method, params)?;
            let result = call_tool(server, p, ctx).await?;
            respond(server, stateless, &result)
        }
        _ => Err(ErrorObject::method_not_found(method)),
    }
}

/// The stateless revision a request declares in `_meta`, if it declares one.
fn stateless_version(
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
    .with_data(json!({
        "requested": requested,
        "supported": supported_versions(server),
    }))
}

fn supported_versions(server: &Inner) -> Vec<&'static str> {
    server.versions.iter().rev().map(|v| v.as_str()).collect()
}

fn parse_params<T: DeserializeOwned + Default>(
    method: &str,
    params: Option<&RawValue>,
) -> Result<T, ErrorObject> {
    match params {
        None => Ok(T::default()),
        Some(raw) => parse_required(method, raw),
    }
}

fn parse_required<T: DeserializeOwned>(method: &str, raw: &RawValue) -> Result<T, ErrorObject> {
    serde_json::from_str(raw.get()).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line").next().unwrap_or(&msg);
        ErrorObject::invalid_params(format!("Invalid params for `{method}`: {msg}"))
    })
}

/// Serializes a result; stateless results get `resultType` and the server's identity.
fn respond<T: Serialize>(
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

fn capabilities(_server: &Inner) -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ListChangedCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn initialize(server: &Inner, params: Option<&RawValue>, ctx: &RequestContext) -> HandlerResult {
    let session = ctx.session();
    if session.state().is_initialized() {
        return Err(ErrorObject::invalid_request(
            "Invalid request: the session is already initialized",
        ));
    }
    let Some(raw) = params else {
        return Err(ErrorObject::invalid_params(
            "Invalid params for `initialize`: params are required",
        ));
    };
    let p: InitializeRequestParams = parse_required(methods::INITIALIZE, raw)?;
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
        capabilities: capabilities(server),
        server_info: server.info.clone(),
        instructions: server.instructions.clone(),
        meta: None,
        extra: Default::default(),
    };
    respond(server, None, &result)
}

fn discover(server: &Inner) -> DiscoverResult {
    DiscoverResult {
        supported_versions: supported_versions(server)
            .into_iter()
            .map(str::to_owned)
            .collect(),
        capabilities: capabilities(server),
        instructions: server.instructions.clone(),
        ttl_ms: server.list_ttl.as_millis() as u64,
        cache_scope: CacheScope::Private,
        meta: None,
        extra: Default::default(),
    }
}

fn list_tools(
    server: &Inner,
    cursor: Option<&str>,
    stateless: Option<ProtocolVersion>,
) -> Result<ListToolsResult, ErrorObject> {
    let tools = server.tools.read();
    let (range, next_cursor) = pagination::page(
        methods::TOOLS_LIST,
        cursor,
        tools.order.len(),
        server.page_size,
    )?;
    let page = tools.order[range]
        .iter()
        .filter_map(|name| tools.by_name.get(name))
        .map(|t| t.tool.clone())
        .collect();
    let mut result = ListToolsResult {
        tools: page,
        next_cursor,
        ..Default::default()
    };
    if stateless.is_some() {
        result
            .extra
            .insert("ttlMs".into(), json!(server.list_ttl.as_millis() as u64));
        result
            .extra
            .insert("cacheScope".into(), json!(CacheScope::Private));
    }
    Ok(result)
}

async fn call_tool(
    server: &Inner,
    params: CallToolRequestParams,
    ctx: RequestContext,
) -> Result<CallToolResult, ErrorObject> {
    let tool = server
        .tools
        .read()
        .by_name
        .get(&params.name)
        .cloned()
        .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown tool: {}", params.name)))?;
    let arguments = Value::Object(params.arguments.unwrap_or_default());
    if let Err(problems) = tool.input.validate(&arguments) {
        // Since 2025-11-25 argument errors are tool results, so the model can correct itself.
        return Ok(CallToolResult::error(format!(
            "Invalid arguments for tool `{}`: {}",
            tool.tool.name,
            problems.join("; ")
        )));
    }
    match tool.handler.call(arguments, ctx).await {
        Ok(result) => Ok(finish_result(&tool, result)),
        Err(super::ToolError::Failed(message)) => Ok(CallToolResult::error(message)),
        Err(super::ToolError::Protocol(error)) => Err(error),
    }
}
