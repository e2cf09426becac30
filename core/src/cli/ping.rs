//! `oxmcp ping [SERVER]`: is each server alive and how fast does it answer. The round trip is
//! measured around one `ping` request (`server/discover` in the stateless era, which has no
//! ping), after the handshake, so it is the request's time and not the start-up's.

use std::{path::Path, time::Instant};

use serde_json::{Map, Value, json};

use super::{
    Args,
    features::{start_all, start_one},
    print_json, within,
};
use crate::{
    Error,
    host::{Config, Host, HostOptions},
    sanitize,
};

/// Exit 0 when every server answered, 4 when one could not start, else 5 when one did not
/// answer.
pub(super) async fn ping(
    args: &Args,
    path: &Path,
    config: Config,
    options: HostOptions,
    server: Option<&str>,
) -> u8 {
    let (host, start_failed) = match server {
        Some(name) => match start_one(args, path, &config, options, name).await {
            Ok(h) => (h, false),
            Err(code) => return code,
        },
        None => start_all(args, config, options).await,
    };
    let mut out = Map::new();
    let mut unanswered = false;
    let connected: Vec<String> = host
        .status()
        .await
        .into_iter()
        .filter(|s| s.state == "connected")
        .map(|s| s.name)
        .collect();
    for name in connected {
        match within(args, "ping", one(&host, &name)).await {
            Ok(ms) => {
                out.insert(name, json!({"ok": true, "ms": ms}));
            }
            Err(e) => {
                eprintln!("oxmcp: ping of `{}` failed: {e}", sanitize::line(&name));
                out.insert(name, json!({"ok": false, "error": e.to_string()}));
                unanswered = true;
            }
        }
    }
    print_json(&Value::Object(out));
    host.close().await;
    if start_failed {
        4
    } else if unanswered {
        5
    } else {
        0
    }
}

/// The round trip of one ping, in milliseconds (three decimals).
async fn one(host: &Host, server: &str) -> Result<f64, Error> {
    let client = host.server_client(server).await?;
    let started = Instant::now();
    client.ping().await?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((ms * 1000.0).round() / 1000.0)
}
