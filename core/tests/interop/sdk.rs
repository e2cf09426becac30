//! The peers of the interop suite, one row each: the official Python SDK and the official
//! TypeScript SDK. A row says how to start the peer's scripts (`tests/interop/python/*.py`,
//! `tests/interop/node/*.mjs`, the same stems in both folders), which protocol eras it speaks,
//! and every place where its answers differ from the other SDK's: the schemas it generates,
//! the wording of its errors, how it reports a crash. The behaviours read these fields and
//! never ask which SDK they are talking to, so a new peer is one more row here and one more
//! column in the cell table of `main.rs`.

use std::path::{Path, PathBuf};

use oxmcp::{
    ProtocolVersion, client::ProtocolMode, jsonrpc::codes, transport::child::ChildCommand,
};
use serde_json::Value;

use crate::common::peers::{node_dir, python_ws_script, venv_python, ws_venv_python};
use crate::http::{App, Flavour};

/// How a peer's scripts are run.
#[derive(Clone, Copy)]
pub enum Runtime {
    /// The interop venv's Python, scripts in `tests/interop/python/`.
    Python,
    /// `node` from `PATH`, scripts (and the SDK's `node_modules`) in `tests/interop/node/`.
    Node,
}

/// A piece of text a check expects: the whole of it, its start, or a part of it.
#[derive(Clone, Copy, Debug)]
pub enum Text {
    Is(&'static str),
    Begins(&'static str),
    Has(&'static str),
}

/// Asserts every check holds for `actual`.
pub fn assert_text(actual: &str, checks: &[Text]) {
    for check in checks {
        let holds = match check {
            Text::Is(t) => actual == *t,
            Text::Begins(t) => actual.starts_with(t),
            Text::Has(t) => actual.contains(t),
        };
        assert!(holds, "{actual:?} does not satisfy {check:?}");
    }
}

/// A JSON-RPC error a check expects: its code and message, and its `data` where the SDK sets
/// one the check pins down.
#[derive(Clone, Copy, Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: &'static [Text],
    pub data: Option<&'static str>,
}

/// The names of a peer's test servers.
pub struct ServerNames {
    /// `server`, the stdio tools server.
    pub tools: &'static str,
    /// `feature_server`, also the logger of its log messages.
    pub features: &'static str,
}

/// How a client script words the first difference it found (on stderr).
#[derive(Clone, Copy)]
pub enum Mismatch {
    /// `MISMATCH: <field>: expected '<expected>', got '<actual>'`.
    Line,
    /// `MISMATCH: <field>` and node's `assert` message, which quotes the actual value.
    Assert,
}

impl Mismatch {
    pub fn assert_reported(self, stderr: &str, field: &str, expected: &str, actual: &str) {
        let reported = match self {
            Mismatch::Line => stderr.contains(&format!(
                "MISMATCH: {field}: expected '{expected}', got '{actual}'"
            )),
            Mismatch::Assert => {
                stderr.starts_with(&format!("MISMATCH: {field}"))
                    && stderr.contains(&format!("'{actual}'"))
            }
        };
        assert!(
            reported,
            "no MISMATCH of {field} ({expected} vs {actual}):\n{stderr}"
        );
    }
}

/// The tools server (`server.py`, `server.mjs`: `greet`, `add`, `fail`) as this SDK renders
/// it: the schemas it generates and the words of its tool errors.
pub struct ToolsQuirks {
    pub greet_input_schema: &'static str,
    /// Members of `greet` oxmcp does not model, kept as unknown members (`execution`).
    pub greet_extra: &'static [(&'static str, &'static str)],
    /// `add`'s input schema, where the check pins it down.
    pub add_input_schema: Option<&'static str>,
    pub add_output_schema: &'static str,
    /// The exact text fallback of `add`'s structured result, where the check pins it down
    /// (it is always JSON equal to the structured content).
    pub add_text: Option<&'static str>,
    /// The `required` list of `fail`'s output schema, where the SDK generates one.
    pub fail_output_required: Option<&'static str>,
    pub fail_text: &'static str,
    pub unknown_tool_text: &'static str,
    /// `add` with a string for `a`, and without `b`.
    pub wrong_type: &'static [Text],
    pub missing_argument: &'static [Text],
    /// `tools/call` without a name.
    pub nameless_call: RpcError,
    /// An unknown method.
    pub unknown_method: RpcError,
}

/// The feature server (`feature_server.py`, `feature_server.mjs`) as this SDK renders it.
pub struct FeatureQuirks {
    /// How its texts name the SDK ("Static text from the Python SDK.").
    pub who: &'static str,
    /// What reading `test://template/42/data` gives.
    pub template_text: &'static str,
    /// Whether prompts/list gives a prompt without arguments an empty `arguments`.
    pub lists_empty_prompt_arguments: bool,
    /// Whether prompts/get repeats the prompt's description.
    pub renders_prompt_description: bool,
    /// The `listChanged` of its resources capability.
    pub resources_list_changed: Option<bool>,
    /// Whether `log_messages` names the level `logging/setLevel` set in its answer.
    pub log_reply_names_level: bool,
    /// The quote around what the model said in `ask_model`'s answer.
    pub quote: char,
    /// The schema `ask_user` requests (in 2026-07-28) …
    pub contact_schema: &'static str,
    /// … and the members the handshake-era request adds to it.
    pub contact_schema_handshake_members: &'static [(&'static str, &'static str)],
    /// Whether it has `ask_everything` (three questions in one call).
    pub asks_everything_at_once: bool,
    /// The tool's error when an elicitation answer breaks the requested schema.
    pub sloppy_answer: &'static [Text],
    /// What becomes of a sampling request the client refused (handshake era).
    pub sampling_refusal: SamplingRefusal,
    /// What a tool that needs a client capability does when the client declared none.
    pub without_sampling: Undeclared,
    pub without_elicitation: Undeclared,
    pub without_roots: Undeclared,
    /// The failures its stderr may report (the answers to bad input), by their first line.
    pub logged_failures: &'static [&'static str],
    pub errors: FeatureErrors,
}

/// The feature server's answers to bad input.
pub struct FeatureErrors {
    pub unknown_resource: RpcError,
    /// A URI the template does not match.
    pub unmatched_template: RpcError,
    pub missing_prompt_argument: RpcError,
    pub unknown_prompt: RpcError,
    /// Where 2026-07-28 answers both prompt errors alike.
    pub prompt_errors_over_2026_07_28: Option<RpcError>,
    pub complete_unknown_prompt: RpcError,
    pub complete_unknown_template: RpcError,
}

/// What a server does with the client's refusal to sample.
#[derive(Clone, Copy)]
pub enum SamplingRefusal {
    /// Passes the client's error on as the call's JSON-RPC error.
    CallError,
    /// Fails the tool with this text.
    ToolError(&'static str),
}

/// What a tool that needs a client capability does when the client did not declare it.
#[derive(Clone, Copy)]
pub enum Undeclared {
    /// The server checks first and refuses the call (-32021) naming the capability.
    Refused(&'static str),
    /// The tool fails with this text; `asks`: the server asked anyway (our client answered
    /// -32601).
    ToolError { text: &'static str, asks: bool },
}

/// The SDK's HTTP servers (`http_server.py`, `http_server.mjs`) as it serves them.
pub struct HttpQuirks {
    /// The script's arguments for an app and a flavour.
    pub server_args: fn(App, Flavour) -> Vec<&'static str>,
    /// The names its tools app and its feature app report.
    pub tools_name: &'static str,
    pub features_name: &'static str,
    /// The tools its tools app lists.
    pub tools: &'static [&'static str],
    /// What its server prints when a request crashed it.
    pub crash_marker: &'static str,
    /// The length of its session ids.
    pub session_id_len: usize,
    /// A session id of the right shape that it never handed out.
    pub bogus_session: &'static str,
    /// The JSON-RPC code of its 404 for an unknown session, where the check pins it down.
    pub unknown_session_code: Option<i64>,
    /// How it refuses the stateless probe, where it does.
    pub probe_refusal: Option<ProbeRefusal>,
    /// The path its legacy `endpoint` event names, up to the session id.
    pub legacy_endpoint: &'static str,
    /// What `ask_model` answers over HTTP when the model said "echo: What is 2+2?".
    pub sampling_reply: &'static str,
    /// `ask_user`'s error when the answer breaks the requested schema.
    pub sloppy_answer: &'static [Text],
}

/// The HTTP answer to `server/discover` of a server without the stateless revision.
#[derive(Clone, Copy)]
pub struct ProbeRefusal {
    pub status: u16,
    /// The error message, with sessions and without.
    pub with_sessions: &'static [Text],
    pub stateless: &'static [Text],
}

/// One peer: an official SDK.
pub struct Sdk {
    /// For messages: "the Python SDK".
    pub label: &'static str,
    pub runtime: Runtime,
    /// The version the SDK's servers report (`serverInfo.version`): the release actually
    /// installed, which proves the pinned one runs.
    pub version: &'static str,
    /// The names its test servers report (`serverInfo.name`).
    pub names: ServerNames,
    /// The revision oxmcp's client reaches in auto mode.
    pub auto_version: ProtocolVersion,
    /// Why the SDK has no stateless 2026-07-28 (`None`: it speaks it).
    pub no_stateless: Option<&'static str>,
    /// The code of its refusal of `server/discover` in the handshake era, where the check
    /// pins it down after a forced handshake.
    pub discover_refusal_after_handshake: Option<i64>,
    /// The error a forced stateless client gets when the SDK speaks no 2026-07-28.
    pub stateless_refusal: Option<RpcError>,
    /// What its stdio servers write to stderr when something went wrong. For Python a
    /// traceback, for Node any line with `Error`.
    pub crash_marker: &'static str,
    /// How its client scripts say they connected, given the mode and the revision.
    pub connected_line: fn(&str, &str) -> String,
    /// Its client scripts take a mode (`auto`, `legacy`, `2026-07-28`); `None`: they always
    /// handshake and take no mode argument.
    pub client_takes_mode: bool,
    /// How its client scripts report a server that is not the one they expect.
    pub mismatch: Mismatch,
    pub tools: ToolsQuirks,
    pub features: FeatureQuirks,
    pub http: HttpQuirks,
    /// The release whose WebSocket transport the `ws` cells run: both SDKs removed it in
    /// 2.x (WebSocket was never part of the spec), so for Python it is a 1.x release in a venv
    /// of its own (`tests/interop/python-ws/`).
    pub ws_release: &'static str,
    /// The cells this peer cannot run, by behaviour, and why.
    pub gaps: &'static [(&'static str, &'static str)],
}

/// What a cell needs to start the peer's scripts, found once the peer is known installed.
pub struct Launcher {
    program: PathBuf,
    dir: PathBuf,
    extension: &'static str,
}

impl Launcher {
    /// The path of a script by its stem (`server`, `feature_client`, …).
    pub fn script(&self, stem: &str) -> PathBuf {
        self.dir.join(format!("{stem}.{}", self.extension))
    }

