//! Starting one server from its config entry: a child process, an HTTP connection or a
//! WebSocket, the trace tap, the `list_changed` flags, and a timeout that covers spawn and
//! handshake.
//!
//! A failure keeps the stderr tail of the child, so "never answers" and "crashes at start"
//! come with what the server itself said.

use std::{
    path::PathBuf,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use http::{HeaderMap, HeaderName, HeaderValue};

use super::{Dirty, HostOptions, ServerSpec, TransportSpec};
use crate::{
    Error,
    client::{Client, ClientOptions},
    protocol::{SubscriptionFilter, methods},
    transport::{
        Transport,
        child::{ChildCommand, ChildTransport, StderrHandle},
        http::{HttpClientOptions, HttpClientTransport},
        tap::tap,
        ws::{WsClientOptions, WsClientTransport},
    },
};

pub(super) type Failure = (Error, Option<String>);

fn mark(dirty: &Dirty, method: &str) {
    let flag = match method {
        methods::TOOLS_LIST_CHANGED => &dirty.tools,
        methods::RESOURCES_LIST_CHANGED => &dirty.resources,
        methods::PROMPTS_LIST_CHANGED => &dirty.prompts,
        _ => return,
    };
    flag.store(true, Ordering::Release);
}

/// How long a stateless server may take to acknowledge the `list_changed` listen stream.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects, then (2026-07-28 servers, which send no unsolicited notifications) opens a
/// `subscriptions/listen` stream for the list changes the server announces.
pub(super) async fn connect(
    spec: &ServerSpec,
    options: &HostOptions,
    dirty: Arc<Dirty>,
    timeout: Duration,
    mode: Option<crate::client::ProtocolMode>,
) -> Result<(Client, Option<StderrHandle>), Failure> {
    let flags = dirty.clone();
    let (client, stderr) = connect_only(spec, options, dirty, timeout, mode).await?;
    if client.protocol_version().is_stateless() {
        let caps = &client.server().capabilities;
        let announces = |c: Option<bool>| c == Some(true);
        let filter = SubscriptionFilter {
            tools_list_changed: announces(caps.tools.as_ref().and_then(|c| c.list_changed))
                .then_some(true),
            prompts_list_changed: announces(caps.prompts.as_ref().and_then(|c| c.list_changed))
                .then_some(true),
            resources_list_changed: announces(caps.resources.as_ref().and_then(|c| c.list_changed))
                .then_some(true),
            ..SubscriptionFilter::default()
        };
        if filter != SubscriptionFilter::default() {
            match tokio::time::timeout(LISTEN_TIMEOUT.min(timeout), client.listen(filter)).await {
                Ok(Ok(mut sub)) => {
                    tokio::spawn(async move {
                        while let Some(n) = sub.next().await {
                            mark(&flags, &n.method);
                        }
                    });
                }
                // The server still works; its lists are then fetched once and kept.
                Ok(Err(e)) => tracing::warn!(server = %spec.name, "no list_changed stream: {e}"),
                Err(_) => {
                    tracing::warn!(server = %spec.name, "no list_changed stream: not acknowledged")
                }
            }
        }
    }
    Ok((client, stderr))
}

async fn connect_only(
    spec: &ServerSpec,
    options: &HostOptions,
    dirty: Arc<Dirty>,
    timeout: Duration,
    mode: Option<crate::client::ProtocolMode>,
) -> Result<(Client, Option<StderrHandle>), Failure> {
    let mut client_options = ClientOptions::new(&options.client_name, &options.client_version);
    if let Some(mode) = mode {
        client_options = client_options.protocol(mode);
    }
    if let Some(hook) = &options.client_hook {
        client_options = hook(spec, client_options);
    }
    // The hook's callback, if any, sees every notification after the cache flags are set.
    let theirs = client_options.on_notification.take();
    client_options = client_options.on_notification(move |method, params| {
        mark(&dirty, method);
        if let Some(callback) = &theirs {
            callback(method, params);
        }
    });
    client_options.probe_timeout = client_options.probe_timeout.min(timeout);
    let name = spec.name.clone();
    let trace = options.trace.clone();
    let traced = move |link: crate::transport::Link| match &trace {
        Some(t) => {
            let t = t.clone();
            let name = name.clone();
            tap(
                link,
                Arc::new(move |dir, bytes: &[u8]| t(&name, dir, bytes)),
            )
        }
        None => link,
    };
    match &spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut program = PathBuf::from(command);
            // A relative path with a slash means "from here", whatever `cwd` the child gets.
            if program.is_relative() && command.contains('/') {
                program = std::path::absolute(&program).unwrap_or(program);
            }
            // A container CLI's `run`: a name to find the container by, and a `stop` for the
            // ladder, since SIGKILL ends the CLI but not the container (see `docker`).
            let docker = super::docker::launch(&spec.name, &program, command, args)
                .map_err(|m| (config_error(spec, "args", &m), None))?;
            let args = docker
                .as_ref()
                .map_or(args.as_slice(), |d| d.args.as_slice());
            let mut cmd = ChildCommand::new(&program).args(args);
            if let Some(docker) = docker.as_ref() {
                cmd = cmd.before_kill(docker.stop.clone());
            }
            for (k, v) in env {
                cmd = cmd.env(k, v);
            }
            if let Some(dir) = cwd {
                cmd = cmd.current_dir(dir);
            }
            let child = ChildTransport::spawn(cmd).await.map_err(|e| (e, None))?;
            let stderr = child.stderr();
            let link = traced(child.into_link());
            let tail = |s: &StderrHandle| {
                Some(s.tail(options.stderr_tail)).filter(|t| !t.trim().is_empty())
            };
            match tokio::time::timeout(timeout, Client::connect(link, client_options)).await {
                Ok(Ok(client)) => Ok((client, Some(stderr))),
                Ok(Err(e)) => Err((e, tail(&stderr))),
                Err(_) => Err((
                    Error::Timeout {
                        method: "connect (start and handshake)".into(),
                        after: timeout,
                    },
                    tail(&stderr),
                )),
            }
        }
        TransportSpec::Http {
            url,
            headers,
            legacy_sse: _,
        } => {
            let map = header_map(spec, headers).map_err(|e| (e, None))?;
            // The client tries Streamable HTTP first and falls back to the legacy HTTP+SSE
            // transport by itself, which is also what `type: "sse"` needs.
            let auth = match &options.auth {
                Some(factory) => factory(spec).map_err(|e| (e, None))?,
                None => None,
            };
            let http = HttpClientOptions {
                headers: map,
                auth,
                ..HttpClientOptions::default()
            };
            let transport = HttpClientTransport::new(url, http).map_err(|e| (e, None))?;
            let param_headers = transport.param_headers();
            let link = traced(transport.into_link());
            let connecting = Client::connect_inner(link, client_options, Some(param_headers));
            remote(timeout, "connect (handshake)", connecting).await
        }
        TransportSpec::Ws { url, headers } => {
            let ws = WsClientOptions {
                headers: header_map(spec, headers).map_err(|e| (e, None))?,
                connect_timeout: timeout,
                ..WsClientOptions::default()
            };
            // One deadline for the upgrade and the handshake together.
            let connecting = async {
                let transport = WsClientTransport::connect(url, ws).await?;
                Client::connect(traced(transport.into_link()), client_options).await
            };
            remote(
                timeout,
                "connect (WebSocket upgrade and handshake)",
                connecting,
            )
            .await
        }
    }
}

