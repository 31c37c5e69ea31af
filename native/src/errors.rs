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
