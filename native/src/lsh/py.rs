//! Bindings of the lsh family: the names of `neardup._kernels.lsh` (the table
//! kernels over numpy arrays, and the index class of `class.rs`).

use numpy::{
    PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1,
    PyReadwriteArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::core::{self, Rows};
use super::input::{py_shape, row_count, slots};
use crate::arrays::slice;

/// `NO_ROOM` of `neardup._kernels.lsh`: the add found no room (nothing done).
const NO_ROOM: i64 = -(1 << 62);

fn table_size(slots: i64, capacity: i64, base: i64) -> PyResult<usize> {
    if slots < 1 || slots & (slots - 1) != 0 || capacity < 0 || base < core::HEADER as i64 {
        return Err(PyValueError::new_err(format!(
            "a table needs a power of two of slots, capacity >= 0 and a header of at least \
             {} words, got slots={slots}, capacity={capacity}, base={base}",
            core::HEADER
        )));
    }
    Ok(core::table_len(
        slots as usize,
        capacity as usize,
        base as usize,
    ))
}

/// A numpy-owned zeroed int64 array (so that `ndarray.resize` can grow it in place).
fn zeroed(py: Python<'_>, len: usize) -> Bound<'_, PyArray1<i64>> {
    PyArray1::zeros(py, len, false)
}

/// An empty table: ``slots`` (a power of two) slots, room for ``capacity`` entries, a header
/// of ``base`` words (``tab[8:base]`` zero, for the caller).
#[pyfunction]
fn new_table(
    py: Python<'_>,
    slots: i64,
    capacity: i64,
    bands: i64,
    rows: i64,
    base: i64,
) -> PyResult<Bound<'_, PyArray1<i64>>> {
    let len = table_size(slots, capacity, base)?;
    let out = zeroed(py, len);
    {
        let mut rw = out.readwrite();
        let tab = rw.as_slice_mut().expect("a new array is contiguous");
        core::init_table(tab, slots, capacity, bands, rows, base);
    }
    Ok(out)
}

/// The same table with ``slots`` slots and room for ``capacity`` entries (rehashed).
#[pyfunction]
fn grow<'py>(
    py: Python<'py>,
    tab: PyReadonlyArray1<'py, i64>,
    slots: i64,
    capacity: i64,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let old = slice(&tab)?;
    let base = *old
        .get(7)
        .ok_or_else(|| PyValueError::new_err("not a table"))?;
    let len = table_size(slots, capacity, base)?;
    let out = zeroed(py, len);
    {
        let mut rw = out.readwrite();
        let dst = rw.as_slice_mut().expect("a new array is contiguous");
        py.detach(|| core::grow_into(old, dst, slots, capacity));
    }
    Ok(out)
}

/// File the band keys of stored rows ``rows_in`` (their ``sig32`` rows are set).
/// Returns 0, or -1 (nothing filed) when the table lacks room for them.
#[pyfunction]
fn insert_rows(
    py: Python<'_>,
    rows_in: PyReadonlyArray1<'_, i64>,
    sig32: PyReadonlyArray2<'_, u32>,
    mut tab: PyReadwriteArray1<'_, i64>,
) -> PyResult<i64> {
    let num_perm = sig32.shape()[1];
    let (r, s) = (slice(&rows_in)?, sig32.as_slice().map_err(contiguous)?);
    let t = tab.as_slice_mut().map_err(contiguous)?;
    Ok(py.detach(|| core::insert_rows(r, s, num_perm, t)))
}

fn contiguous(_: numpy::AsSliceError) -> PyErr {
    PyValueError::new_err("a kernel needs contiguous arrays; pass numpy.ascontiguousarray(...)")
}

/// Store sketches ``sig64`` (``(k, num_perm)``, or one row) as rows ``first..first+k-1``.
///
/// Folds each slot to 32 bits into ``sig32``, marks the row live (1) or live but empty (2)
/// in ``state``, and files its band keys. Returns 0, or -1 (nothing stored) when the rows or
/// the table lack room.
#[pyfunction]
fn add_rows(
    py: Python<'_>,
    sig64: &Bound<'_, PyAny>,
    first: i64,
    mut sig32: PyReadwriteArray2<'_, u32>,
    mut state: PyReadwriteArray1<'_, u8>,
    mut tab: PyReadwriteArray1<'_, i64>,
) -> PyResult<i64> {
    let num_perm = sig32.shape()[1];
    let (src, _) = slots(sig64)?;
    let src = src.as_slice();
    row_count(src.len(), num_perm)?;
    let s = sig32.as_slice_mut().map_err(contiguous)?;
    let st = state.as_slice_mut().map_err(contiguous)?;
    let t = tab.as_slice_mut().map_err(contiguous)?;
    Ok(py.detach(|| core::add_rows(src, first, s, num_perm, st, t)))
}

