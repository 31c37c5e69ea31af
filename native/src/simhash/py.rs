//! Bindings of the simhash family: the names of `neardup._kernels.simhash`.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::core;
use crate::arrays::uint8_mask;
use crate::arrays::{code_point_table, doc_offsets, offsets as check_offsets, slice, slice2};
use crate::errors::config_error;
use crate::text::py::decode_error;

/// SimHash codes of feature hashes grouped per document: ``(n_docs, words)`` uint64, bit ``b``
/// set iff ``2 * ones[b] > total`` (weighted, int64).
#[pyfunction]
fn simhash_accumulate<'py>(
    py: Python<'py>,
    hashes: PyReadonlyArray2<'py, u64>,
    weights: PyReadonlyArray1<'py, i64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let (h, n, words) = slice2(&hashes)?;
    let (w, o) = (slice(&weights)?, slice(&doc_offsets)?);
    if w.len() != n {
        return Err(PyValueError::new_err(format!(
            "{n} feature hashes but {} weights; pass one weight per row",
            w.len()
        )));
    }
    check_offsets("doc_offsets", o, n)?;
    let out = py.detach(|| core::simhash_accumulate(h, words, w, o));
    let n_docs = o.len() - 1;
    Ok(numpy::ndarray::Array2::from_shape_vec((n_docs, words), out)
        .expect("n_docs * words codes")
        .into_pyarray(py))
}

/// Fused word-shingle SimHash-64: ``(codes, feature counts)`` of every document.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn simhash_words<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    classes: PyReadonlyArray1<'py, u8>,
    lower: PyReadonlyArray1<'py, i32>,
    mask: i64,
    min_bytes: i64,
    k: i64,
    joined: bool,
    kind: i64,
    seed: u64,
) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<i64>>)> {
    if k < 1 {
        return Err(config_error(
            py,
            format!("shingle size k must be >= 1, got {k}"),
        ));
    }
    if !(0..=2).contains(&kind) {
        return Err(config_error(
            py,
            format!(
                "feature hash kind must be 0 (fnv1a64), 1 (xxh3_64) or 2 (xxh3_128), got {kind}"
            ),
        ));
    }
    let (b, o) = (slice(&buf)?, slice(&offsets)?);
    let (c, l) = (slice(&classes)?, slice(&lower)?);
    doc_offsets(b.len(), o)?;
    code_point_table("classes", c)?;
    code_point_table("lower", l)?;
    let p = core::WordParams {
        k: k as usize,
        joined,
        kind: kind as u8,
        seed,
    };
    let tokenizer = core::Tokenizer::new(c, l, uint8_mask(mask)?, min_bytes);
    let (codes, counts) = py
        .detach(|| core::simhash_words(b, o, &tokenizer, p))
        .map_err(|d| decode_error(py, &b[o[d] as usize..o[d + 1] as usize]))?;
    Ok((codes.into_pyarray(py), counts.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simhash_accumulate, m)?)?;
    m.add_function(wrap_pyfunction!(simhash_words, m)?)?;
    Ok(())
}
