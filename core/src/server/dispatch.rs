//! What a server does with each request, in either era.
//!
//! A request that declares a stateless revision in `_meta` is served from that `_meta` alone.
//! A request without one belongs to the handshake era and needs an initialized session.
//! Methods the 2026-07-28 revision removed (`initialize`, `ping`, `logging/setLevel`,
//! `resources/(un)subscribe`) are "method not found" when asked for statelessly, and keep
//! working for handshake-era clients.

use std::{future::Future, sync::Arc};

use serde_json::{Value, json};

use super::{
    Context, Inner, features, handshake,
    input::{self, InputRound},
    lifecycle::{self, parse_params, parse_required, respond},
    session_data::SessionData,
    subscriptions, tasks,
};
use crate::{
    jsonrpc::{ErrorObject, Notification, codes},
    protocol::{
        CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams, JsonObject,
        LoggingLevel, PaginatedRequestParams, ProtocolVersion, ResourceUriParams,
        SubscriptionsListenRequestParams, meta, methods,
        tasks::{TASKS_CANCEL, TASKS_GET, TASKS_LIST, TASKS_RESULT, TASKS_UPDATE},
    },
    session::{Dispatch, HandlerResult, IncomingRequest, RequestContext, Session},
};

/// The dispatch of one server session.
pub(crate) struct ServerDispatch {
    server: Arc<Inner>,
    session_id: u64,
    data: Arc<SessionData>,
}

impl ServerDispatch {
    pub(crate) fn new(server: Arc<Inner>, session_id: u64, data: Arc<SessionData>) -> Self {
        ServerDispatch {
            server,
            session_id,
            data,
        }
    }
}