/// The hits of one query into `rows_out` / `est_out`; the number, or `-n` when `n` do not fit.
#[allow(clippy::too_many_arguments)]
fn query_into(
    q64: &[u64],
    sig32: &[u32],
    num_perm: usize,
    state: &[u8],
    mark: &mut [i64],
    tab: &mut [i64],
    rows_out: &mut [i64],
    est_out: &mut [f64],
    min_est: f64,
) -> i64 {
    let mut q = vec![0u32; num_perm];
    if !core::fold_row(q64, &mut q) {
        return 0;
    }
    let mut heads = vec![0i64; tab[core::BANDS] as usize];
    let mut hits = Vec::new();
    let mut rows = Rows {
        sig32,
        num_perm,
        state,
        mark,
    };
    core::collect(&q, tab, &mut rows, min_est, &mut heads, &mut hits);
    write_hits(&mut hits, num_perm, rows_out, est_out)
}

/// Sort `hits` (best first, ties by row) into the outputs; `-n` when they do not fit.
fn write_hits(
    hits: &mut [(usize, usize)],
    num_perm: usize,
    rows_out: &mut [i64],
    est_out: &mut [f64],
) -> i64 {
    let n = hits.len();
    if n > rows_out.len() || n > est_out.len() {
        return -(n as i64);
    }
    hits.sort_unstable();
    for (i, &(d, r)) in hits.iter().enumerate() {
        rows_out[i] = r as i64;
        est_out[i] = core::estimate(d, num_perm);
    }
    n as i64
}

/// Hits of one query sketch ``sig64`` (``(num_perm,)``) into ``out_rows`` / ``out_est``:
/// live rows sharing a band key whose estimated Jaccard is ``>= min_est``, best first, ties
/// by row. Returns the number of hits, or ``-n`` (nothing written) when ``n`` hits do not fit
/// in the output arrays. An empty query (every slot at its maximum) has no hits.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn query_one(
    sig64: &Bound<'_, PyAny>,
    sig32: PyReadonlyArray2<'_, u32>,
    state: PyReadonlyArray1<'_, u8>,
    mut mark: PyReadwriteArray1<'_, i64>,
    mut tab: PyReadwriteArray1<'_, i64>,
    mut out_rows: PyReadwriteArray1<'_, i64>,
    mut out_est: PyReadwriteArray1<'_, f64>,
    min_est: f64,
) -> PyResult<i64> {
    let num_perm = sig32.shape()[1];
    let (q, _) = slots(sig64)?;
    let q = q.as_slice();
    one_row(q.len(), num_perm)?;
    Ok(query_into(
        q,
        sig32.as_slice().map_err(contiguous)?,
        num_perm,
        slice(&state)?,
        mark.as_slice_mut().map_err(contiguous)?,
        tab.as_slice_mut().map_err(contiguous)?,
        out_rows.as_slice_mut().map_err(contiguous)?,
        out_est.as_slice_mut().map_err(contiguous)?,
        min_est,
    ))
}

fn one_row(len: usize, num_perm: usize) -> PyResult<()> {
    if len != num_perm {
        return Err(PyValueError::new_err(format!(
            "a query needs {num_perm} slot values, got {len}"
        )));
    }
    Ok(())
}

/// ``add_rows`` of ``add64`` at row ``first``, then ``query_one`` of ``sig64``, in one call.
/// Returns ``NO_ROOM`` (nothing done) when the add lacks room, else the query's result.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn add_query_one(
    add64: &Bound<'_, PyAny>,
    first: i64,
    sig64: &Bound<'_, PyAny>,
    mut sig32: PyReadwriteArray2<'_, u32>,
    mut state: PyReadwriteArray1<'_, u8>,
    mut mark: PyReadwriteArray1<'_, i64>,
    mut tab: PyReadwriteArray1<'_, i64>,
    mut out_rows: PyReadwriteArray1<'_, i64>,
    mut out_est: PyReadwriteArray1<'_, f64>,
    min_est: f64,
) -> PyResult<i64> {
    let num_perm = sig32.shape()[1];
    let (add, _) = slots(add64)?;
    let (q, _) = slots(sig64)?;
    let (add, q) = (add.as_slice(), q.as_slice());
    row_count(add.len(), num_perm)?;
    one_row(q.len(), num_perm)?;
    let s = sig32.as_slice_mut().map_err(contiguous)?;
    let st = state.as_slice_mut().map_err(contiguous)?;
    let t = tab.as_slice_mut().map_err(contiguous)?;
    if core::add_rows(add, first, s, num_perm, st, t) != 0 {
        return Ok(NO_ROOM);
    }
    Ok(query_into(
        q,
        s,
        num_perm,
        st,
        mark.as_slice_mut().map_err(contiguous)?,
        t,
        out_rows.as_slice_mut().map_err(contiguous)?,
        out_est.as_slice_mut().map_err(contiguous)?,
        min_est,
    ))
}

