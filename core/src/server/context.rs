//! What a server handler gets: the request's context plus the server-side powers that depend
//! on the era. `elicit`, `sample` and `list_roots` are written once and work with both kinds of
//! client: in the handshake era they send a request to the client and wait for its answer; in
//! the stateless era they return the answer carried by the client's retried request, or end
//! this round with an `InputRequiredResult` and the handler runs again on the retry.
//!
//! **Work done before such a call must be safe to repeat**: on a stateless connection the
//! handler starts over from the top on every retry, with the answers given so far.
//!
//! Questions the handler's own future asks side by side (`join!`, [`Context::ask_all`]) go to
//! the client in one round. A question from a task the handler spawned joins the round when
//! that task gets to run before the round ends (the round yields once for it); otherwise it is
//! asked in the next round, so the call still ends, one round later.

use std::{ops::Deref, sync::Arc, task::Poll};

use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};

use super::input::InputRound;
use crate::{
    Error, Result,
    jsonrpc::{ErrorObject, codes},
    protocol::{
        CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
        ElicitResult, ListRootsResult, LoggingLevel, ProtocolVersion, methods,
    },
    schema::SchemaValidator,
    session::{RequestContext, RequestOptions},
};

/// The context of one request to a server handler. Dereferences to [`RequestContext`] for the
/// id, `_meta`, cancellation and progress.
#[derive(Clone, Debug)]
pub struct Context {
    request: RequestContext,
    pub(crate) scope: Arc<Scope>,
}

/// Server-side facts about one request.
#[derive(Debug)]
pub(crate) struct Scope {
    /// The stateless revision the request declared, if it is a stateless request.
    pub(crate) stateless: Option<ProtocolVersion>,
    /// The capabilities of the client for this request.
    pub(crate) client_capabilities: Value,
    /// The lowest level that may be sent (`None`: send nothing).
    pub(crate) log_level: Option<LoggingLevel>,
    /// Answers and new questions of a stateless multi round-trip request.
    pub(crate) input: Option<Arc<InputRound>>,
    /// The task this call is or may become (a tool with task support, called as a task).
    pub(crate) task: Option<Arc<super::tasks::TaskLink>>,
}

impl Deref for Context {
    type Target = RequestContext;
    fn deref(&self) -> &RequestContext {
        &self.request
    }
}

impl Context {
    pub(crate) fn new(request: RequestContext, scope: Scope) -> Self {
        Context {
            request,
            scope: Arc::new(scope),
        }
    }

    /// The request context.
    pub fn request(&self) -> &RequestContext {
        &self.request
    }

    /// Whether the client declared a capability (`sampling`, `elicitation`, `roots`, …) for
    /// this request.
    pub fn client_supports(&self, capability: &str) -> bool {
        self.scope
            .client_capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }

    /// Turns this call into a task, for a tool registered with
    /// [`TaskStart::Deferred`](super::TaskStart::Deferred): the client gets the task's id
    /// now and collects the result later, while the handler goes on. Questions asked before
    /// this are asked within the request (as a plain call asks them: multi round-trip in the
    /// stateless era); questions asked after it belong to the task.
    ///
    /// Returns the task's id, or `None` when this call is not a task (the client did not ask
    /// for one, or the tool does not support tasks): the handler simply goes on and its
    /// result is the call's answer. For a tool that starts its tasks immediately (the
    /// default) this returns the id at once.
    pub async fn start_task(&self) -> Result<Option<String>> {
        match &self.scope.task {
            None => Ok(None),
            Some(link) => link.start().await.map(Some),
        }
    }

    /// The id of the task this call runs as, once it is one.
    pub fn task_id(&self) -> Option<&str> {
        self.scope.task.as_ref().and_then(|t| t.id())
    }

    /// Says what the task is doing, as its `statusMessage` (clients see it in `tasks/get`).
    /// Does nothing for a call that is not a task.
    pub async fn report_status(&self, message: &str) -> Result<()> {
        match self.scope.task.as_ref().filter(|t| t.id().is_some()) {
            Some(link) => link.report_status(message).await,
            None => Ok(()),
        }
    }

