//! `oxmcp._native`: the native half of the Python package `oxmcp`.
//!
//! Files mirror the core: [`server`] and [`context`] wrap `oxmcp::server`, [`client`] wraps
//! `oxmcp::client` (with [`auth`] for its OAuth settings), [`schema`] wraps `oxmcp::schema`,
//! [`host`] wraps `oxmcp::host`, [`cli`] runs `oxmcp::cli`, [`errors`] is the one error
//! mapper, [`runtime`] owns the tokio runtime and the asyncio bridges, [`embed`] runs a stdio
//! client's session on the caller's asyncio loop thread, [`callable`] adapts Python callables
//! to the core's handler traits and [`convert`] moves values across. No protocol logic lives
//! here.

use pyo3::prelude::*;

mod auth;
mod auth_resource;
mod callable;
mod cli;
mod client;
mod context;
mod convert;
mod embed;
mod errors;
mod host;
mod inline;
mod runtime;
mod schema;
mod server;
mod tasks;
mod tstate;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<server::NativeServer>()?;
    m.add_class::<server::NativeHttpServer>()?;
    m.add_class::<server::NativeWsServer>()?;
    m.add_class::<context::NativeContext>()?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<tasks::NativeTaskHandle>()?;
    m.add_class::<host::NativeHost>()?;
    m.add_class::<schema::NativeTranslation>()?;
    m.add_function(wrap_pyfunction!(schema::translate, m)?)?;
    m.add_function(wrap_pyfunction!(schema::result_messages_for, m)?)?;
    m.add_function(wrap_pyfunction!(schema::prompt_history, m)?)?;
    m.add_function(wrap_pyfunction!(cli::run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_raise_kind, m)?)?;
    runtime::register(m)?;
    Ok(())
}
