//! Bindings of the unicode family: the names of `neardup._kernels.unicode`.

use numpy::ndarray::ArrayView1;
use numpy::{Element, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use super::core;
use crate::errors::config_error;

const FAMILIES: [&str; 2] = ["canonicalize", "classes"];

/// The Unicode version the tables follow.
#[pyfunction]
fn unicode_version() -> &'static str {
    core::version()
}

/// A read-only numpy view of an embedded table (static: its base owns nothing).
fn view<'py, T: Element>(py: Python<'py>, values: &'static [T]) -> PyResult<Bound<'py, PyAny>> {
    let base = PyTuple::empty(py).into_any();
    // SAFETY: the data is static, so it outlives the array, and it is never written: the
    // array is made read-only before anyone sees it
    let arr = unsafe { PyArray1::borrow_from_array(&ArrayView1::from(values), base) }.into_any();
    let kwargs = PyDict::new(py);
    kwargs.set_item("write", false)?;
    arr.call_method("setflags", (), Some(&kwargs))?;
    Ok(arr)
}

/// The arrays of one table family by name (read-only arrays). Under a Python whose
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
    if running != unicode_version() {
        let reference = py.import("neardup._kernels.unicode")?;
        return Ok(reference.call_method1("tables", (family,))?.cast_into()?);
    }
    let out = PyDict::new(py);
    for table in core::family(family).unwrap_or_default() {
        let arr = match table.dtype {
            core::Dtype::U8 => view(py, table.u8s())?,
            core::Dtype::I32 => view(py, table.i32s())?,
            core::Dtype::I64 => view(py, table.i64s())?,
        };
        out.set_item(table.name, arr)?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FAMILIES", pyo3::types::PyTuple::new(m.py(), FAMILIES)?)?;
    m.add_function(wrap_pyfunction!(tables, m)?)?;
    m.add_function(wrap_pyfunction!(unicode_version, m)?)?;
    Ok(())
}
