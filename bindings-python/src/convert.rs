//! Values crossing the boundary: JSON on the Rust side, plain Python objects (dict, list, str,
//! int, float, bool, None) on the other, converted once each way with `pythonize`.

use pyo3::{exceptions::PyTypeError, prelude::*};
use serde_json::Value;

/// JSON to a Python object.
pub fn to_py(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    pythonize::pythonize(py, value)
        .map(Bound::unbind)
        .map_err(|e| PyTypeError::new_err(format!("cannot convert to Python: {e}")))
}

/// A Python object to JSON; `what` names the value in the error (a handler's return value, a
/// tool's arguments). Nesting beyond [`MAX_NESTING`] is refused first.
pub fn from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    check_nesting(obj, what)?;
    pythonize::depythonize::<Value>(obj).map_err(|e| {
        let type_name = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        PyTypeError::new_err(format!(
            "{what} is not JSON-serialisable ({type_name}): {e}"
        ))
    })
}

/// A result that becomes a Python object once the GIL is held again.
pub trait ToPython: Send + 'static {
    /// Converts, attached.
    fn to_python(self, py: Python<'_>) -> PyResult<Py<PyAny>>;
}

impl ToPython for Value {
    fn to_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self)
    }
}

impl ToPython for () {
    fn to_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(py.None())
    }
}

impl ToPython for bool {
    fn to_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(pyo3::types::PyBool::new(py, self)
            .to_owned()
            .into_any()
            .unbind())
    }
}

/// Any serde value (a typed result from the core) goes through JSON.
pub struct Json<T>(pub T);

impl<T: serde::Serialize + Send + 'static> ToPython for Json<T> {
    fn to_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        pythonize::pythonize(py, &self.0)
            .map(Bound::unbind)
            .map_err(|e| PyTypeError::new_err(format!("cannot convert to Python: {e}")))
    }
}

/// A native object built on the runtime (a connected client, a running HTTP server).
pub struct Native<T>(pub T);

impl<T> ToPython for Native<T>
where
    T: pyo3::PyClass + Into<pyo3::PyClassInitializer<T>> + Send + 'static,
{
    fn to_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(Py::new(py, self.0)?.into_any())
    }
}

/// Decodes JSON into a core type, with the field that was wrong in the message. A value the
/// API does not accept (a log level `"loud"`, a malformed definition) is the core's
/// `InvalidArgument`, so Python sees `oxmcp.InvalidArgumentError` (a `ValueError` too).
pub fn decode<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> PyResult<T> {
    serde_json::from_value(value).map_err(|e| {
        crate::errors::to_pyerr(oxmcp::Error::InvalidArgument(format!(
            "invalid {what}: {e}"
        )))
    })
}

/// Most nesting accepted from Python: the core's cap on values (the nesting cap a peer's
/// parser applies to the same value arriving as text). `depythonize` recurses before any core
/// check can run, so a hostile value of 10,000 levels would otherwise overflow the stack and
/// kill the interpreter; hence this walk over the Python objects, on top of the core's own.
pub const MAX_NESTING: usize = oxmcp::schema::MAX_VALUE_DEPTH;

/// Refuses a Python value nested deeper than [`MAX_NESTING`] (dicts, lists and tuples),
/// walking it without recursion before anything recursive touches it.
fn check_nesting(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    use pyo3::types::{PyDict, PyList, PyTuple};
    let deep = || {
        crate::errors::to_pyerr(oxmcp::Error::InvalidSchema(format!(
            "{what} nests deeper than {MAX_NESTING} levels"
        )))
    };
    let mut stack: Vec<(Bound<'_, PyAny>, usize)> = vec![(obj.clone(), 1)];
    while let Some((v, depth)) = stack.pop() {
        if let Ok(d) = v.cast::<PyDict>() {
            if depth > MAX_NESTING {
                return Err(deep());
            }
            stack.extend(d.values().into_iter().map(|c| (c, depth + 1)));
        } else if let Ok(l) = v.cast::<PyList>() {
            if depth > MAX_NESTING {
                return Err(deep());
            }
            stack.extend(l.iter().map(|c| (c, depth + 1)));
        } else if let Ok(t) = v.cast::<PyTuple>() {
            if depth > MAX_NESTING {
                return Err(deep());
            }
            stack.extend(t.iter().map(|c| (c, depth + 1)));
        }
    }
    Ok(())
}
