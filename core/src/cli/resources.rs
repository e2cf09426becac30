//! `oxmcp resources` (every server's resources as JSON) and `oxmcp read SERVER URI` (one
//! resource's contents as JSON).

use std::path::Path;

use serde_json::{Value, json};

use super::{
    Args,
    features::{failed, start_all, start_one},
    print_json, within,
};
use crate::host::{Config, HostOptions};

/// `oxmcp resources`: exit 0, or 4 when a server could not start (the others are printed).
pub(super) async fn list(args: &Args, config: Config, options: HostOptions) -> u8 {
    let (host, start_failed) = start_all(args, config, options).await;
    let listed = within(args, "resources/list", async { Ok(host.resources().await) }).await;
    let code = match listed {
        Ok(lists) => {
            let mut out = serde_json::Map::new();
            for (server, resources) in lists {
                out.insert(server, json!(*resources));
            }
            print_json(&Value::Object(out));
            if start_failed { 4 } else { 0 }
        }
        Err(e) => {
            eprintln!("oxmcp: listing the resources failed: {e}");
            super::exit_code(&e)
        }
    };
    host.close().await;
    code
}

/// `oxmcp read SERVER URI`: exit 0 with the contents, 4 when the server cannot start, 5
/// when it refuses the read.
pub(super) async fn read(
    args: &Args,
    path: &Path,
    config: Config,
    options: HostOptions,
    server: &str,
    uri: &str,
) -> u8 {
    let host = match start_one(args, path, &config, options, server).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let code = match within(args, "resources/read", host.read_resource(server, uri)).await {
        Ok(result) => {
            print_json(&json!(result));
            0
        }
        Err(e) => failed(&format!("reading `{uri}`"), server, &e),
    };
    host.close().await;
    code
}