/// Connecting to a remote server (no stderr to keep), within `timeout`; `what` names the
/// step in the timeout error.
async fn remote(
    timeout: Duration,
    what: &str,
    connecting: impl Future<Output = Result<Client, Error>>,
) -> Result<(Client, Option<StderrHandle>), Failure> {
    match tokio::time::timeout(timeout, connecting).await {
        Ok(Ok(client)) => Ok((client, None)),
        Ok(Err(e)) => Err((e, None)),
        Err(_) => Err((
            Error::Timeout {
                method: what.into(),
                after: timeout,
            },
            None,
        )),
    }
}

/// The entry's `headers` as a header map; a name or value HTTP cannot carry is a config error.
fn header_map(spec: &ServerSpec, headers: &[(String, String)]) -> Result<HeaderMap, Error> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let field = format!("headers.{k}");
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| config_error(spec, &field, "is not a valid header name"))?;
        let value = HeaderValue::from_str(v)
            .map_err(|_| config_error(spec, &field, "is not a valid header value"))?;
        map.insert(name, value);
    }
    Ok(map)
}

fn config_error(spec: &ServerSpec, field: &str, message: &str) -> Error {
    Error::Config {
        file: None,
        server: Some(spec.name.clone()),
        field: Some(field.into()),
        message: message.into(),
    }
}