    /// The interpreter.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// A stdio child running the script `stem`.
    pub fn child(&self, stem: &str) -> ChildCommand {
        ChildCommand::new(&self.program)
            .arg(self.script(stem))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(&self.dir)
    }

    /// A process running the script `stem` with `args`.
    pub fn command<S: AsRef<std::ffi::OsStr>>(
        &self,
        stem: &str,
        args: impl IntoIterator<Item = S>,
    ) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .arg(self.script(stem))
            .args(args)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(&self.dir);
        command
    }
}

impl Sdk {
    /// How to start the peer; `None` (the cell is skipped, and says so) when it is not
    /// installed and not required.
    pub fn launcher(&self) -> Option<Launcher> {
        Some(match self.runtime {
            Runtime::Python => {
                let program = venv_python()?;
                let dir = crate::common::peers::python_script("");
                Launcher {
                    program,
                    dir,
                    extension: "py",
                }
            }
            Runtime::Node => Launcher {
                dir: node_dir()?,
                program: "node".into(),
                extension: "mjs",
            },
        })
    }

    /// How to start the peer's WebSocket scripts (`ws_server`, `ws_client`); `None` as for
    /// [`Sdk::launcher`].
    pub fn ws_launcher(&self) -> Option<Launcher> {
        Some(match self.runtime {
            Runtime::Python => Launcher {
                program: ws_venv_python()?,
                dir: python_ws_script(""),
                extension: "py",
            },
            Runtime::Node => {
                let dir = node_dir()?;
                // Node 20 has no global WebSocket: the scripts take `ws`'s.
                assert!(
                    dir.join("node_modules/ws/package.json").is_file(),
                    "the `ws` package is missing from {}; run `make interop-deps`",
                    dir.display()
                );
                Launcher {
                    dir,
                    program: "node".into(),
                    extension: "mjs",
                }
            }
        })
    }

