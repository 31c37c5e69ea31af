//! The errors native kernels raise: the same `neardup.errors` classes as the numpy twins.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static CONFIG_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A `neardup.errors.ConfigError` carrying `message`.
pub fn config_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    let message = message.into();
    match CONFIG_ERROR.import(py, "neardup.errors", "ConfigError") {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(err) => err,
    }
}

/// `value` as a count of at least `low`, else the twin's `ConfigError`.
pub fn at_least(py: Python<'_>, name: &str, value: i64, low: i64) -> PyResult<usize> {
    if value < low {
        return Err(config_error(
            py,
            format!("{name} must be at least {low}, got {value}"),
        ));
    }
    Ok(value as usize)
}

/// Two arrays of one length, else the twin's `ConfigError` naming them (`what`).
pub fn config_same_length(py: Python<'_>, what: &str, a: usize, b: usize) -> PyResult<()> {
    if a != b {
        return Err(config_error(
            py,
            format!("{what} differ in length ({a} and {b})"),
        ));
    }
    Ok(())
}
