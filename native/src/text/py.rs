//! Bindings of the text family: the names of `neardup._kernels.text`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::core;
use crate::arrays::{code_point_table, ranges, slice, uint8_mask};

/// The error Python's codec raises for bytes that are not UTF-8 (the reference decodes each
/// document with `bytes.decode("utf-8", "surrogatepass")`): decode them the same way.
pub fn decode_error(py: Python<'_>, doc: &[u8]) -> PyErr {
    match PyBytes::new(py, doc).call_method1("decode", ("utf-8", "surrogatepass")) {
        Err(err) => err,
        Ok(_) => PyValueError::new_err("a document is not UTF-8"), // the kernel's decoder refused it
    }
}

type Array<'py, T> = Bound<'py, PyArray1<T>>;

/// Split documents into word tokens: maximal runs of code points whose class meets ``mask``
/// (see ``neardup._kernels.text.tokenize_words``); returns
/// ``(out_buf, starts, ends, doc_offsets)``.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn tokenize_words<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    classes: PyReadonlyArray1<'py, u8>,
    lower: PyReadonlyArray1<'py, i32>,
    mask: i64,
    min_bytes: i64,
    do_lower: bool,
) -> PyResult<(
    Array<'py, u8>,
    Array<'py, i64>,
    Array<'py, i64>,
    Array<'py, i64>,
)> {
    let (b, o, c, l) = (
        slice(&buf)?,
        slice(&offsets)?,
        slice(&classes)?,
        slice(&lower)?,
    );
    crate::arrays::doc_offsets(b.len(), o)?;
    code_point_table("classes", c)?;
    code_point_table("lower", l)?;
    let mask = uint8_mask(mask)?;
    let min_bytes = usize::try_from(min_bytes.max(0)).unwrap_or(usize::MAX);
    let found = py.detach(|| core::tokenize_words(b, o, c, l, mask, min_bytes, do_lower));
    match found {
        Ok(t) => Ok((
            t.out.into_pyarray(py),
            t.starts.into_pyarray(py),
            t.ends.into_pyarray(py),
            t.doc_offsets.into_pyarray(py),
        )),
        Err(d) => Err(decode_error(py, &b[o[d] as usize..o[d + 1] as usize])),
    }
}

/// FNV-1a 64 of every byte range ``buf[starts[i]:ends[i]]``.
#[pyfunction]
fn fnv1a_ranges<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
) -> PyResult<Array<'py, u64>> {
    let (b, s, e) = (slice(&buf)?, slice(&starts)?, slice(&ends)?);
    ranges(b.len(), s, e)?;
    let out = py.detach(|| core::fnv1a_ranges(b, s, e));
    Ok(out.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tokenize_words, m)?)?;
    m.add_function(wrap_pyfunction!(fnv1a_ranges, m)?)?;
    Ok(())
}
