//! The inspector's JSON API: what the page can ask of the host, by server name (never by
//! command). Each route takes a JSON object and answers one; an error is
//! `{"error": …, "kind": …}` with a 4xx status for the page's mistakes and 502 for a
//! server's failure.
//!
//! Arguments are checked against the tool's `inputSchema` here, before the call, and a
//! result's `structuredContent` against its `outputSchema` after it: the page shows both
//! checks, and they are the core's validator, the same one the host uses everywhere.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use http::StatusCode;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::servers::Servers;
use crate::{
    Error,
    protocol::LoggingLevel,
    schema::{Provider, SchemaValidator, ServerTools, TranslateOptions, translate},
    session::RequestOptions,
};

/// A route's answer: status and JSON body.
pub(crate) type Reply = (StatusCode, Value);

fn bad(message: impl Into<String>) -> Reply {
    (
        StatusCode::BAD_REQUEST,
        json!({"error": message.into(), "kind": "invalid_argument"}),
    )
}

fn failed(e: &Error) -> Reply {
    (
        StatusCode::BAD_GATEWAY,
        json!({"error": e.to_string(), "kind": e.kind().as_str()}),
    )
}

fn text<'a>(body: &'a Value, field: &str) -> Result<&'a str, Reply> {
    body.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("`{field}` must be a string")))
}

/// Answers `GET /api/events?after=N&wait=MS`.
pub(crate) async fn events(servers: &Servers, query: Option<&str>) -> Reply {
    let param = |name: &str| {
        query?
            .split('&')
            .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))?
            .parse::<u64>()
            .ok()
    };
    let after = param("after").unwrap_or(0);
    let wait = Duration::from_millis(param("wait").unwrap_or(15_000));
    (StatusCode::OK, servers.events.since(after, wait).await)
}

/// Answers a `POST /api/NAME` with its JSON body.
pub(crate) async fn post(servers: &Arc<Servers>, name: &str, body: Value) -> Reply {
    if !body.is_object() {
        return bad("the body must be a JSON object");
    }
    let result = match name {
        "connect" => connect(servers, &body).await,
        "call" => call(servers, &body).await,
        "cancel" => cancel(servers, &body),
        "read" => read(servers, &body).await,
        "subscribe" => subscribe(servers, &body).await,
        "prompt" => prompt(servers, &body).await,
        "translate" => translate_all(servers, &body).await,
        "answer" => answer(servers, &body),
        "roots" => roots(servers, &body).await,
        "log-level" => log_level(servers, &body).await,
        "ping" => ping(servers, &body).await,
        _ => Err((
            StatusCode::NOT_FOUND,
            json!({"error": format!("no API route `{name}`"), "kind": "not_found"}),
        )),
    };
    result.unwrap_or_else(|e| e)
}

async fn connect(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let server = text(body, "server")?;
    let state = servers.reconnect(server).await.map_err(bad)?;
    Ok((StatusCode::OK, state))
}

/// `{call, server, tool, arguments}`: checked against the input schema, called with live
/// progress (events of kind `progress` with this call id), cancellable by `cancel`.
async fn call(servers: &Arc<Servers>, body: &Value) -> Result<Reply, Reply> {
    let (server, tool) = (text(body, "server")?, text(body, "tool")?);
    let id = text(body, "call")?.to_owned();
    let arguments = body.get("arguments").cloned().unwrap_or_else(|| json!({}));
    if !arguments.is_object() {
        return Err(bad("`arguments` must be a JSON object"));
    }
    let host = servers.host(server).await.map_err(bad)?;
    let tools = host.tools().await;
    let Some(def) = tools
        .iter()
        .flat_map(|(_, t)| t.iter())
        .find(|t| t.name == tool)
        .cloned()
    else {
        return Err(bad(format!("server `{server}` has no tool `{tool}`")));
    };
    if let Ok(v) = SchemaValidator::compile(&Value::Object(def.input_schema.clone()))
        && let Err(errors) = v.validate(&arguments)
    {
        return Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"error": "the arguments do not fit the tool's inputSchema", "kind": "invalid_argument", "schemaErrors": errors}),
        ));
    }
    let cancel = CancellationToken::new();
    if let Ok(mut calls) = servers.calls.lock() {
        calls.insert(id.clone(), cancel.clone());
    }
    let (events, call_id) = (servers.events.clone(), id.clone());
    let options = RequestOptions {
        on_progress: Some(Box::new(move |p| {
            events.push(
                "progress",
                json!({"call": call_id, "progress": p.progress, "total": p.total, "message": p.message}),
            );
        })),
        cancel: Some(cancel),
        ..RequestOptions::default()
    };
    let result = host.call_tool_with(server, tool, arguments, options).await;
    if let Ok(mut calls) = servers.calls.lock() {
        calls.remove(&id);
    }
    let result = result.map_err(|e| failed(&e))?;
    let mut out = json!({ "result": result });
    if let Some(schema) = &def.output_schema {
        out["outputCheck"] = match (
            &result.structured_content,
            SchemaValidator::compile(&Value::Object(schema.clone())),
        ) {
            (_, Err(e)) => {
                json!({"valid": false, "errors": [format!("the outputSchema does not compile: {e}")]})
            }
            (None, _) if result.is_error() => {
                json!({"valid": true, "errors": [], "note": "an error result needs no structuredContent"})
            }
            (None, _) => {
                json!({"valid": false, "errors": ["the tool has an outputSchema but sent no structuredContent"]})
            }
            (Some(sc), Ok(v)) => match v.validate(sc) {
                Ok(()) => json!({"valid": true, "errors": []}),
                Err(errors) => json!({"valid": false, "errors": errors}),
            },
        };
    }
    Ok((StatusCode::OK, out))
}

