//! Bindings of the xxh3 family: the names of `neardup._kernels.xxh3`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use super::core;
use crate::arrays::{ranges, slice};

/// XXH3-64 (seeded) of every byte range ``buf[starts[i]:ends[i]]``.
#[pyfunction]
fn xxh3_64_ranges<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    seed: u64,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let (b, s, e) = (slice(&buf)?, slice(&starts)?, slice(&ends)?);
    ranges(b.len(), s, e)?;
    let out = py.detach(|| core::xxh3_64_ranges(b, s, e, seed));
    Ok(out.into_pyarray(py))
}

/// XXH3-128 (seeded) of every byte range, as ``(low 64 bits, high 64 bits)``.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn xxh3_128_ranges<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    seed: u64,
) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>)> {
    let (b, s, e) = (slice(&buf)?, slice(&starts)?, slice(&ends)?);
    ranges(b.len(), s, e)?;
    let (lo, hi) = py.detach(|| core::xxh3_128_ranges(b, s, e, seed));
    Ok((lo.into_pyarray(py), hi.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(xxh3_64_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(xxh3_128_ranges, m)?)?;
    Ok(())
}
