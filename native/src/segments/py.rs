//! Bindings of the segments family: the names of `neardup._kernels.segments`, which checks
//! its arguments the same way and raises the same `ConfigError` messages.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use super::core;
use crate::arrays::{slice, slice2};
use crate::errors::config_error;

type Arr<'py, T> = Bound<'py, PyArray1<T>>;
type Encoded<'py> = (
    u32,
    u32,
    u32,
    usize,
    Arr<'py, u8>,
    Arr<'py, i64>,
    Arr<'py, i64>,
    Arr<'py, i64>,
);

/// Sort a segment's ``(folded key, document)`` entries (repeats dropped) and pack them into
/// blocks: ``(shift, kmin, kmax, entries, raw, ids, ends, checks)``, ``raw`` every entry's
/// bytes end to end, block ``i`` ``raw[ends[i-1]:ends[i]]`` with row id ``ids[i]`` and
/// checksum ``checks[i]``.
#[pyfunction]
fn encode_segment<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, i64>,
    docs: PyReadonlyArray1<'py, i64>,
    doc_lo: i64,
    doc_bits: i64,
    seg: i64,
    bucket_entries: i64,
) -> PyResult<Encoded<'py>> {
    let (k, d) = (slice(&keys)?, slice(&docs)?);
    let p = py
        .detach(|| core::encode_segment(k, d, doc_lo, doc_bits, seg, bucket_entries))
        .map_err(|message| config_error(py, message))?;
    Ok(encoded(py, p))
}

/// ``encode_segment`` of the lookup entries of an ``(n, bands)`` array of band values: row
/// ``i``, column ``j`` is the entry ``(fold(j, values[i, j]), doc_base + i)``, with the
/// store's fold (``neardup.store._lookup.fold``); no folded or document array is made.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn encode_band_segment<'py>(
    py: Python<'py>,
    values: PyReadonlyArray2<'py, i64>,
    doc_base: i64,
    doc_lo: i64,
    doc_bits: i64,
    seg: i64,
    bucket_entries: i64,
) -> PyResult<Encoded<'py>> {
    let (v, _, bands) = slice2(&values)?;
    let p = py
        .detach(|| {
            core::encode_band_segment(v, bands, doc_base, doc_lo, doc_bits, seg, bucket_entries)
        })
        .map_err(|message| config_error(py, message))?;
    Ok(encoded(py, p))
}

fn encoded(py: Python<'_>, p: core::Packed) -> Encoded<'_> {
    (
        p.shift,
        p.kmin,
        p.kmax,
        p.entries,
        p.raw.into_pyarray(py),
        p.ids.into_pyarray(py),
        p.ends.into_pyarray(py),
        p.checks.into_pyarray(py),
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_band_segment, m)?)?;
    m.add_function(wrap_pyfunction!(encode_segment, m)?)?;
    Ok(())
}
