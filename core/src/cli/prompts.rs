//! `oxmcp prompts` (every server's prompts as JSON) and `oxmcp prompt SERVER NAME [ARGS]`
//! (one prompt, its messages filled in, as JSON).

use std::{collections::BTreeMap, path::Path};

use serde_json::{Value, json};

use super::{
    Args,
    features::{failed, start_all, start_one},
    print_json, within,
};
use crate::host::{Config, HostOptions};

/// `oxmcp prompts`: exit 0, or 4 when a server could not start (the others are printed).
pub(super) async fn list(args: &Args, config: Config, options: HostOptions) -> u8 {
    let (host, start_failed) = start_all(args, config, options).await;
    let listed = within(args, "prompts/list", async { Ok(host.prompts().await) }).await;
    let code = match listed {
        Ok(lists) => {
            let mut out = serde_json::Map::new();
            for (server, prompts) in lists {
                out.insert(server, json!(*prompts));
            }
            print_json(&Value::Object(out));
            if start_failed { 4 } else { 0 }
        }
        Err(e) => {
            eprintln!("oxmcp: listing the prompts failed: {e}");
            super::exit_code(&e)
        }
    };
    host.close().await;
    code
}

/// `oxmcp prompt SERVER NAME [ARGS]`: exit 0 with the prompt, 4 when the server cannot
/// start, 5 when it refuses (an unknown prompt, a missing required argument).
pub(super) async fn get(
    args: &Args,
    path: &Path,
    config: Config,
    options: HostOptions,
    server: &str,
    name: &str,
    arguments: BTreeMap<String, String>,
) -> u8 {
    let host = match start_one(args, path, &config, options, server).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let code = match within(
        args,
        "prompts/get",
        host.get_prompt(server, name, arguments),
    )
    .await
    {
        Ok(result) => {
            print_json(&json!(result));
            0
        }
        Err(e) => failed(&format!("getting the prompt `{name}`"), server, &e),
    };
    host.close().await;
    code
}
