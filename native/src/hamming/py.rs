//! Bindings of the hamming family: the names of `neardup._kernels.hamming`.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::core;
use crate::arrays::{same_length, slice, slice2};

/// The block `start .. end` of `words`-word codes: 1 to 64 bits within the code.
fn check_block(words: usize, start: i64, end: i64) -> PyResult<(usize, usize)> {
    if start < 0 || end <= start || end - start > 64 || end as u64 > 64 * words as u64 {
        return Err(PyValueError::new_err(format!(
            "block [{start}, {end}) is not 1 to 64 bits within a {}-bit code",
            64 * words
        )));
    }
    Ok((start as usize, end as usize))
}

fn check_bounds(words: usize, starts: &[i64], ends: &[i64]) -> PyResult<Vec<(usize, usize)>> {
    same_length("starts and ends", starts.len(), ends.len())?;
    starts
        .iter()
        .zip(ends)
        .map(|(&s, &e)| check_block(words, s, e))
        .collect()
}

/// Value of bits ``[start, end)`` (at most 64) of every ``(n, words)`` code row.
#[pyfunction]
fn block_values<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u64>,
    start: i64,
    end: i64,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let (c, _, words) = slice2(&codes)?;
    let (s, e) = check_block(words, start, end)?;
    Ok(py
        .detach(|| core::block_values(c, words, s, e))
        .into_pyarray(py))
}

/// Values of block ``[start, end)`` sorted ascending, and the row of each (a stable sort).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn block_order<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u64>,
    start: i64,
    end: i64,
) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<i64>>)> {
    let (c, _, words) = slice2(&codes)?;
    let (s, e) = check_block(words, start, end)?;
    let (keys, order) = py.detach(|| core::block_order(c, words, s, e));
    Ok((keys.into_pyarray(py), order.into_pyarray(py)))
}

/// Every pair of rows within ``radius``, each once: ``(a, b, d)`` int64 arrays, ``a < b``.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn all_pairs<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u64>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    masks: PyReadonlyArray2<'py, u64>,
    radius: i64,
) -> PyResult<(
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
)> {
    let (c, _, words) = slice2(&codes)?;
    let bounds = check_bounds(words, slice(&starts)?, slice(&ends)?)?;
    let (m, mrows, mwords) = slice2(&masks)?;
    if mrows != bounds.len() || (mwords != words && mrows > 0) {
        return Err(PyValueError::new_err(format!(
            "masks of shape ({mrows}, {mwords}) do not fit {} blocks of {words}-word codes",
            bounds.len()
        )));
    }
    let (a, b, d) = py.detach(|| core::all_pairs(c, words, &bounds, m, radius));
    Ok((a.into_pyarray(py), b.into_pyarray(py), d.into_pyarray(py)))
}

/// The rows of a Hamming index and their block chains (the per-call path of
/// ``HammingIndex``): rows in insertion order, live or dead; queries return live rows
/// within a radius sorted by distance, then row.
#[pyclass(module = "neardup._native.hamming")]
pub struct HammingTable {
    table: core::Table,
    found: Vec<(u32, u32)>,
}

impl HammingTable {
    fn room(&self, more: usize) -> PyResult<()> {
        if self.table.len() + more > core::MAX_ROWS {
            return Err(PyValueError::new_err(format!(
                "a Hamming table holds at most {} rows; split the index",
                core::MAX_ROWS
            )));
        }
        Ok(())
    }

    fn radius(&self, radius: i64) -> PyResult<u32> {
        u32::try_from(radius)
            .map_err(|_| PyValueError::new_err(format!("radius {radius} is negative or too large")))
    }
}

fn code64(code: &Bound<'_, PyAny>) -> PyResult<u64> {
    code.extract::<u64>().map_err(|_| {
        PyValueError::new_err(format!("code {code} is not an unsigned 64-bit integer"))
    })
}

