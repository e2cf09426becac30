//! The one mapper from `oxmcp::Error` to the Python exception hierarchy under
//! `oxmcp.McpError` (the classes live in `oxmcp/errors.py`, so they are ordinary, typed,
//! picklable Python classes; this file only picks the class and fills its attributes).

use oxmcp::{Error, ErrorKind};
use pyo3::{prelude::*, sync::PyOnceLock, types::PyDict};

/// A failure on its way to Python: a core error, or a Python exception already raised.
pub enum ErrorMapper {
    /// From the core.
    Core(Error),
    /// From Python code (a handler, a conversion).
    Py(PyErr),
}

impl From<Error> for ErrorMapper {
    fn from(e: Error) -> Self {
        ErrorMapper::Core(e)
    }
}

impl From<PyErr> for ErrorMapper {
    fn from(e: PyErr) -> Self {
        ErrorMapper::Py(e)
    }
}

/// The Python class name for each kind (`oxmcp.errors.<name>`).
pub fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Rpc => "RpcError",
        ErrorKind::Timeout => "RequestTimeoutError",
        ErrorKind::Cancelled => "RequestCancelledError",
        ErrorKind::ConnectionClosed => "ConnectionClosedError",
        ErrorKind::Spawn => "SpawnError",
        ErrorKind::Io => "TransportError",
        ErrorKind::Protocol => "ProtocolError",
        ErrorKind::UnsupportedProtocolVersion => "UnsupportedProtocolVersionError",
        ErrorKind::InvalidSchema => "InvalidSchemaError",
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::Config => "ConfigError",
        ErrorKind::Auth => "AuthError",
        ErrorKind::TaskRequired => "TaskRequiredError",
        ErrorKind::HandshakeIncomplete => "HandshakeIncompleteError",
        // A kind added to the core later still maps to the base class.
        _ => "McpError",
    }
}

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || py.import("oxmcp.errors").map(Bound::unbind))
        .map(|m| m.bind(py))
}

impl ErrorMapper {
    /// The Python exception.
    pub fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            ErrorMapper::Py(e) => e,
            ErrorMapper::Core(e) => core_to_py(py, &e).unwrap_or_else(|failed| failed),
        }
    }
}

/// Maps a core error (used by every native entry point).
pub fn to_pyerr(e: Error) -> PyErr {
    Python::attach(|py| ErrorMapper::Core(e).into_pyerr(py))
}

fn core_to_py(py: Python<'_>, e: &Error) -> Result<PyErr, PyErr> {
    let kind = e.kind();
    let class = errors_module(py)?.getattr(class_name(kind))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("kind", kind.as_str())?;
    match e {
        Error::Rpc(obj) => {
            kwargs.set_item("code", obj.code)?;
            if let Some(data) = &obj.data {
                kwargs.set_item("data", crate::convert::to_py(py, data)?)?;
            }
            // The message is the peer's text: shown sanitized (the exact text stays in `data`).
            let message = oxmcp::sanitize::line(&obj.message);
            let exc = class.call((message.as_ref(),), Some(&kwargs))?;
            return Ok(PyErr::from_value(exc));
        }
        Error::Timeout { method, after } => {
            kwargs.set_item("method", method.as_str())?;
            kwargs.set_item("after", after.as_secs_f64())?;
        }
        Error::ConnectionClosed { stderr, .. } => {
            kwargs.set_item("stderr", stderr.as_deref())?;
        }
        Error::Spawn { command, .. } => {
            kwargs.set_item("command", command.as_str())?;
        }
        Error::UnsupportedProtocolVersion {
            requested,
            supported,
        } => {
            kwargs.set_item("requested", requested.as_str())?;
            kwargs.set_item("supported", supported.clone())?;
        }
        Error::Config {
            file,
            server,
            field,
            ..
        } => {
            kwargs.set_item("file", file.as_deref())?;
            kwargs.set_item("server", server.as_deref())?;
            kwargs.set_item("field", field.as_deref())?;
        }
        Error::TaskRequired { tool } => {
            kwargs.set_item("tool", tool.as_str())?;
        }
        _ => {}
    }
    let exc = class.call((e.to_string(),), Some(&kwargs))?;
    Ok(PyErr::from_value(exc))
}

/// Every kind with its class name, so the Python tests can check the mapping is complete.
#[pyfunction]
pub fn error_kinds() -> Vec<(&'static str, &'static str)> {
    [
        ErrorKind::Rpc,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::ConnectionClosed,
        ErrorKind::Spawn,
        ErrorKind::Io,
        ErrorKind::Protocol,
        ErrorKind::UnsupportedProtocolVersion,
        ErrorKind::InvalidSchema,
        ErrorKind::InvalidArgument,
        ErrorKind::Config,
        ErrorKind::Auth,
        ErrorKind::TaskRequired,
        ErrorKind::HandshakeIncomplete,
    ]
    .into_iter()
    .map(|k| (k.as_str(), class_name(k)))
    .collect()
}

/// Raises the Python exception for one core error of `kind` (tests use it to check each
/// class and its attributes; the message says it is synthetic).
#[pyfunction]
pub fn _raise_kind(kind: &str) -> PyResult<()> {
    use std::{io, sync::Arc, time::Duration};
    let e = match kind {
        "rpc" => Error::Rpc(oxmcp::jsonrpc::ErrorObject::new(-32602, "synthetic")),
        "timeout" => Error::Timeout {
            method: "tools/call".into(),
            after: Duration::from_millis(1500),
        },
        "cancelled" => Error::Cancelled,
        "connection_closed" => Error::ConnectionClosed {
            reason: "synthetic".into(),
            stderr: Some("last words".into()),
        },
        "spawn" => Error::Spawn {
            command: "nowhere".into(),
            source: Arc::new(io::Error::from(io::ErrorKind::NotFound)),
        },
        "io" => Error::Io(Arc::new(io::Error::other("synthetic"))),
        "protocol" => Error::Protocol("synthetic".into()),
        "unsupported_protocol_version" => Error::UnsupportedProtocolVersion {
            requested: "1999-01-01".into(),
            supported: vec!["2025-11-25".into()],
        },
        "invalid_schema" => Error::InvalidSchema("synthetic".into()),
        "invalid_argument" => Error::InvalidArgument("synthetic".into()),
        "config" => Error::Config {
            file: Some("mcp.json".into()),
            server: Some("weather".into()),
            field: Some("command".into()),
            message: "synthetic".into(),
        },
        "auth" => Error::Auth("synthetic".into()),
        "task_required" => Error::TaskRequired {
            tool: "synthetic".into(),
        },
        "handshake_incomplete" => Error::HandshakeIncomplete {
            method: "elicitation/create".into(),
            waited: Duration::from_secs(5),
        },
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown error kind `{other}`"
            )));
        }
    };
    Err(to_pyerr(e))
}
