//! Validates recorded wire traffic against the official MCP JSON Schemas.
//!
//! Every frame either side sends is recorded by a wire tap. At the end of a test,
//! [`Wire::assert_valid`] decides which revision each message belongs to (a message carrying
//! stateless `_meta`, or answering one, is 2026-07-28; everything else is the revision the
//! handshake negotiated) and validates it against that revision's definition: requests and
//! notifications by method, results by the method of the request they answer.

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex, OnceLock},
};

use oxmcp::{
    ProtocolVersion,
    transport::tap::{Direction, Observer},
};
use serde_json::{Value, json};

/// Which side sent a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// A recorded frame and who sent it.
type Frames = Arc<Mutex<Vec<(Side, Vec<u8>)>>>;

/// Frames recorded in order, with their sender.
#[derive(Clone, Default, Debug)]
pub struct Wire {
    frames: Frames,
    /// Senders whose messages are checked (a raw test peer sends malformed input on purpose).
    checked: Arc<Mutex<Vec<Side>>>,
}

impl Wire {
    /// A wire whose every sender is checked.
    pub fn new() -> Self {
        let w = Wire::default();
        *w.checked.lock().unwrap() = vec![Side::Client, Side::Server];
        w
    }

    /// A wire on which only `side`'s messages are checked.
    pub fn checking_only(side: Side) -> Self {
        let w = Wire::default();
        *w.checked.lock().unwrap() = vec![side];
        w
    }

    /// An observer for a link held by `owner`: outbound frames are `owner`'s, inbound the
    /// peer's.
    pub fn observer(&self, owner: Side) -> Observer {
        let frames = self.frames.clone();
        Arc::new(move |direction, bytes: &[u8]| {
            let side = match direction {
                Direction::Outbound => owner,
                Direction::Inbound => owner.other(),
            };
            frames.lock().unwrap().push((side, bytes.to_vec()));
        })
    }

    /// Records a frame sent by `side` (for peers that are not behind a tap).
    pub fn record(&self, side: Side, bytes: &[u8]) {
        self.frames.lock().unwrap().push((side, bytes.to_vec()));
    }

    /// How many frames were recorded.
    pub fn len(&self) -> usize {
        self.frames.lock().unwrap().len()
    }

    /// The recorded messages sent by `side`, parsed.
    pub fn sent_by(&self, side: Side) -> Vec<Value> {
        self.frames
            .lock()
            .unwrap()
            .iter()
            .filter(|(s, _)| *s == side)
            .filter_map(|(_, b)| serde_json::from_slice(b).ok())
            .collect()
    }

    /// The messages `side` sent with this `method` (requests or notifications), in order.
    pub fn sent_with_method(&self, side: Side, method: &str) -> Vec<Value> {
        self.sent_by(side)
            .into_iter()
            .filter(|m| m["method"] == method)
            .collect()
    }

