//! The host for JavaScript (`Host`): the servers of one `mcpServers` config behind one set of
//! namespaced tools, and the agent loop with a JavaScript model callback.
//!
//! Everything a host does (concurrent start with per-server timeouts, one session per server,
//! cached lists, restarts, routing, the loop itself) is `oxmcp::host`; here values are
//! converted and the model callback is adapted to the core's [`Model`] trait.

use std::{sync::Arc, time::Duration};

use napi::{Env, Status, bindgen_prelude::PromiseRaw, threadsafe_function::ThreadsafeFunction};
use napi_derive::napi;
use oxmcp::{
    Error,
    host::{
        AgentOptions, Approval, ApprovalFuture, ApprovalHook, ApprovalRequest, Approver, Config,
        Host, HostOptions, Model, ModelRequest, agent::ModelFuture,
    },
    schema::{NameMap, NameRules, Namespace},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    cancel::Cancellation,
    client::{
        JsProgress, outcome, request_options, task_arguments, task_call_options, unless_cancelled,
    },
    error::{cancelled, invalid, to_js},
    json::{self, Envelope, Settled},
    schema::{JsTranslateOptions, NativeTranslation, provider},
};

/// `(requestJson) => envelopeJson | Promise<envelopeJson>`: the model, wrapped by
/// `lib/handlers.cjs`.
type JsModelFn = ThreadsafeFunction<String, Envelope, String, Status, false, true>;

/// `HostOptions` from JavaScript.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsHostOptions {
    /// Per-server connect timeout in ms (a config entry's own `timeout` wins).
    timeout: Option<f64>,
    restart: Option<bool>,
    client_name: Option<String>,
    client_version: Option<String>,
    stderr_tail: Option<u32>,
}

impl JsHostOptions {
    fn into_core(self) -> napi::Result<HostOptions> {
        let mut out = HostOptions::default();
        if let Some(ms) = self.timeout {
            if !(ms.is_finite() && ms > 0.0) {
                return Err(invalid(format!(
                    "timeout must be a positive number of ms, not {ms}"
                )));
            }
            out.connect_timeout = Duration::from_secs_f64(ms / 1000.0);
        }
        if let Some(r) = self.restart {
            out.restart = r;
        }
        if let Some(n) = self.client_name {
            out.client_name = n;
        }
        if let Some(v) = self.client_version {
            out.client_version = v;
        }
        if let Some(n) = self.stderr_tail {
            out.stderr_tail = n as usize;
        }
        Ok(out)
    }
}

/// `runAgent` options from JavaScript (the translate options sit beside them).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsAgentOptions {
    provider: String,
    max_steps: Option<u32>,
    strict: Option<bool>,
    namespace: Option<String>,
}

/// The JavaScript model as the core's [`Model`].
struct JsModel(Arc<JsModelFn>);

impl Model for JsModel {
    fn turn(&self, request: ModelRequest) -> ModelFuture<'_> {
        let f = self.0.clone();
        Box::pin(async move {
            let payload = json!({
                "provider": request.provider.as_str(),
                "messages": request.messages,
                "tools": request.tools,
                "step": request.step,
            })
            .to_string();
            let settled = Settled::from_call(f.call_async_catch(payload).await).await;
            match settled {
                Settled::Ok(turn) => Ok(turn),
                // The JavaScript layer rethrows the model's own error object; this message is
                // what is left when it cannot (the error was not an object, say).
                Settled::Threw(message) => Err(Error::InvalidArgument(format!(
                    "the model callback failed: {message}"
                ))),
                Settled::Rpc(obj) => Err(Error::Rpc(obj)),
            }
        })
    }
}

/// The JavaScript `approve` callback (wrapped like the model) as the core's [`Approver`]: its
/// answer is read by [`Approval::from_value`]; a throw keeps the call from running.
struct JsApprover(Arc<JsModelFn>);

