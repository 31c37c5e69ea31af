//! Bindings of the hll family: the names of `neardup._kernels.hll`.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;

use super::core;
use crate::arrays::{offsets, vector};
use crate::errors::config_error;

/// The largest precision a kernel call takes (2**30 registers per document).
const MAX_P: i64 = 30;

/// ``(n_docs, 2**p)`` int8 registers of each document's hashes.
#[pyfunction]
fn registers<'py>(
    py: Python<'py>,
    hashes: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
    p: i64,
    bits: i64,
) -> PyResult<Bound<'py, PyArray2<i8>>> {
    if !(0..=MAX_P).contains(&p) || !(0..=64).contains(&bits) {
        return Err(config_error(
            py,
            format!("p must be from 0 to {MAX_P} and bits from 0 to 64, got p={p}, bits={bits}"),
        ));
    }
    let (h, o) = (vector(&hashes), vector(&doc_offsets));
    offsets("doc_offsets", &o, h.len())?;
    let out = py.detach(|| core::registers(&h, &o, p as u32, bits as u32));
    let rows = Array2::from_shape_vec((o.len() - 1, 1usize << p), out).expect("n * 2**p");
    Ok(rows.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(registers, m)?)?;
    Ok(())
}