    /// Validates every checked message; panics listing every failure.
    pub fn assert_valid(&self) {
        let frames = self.frames.lock().unwrap().clone();
        let checked = self.checked.lock().unwrap().clone();
        let mut negotiated: Option<ProtocolVersion> = None;
        // A connection that never handshakes but makes stateless requests is a 2026-07-28 one.
        let mut saw_stateless = false;
        // (sender, id) → (method, stateless?)
        let mut requests: HashMap<(Side, String), (String, bool)> = HashMap::new();
        let mut failures = Vec::new();
        let mut validated = 0usize;
        for (side, bytes) in &frames {
            let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
                continue;
            };
            let items = match value {
                Value::Array(items) => items,
                other => vec![other],
            };
            for msg in items {
                // Track the negotiated revision from initialize results.
                if let Some(v) = msg
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    && let Some(v) = ProtocolVersion::parse(v)
                {
                    negotiated = Some(v);
                }
                let stateless_meta = msg
                    .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                    .and_then(Value::as_str)
                    .and_then(ProtocolVersion::parse)
                    .filter(|v| v.is_stateless());
                saw_stateless |= stateless_meta.is_some();
                // Notifications on a listen stream belong to the stateless era.
                let on_stream = msg
                    .pointer("/params/_meta/io.modelcontextprotocol~1subscriptionId")
                    .is_some();
                let stateless_meta =
                    stateless_meta.or(on_stream.then_some(ProtocolVersion::V2026_07_28));
                let fallback = if saw_stateless {
                    Some(ProtocolVersion::V2026_07_28)
                } else {
                    None
                };
                let negotiated_or_era = negotiated.or(fallback);
                let id_key = msg.get("id").map(|i| i.to_string());
                let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
                let (rev, def_check) = match (&method, &id_key) {
                    (Some(m), Some(id)) => {
                        // A task-augmented request (2025-11-25 `params.task`) is answered
                        // with a CreateTaskResult, not its method's usual result.
                        let answered_as =
                            if msg.pointer("/params/task").is_some_and(Value::is_object)
                                && stateless_meta.is_none()
                            {
                                TASK_AUGMENTED.to_owned()
                            } else {
                                m.clone()
                            };
                        requests
                            .insert((*side, id.clone()), (answered_as, stateless_meta.is_some()));
                        (stateless_meta.or(negotiated), Check::Request(m.clone()))
                    }
                    (Some(m), None) => (
                        stateless_meta.or(negotiated),
                        Check::Notification(m.clone()),
                    ),
                    (None, Some(id)) => {
                        let answered = requests.get(&(side.other(), id.clone())).cloned();
                        let rev = match &answered {
                            Some((_, true)) => Some(ProtocolVersion::V2026_07_28),
                            _ => negotiated_or_era,
                        };
                        (rev, Check::Response(answered.map(|(m, _)| m)))
                    }
                    (None, None) => (negotiated_or_era, Check::Response(None)),
                };
                if !checked.contains(side) {
                    continue;
                }
                // Messages before any negotiation (a probe, an early error) use the newest
                // handshake revision, which every peer of ours understands.
                let rev = rev.unwrap_or(ProtocolVersion::V2025_11_25);
                validated += 1;
                if let Err(why) = check(rev, &def_check, &msg) {
                    failures.push(format!("[{side:?} → rev {rev}] {why}\n    message: {msg}"));
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {validated} messages fail the official schema:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// The method a task-augmented request is recorded under.
const TASK_AUGMENTED: &str = "(task-augmented request)";

enum Check {
    Request(String),
    Notification(String),
    /// A response, with the method of the request it answers when known.
    Response(Option<String>),
}

/// A request or notification (`kind`) against its method's definition and the JSON-RPC
/// envelope of its kind.
fn check_method(schema: &Schema, msg: &Value, method: &str, kind: &str) -> Result<(), String> {
    let def = schema.def_for_method(method, kind).ok_or(format!(
        "no {} definition for `{method}`",
        kind.to_lowercase()
    ))?;
    schema.validate(&def, msg)?;
    schema.validate(&format!("JSONRPC{kind}"), msg)
}

/// The tasks extension of 2026-07-28 (SEP-2663) lives outside the core schema: its methods
/// and a `tools/call` answered with `resultType: "task"` have no definition there. Their
/// shapes are checked by the tasks suite itself (`core/tests/tasks`) and by the conformance
/// harness's `tasks-*` scenarios.
fn is_tasks_extension(rev: ProtocolVersion, what: &Check, msg: &Value) -> bool {
    let tasks_method = |m: &str| m.starts_with("tasks/") || m.starts_with("notifications/tasks");
    rev.is_stateless()
        && match what {
            Check::Request(m) | Check::Notification(m) => tasks_method(m),
            Check::Response(Some(m)) => {
                tasks_method(m) || msg.pointer("/result/resultType") == Some(&json!("task"))
            }
            Check::Response(None) => false,
        }
}

fn check(rev: ProtocolVersion, what: &Check, msg: &Value) -> Result<(), String> {
    if is_tasks_extension(rev, what, msg) {
        return Ok(());
    }
    let schema = Schema::get(rev);
    match what {
        Check::Request(method) => check_method(schema, msg, method, "Request"),
        Check::Notification(method) => check_method(schema, msg, method, "Notification"),
        Check::Response(method) => {
            if msg.get("error").is_some() {
                if schema.has("JSONRPCErrorResponse") {
                    return schema.validate("JSONRPCErrorResponse", msg);
                }
                // Up to 2025-06-18 the schema requires an id on every error, yet JSON-RPC 2.0,
                // which those revisions defer to, answers a request whose id is unreadable with
                // `"id": null`. Check everything else about such an error.
                let mut msg = msg.clone();
                if msg.get("id") == Some(&Value::Null) {
                    msg["id"] = json!(0);
                }
                return schema.validate("JSONRPCError", &msg);
            }
            let envelope = if schema.has("JSONRPCResultResponse") {
                "JSONRPCResultResponse"
            } else {
                "JSONRPCResponse"
            };
            schema.validate(envelope, msg)?;
            let Some(method) = method else {
                return Err("a response to no known request".into());
            };
            if method == TASK_AUGMENTED {
                let result = msg.get("result").cloned().unwrap_or(Value::Null);
                return schema.validate("CreateTaskResult", &result);
            }
            let request_def = schema
                .def_for_method(method, "Request")
                .ok_or(format!("no request definition for `{method}`"))?;
            let base = request_def.trim_end_matches("Request");
            let response_def = format!("{base}ResultResponse");
            if schema.has(&response_def) {
                return schema.validate(&response_def, msg);
            }
            let result = msg.get("result").cloned().unwrap_or(Value::Null);
            let result_def = format!("{base}Result");
            if schema.has(&result_def) {
                schema.validate(&result_def, &result)
            } else if schema.has("EmptyResult") {
                schema.validate("EmptyResult", &result)
            } else {
                schema.validate("Result", &result)
            }
        }
    }
}

struct Schema {
    root: Value,
    container: &'static str,
    dialect: &'static str,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

impl Schema {
    fn get(rev: ProtocolVersion) -> &'static Schema {
        static ALL: OnceLock<HashMap<ProtocolVersion, Schema>> = OnceLock::new();
        &ALL.get_or_init(|| {
            ProtocolVersion::ALL
                .iter()
                .map(|v| {
                    let path = spec_dir().join(v.as_str()).join("schema.json");
                    let text = std::fs::read_to_string(&path)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    let mut root: Value = serde_json::from_str(&text).unwrap();
                    apply_errata(&mut root);
                    let (container, dialect) = if root.get("$defs").is_some() {
                        ("$defs", "https://json-schema.org/draft/2020-12/schema")
                    } else {
                        ("definitions", "http://json-schema.org/draft-07/schema#")
                    };
                    (
                        *v,
                        Schema {
                            root,
                            container,
                            dialect,
                            validators: Mutex::new(HashMap::new()),
                        },
                    )
                })
                .collect()
        })[&rev]
    }

    fn defs(&self) -> &serde_json::Map<String, Value> {
        self.root[self.container].as_object().unwrap()
    }

    fn has(&self, def: &str) -> bool {
        self.defs().contains_key(def)
    }

    /// The definition named `…{suffix}` whose `method` is the constant `method`.
    fn def_for_method(&self, method: &str, suffix: &str) -> Option<String> {
        self.defs()
            .iter()
            .filter(|(name, _)| name.ends_with(suffix))
            .find(|(_, def)| {
                def.pointer("/properties/method/const")
                    .and_then(Value::as_str)
                    == Some(method)
            })
            .map(|(name, _)| name.clone())
    }

    fn validate(&self, def: &str, instance: &Value) -> Result<(), String> {
        let validator = {
            let mut cache = self.validators.lock().unwrap();
            cache
                .entry(def.to_owned())
                .or_insert_with(|| {
                    let schema = json!({
                        "$schema": self.dialect,
                        "$ref": format!("#/{}/{def}", self.container),
                        (self.container): self.root[self.container].clone(),
                    });
                    Arc::new(
                        jsonschema::validator_for(&schema)
                            .unwrap_or_else(|e| panic!("schema for {def}: {e}")),
                    )
                })
                .clone()
        };
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .take(3)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("not a valid {def}: {}", errors.join("; ")))
        }
    }
}

/// Known defects of the generated `schema.json` files, corrected so that messages that match
/// the normative `schema.ts` pass.
///
/// - `ElicitResult.content` is `{ [key]: string | number | boolean | string[] }` in `schema.ts`,
///   but the JSON Schema generator (run with `--defaultNumberType integer`, see the 2026-07-28
///   changelog's "Other schema changes") wrote `integer`, refusing e.g. the SEP-1034 default
///   `95.5` the conformance suite itself asks clients to send.
fn apply_errata(root: &mut Value) {
    for container in ["$defs", "definitions"] {
        let Some(content) =
            root.pointer_mut(&format!("/{container}/ElicitResult/properties/content"))
        else {
            continue;
        };
        fn widen(v: &mut Value) {
            match v {
                Value::String(s) if s == "integer" => *s = "number".into(),
                Value::Array(items) => items.iter_mut().for_each(widen),
                Value::Object(map) => map.values_mut().for_each(widen),
                _ => {}
            }
        }
        widen(content);
    }
}

/// `tests/fixtures/spec` at the repository root.
pub fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/spec")
}
