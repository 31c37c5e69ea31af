//! Bindings of the unicode family: the names of `neardup._kernels.unicode.reference`.

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::core;
use crate::errors::config_error;

const FAMILIES: [&str; 2] = ["canonicalize", "classes"];

/// The Unicode version the tables follow.
#[pyfunction]
fn unicode_version() -> PyResult<String> {
    core::version().map_err(pyo3::exceptions::PyRuntimeError::new_err)
}

/// The arrays of one table family by name (fresh, writable arrays). Under a Python whose
/// Unicode version differs from the embedded one, the reference builds them from that
/// Python's unicodedata, so both twins always agree with the running interpreter.
#[pyfunction]
fn tables<'py>(py: Python<'py>, family: &str) -> PyResult<Bound<'py, PyDict>> {
    if !FAMILIES.contains(&family) {
        return Err(config_error(
            py,
            format!("unknown Unicode table family '{family}'; use canonicalize or classes"),
        ));
    }
    let running: String = py
        .import("unicodedata")?
        .getattr("unidata_version")?
        .extract()?;
    if running != unicode_version()? {
        let reference = py.import("neardup._kernels.unicode.reference")?;
        return Ok(reference.call_method1("tables", (family,))?.cast_into()?);
    }
    let arrays = core::family(family).map_err(pyo3::exceptions::PyRuntimeError::new_err)?;
    let out = PyDict::new(py);
    for array in arrays.unwrap_or_default() {
        match array.values {
            core::Values::U8(v) => out.set_item(&array.name, v.into_pyarray(py))?,
            core::Values::I32(v) => out.set_item(&array.name, v.into_pyarray(py))?,
            core::Values::I64(v) => out.set_item(&array.name, v.into_pyarray(py))?,
        }
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FAMILIES", pyo3::types::PyTuple::new(m.py(), FAMILIES)?)?;
    m.add_function(wrap_pyfunction!(tables, m)?)?;
    m.add_function(wrap_pyfunction!(unicode_version, m)?)?;
    Ok(())
}
