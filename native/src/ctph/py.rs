//! Bindings of the ctph family: the names of `neardup._kernels.ctph`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyList, PyString};

use super::core;
use crate::arrays::{doc_offsets, slice};

/// The digest of every document ``buf[offsets[i]:offsets[i+1]]``.
#[pyfunction]
fn digest_packed<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyList>> {
    let (b, o) = (slice(&buf)?, slice(&offsets)?);
    doc_offsets(b.len(), o)?;
    let texts: Vec<String> = py.detach(|| {
        o.windows(2)
            .map(|w| core::digest(&b[w[0] as usize..w[1] as usize]).to_text())
            .collect()
    });
    PyList::new(py, texts)
}

/// The ssdeep digest of ``data``.
#[pyfunction]
fn reference_digest(py: Python<'_>, data: PyBackedBytes) -> String {
    py.detach(|| core::digest(&data).to_text())
}

/// ssdeep's rolling hash ``h1 + h2 + h3 (mod 2**32)`` after every byte of ``data``.
#[pyfunction]
fn rolling_sums(py: Python<'_>, data: PyBackedBytes) -> Bound<'_, PyArray1<u32>> {
    py.detach(|| core::rolling_sums(&data)).into_pyarray(py)
}

/// The UTF-8 bytes of a digest string (lone surrogates, possible only in an ignored
/// ``,"filename"`` suffix, become U+FFFD).
fn text_of(s: &Bound<'_, PyString>) -> Vec<u8> {
    match s.to_str() {
        Ok(t) => t.as_bytes().to_vec(),
        Err(_) => s.to_string_lossy().into_owned().into_bytes(),
    }
}

fn parsed(s: &Bound<'_, PyString>) -> Option<core::Parsed> {
    match s.to_str() {
        Ok(t) => core::parse(t.as_bytes()),
        Err(_) => core::parse(&text_of(s)),
    }
}

/// ssdeep's score of digests ``a`` and ``b`` (0..100; ppdeep's variant with ``ppdeep``), or
/// -1 when either is not a digest (``neardup.fuzzy.parse_ctph`` says why).
#[pyfunction]
fn compare(a: &Bound<'_, PyString>, b: &Bound<'_, PyString>, ppdeep: bool) -> i64 {
    match (parsed(a), parsed(b)) {
        (Some(x), Some(y)) => core::compare(&x, &y, ppdeep) as i64,
        _ => -1,
    }
}

/// Many CTPH digests, numbered in insertion order, indexed by ``(block size, 7-gram)``: the
/// keys two digests must share to score above 0 (or be identical).
#[pyclass(module = "neardup._native.ctph")]
pub struct CTPHTable {
    table: core::Table,
}

#[pymethods]
impl CTPHTable {
    /// An empty table scoring as libfuzzy does (or as ppdeep, with ``ppdeep``).
    #[new]
    fn new(ppdeep: bool) -> Self {
        CTPHTable {
            table: core::Table::new(ppdeep),
        }
    }

    fn __len__(&self) -> usize {
        self.table.len()
    }

    /// Add one digest; returns its id, or -1 (nothing added) when it is not a digest.
    fn add(&mut self, digest: &Bound<'_, PyString>) -> PyResult<i64> {
        if self.table.len() >= core::MAX_DIGESTS {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "a CTPH table holds at most 2**32 - 1 digests; split the index",
            ));
        }
        Ok(parsed(digest).map_or(-1, |d| self.table.add(d) as i64))
    }

    /// Add digests in order until one is not a digest; returns how many were added.
    fn add_many(&mut self, digests: &Bound<'_, PyList>) -> PyResult<usize> {
        for (i, item) in digests.iter().enumerate() {
            if self.add(item.cast::<PyString>()?)? < 0 {
                return Ok(i);
            }
        }
        Ok(digests.len())
    }

    /// ``[(id, score)]`` of every digest scoring at least ``min_score`` against ``digest``, by
    /// score (highest first), then id; ``None`` when ``digest`` is not a digest.
    fn query(&mut self, digest: &Bound<'_, PyString>, min_score: i64) -> Option<Vec<(u32, u32)>> {
        let d = parsed(digest)?;
        let floor = min_score.clamp(0, 101) as u32;
        Some(self.table.query(&d, floor))
    }

    /// ``(i, j, score)`` int64 arrays, ``i < j``, of every pair scoring at least
    /// ``min_score``, by ``i``, then ``j``.
    #[allow(clippy::type_complexity)]
    fn pairs<'py>(
        &mut self,
        py: Python<'py>,
        min_score: i64,
    ) -> (
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
    ) {
        let floor = min_score.clamp(0, 101) as u32;
        let table = &mut self.table;
        let found = py.detach(|| table.pairs(floor));
        let col = |f: fn(&(u32, u32, u32)) -> u32| -> Vec<i64> {
            found.iter().map(|t| f(t) as i64).collect()
        };
        (
            col(|t| t.0).into_pyarray(py),
            col(|t| t.1).into_pyarray(py),
            col(|t| t.2).into_pyarray(py),
        )
    }

    /// Every digest as ``blocksize:part1:part2`` (the runs cut), in id order.
    fn digests(&self) -> Vec<String> {
        self.table
            .digests()
            .iter()
            .map(core::Parsed::to_text)
            .collect()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("B64", std::str::from_utf8(core::B64).expect("ASCII"))?;
    m.add_function(wrap_pyfunction!(digest_packed, m)?)?;
    m.add_function(wrap_pyfunction!(reference_digest, m)?)?;
    m.add_function(wrap_pyfunction!(rolling_sums, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_class::<CTPHTable>()?;
    Ok(())
}
