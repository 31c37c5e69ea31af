//! Bindings of the pooling family: the names of `neardup._kernels.pooling`.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

use super::core;
use crate::arrays::{run_offsets as check_offsets, slice};

/// The first of `values` outside `-size..size` (as numpy's indexing would refuse it).
fn out_of_bounds(values: &[i64], size: usize, axis: usize, skip: Option<i64>) -> PyResult<()> {
    let size_i = size as i64;
    match values
        .iter()
        .find(|&&v| Some(v) != skip && (v >= size_i || v < -size_i))
    {
        Some(v) => Err(PyIndexError::new_err(format!(
            "index {v} is out of bounds for axis {axis} with size {size}"
        ))),
        None => Ok(()),
    }
}

/// Mean-pool rows of ``table`` per document (ids equal to ``skip`` left out), then scale each
/// non-zero row to unit length when ``normalize``: ``(n_docs, dim)`` float32.
#[pyfunction]
fn mean_pool<'py>(
    py: Python<'py>,
    table: PyReadonlyArray2<'py, f32>,
    ids: PyReadonlyArray1<'py, i64>,
    offsets: PyReadonlyArray1<'py, i64>,
    skip: i64,
    normalize: bool,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let view = table.as_array();
    let (vocab, dim) = view.dim();
    let (i, o) = (slice(&ids)?, slice(&offsets)?);
    check_offsets(i.len(), o)?;
    out_of_bounds(
        &i[o[0] as usize..o[o.len() - 1] as usize],
        vocab,
        0,
        Some(skip),
    )?;
    let out = py.detach(|| match view.as_slice() {
        Some(flat) => core::mean_pool(flat, dim, i, o, skip, normalize),
        None => {
            let flat: Vec<f32> = view.iter().copied().collect();
            core::mean_pool(&flat, dim, i, o, skip, normalize)
        }
    });
    out.into_pyarray(py).reshape([o.len() - 1, dim])
}

/// Token ids of texts given as sequences of cached words (CSR in, CSR out), at most
/// ``max_length`` per text (-1: all): ``(ids, offsets)``.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn expand_words<'py>(
    py: Python<'py>,
    word_index: PyReadonlyArray1<'py, i64>,
    text_words: PyReadonlyArray1<'py, i64>,
    word_ids: PyReadonlyArray1<'py, i64>,
    word_offsets: PyReadonlyArray1<'py, i64>,
    max_length: i64,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
    let (wi, tw, ids, wo) = (
        slice(&word_index)?,
        slice(&text_words)?,
        slice(&word_ids)?,
        slice(&word_offsets)?,
    );
    check_offsets(wi.len(), tw)?;
    check_offsets(ids.len(), wo)?;
    let n_words = wo.len() - 1;
    let used = &wi[tw[0] as usize..tw[tw.len() - 1] as usize];
    if let Some(&w) = used.iter().find(|&&w| w < 0 || w as usize >= n_words) {
        return Err(PyIndexError::new_err(format!(
            "word {w} is out of range for {n_words} cached words"
        )));
    }
    let (out, off) = py.detach(|| core::expand_words(wi, tw, ids, wo, max_length));
    Ok((out.into_pyarray(py), off.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mean_pool, m)?)?;
    m.add_function(wrap_pyfunction!(expand_words, m)?)?;
    Ok(())
}
