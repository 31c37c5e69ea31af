//! Bindings of the affine family: the names of `neardup._kernels.affine`.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;

use super::core;
use crate::arrays::{offsets, vector};
use crate::errors::config_same_length;

/// ``(n_docs, num_perm)`` uint32 slots of the token hashes ``hv`` of each document.
#[pyfunction]
fn affine32<'py>(
    py: Python<'py>,
    hv: PyReadonlyArray1<'py, u32>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
    a: PyReadonlyArray1<'py, u32>,
    b: PyReadonlyArray1<'py, u32>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let (h, o, a, b) = (vector(&hv), vector(&doc_offsets), vector(&a), vector(&b));
    config_same_length(py, "the permutations a and b", a.len(), b.len())?;
    offsets("doc_offsets", &o, h.len())?;
    let out = py.detach(|| core::affine32(&h, &o, &a, &b));
    let rows = Array2::from_shape_vec((o.len() - 1, a.len()), out).expect("n * k slots");
    Ok(rows.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(affine32, m)?)?;
    Ok(())
}