impl Approver for JsApprover {
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture<'_> {
        let f = self.0.clone();
        Box::pin(async move {
            let payload = serde_json::to_string(&request)
                .map_err(|e| Error::InvalidArgument(e.to_string()))?;
            match Settled::from_call(f.call_async_catch(payload).await).await {
                Settled::Ok(answer) => Approval::from_value(answer),
                Settled::Threw(message) => Err(Error::InvalidArgument(format!(
                    "the approve callback failed: {message}"
                ))),
                Settled::Rpc(obj) => Err(Error::Rpc(obj)),
            }
        })
    }
}

/// A running host.
#[napi]
pub struct NativeHost {
    inner: Arc<Host>,
}

async fn started(config: Config, options: String) -> napi::Result<NativeHost> {
    let options = json::parse::<JsHostOptions>("Host options", &options)?.into_core()?;
    Ok(NativeHost {
        inner: Arc::new(Host::start(config, options).await),
    })
}

/// Loads a config file and starts its servers; only a bad config rejects.
#[napi]
pub async fn host_from_file(path: String, options: String) -> napi::Result<NativeHost> {
    let config = Config::from_file(&path).map_err(to_js)?;
    started(config, options).await
}

/// Starts the servers of a config given as a value (`{mcpServers: ...}` or `{servers: ...}`).
#[napi]
pub async fn host_from_value(config: String, options: String) -> napi::Result<NativeHost> {
    let value: Value = json::parse("config", &config)?;
    let config = Config::from_value(&value, &|k| std::env::var(k).ok()).map_err(to_js)?;
    started(config, options).await
}

#[napi]
impl NativeHost {
    /// The enabled servers' names, in config order.
    #[napi(getter)]
    pub fn server_names(&self) -> Vec<String> {
        self.inner.server_names()
    }

    /// Every server's state (`connected`, `failed` with the error and stderr tail, `disabled`).
    #[napi]
    pub async fn status(&self) -> napi::Result<String> {
        json::text(&self.inner.status().await)
    }

    /// The connected servers' tools (cached until `list_changed`), each with its namespaced
    /// name `server__tool`: `[{name, server, tool}]`.
    #[napi]
    pub async fn tools(&self) -> napi::Result<String> {
        let lists = self.inner.tools().await;
        let pairs: Vec<(String, String)> = lists
            .iter()
            .flat_map(|(s, tools)| tools.iter().map(|t| (s.clone(), t.name.clone())))
            .collect();
        let names = NameMap::assign(&pairs, NameRules::Strict, Namespace::Always);
        let mut out = Vec::with_capacity(pairs.len());
        for (server, tools) in &lists {
            for tool in tools.iter() {
                let name = names.name_of(server, &tool.name).unwrap_or(&tool.name);
                out.push(json!({ "name": name, "server": server, "tool": tool }));
            }
        }
        json::text(&out)
    }

    /// The connected servers' resources: `{server: [Resource]}`.
    #[napi]
    pub async fn resources(&self) -> napi::Result<String> {
        per_server(self.inner.resources().await)
    }

    /// The connected servers' prompts: `{server: [Prompt]}`.
    #[napi]
    pub async fn prompts(&self) -> napi::Result<String> {
        per_server(self.inner.prompts().await)
    }

    /// The tools in `provider`'s format, with the way back.
    #[napi]
    pub async fn translate(
        &self,
        provider_name: String,
        options: String,
    ) -> napi::Result<NativeTranslation> {
        let provider = provider(&provider_name)?;
        let options =
            json::parse::<JsTranslateOptions>("translate options", &options)?.into_core()?;
        Ok(NativeTranslation {
            inner: self.inner.translate(provider, &options).await,
        })
    }