    /// Sends a log message for this request, if the client asked for this level: in the
    /// handshake era by `logging/setLevel` (everything until it does), in the stateless era by
    /// `_meta` `io.modelcontextprotocol/logLevel` (nothing unless it does).
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) -> Result<()> {
        if self.scope.log_level.is_none_or(|min| level < min) {
            return Ok(());
        }
        let mut params = json!({ "level": level, "data": data });
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.request
            .notify(methods::LOGGING_MESSAGE, Some(params))
            .await
    }

    /// Like [`Context::elicit`], naming the question `key` in a stateless round's
    /// `inputRequests` (the handshake era ignores the key).
    pub async fn elicit_keyed(
        &self,
        key: &str,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult> {
        self.elicit_inner(Some(key), params).await
    }

    /// Like [`Context::sample`], with the question's key chosen.
    pub async fn sample_keyed(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult> {
        self.sample_inner(Some(key), params).await
    }

    /// Like [`Context::list_roots`], with the question's key chosen.
    pub async fn list_roots_keyed(&self, key: &str) -> Result<ListRootsResult> {
        self.list_roots_inner(Some(key)).await
    }

    /// Asks several questions together and answers each, in order. This is how a binding
    /// hands over every question its handler asked in one tick of its event loop
    /// (`Promise.all`, `asyncio.gather`): in a stateless round they all register before the
    /// round can end, so they go to the client in one `InputRequiredResult`. A question whose
    /// params do not parse fails alone, with [`Error::InvalidArgument`].
    pub async fn ask_all(&self, questions: Vec<Question>) -> Vec<Result<Value>> {
        let asked = futures::future::join_all(questions.into_iter().map(|q| self.ask_one(q)));
        let mut asked = std::pin::pin!(asked);
        // The join polls every question once on its first poll: that is where they register.
        let first = {
            let _hold = self.scope.input.as_deref().map(InputRound::hold);
            futures::poll!(asked.as_mut())
        };
        match first {
            Poll::Ready(answers) => answers,
            Poll::Pending => asked.await,
        }
    }

    async fn ask_one(&self, question: Question) -> Result<Value> {
        fn parse<T: DeserializeOwned>(what: &str, params: Value) -> Result<T> {
            serde_json::from_value(params)
                .map_err(|e| Error::InvalidArgument(format!("{what}: {e}")))
        }
        let key = question.key.as_deref();
        let answer = match question.kind {
            QuestionKind::Sample => {
                let params = parse("sampling params", question.params)?;
                serde_json::to_value(self.sample_inner(key, params).await?)
            }
            QuestionKind::Elicit => {
                let params = parse("elicitation params", question.params)?;
                serde_json::to_value(self.elicit_inner(key, params).await?)
            }
            QuestionKind::Roots => serde_json::to_value(self.list_roots_inner(key).await?),
        };
        answer.map_err(|e| Error::Protocol(format!("unserialisable answer: {e}")))
    }

    /// Asks the user, through the client, to fill in a form or visit a URL.
    ///
    /// An accepted form answer is checked against the requested schema; one that does not
    /// match is an error, never handed to the handler.
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult> {
        self.elicit_inner(None, params).await
    }

    async fn elicit_inner(
        &self,
        key: Option<&str>,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult> {
        let url_mode = params.is_url();
        let required = if url_mode {
            json!({ "elicitation": { "url": {} } })
        } else {
            json!({ "elicitation": {} })
        };
        let supported = self.client_supports("elicitation")
            && (!url_mode
                || self
                    .scope
                    .client_capabilities
                    .pointer("/elicitation/url")
                    .is_some());
        let mut params = params;
        if url_mode {
            // 2025-11-25 requires an id to correlate its completion notice; 2026-07-28 dropped both.
            match self.scope.stateless {
                Some(_) => params.elicitation_id = None,
                None if params.elicitation_id.is_none() => {
                    params.elicitation_id = Some(crate::random::id128())
                }
                None => {}
            }
        }
        if let (None, Some(version)) = (self.scope.stateless, self.session().protocol_version()) {
            super::compat::check_elicitation(&params, version)?;
        }
        let schema = params.requested_schema.clone();
        let result: ElicitResult = self
            .ask(
                "elicitation",
                key,
                methods::ELICITATION_CREATE,
                serde_json::to_value(&params),
                supported,
                required,
            )
            .await?;
        if let (ElicitAction::Accept, Some(schema), Some(content)) =
            (result.action, schema, &result.content)
        {
            let validator = SchemaValidator::compile(&Value::Object(schema))?;
            if let Err(problems) = validator.validate(&Value::Object(content.clone())) {
                return Err(Error::Protocol(format!(
                    "the elicitation answer does not match the requested schema: {}",
                    problems.join("; ")
                )));
            }
        }
        Ok(result)
    }

    /// Asks the client's model for a completion.
    pub async fn sample(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult> {
        self.sample_inner(None, params).await
    }

    async fn sample_inner(
        &self,
        key: Option<&str>,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult> {
        let uses_tools = params.tools.as_ref().is_some_and(|t| !t.is_empty());
        let supported = self.client_supports("sampling")
            && (!uses_tools
                || self
                    .scope
                    .client_capabilities
                    .pointer("/sampling/tools")
                    .is_some());
        let required = if uses_tools {
            json!({ "sampling": { "tools": {} } })
        } else {
            json!({ "sampling": {} })
        };
        self.ask(
            "sampling",
            key,
            methods::SAMPLING_CREATE_MESSAGE,
            serde_json::to_value(&params),
            supported,
            required,
        )
        .await
    }

    /// Asks the client for its roots.
    pub async fn list_roots(&self) -> Result<ListRootsResult> {
        self.list_roots_inner(None).await
    }

    async fn list_roots_inner(&self, key: Option<&str>) -> Result<ListRootsResult> {
        let supported = self.client_supports("roots");
        self.ask(
            "roots",
            key,
            methods::ROOTS_LIST,
            Ok(json!({})),
            supported,
            json!({ "roots": {} }),
        )
        .await
    }

    async fn ask<T: DeserializeOwned>(
        &self,
        kind: &'static str,
        key: Option<&str>,
        method: &str,
        params: serde_json::Result<Value>,
        supported: bool,
        required: Value,
    ) -> Result<T> {
        let params = params.map_err(|e| Error::InvalidArgument(e.to_string()))?;
        let decode = |v: Value| {
            serde_json::from_value::<T>(v)
                .map_err(|e| Error::Protocol(format!("invalid `{method}` answer: {e}")))
        };
        if let Some(link) = self.scope.task.as_ref().filter(|t| t.id().is_some()) {
            // A running task asks through the task (see `tasks::link`).
            return decode(link.ask(kind, key, method, params, supported).await?);
        }
        match &self.scope.input {
            Some(round) => {
                // Every question takes its turn in the count, keyed or not, so the automatic
                // keys of a handler do not shift when it names one of its questions.
                let auto = round.next_key(kind);
                let key = key.map_or(auto, str::to_owned);
                if let Some(answer) = round.answer(&key) {
                    return decode(answer);
                }
                if !supported {
                    round.fail(
                        ErrorObject::new(
                            codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                            format!("This request needs the client capability `{kind}`"),
                        )
                        .with_data(json!({ "requiredCapabilities": required })),
                    );
                } else {
                    round.ask(key, method, params);
                }
                // The round ends here: the dispatcher answers with what was asked and drops
                // this handler; the client's retry runs it again with the answer.
                std::future::pending().await
            }
            None => {
                if !supported {
                    let never_met = self.session().state().peer_capabilities.is_none();
                    return Err(Error::InvalidArgument(if never_met {
                        // Stateless HTTP: each request is served without a handshake, so there
                        // is no session through which the client could be asked.
                        format!(
                            "cannot ask the client for `{kind}`: this connection has no \
                             session (stateless HTTP), so the client declared no capabilities"
                        )
                    } else {
                        format!("the client did not declare the `{kind}` capability")
                    }));
                }
                decode(
                    self.request
                        .request(method, Some(params), RequestOptions::default())
                        .await?,
                )
            }
        }
    }
}

/// One question of [`Context::ask_all`], as a binding hands it over: JSON
/// `{"kind": "sample" | "elicit" | "roots", "params": {...}, "key": "..."}`.
#[derive(Clone, Debug, Deserialize)]
pub struct Question {
    /// What is asked.
    pub kind: QuestionKind,
    /// The request's params (`sampling/createMessage` or `elicitation/create`; none for roots).
    #[serde(default)]
    pub params: Value,
    /// The question's name in a stateless round's `inputRequests` (automatic when absent).
    #[serde(default)]
    pub key: Option<String>,
}

/// The kinds of question a server handler can ask its client.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum QuestionKind {
    /// `sampling/createMessage`.
    Sample,
    /// `elicitation/create`.
    Elicit,
    /// `roots/list`.
    Roots,
}