/// ``add_rows`` of ``sig64`` at row ``first``, then its own query, in one call. Hits go into
/// ``out`` (int64, even length ``2 * m``): rows in ``out[:m]``, estimates as float64 bit
/// patterns in ``out[m:]``. Returns ``NO_ROOM`` (nothing done) when the add lacks room,
/// ``-n`` (the add done, no hit written) when ``n`` hits do not fit, else the number of hits.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn add_query_same(
    sig64: &Bound<'_, PyAny>,
    first: i64,
    mut sig32: PyReadwriteArray2<'_, u32>,
    mut state: PyReadwriteArray1<'_, u8>,
    mut mark: PyReadwriteArray1<'_, i64>,
    mut tab: PyReadwriteArray1<'_, i64>,
    mut out: PyReadwriteArray1<'_, i64>,
    min_est: f64,
) -> PyResult<i64> {
    let num_perm = sig32.shape()[1];
    let (add, _) = slots(sig64)?;
    let add = add.as_slice();
    one_row(add.len(), num_perm)?;
    let s = sig32.as_slice_mut().map_err(contiguous)?;
    let st = state.as_slice_mut().map_err(contiguous)?;
    let t = tab.as_slice_mut().map_err(contiguous)?;
    if core::add_rows(add, first, s, num_perm, st, t) != 0 {
        return Ok(NO_ROOM);
    }
    let r = first as usize;
    if st[r] != 1 {
        return Ok(0);
    }
    let q = s[r * num_perm..(r + 1) * num_perm].to_vec();
    let mut heads = vec![0i64; t[core::BANDS] as usize];
    let mut hits = Vec::new();
    let mut rows = Rows {
        sig32: s,
        num_perm,
        state: st,
        mark: mark.as_slice_mut().map_err(contiguous)?,
    };
    core::collect(&q, t, &mut rows, min_est, &mut heads, &mut hits);
    let o = out.as_slice_mut().map_err(contiguous)?;
    let m = o.len() / 2;
    if hits.len() > m {
        return Ok(-(hits.len() as i64));
    }
    hits.sort_unstable();
    for (i, &(d, r)) in hits.iter().enumerate() {
        o[i] = r as i64;
        o[m + i] = core::estimate(d, num_perm).to_bits() as i64;
    }
    Ok(hits.len() as i64)
}

type Csr<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// Hits of each query sketch (``(k, num_perm)``), as ``query_one`` finds them.
///
/// Returns ``(offsets, hit_rows, estimates)`` (CSR by query).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn query_rows<'py>(
    py: Python<'py>,
    sig64: &Bound<'py, PyAny>,
    sig32: PyReadonlyArray2<'py, u32>,
    state: PyReadonlyArray1<'py, u8>,
    mut mark: PyReadwriteArray1<'py, i64>,
    mut tab: PyReadwriteArray1<'py, i64>,
    min_est: f64,
) -> PyResult<(
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
)> {
    let num_perm = sig32.shape()[1];
    let (src, _) = slots(sig64)?;
    let src = src.as_slice();
    let nq = row_count(src.len(), num_perm)?;
    let mut rows = Rows {
        sig32: sig32.as_slice().map_err(contiguous)?,
        num_perm,
        state: slice(&state)?,
        mark: mark.as_slice_mut().map_err(contiguous)?,
    };
    let t = tab.as_slice_mut().map_err(contiguous)?;
    let (offsets, hit_rows, est) = py.detach(|| {
        let mut offsets = vec![0i64; nq + 1];
        let mut hits: Vec<(usize, usize)> = Vec::new();
        let mut q = vec![0u32; num_perm];
        let mut heads = vec![0i64; t[core::BANDS] as usize];
        for i in 0..nq {
            let start = hits.len();
            if core::fold_row(&src[i * num_perm..(i + 1) * num_perm], &mut q) {
                core::collect(&q, t, &mut rows, min_est, &mut heads, &mut hits);
                hits[start..].sort_unstable();
            }
            offsets[i + 1] = hits.len() as i64;
        }
        let hit_rows: Vec<i64> = hits.iter().map(|&(_, r)| r as i64).collect();
        let est: Vec<f64> = hits
            .iter()
            .map(|&(d, _)| core::estimate(d, num_perm))
            .collect();
        (offsets, hit_rows, est)
    });
    Ok((
        PyArray1::from_vec(py, offsets),
        PyArray1::from_vec(py, hit_rows),
        PyArray1::from_vec(py, est),
    ))
}