    /// `tools/call` on one server (restarted first if it crashed).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn call_tool<'env>(
        &self,
        env: &'env Env,
        server: String,
        tool: String,
        arguments: Option<String>,
        timeout_ms: Option<f64>,
        cancel: Option<&Cancellation>,
        on_progress: Option<JsProgress>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let arguments = json::parse_opt("tool arguments", arguments)?.unwrap_or(json!({}));
        let options = request_options(timeout_ms, cancel, on_progress)?;
        let (host, cancel) = (self.inner.clone(), cancel.cloned());
        env.spawn_future(async move {
            let r = host
                .call_tool_with(&server, &tool, arguments, options)
                .await;
            json::text(&outcome(cancel, r)?)
        })
    }

    /// `tools/call` on one server as a task (`host.callTool(.., {task: true})`): resolves with
    /// the task's result. `options`: JSON `{ttlMs?}`; `cancel` abandons the creation, or
    /// cancels the task (`tasks/cancel`) once it exists.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn call_tool_as_task<'env>(
        &self,
        env: &'env Env,
        server: String,
        tool: String,
        arguments: Option<String>,
        options: Option<String>,
        cancel: Option<&Cancellation>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let arguments = task_arguments(arguments)?;
        let options = task_call_options(options)?;
        let (host, cancel) = (self.inner.clone(), cancel.cloned());
        env.spawn_future(async move {
            let handle = unless_cancelled(cancel.as_ref(), async {
                host.call_tool_as_task(&server, &tool, arguments, options)
                    .await
                    .map_err(to_js)
            })
            .await?;
            let token = cancel.map(|c| c.token).unwrap_or_default();
            tokio::select! {
                r = handle.result() => json::text(&r.map_err(to_js)?),
                () = token.cancelled() => {
                    // The task outlives this call: tell the server it is no longer wanted.
                    let _ = handle.cancel().await;
                    Err(cancelled())
                }
            }
        })
    }

    /// `resources/read` on one server.
    #[napi]
    pub async fn read_resource(&self, server: String, uri: String) -> napi::Result<String> {
        let r = self
            .inner
            .read_resource(&server, &uri)
            .await
            .map_err(to_js)?;
        json::text(&r)
    }

    /// `prompts/get` on one server.
    #[napi]
    pub async fn get_prompt(
        &self,
        server: String,
        name: String,
        arguments: Option<String>,
    ) -> napi::Result<String> {
        let arguments = match json::parse_opt("prompt arguments", arguments)? {
            None => Default::default(),
            Some(v) => serde_json::from_value(v)
                .map_err(|e| invalid(format!("prompt arguments must map names to strings: {e}")))?,
        };
        let r = self
            .inner
            .get_prompt(&server, &name, arguments)
            .await
            .map_err(to_js)?;
        json::text(&r)
    }

    /// Runs the agent loop; the transcript as JSON text.
    #[napi]
    pub fn run_agent<'env>(
        &self,
        env: &'env Env,
        model: JsModelFn,
        messages: String,
        options: String,
        cancel: Option<&Cancellation>,
        approve: Option<JsModelFn>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let messages: Vec<Value> = json::parse("messages (an array)", &messages)?;
        let js: JsAgentOptions = json::parse("runAgent options", &options)?;
        let mut options = AgentOptions::new(provider(&js.provider)?);
        options.translate = JsTranslateOptions {
            strict: js.strict,
            namespace: js.namespace,
        }
        .into_core()?;
        if let Some(n) = js.max_steps {
            if n == 0 {
                return Err(invalid("maxSteps must be at least 1"));
            }
            options.max_steps = n as usize;
        }
        options.approve = approve.map(|f| ApprovalHook(Arc::new(JsApprover(Arc::new(f)))));
        let model = JsModel(Arc::new(model));
        let token = cancel.map(|c| c.token.clone()).unwrap_or_default();
        let host = self.inner.clone();
        env.spawn_future(async move {
            // Dropping the loop on abort drops its in-flight tool calls, which tells their
            // servers (`notifications/cancelled`).
            let transcript = tokio::select! {
                r = host.run_agent(&model, messages, &options) => r.map_err(to_js)?,
                _ = token.cancelled() => return Err(cancelled()),
            };
            json::text(&transcript)
        })
    }

    /// Closes every session (children go through the shutdown ladder).
    #[napi]
    pub async fn close(&self) {
        self.inner.close().await;
    }
}

/// Per-server lists (`Host::resources`, `Host::prompts`) as one JSON object `{server: list}`.
fn per_server<T: Serialize>(lists: Vec<(String, Arc<T>)>) -> napi::Result<String> {
    let lists: serde_json::Map<String, Value> = lists
        .into_iter()
        .map(|(server, list)| (server, serde_json::to_value(&*list).unwrap_or(Value::Null)))
        .collect();
    json::text(&lists)
}