    /// Why the peer cannot run the cell `behaviour`, if it cannot.
    pub fn gap(&self, behaviour: &str) -> Option<&'static str> {
        self.gaps
            .iter()
            .find(|(b, _)| *b == behaviour)
            .map(|(_, why)| *why)
    }

    /// Whether the SDK speaks the stateless 2026-07-28 revision.
    pub fn stateless(&self) -> bool {
        self.no_stateless.is_none()
    }

    /// The client mode that reaches `version` with this SDK's server: auto where auto lands
    /// there, else a forced handshake; `None` (with the reason) for a stateless revision the
    /// SDK does not speak.
    pub fn mode_for(&self, version: ProtocolVersion) -> Result<ProtocolMode, &'static str> {
        if version == self.auto_version {
            Ok(ProtocolMode::Auto)
        } else if version.is_stateless() {
            match self.no_stateless {
                Some(why) => Err(why),
                None => Ok(ProtocolMode::Stateless(version)),
            }
        } else {
            Ok(ProtocolMode::Handshake(version))
        }
    }
}

/// Prints why the running cell is skipped (the cell is the test's name).
pub fn skip(why: &str) {
    let thread = std::thread::current();
    let cell = thread.name().unwrap_or("this cell");
    eprintln!("skipped: {cell}: {why}");
}

