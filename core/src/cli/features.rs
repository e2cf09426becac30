//! The commands on a server's features other than tools: `resources`, `read`,
//! `prompts`, `prompt` and `ping`. Their arguments are checked here before any server starts
//! (exit 2 for a bad command line), then each runs in its own module.

use std::{collections::BTreeMap, path::Path};

use serde_json::Value;

use super::{Args, ping, prompts, resources, usage};
use crate::{
    host::{Config, Host, HostOptions},
    sanitize,
};

/// One of the commands on the non-tool features (resources, prompts, ping), its arguments
/// parsed.
pub(super) enum FeatureCommand {
    /// `oxmcp resources`
    Resources,
    /// `oxmcp read SERVER URI`
    Read { server: String, uri: String },
    /// `oxmcp prompts`
    Prompts,
    /// `oxmcp prompt SERVER NAME [ARGUMENTS_JSON]`
    Prompt {
        server: String,
        name: String,
        arguments: BTreeMap<String, String>,
    },
    /// `oxmcp ping [SERVER]`
    Ping { server: Option<String> },
}

impl FeatureCommand {
    /// `Ok(None)`: another command. `Err(2)`: a bad command line, already explained.
    pub(super) fn parse(args: &Args) -> Result<Option<FeatureCommand>, u8> {
        let p = args.positional.as_slice();
        Ok(Some(match args.command.as_str() {
            "resources" => match p {
                [] => FeatureCommand::Resources,
                _ => return Err(usage("`resources` takes no arguments")),
            },
            "read" => match p {
                [server, uri] => FeatureCommand::Read {
                    server: server.clone(),
                    uri: uri.clone(),
                },
                _ => return Err(usage("`read` takes SERVER URI")),
            },
            "prompts" => match p {
                [] => FeatureCommand::Prompts,
                _ => return Err(usage("`prompts` takes no arguments")),
            },
            "prompt" => match p {
                [server, name] => FeatureCommand::Prompt {
                    server: server.clone(),
                    name: name.clone(),
                    arguments: BTreeMap::new(),
                },
                [server, name, raw] => FeatureCommand::Prompt {
                    server: server.clone(),
                    name: name.clone(),
                    arguments: prompt_arguments(raw)?,
                },
                _ => return Err(usage("`prompt` takes SERVER NAME [ARGUMENTS_JSON]")),
            },
            "ping" => match p {
                [] => FeatureCommand::Ping { server: None },
                [server] => FeatureCommand::Ping {
                    server: Some(server.clone()),
                },
                _ => return Err(usage("`ping` takes [SERVER]")),
            },
            _ => return Ok(None),
        }))
    }

    /// Runs the command; returns the exit code.
    pub(super) async fn run(
        self,
        args: &Args,
        path: &Path,
        config: Config,
        options: HostOptions,
    ) -> u8 {
        match self {
            FeatureCommand::Resources => resources::list(args, config, options).await,
            FeatureCommand::Read { server, uri } => {
                resources::read(args, path, config, options, &server, &uri).await
            }
            FeatureCommand::Prompts => prompts::list(args, config, options).await,
            FeatureCommand::Prompt {
                server,
                name,
                arguments,
            } => prompts::get(args, path, config, options, &server, &name, arguments).await,
            FeatureCommand::Ping { server } => {
                ping::ping(args, path, config, options, server.as_deref()).await
            }
        }
    }
}

/// Prompt arguments are strings (MCP `prompts/get`): a JSON object of strings, nothing else.
fn prompt_arguments(raw: &str) -> Result<BTreeMap<String, String>, u8> {
    let object = match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(o)) => o,
        Ok(_) => {
            return Err(usage(
                "the prompt arguments must be a JSON object of strings, like '{\"city\":\"Beijing\"}'",
            ));
        }
        Err(e) => {
            return Err(usage(format!(
                "the prompt arguments are not valid JSON: {e}"
            )));
        }
    };
    object
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            other => Err(usage(format!(
                "prompt argument `{k}` is {other}, not a string (prompt arguments are strings)"
            ))),
        })
        .collect()
}

/// Starts `server` alone (the named-server commands should not wait for the others); `Err`
/// is the exit code, the reason already on stderr.
pub(super) async fn start_one(
    args: &Args,
    path: &Path,
    config: &Config,
    mut options: HostOptions,
    server: &str,
) -> Result<Host, u8> {
    let spec = super::one_server(config, path, server)?;
    options.connect_timeout = super::remaining(args, options.connect_timeout);
    let host = super::start_one(spec, options).await;
    if super::report_failures(&host).await {
        host.close().await;
        return Err(4);
    }
    Ok(host)
}

/// Starts every server of the config; `true` with it when one could not start (reported).
pub(super) async fn start_all(
    args: &Args,
    config: Config,
    mut options: HostOptions,
) -> (Host, bool) {
    options.connect_timeout = super::remaining(args, options.connect_timeout);
    let host = Host::start(config, options).await;
    let failed = super::report_failures(&host).await;
    (host, failed)
}

/// Prints why `what` on `server` failed; returns the exit code.
pub(super) fn failed(what: &str, server: &str, e: &crate::Error) -> u8 {
    eprintln!(
        "oxmcp: {} on `{}` failed: {e}",
        sanitize::line(what),
        sanitize::line(server)
    );
    super::exit_code(e)
}
