//! The official SDKs as test peers: where `make interop-deps` installed them, and client
//! handlers that record what a peer server asked. Used by the interop suite
//! (`core/tests/interop`) and by `scale_out_interop`.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use oxmcp::{
    client::ClientOptions,
    protocol::{
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ListRootsResult, Role, Root,
    },
};
use serde::Serialize;
use serde_json::{Value, json};

const PYTHON_VAR: &str = "OXMCP_INTEROP_PYTHON";
const NODE_DIR_VAR: &str = "OXMCP_INTEROP_NODE_DIR";
const WS_PYTHON_VAR: &str = "OXMCP_INTEROP_WS_PYTHON";

/// Whether a missing peer fails the test (`make test`) instead of skipping it.
fn required() -> bool {
    std::env::var("OXMCP_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

/// A peer's path from `var`, checked by `installed` (which names the file that must exist);
/// `None` (the test is skipped, and says how to set the peer up) when the variable is unset
/// and the peer not required.
fn peer_path(var: &str, hint: &str, installed: impl Fn(&Path) -> PathBuf) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        let file = installed(&path);
        assert!(
            file.is_file(),
            "{} is missing ({var}); run `make interop-deps`",
            file.display()
        );
        return Some(path);
    }
    if required() {
        panic!(
            "{var} is not set but OXMCP_REQUIRE_INTEROP=1: run `make interop-deps` \
             (`make test` and `make interop-test` do it and export the variable)"
        );
    }
    eprintln!(
        "skipped: {var} is not set (run `make interop-test`, or `make interop-deps` \
         and, from the repository root, export {var}={hint})"
    );
    None
}

/// The interop venv's Python; `None` (the test is skipped) when it is not set up and not
/// required.
pub fn venv_python() -> Option<PathBuf> {
    peer_path(
        PYTHON_VAR,
        "$PWD/target/test-tools/interop-venv/bin/python",
        Path::to_path_buf,
    )
}

/// The folder with the TypeScript SDK installed (`tests/interop/node`); `None` as above.
pub fn node_dir() -> Option<PathBuf> {
    peer_path(NODE_DIR_VAR, "$PWD/tests/interop/node", |dir| {
        dir.join("node_modules/@modelcontextprotocol/sdk/package.json")
    })
}

/// The Python of the venv with the SDK 1.x and its WebSocket transport
/// (`tests/interop/python-ws/requirements.txt`); `None` as above.
pub fn ws_venv_python() -> Option<PathBuf> {
    peer_path(
        WS_PYTHON_VAR,
        "$PWD/target/test-tools/interop-ws-venv/bin/python",
        Path::to_path_buf,
    )
}

/// A file of `tests/interop/python-ws/`.
pub fn python_ws_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/interop/python-ws")
        .join(name)
}

/// A file of `tests/interop/python/`.
pub fn python_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/interop/python")
        .join(name)
}

/// Notifications the server sent that reached `on_notification`, in order.
#[derive(Clone, Default)]
pub struct Inbox(Arc<Mutex<Vec<(String, Value)>>>);

impl Inbox {
    pub fn install(&self, options: ClientOptions) -> ClientOptions {
        let inbox = self.clone();
        options.on_notification(move |method, params| {
            let params = params.unwrap_or(Value::Null);
            inbox.0.lock().unwrap().push((method.to_owned(), params));
        })
    }

    /// Removes and returns the params of every notification with this method.
    pub fn take(&self, method: &str) -> Vec<Value> {
        let mut all = self.0.lock().unwrap();
        let (taken, kept) = all.drain(..).partition(|(m, _)| m == method);
        *all = kept;
        taken.into_iter().map(|(_, p)| p).collect()
    }
}

/// What the client's handlers were asked, in order.
#[derive(Clone, Default)]
pub struct Asked(Arc<Mutex<Vec<(&'static str, Value)>>>);

impl Asked {
    pub fn push(&self, kind: &'static str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap();
        self.0.lock().unwrap().push((kind, params));
    }

    pub fn take(&self) -> Vec<(&'static str, Value)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The sampling handler every interop client uses: echoes the prompt, recording the request.
pub fn echo_sampling(options: ClientOptions, asked: &Asked) -> ClientOptions {
    let asked = asked.clone();
    options.sampling(move |params: CreateMessageRequestParams, _cancel| {
        let asked = asked.clone();
        async move {
            let text = params.messages[0].content["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            asked.push("sampling", &params);
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: json!({"type": "text", "text": format!("echo: {text}")}),
                model: "oxmcp-test-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
                extra: Default::default(),
            })
        }
    })
}

/// The answer to an elicitation, by its message: `decline…` declines, `sloppy…` breaks the
/// schema, the SEP-1034 form gets only a name (the client must fill in the defaults), anything
/// else accepts.
pub fn elicitation_answer(message: &str) -> ElicitResult {
    match message {
        m if m.starts_with("decline") => ElicitResult::decline(),
        m if m.starts_with("sloppy") => {
            ElicitResult::accept(json!({"username": 42, "email": ["a", "b"]}))
        }
        "Review the defaults" => ElicitResult::accept(json!({"name": "Ada"})),
        _ => ElicitResult::accept(json!({"username": "ada", "email": "ada@example.com"})),
    }
}

/// A client that answers everything: sampling echoes the prompt, elicitation answers as
/// [`elicitation_answer`] says, roots lists two directories; every question is recorded.
pub fn capable(options: ClientOptions, asked: &Asked) -> ClientOptions {
    let (b, c) = (asked.clone(), asked.clone());
    echo_sampling(options, asked)
        .elicitation(move |params: ElicitRequestParams, _cancel| {
            let asked = b.clone();
            async move {
                asked.push("elicitation", &params);
                Ok(elicitation_answer(&params.message))
            }
        })
        .roots(move |_cancel| {
            let asked = c.clone();
            async move {
                asked.push("roots", json!({}));
                Ok(ListRootsResult {
                    roots: vec![
                        Root {
                            uri: "file:///workspace".into(),
                            name: Some("workspace".into()),
                            meta: None,
                        },
                        Root {
                            uri: "file:///tmp/scratch".into(),
                            name: None,
                            meta: None,
                        },
                    ],
                    meta: None,
                })
            }
        })
}
