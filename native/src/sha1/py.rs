//! Bindings of the sha1 family: the names of `neardup._kernels.sha1`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use super::core;
use crate::arrays::{ranges, slice};

fn prefixes<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    width: usize,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let (b, s, e) = (slice(&buf)?, slice(&starts)?, slice(&ends)?);
    ranges(b.len(), s, e)?;
    Ok(py
        .detach(|| core::sha1_prefixes(b, s, e, width))
        .into_pyarray(py))
}

/// First 4 SHA-1 bytes (little-endian) of each span ``buf[starts[i]:ends[i]]``, as uint64.
#[pyfunction]
fn sha1_32<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    prefixes(py, buf, starts, ends, 4)
}

/// First 8 SHA-1 bytes (little-endian) of each span.
#[pyfunction]
fn sha1_64<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    prefixes(py, buf, starts, ends, 8)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sha1_32, m)?)?;
    m.add_function(wrap_pyfunction!(sha1_64, m)?)?;
    Ok(())
}