impl Dispatch for ServerDispatch {
    fn request(
        &self,
        request: IncomingRequest,
        ctx: RequestContext,
    ) -> futures::future::BoxFuture<'static, HandlerResult> {
        let server = self.server.clone();
        let data = self.data.clone();
        let session_id = self.session_id;
        Box::pin(async move { handle(&server, session_id, &data, request, ctx).await })
    }

    fn is_sequential(&self, method: &str) -> bool {
        method == methods::INITIALIZE
    }

    fn notification(&self, notification: Notification, session: &Session) {
        if notification.method == methods::INITIALIZED {
            handshake::initialized(session, &self.data);
        }
    }

    fn closed(&self, _session: &Session) {
        self.server.sessions.lock().remove(&self.session_id);
        self.server
            .listeners
            .lock()
            .retain(|(session, _), _| *session != self.session_id);
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

/// Methods that exist only in the stateless era.
const STATELESS_ONLY: &[&str] = &[methods::SUBSCRIPTIONS_LISTEN];

async fn handle(
    server: &Arc<Inner>,
    session_id: u64,
    data: &Arc<SessionData>,
    request: IncomingRequest,
    ctx: RequestContext,
) -> HandlerResult {
    let stateless = lifecycle::stateless_version(server, &ctx)?;
    let method = request.method.as_str();
    let params = request.params.as_deref();
    // A request that may ask the client for input: what identifies it, and where its answers
    // ride.
    let round = |salient: Value, extra| Round {
        server: server.as_ref(),
        data,
        ctx: &ctx,
        stateless,
        method,
        salient,
        extra,
    };
    match (stateless, method) {
        (None, methods::INITIALIZE) => lifecycle::initialize(server, params, &ctx),
        (_, methods::DISCOVER) => respond(server, stateless, &lifecycle::discover(server)),
        (Some(_), m) if REMOVED_IN_STATELESS.contains(&m) => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: `{m}` does not exist in protocol version 2026-07-28"),
        )),
        (None, m) if STATELESS_ONLY.contains(&m) => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!(
                "Method not found: `{m}` needs protocol version 2026-07-28 declared in `_meta`"
            ),
        )),
        (None, _) if !ctx.session().is_initialized() => Err(ErrorObject::invalid_params(format!(
            "Invalid params for `{method}`: the request declares no `_meta[\"{}\"]` and the session is not \
             initialized (send `initialize` first, or declare a protocol version)",
            meta::PROTOCOL_VERSION
        ))),
        (_, methods::TOOLS_LIST) => list(server, stateless, method, params, features::list_tools),
        (_, methods::RESOURCES_LIST) => {
            list(server, stateless, method, params, features::list_resources)
        }
        (_, methods::RESOURCES_TEMPLATES_LIST) => {
            list(server, stateless, method, params, features::list_templates)
        }
        (_, methods::PROMPTS_LIST) => {
            list(server, stateless, method, params, features::list_prompts)
        }
        (_, methods::TOOLS_CALL) => {
            let CallToolRequestParams {
                name,
                arguments,
                extra,
                ..
            } = parse_required(method, params)?;
            let tool = features::find_tool(server, &name)?;
            let plan = tasks::plan(server, &tool, stateless, &ctx, &extra)?;
            let salient = salient_of(
                stateless,
                || json!({ "name": name, "arguments": arguments }),
            );
            let scope = round(salient, &extra);
            match plan {
                None => {
                    scope
                        .run(|ctx| features::call_tool(tool, arguments, ctx))
                        .await
                }
                Some(plan) => {
                    scope
                        .run_task(server, session_id, plan, tool, arguments)
                        .await
                }
            }
        }
        (Some(_), TASKS_RESULT | TASKS_LIST) => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!(
                "Method not found: `{method}` was removed in protocol version 2026-07-28 (use `tasks/get`)"
            ),
        )),
        (None, TASKS_UPDATE) => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            "Method not found: `tasks/update` needs protocol version 2026-07-28 declared in `_meta`",
        )),
        (_, TASKS_GET | TASKS_UPDATE | TASKS_CANCEL | TASKS_RESULT | TASKS_LIST) => {
            tasks::serve(server, session_id, &ctx, stateless, method, params).await
        }
        (_, methods::RESOURCES_READ) => {
            let p: ResourceUriParams = parse_required(method, params)?;
            let salient = salient_of(stateless, || json!({ "uri": p.uri }));
            let scope = round(salient, &p.extra);
            scope
                .run(|ctx| features::read_resource(server, &p.uri, stateless, ctx))
                .await
        }
        (_, methods::PROMPTS_GET) => {
            let p: GetPromptRequestParams = parse_required(method, params)?;
            let salient = salient_of(
                stateless,
                || json!({ "name": p.name, "arguments": p.arguments }),
            );
            let scope = round(salient, &p.extra);
            scope.run(|ctx| features::get_prompt(server, &p, ctx)).await
        }
        (_, methods::COMPLETION_COMPLETE) => {
            let p: CompleteRequestParams = parse_required(method, params)?;
            let c = context(data, &ctx, stateless, None, None);
            respond(server, stateless, &features::complete(server, p, c).await?)
        }
        (None, methods::LOGGING_SET_LEVEL) => {
            features::set_level(data, parse_required(method, params)?);
            respond(server, None, &json!({}))
        }
        (None, methods::RESOURCES_SUBSCRIBE) => {
            let p: ResourceUriParams = parse_required(method, params)?;
            data.subscriptions.lock().insert(p.uri);
            respond(server, None, &json!({}))
        }
        (None, methods::RESOURCES_UNSUBSCRIBE) => {
            let p: ResourceUriParams = parse_required(method, params)?;
            data.subscriptions.lock().remove(&p.uri);
            respond(server, None, &json!({}))
        }
        (Some(version), methods::SUBSCRIPTIONS_LISTEN) => {
            let p: SubscriptionsListenRequestParams = parse_required(method, params)?;
            subscriptions::listen(server, session_id, p, &ctx, version).await
        }
        _ => Err(ErrorObject::method_not_found(method)),
    }
}

/// What identifies a multi round-trip request, for sealing its state: only the stateless era
/// has rounds, so a handshake-era request skips building it (a copy of its arguments).
fn salient_of(stateless: Option<ProtocolVersion>, build: impl FnOnce() -> Value) -> Value {
    match stateless {
        Some(_) => build(),
        None => Value::Null,
    }
}