fn cancel(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let id = text(body, "call")?;
    let token = servers.calls.lock().ok().and_then(|c| c.get(id).cloned());
    match token {
        Some(t) => {
            t.cancel();
            Ok((StatusCode::OK, json!({"cancelled": id})))
        }
        None => Err(bad(format!("no running call `{id}`"))),
    }
}

async fn read(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let (server, uri) = (text(body, "server")?, text(body, "uri")?);
    let host = servers.host(server).await.map_err(bad)?;
    let r = host
        .read_resource(server, uri)
        .await
        .map_err(|e| failed(&e))?;
    Ok((StatusCode::OK, json!(r)))
}

async fn subscribe(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let (server, uri) = (text(body, "server")?, text(body, "uri")?);
    let on = body
        .get("subscribe")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let host = servers.host(server).await.map_err(bad)?;
    let client = host.server_client(server).await.map_err(|e| failed(&e))?;
    let done = if on {
        client.subscribe_resource(uri).await
    } else {
        client.unsubscribe_resource(uri).await
    };
    done.map_err(|e| failed(&e))?;
    Ok((StatusCode::OK, json!({"uri": uri, "subscribed": on})))
}

async fn prompt(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let (server, name) = (text(body, "server")?, text(body, "name")?);
    let arguments: BTreeMap<String, String> =
        serde_json::from_value(body.get("arguments").cloned().unwrap_or_else(|| json!({})))
            .map_err(|_| bad("prompt `arguments` must be an object of strings"))?;
    let host = servers.host(server).await.map_err(bad)?;
    let r = host
        .get_prompt(server, name, arguments)
        .await
        .map_err(|e| failed(&e))?;
    Ok((StatusCode::OK, json!(r)))
}

/// Every connected server's tools in `provider`'s format, with the per-tool reports.
async fn translate_all(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let name = text(body, "provider")?;
    let provider =
        Provider::parse(name).ok_or_else(|| bad(format!("unknown provider `{name}`")))?;
    let mut lists = Vec::new();
    for host in servers.hosts().await {
        lists.extend(host.tools().await);
    }
    let views: Vec<ServerTools<'_>> = lists
        .iter()
        .map(|(server, tools)| ServerTools { server, tools })
        .collect();
    let t = translate(provider, &views, &TranslateOptions::default());
    let reports: Vec<Value> = t
        .reports
        .iter()
        .map(|r| json!({"name": r.name, "server": r.server, "tool": r.tool, "error": r.error, "fallbackReason": r.fallback_reason}))
        .collect();
    Ok((
        StatusCode::OK,
        json!({"provider": name, "tools": t.request_tools(), "text": t.system_text(), "reports": reports}),
    ))
}

fn answer(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let id = text(body, "id")?;
    let reject = body
        .get("reject")
        .and_then(Value::as_str)
        .map(str::to_owned);
    servers
        .questions
        .answer(&servers.events, id, body.get("result").cloned(), reject)
        .map_err(bad)?;
    Ok((StatusCode::OK, json!({"answered": id})))
}

/// Sets the roots and tells every connected server they changed.
async fn roots(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let list = body.get("roots").cloned().unwrap_or(Value::Null);
    servers.questions.set_roots(list).map_err(bad)?;
    for host in servers.hosts().await {
        for name in host.server_names() {
            if let Ok(c) = host.server_client(&name).await {
                let _ = c.notify_roots_changed().await;
            }
        }
    }
    Ok((StatusCode::OK, json!({"roots": servers.questions.roots()})))
}

async fn log_level(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let server = text(body, "server")?;
    let level: LoggingLevel =
        serde_json::from_value(body.get("level").cloned().unwrap_or_default()).map_err(|_| {
            bad("`level` must be a log level (debug, info, notice, warning, error, …)")
        })?;
    let host = servers.host(server).await.map_err(bad)?;
    let client = host.server_client(server).await.map_err(|e| failed(&e))?;
    client
        .set_logging_level(level)
        .await
        .map_err(|e| failed(&e))?;
    Ok((StatusCode::OK, json!({"server": server, "level": level})))
}

async fn ping(servers: &Servers, body: &Value) -> Result<Reply, Reply> {
    let server = text(body, "server")?;
    let host = servers.host(server).await.map_err(bad)?;
    let client = host.server_client(server).await.map_err(|e| failed(&e))?;
    let start = std::time::Instant::now();
    client.ping().await.map_err(|e| failed(&e))?;
    Ok((
        StatusCode::OK,
        json!({"server": server, "ms": start.elapsed().as_secs_f64() * 1000.0}),
    ))
}