/// The candidates of one sketch ``sig64`` (``(num_perm,)``, any unsigned dtype) into
/// ``out``: live rows sharing a band key with it, band by band, each chain newest first, no
/// estimate. Returns their number, or ``-n`` when ``n`` do not fit in ``out``. An empty query
/// (every slot at its maximum) has none.
#[pyfunction]
fn candidates_one(
    sig64: &Bound<'_, PyAny>,
    state: PyReadonlyArray1<'_, u8>,
    mut mark: PyReadwriteArray1<'_, i64>,
    mut tab: PyReadwriteArray1<'_, i64>,
    mut out: PyReadwriteArray1<'_, i64>,
) -> PyResult<i64> {
    let (q64, _) = slots(sig64)?;
    let q64 = q64.as_slice();
    let t = tab.as_slice_mut().map_err(contiguous)?;
    let mut found = Vec::new();
    unranked_one(
        q64,
        slice(&state)?,
        mark.as_slice_mut().map_err(contiguous)?,
        t,
        &mut found,
    );
    let o = out.as_slice_mut().map_err(contiguous)?;
    if found.len() > o.len() {
        return Ok(-(found.len() as i64));
    }
    o[..found.len()].copy_from_slice(&found);
    Ok(found.len() as i64)
}

/// The unranked candidates of one query appended to `out` (nothing for an empty query).
fn unranked_one(q64: &[u64], state: &[u8], mark: &mut [i64], tab: &mut [i64], out: &mut Vec<i64>) {
    let mut q = vec![0u32; q64.len()];
    if !core::fold_row(q64, &mut q) {
        return;
    }
    let mut heads = vec![0i64; tab[core::BANDS] as usize];
    core::probe(&q, tab, &mut heads);
    tab[core::STAMP] += 1;
    core::unranked(&heads, tab, state, mark, out);
}

/// ``candidates_one`` of each row of ``sig64`` (``(k, num_perm)``): ``(offsets, rows)``, CSR
/// by query.
#[pyfunction]
fn candidate_rows<'py>(
    py: Python<'py>,
    sig64: &Bound<'py, PyAny>,
    state: PyReadonlyArray1<'py, u8>,
    mut mark: PyReadwriteArray1<'py, i64>,
    mut tab: PyReadwriteArray1<'py, i64>,
) -> PyResult<Csr<'py>> {
    let (src, shape) = slots(sig64)?;
    let src = src.as_slice();
    if shape.len() != 2 {
        return Err(PyValueError::new_err(format!(
            "candidate_rows needs (k, num_perm) sketches, got shape {}",
            py_shape(&shape)
        )));
    }
    let (nq, p) = (shape[0], shape[1]);
    let st = slice(&state)?;
    let m = mark.as_slice_mut().map_err(contiguous)?;
    let t = tab.as_slice_mut().map_err(contiguous)?;
    let (offsets, rows) = py.detach(|| {
        let mut offsets = vec![0i64; nq + 1];
        let mut rows = Vec::new();
        for i in 0..nq {
            unranked_one(&src[i * p..(i + 1) * p], st, m, t, &mut rows);
            offsets[i + 1] = rows.len() as i64;
        }
        (offsets, rows)
    });
    Ok((
        PyArray1::from_vec(py, offsets),
        PyArray1::from_vec(py, rows),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(new_table, m)?)?;
    m.add_function(wrap_pyfunction!(grow, m)?)?;
    m.add_function(wrap_pyfunction!(insert_rows, m)?)?;
    m.add_function(wrap_pyfunction!(add_rows, m)?)?;
    m.add_function(wrap_pyfunction!(query_one, m)?)?;
    m.add_function(wrap_pyfunction!(add_query_one, m)?)?;
    m.add_function(wrap_pyfunction!(add_query_same, m)?)?;
    m.add_function(wrap_pyfunction!(query_rows, m)?)?;
    m.add_function(wrap_pyfunction!(candidates_one, m)?)?;
    m.add_function(wrap_pyfunction!(candidate_rows, m)?)?;
    m.add_class::<super::class::BandIndex>()?;
    Ok(())
}