/// The server context of one request.
fn context(
    data: &Arc<SessionData>,
    ctx: &RequestContext,
    stateless: Option<ProtocolVersion>,
    input: Option<Arc<InputRound>>,
    task: Option<Arc<tasks::TaskLink>>,
) -> Context {
    let log_level = match stateless {
        // Stateless requests opt in to log messages per request, or get none.
        Some(_) => ctx
            .meta()
            .and_then(|m| m.get(meta::LOG_LEVEL))
            .and_then(|l| serde_json::from_value::<LoggingLevel>(l.clone()).ok()),
        None => Some(data.handshake_log_level()),
    };
    let client_capabilities = ctx.client_capabilities().unwrap_or_else(|| json!({}));
    Context::new(
        ctx.clone(),
        super::context::Scope {
            stateless,
            client_capabilities,
            log_level,
            input,
            task,
        },
    )
}

/// A request that may take several round trips (tools/call, resources/read, prompts/get).
/// A paginated list request: its cursor handed to `list`, the page answered.
fn list<T: serde::Serialize>(
    server: &Inner,
    stateless: Option<ProtocolVersion>,
    method: &str,
    params: Option<&serde_json::value::RawValue>,
    list: impl FnOnce(&Inner, Option<&str>, Option<ProtocolVersion>) -> Result<T, ErrorObject>,
) -> HandlerResult {
    let p: PaginatedRequestParams = parse_params(method, params)?;
    respond(
        server,
        stateless,
        &list(server, p.cursor.as_deref(), stateless)?,
    )
}

struct Round<'a> {
    server: &'a Inner,
    data: &'a Arc<SessionData>,
    ctx: &'a RequestContext,
    stateless: Option<ProtocolVersion>,
    method: &'a str,
    salient: Value,
    extra: &'a JsonObject,
}

impl Round<'_> {
    /// Runs the handler. In the stateless era it may end early with an `InputRequiredResult`
    /// (the handler asked the client something) or a protocol error (it needs a capability
    /// the client lacks); the handler future is then dropped.
    async fn run<T, F, Fut>(self, handler: F) -> HandlerResult
    where
        T: serde::Serialize,
        F: FnOnce(Context) -> Fut,
        Fut: Future<Output = Result<T, ErrorObject>>,
    {
        let Some(version) = self.stateless else {
            let result = handler(context(self.data, self.ctx, None, None, None)).await?;
            return respond(self.server, None, &result);
        };
        let digest = input::digest(&self.salient);
        let answers = input::answers_of(&self.server.sealer, self.method, &digest, self.extra)?;
        let round = Arc::new(InputRound::new(answers));
        let future = handler(context(
            self.data,
            self.ctx,
            Some(version),
            Some(round.clone()),
            None,
        ));
        let mut future = std::pin::pin!(future);
        let done = tokio::select! {
            result = &mut future => Some(result),
            _ = round.ended.notified() => None,
        };
        let done = match done {
            Some(result) => Some(result),
            None => input::settle(&round, future.as_mut()).await,
        };
        input::conclude(self.server, self.method, &digest, &round, version, done)
    }

    /// Runs a call that becomes a task (see `tasks::call_as_task`), with the answers of this
    /// round for the questions a deferred task asks before it starts.
    async fn run_task(
        self,
        server: &Arc<Inner>,
        session_id: u64,
        plan: tasks::TaskPlan,
        tool: Arc<super::tools::RegisteredTool>,
        arguments: Option<JsonObject>,
    ) -> HandlerResult {
        let round = match self.stateless {
            Some(_) => {
                let digest = input::digest(&self.salient);
                let answers =
                    input::answers_of(&self.server.sealer, self.method, &digest, self.extra)?;
                Some((digest, Arc::new(InputRound::new(answers))))
            }
            None => None,
        };
        let base = context(self.data, self.ctx, self.stateless, None, None);
        tasks::call_as_task(tasks::TaskCall {
            server,
            session_id,
            ctx: self.ctx,
            base: &base,
            method: self.method,
            plan,
            tool,
            arguments,
            round,
        })
        .await
    }
}