/// Parses a JSON literal of the table.
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("bad JSON in the peer table: {e}\n{text}"))
}

/// The official Python SDK (`mcp` 2.3.0, pinned in `tests/interop/python/requirements.txt`).
pub fn python() -> &'static Sdk {
    &PYTHON
}

/// The official TypeScript SDK (`@modelcontextprotocol/sdk` 1.32.2, pinned in
/// `tests/interop/node/package.json` and its lockfile).
pub fn typescript() -> &'static Sdk {
    &TYPESCRIPT
}

static PYTHON: Sdk = Sdk {
    label: "the Python SDK",
    runtime: Runtime::Python,
    version: "mcp-2.3.0",
    names: ServerNames {
        tools: "python-interop",
        features: "python-features",
    },
    auto_version: ProtocolVersion::V2026_07_28,
    no_stateless: None,
    // In the handshake era the stateless probe is refused with -32600 (not the revision's
    // own codes), which is what tells a probing client to fall back.
    discover_refusal_after_handshake: Some(codes::INVALID_REQUEST),
    stateless_refusal: None,
    crash_marker: "Traceback",
    connected_line: |mode, version| format!("ok: connected in mode '{mode}' on {version}\n"),
    client_takes_mode: true,
    mismatch: Mismatch::Line,
    tools: ToolsQuirks {
        // From type hints (pydantic).
        greet_input_schema: r#"{"type": "object",
            "properties": {"name": {"title": "Name", "type": "string"}},
            "required": ["name"], "title": "greetArguments"}"#,
        greet_extra: &[],
        add_input_schema: None,
        add_output_schema: r#"{"description": "The structured result of `add`.",
            "properties": {"sum": {"title": "Sum", "type": "integer"}},
            "required": ["sum"], "title": "Sum", "type": "object"}"#,
        // Pretty-printed JSON.
        add_text: None,
        // A `-> str` tool gets a wrapping output schema from the SDK's auto-detection.
        fail_output_required: Some(r#"["result"]"#),
        fail_text: "Error executing tool fail: tool failed: kaput",
        // MCPServer reports an unknown tool as a tool result, not as a JSON-RPC error.
        unknown_tool_text: "Unknown tool: nope",
        wrong_type: &[
            Text::Begins("Error executing tool add: 1 validation error for addArguments\na\n"),
            Text::Has("Input should be a valid integer"),
        ],
        missing_argument: &[Text::Has(
            "validation error for addArguments\nb\n  Field required",
        )],
        nameless_call: RpcError {
            code: codes::INVALID_PARAMS,
            message: &[Text::Is("Invalid request parameters")],
            data: None,
        },
        unknown_method: RpcError {
            code: codes::METHOD_NOT_FOUND,
            message: &[Text::Is("Method not found")],
            data: Some(r#""no/such/method""#),
        },
    },
    features: FeatureQuirks {
        who: "Python",
        template_text: r#"{"id": "42", "source": "python"}"#,
        lists_empty_prompt_arguments: true,
        renders_prompt_description: true,
        resources_list_changed: Some(false),
        log_reply_names_level: true,
        quote: '\'',
        contact_schema: r#"{"type": "object",
            "properties": {"username": {"title": "Username", "type": "string"},
                           "email": {"title": "Email", "type": "string"}},
            "required": ["username", "email"]}"#,
        // The handshake-era request keeps pydantic's title and docstring; the 2026-07-28
        // model of the request drops them.
        contact_schema_handshake_members: &[
            ("title", "Contact"),
            ("description", "What `ask_user` asks for."),
        ],
        asks_everything_at_once: true,
        sloppy_answer: &[
            Text::Begins("Error executing tool ask_user: Resolver '__main__:contact_question'"),
            Text::Has("does not match the requested schema"),
        ],
        sampling_refusal: SamplingRefusal::CallError,
        // MCPServer checks before asking, in both eras, with the 2026-07-28 code.
        without_sampling: Undeclared::Refused(r#"{"sampling": {}}"#),
        without_elicitation: Undeclared::Refused(r#"{"elicitation": {"form": {}}}"#),
        without_roots: Undeclared::Refused(r#"{"roots": {}}"#),
        // The SDK logs a traceback for a prompt that fails to render (it answers with an
        // error); nothing else may.
        logged_failures: &[
            "ValueError: Unknown prompt: ",
            "ValueError: Missing required arguments: ",
        ],
        errors: FeatureErrors {
            // -32602 in both eras (2025-11-25 asks for -32002, Resource not found;
            // 2026-07-28 moved it to -32602).
            unknown_resource: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is("Unknown resource: test://nope")],
                data: Some(r#"{"uri": "test://nope"}"#),
            },
            unmatched_template: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[],
                data: None,
            },
            // MCPServer raises ValueError for both prompt errors, which its handshake-era
            // loop answers with code 0 and the message, and its 2026-07-28 path with a
            // generic -32603.
            missing_prompt_argument: RpcError {
                code: 0,
                message: &[Text::Is("Missing required arguments: {'name'}")],
                data: None,
            },
            unknown_prompt: RpcError {
                code: 0,
                message: &[Text::Is("Unknown prompt: nope")],
                data: None,
            },
            prompt_errors_over_2026_07_28: Some(RpcError {
                code: codes::INTERNAL_ERROR,
                message: &[Text::Is("Internal server error")],
                data: None,
            }),
            complete_unknown_prompt: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is("Unknown prompt: nope")],
                data: None,
            },
            complete_unknown_template: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is("Unknown resource template: test://other/{id}")],
                data: None,
            },
        },
    },
    http: HttpQuirks {
        server_args: |app, flavour| {
            let app = match app {
                App::Tools => "tools",
                App::Features => "features",
            };
            let transport = match flavour {
                Flavour::Sessions => "streamable",
                Flavour::Stateless => "stateless",
                Flavour::SessionsJson => "json",
                Flavour::StatelessJson => "stateless-json",
                Flavour::LegacySse => "sse",
            };
            vec![app, transport]
        },
        tools_name: "python-interop",
        features_name: "python-features",
        tools: &["greet", "add", "fail"],
        crash_marker: "Traceback",
        session_id_len: 32,
        bogus_session: "0123456789abcdef0123456789abcdef",
        unknown_session_code: Some(codes::INVALID_REQUEST),
        probe_refusal: None,
        legacy_endpoint: "/messages/?session_id=",
        sampling_reply: "model oxmcp-test-model said 'echo: What is 2+2?' (stopReason endTurn)",
        // feature_server.py imported as a module, not run as `__main__`.
        sloppy_answer: &[
            Text::Begins(
                "Error executing tool ask_user: Resolver 'feature_server:contact_question'",
            ),
            Text::Has("does not match the requested schema"),
        ],
    },
    gaps: &[
        (
            "tasks",
            "the Python SDK 2.x has no tasks (removed in python-sdk #2714; the 2026-07-28 \
             extension is PR #3005, not released)",
        ),
        (
            "progress_and_logs",
            "the Python HTTP test server has no `steps` tool (its log messages are the \
             `log_messages` cells)",
        ),
        (
            "questions_json",
            "not covered: the Python SDK's JSON-only server is not asked to carry questions",
        ),
    ],
    ws_release: "1.30.0",
};