#[pymethods]
impl HammingTable {
    /// An empty table of ``words``-word codes cut into blocks ``[starts[j], ends[j])``.
    #[new]
    fn new(
        words: i64,
        starts: PyReadonlyArray1<'_, i64>,
        ends: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<Self> {
        if !(1..=4).contains(&words) {
            return Err(PyValueError::new_err(format!(
                "words must be 1 to 4, got {words}"
            )));
        }
        let bounds = check_bounds(words as usize, slice(&starts)?, slice(&ends)?)?;
        Ok(HammingTable {
            table: core::Table::new(words as usize, bounds),
            found: Vec::new(),
        })
    }

    fn __len__(&self) -> usize {
        self.table.len()
    }

    /// Append rows: ``codes`` ``(k, words)`` uint64 and their ``alive`` flags ``(k,)`` bool.
    fn add_rows(
        &mut self,
        codes: PyReadonlyArray2<'_, u64>,
        alive: PyReadonlyArray1<'_, bool>,
    ) -> PyResult<()> {
        let (c, k, words) = slice2(&codes)?;
        let a = slice(&alive)?;
        if (words != self.table.words() && k > 0) || a.len() != k {
            return Err(PyValueError::new_err(format!(
                "rows of shape ({k}, {words}) with {} flags do not fit a table of {}-word codes",
                a.len(),
                self.table.words()
            )));
        }
        self.room(k)?;
        self.table.add_rows(c, a);
        Ok(())
    }

    /// Append the 64-bit ``code`` (an int) as a live row; returns the row.
    fn add_code(&mut self, code: &Bound<'_, PyAny>) -> PyResult<usize> {
        if self.table.words() != 1 {
            return Err(PyValueError::new_err(
                "add_code takes 64-bit codes; use add_rows",
            ));
        }
        let c = code64(code)?;
        self.room(1)?;
        Ok(self.table.add_row(&[c]))
    }

    /// Mark ``row`` dead.
    fn kill(&mut self, row: i64) -> PyResult<()> {
        let n = self.table.len();
        if row < 0 || row as u64 >= n as u64 {
            return Err(PyValueError::new_err(format!(
                "row {row} is not in the table of {n} rows"
            )));
        }
        self.table.kill(row as usize);
        Ok(())
    }

    /// Live rows within ``radius`` of the code ``q`` (``(words,)`` uint64), sorted by
    /// distance, then row: ``(rows, distances)`` int64.
    #[allow(clippy::type_complexity)]
    fn query<'py>(
        &mut self,
        py: Python<'py>,
        q: PyReadonlyArray1<'py, u64>,
        radius: i64,
    ) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
        let qs = slice(&q)?;
        if qs.len() != self.table.words() {
            return Err(PyValueError::new_err(format!(
                "a query of {} words does not fit a table of {}-word codes",
                qs.len(),
                self.table.words()
            )));
        }
        let r = self.radius(radius)?;
        let mut found = std::mem::take(&mut self.found);
        self.table.query(qs, r, &mut found);
        let rows: Vec<i64> = found.iter().map(|&(_, r)| r as i64).collect();
        let dist: Vec<i64> = found.iter().map(|&(d, _)| d as i64).collect();
        self.found = found;
        Ok((rows.into_pyarray(py), dist.into_pyarray(py)))
    }

    /// :meth:`query` of the 64-bit ``code`` (an int), as ``[(keys[row], distance)]``.
    fn query_keys<'py>(
        &mut self,
        py: Python<'py>,
        code: &Bound<'py, PyAny>,
        radius: i64,
        keys: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyList>> {
        if self.table.words() != 1 {
            return Err(PyValueError::new_err(
                "query_keys takes 64-bit codes; use query",
            ));
        }
        let c = code64(code)?;
        let r = self.radius(radius)?;
        let mut found = std::mem::take(&mut self.found);
        self.table.query(&[c], r, &mut found);
        let hits: PyResult<Vec<Bound<'py, PyTuple>>> = found
            .iter()
            .map(|&(d, row)| {
                let key = keys.get_item(row as usize)?;
                PyTuple::new(py, [key, d.into_pyobject(py)?.into_any()])
            })
            .collect();
        self.found = found;
        PyList::new(py, hits?)
    }

    /// A copy of every row's code: ``(len, words)`` uint64.
    fn codes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u64>> {
        let n = self.table.len();
        Array2::from_shape_vec((n, self.table.words()), self.table.codes().to_vec())
            .expect("len * words codes")
            .into_pyarray(py)
    }

    /// A copy of every row's live flag: ``(len,)`` bool.
    fn alive<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        self.table.alive().to_vec().into_pyarray(py)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(block_values, m)?)?;
    m.add_function(wrap_pyfunction!(block_order, m)?)?;
    m.add_function(wrap_pyfunction!(all_pairs, m)?)?;
    m.add_class::<HammingTable>()?;
    Ok(())
}