static TYPESCRIPT: Sdk = Sdk {
    label: "the TypeScript SDK",
    runtime: Runtime::Node,
    version: "sdk-1.32.2",
    names: ServerNames {
        tools: "typescript-interop",
        features: "typescript-features",
    },
    // The SDK has no server/discover: auto mode falls back to the newest handshake.
    auto_version: ProtocolVersion::V2025_11_25,
    no_stateless: Some("the TypeScript SDK speaks the handshake era only (up to 2025-11-25)"),
    discover_refusal_after_handshake: None,
    // With no fallback allowed, the server's refusal of server/discover is the answer.
    stateless_refusal: Some(RpcError {
        code: codes::METHOD_NOT_FOUND,
        message: &[Text::Is("Method not found")],
        data: None,
    }),
    crash_marker: "Error",
    connected_line: |_mode, version| format!("ok: connected on {version}\n"),
    client_takes_mode: false,
    mismatch: Mismatch::Assert,
    tools: ToolsQuirks {
        // From zod (draft-07, `$schema` included).
        greet_input_schema: r#"{"$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object", "properties": {"name": {"type": "string"}},
            "required": ["name"]}"#,
        // `execution` (2025-11-25 tasks) is not modelled by oxmcp and must survive as an
        // unknown member.
        greet_extra: &[("execution", r#"{"taskSupport": "forbidden"}"#)],
        // A zod `z.number().int()` is bounded to JavaScript's safe integers.
        add_input_schema: Some(
            r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991},
                "b": {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}},
            "required": ["a", "b"]}"#,
        ),
        add_output_schema: r#"{"$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "sum": {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}},
            "required": ["sum"], "additionalProperties": false}"#,
        // The tool's own text rendering.
        add_text: Some(r#"{"sum":5}"#),
        fail_output_required: None,
        // A handler that throws: isError with the exception's message.
        fail_text: "tool failed: kaput",
        // McpServer reports an unknown tool as a tool result whose text is the -32602 error
        // it caught, not as a JSON-RPC error.
        unknown_tool_text: "MCP error -32602: Tool nope not found",
        wrong_type: &[Text::Is(
            "MCP error -32602: Input validation error: Invalid arguments for tool add: \
             Invalid input: expected number, received string at a",
        )],
        missing_argument: &[Text::Is(
            "MCP error -32602: Input validation error: Invalid arguments for tool add: \
             Invalid input: expected number, received undefined at b",
        )],
        // The SDK answers -32603 (its zod parse of the request throws inside the handler),
        // where -32602 would be the fitting code; the message is zod's issue list.
        nameless_call: RpcError {
            code: codes::INTERNAL_ERROR,
            message: &[Text::Has(r#""path": ["#), Text::Has(r#""name""#)],
            data: None,
        },
        unknown_method: RpcError {
            code: codes::METHOD_NOT_FOUND,
            message: &[Text::Is("Method not found")],
            data: None,
        },
    },
    features: FeatureQuirks {
        who: "TypeScript",
        template_text: r#"{"id":"42","source":"typescript"}"#,
        lists_empty_prompt_arguments: false,
        renders_prompt_description: false,
        resources_list_changed: Some(true),
        log_reply_names_level: false,
        quote: '"',
        contact_schema: r#"{"type": "object",
            "properties": {"username": {"type": "string", "description": "Your user name"},
                           "email": {"type": "string", "description": "Your email address"}},
            "required": ["username", "email"]}"#,
        contact_schema_handshake_members: &[],
        asks_everything_at_once: false,
        // The SDK checks the answer (ajv) and the tool fails.
        sloppy_answer: &[Text::Begins(
            "MCP error -32602: Elicitation response content does not match requested schema",
        )],
        sampling_refusal: SamplingRefusal::ToolError("MCP error -1: User rejected sampling"),
        // The SDK checks elicitation before asking; sampling and roots it asks anyway.
        without_sampling: Undeclared::ToolError {
            text: "MCP error -32601: Method not found: sampling/createMessage",
            asks: true,
        },
        without_elicitation: Undeclared::ToolError {
            text: "Client does not support form elicitation.",
            asks: false,
        },
        without_roots: Undeclared::ToolError {
            text: "MCP error -32601: Method not found: roots/list",
            asks: true,
        },
        logged_failures: &[],
        // The SDK words its errors as `MCP error <code>: …` on the wire too.
        errors: FeatureErrors {
            unknown_resource: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is("MCP error -32602: Resource test://nope not found")],
                data: None,
            },
            unmatched_template: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is(
                    "MCP error -32602: Resource test://template/42 not found",
                )],
                data: None,
            },
            missing_prompt_argument: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is(
                    "MCP error -32602: Invalid arguments for prompt greeting: \
                     Invalid input: expected string, received undefined at name",
                )],
                data: None,
            },
            unknown_prompt: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is("MCP error -32602: Prompt nope not found")],
                data: None,
            },
            prompt_errors_over_2026_07_28: None,
            complete_unknown_prompt: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is("MCP error -32602: Prompt nope not found")],
                data: None,
            },
            complete_unknown_template: RpcError {
                code: codes::INVALID_PARAMS,
                message: &[Text::Is(
                    "MCP error -32602: Resource template test://other/{id} not found",
                )],
                data: None,
            },
        },
    },
    http: HttpQuirks {
        // One app (the tools of server.mjs and those that log and ask) in each flavour.
        server_args: |_app, flavour| {
            vec![match flavour {
                Flavour::Sessions => "stateful",
                Flavour::Stateless => "stateless",
                Flavour::SessionsJson => "stateful-json",
                Flavour::StatelessJson => "stateless-json",
                Flavour::LegacySse => "sse",
            }]
        },
        tools_name: "typescript-http",
        features_name: "typescript-http",
        tools: &["greet", "add", "fail", "steps", "ask_model", "ask_user"],
        crash_marker: "request failed:",
        // A UUID.
        session_id_len: 36,
        bogus_session: "00000000-0000-0000-0000-000000000000",
        unknown_session_code: None,
        // The stateful routing refuses a request without a session; the stateless transport
        // refuses the revision in MCP-Protocol-Version.
        probe_refusal: Some(ProbeRefusal {
            status: 400,
            with_sessions: &[Text::Is("Bad Request: No valid session ID provided")],
            stateless: &[Text::Begins(
                "Bad Request: Unsupported protocol version: 2026-07-28",
            )],
        }),
        legacy_endpoint: "/messages?sessionId=",
        sampling_reply: r#"model oxmcp-test-model said "echo: What is 2+2?""#,
        sloppy_answer: &[Text::Begins(
            "MCP error -32602: Elicitation response content does not match requested schema",
        )],
    },
    gaps: &[
        (
            "log_messages",
            "the TypeScript HTTP test server has no `log_messages` tool (its log messages are \
             the `progress_and_logs` cells)",
        ),
        (
            "stateless_server_cannot_ask",
            "not covered: the TypeScript SDK's per-request transport is not asked to carry \
             questions",
        ),
        ("http_client_json", "http_client.mjs has no JSON-only kind"),
        (
            "ws_server",
            "the TypeScript SDK 1.x ships a WebSocket client only (typescript-sdk#142; the \
             server of PR #1280 was not merged)",
        ),
    ],
    ws_release: "1.32.2",
};
