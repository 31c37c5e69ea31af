//! Bindings of the sets family: the names of `neardup._kernels.sets`, which checks
//! its arguments the same way and raises the same `ConfigError` messages.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use super::core::{self, Invalid};
use crate::arrays::{slice, slice2 as matrix};
use crate::errors::config_error;

type Arr<'py, T> = Bound<'py, PyArray1<T>>;

/// Sets of 32- or 64-bit values (CSR values), as the callers keep them.
#[derive(FromPyObject)]
pub enum Values<'py> {
    U64(PyReadonlyArray1<'py, u64>),
    U32(PyReadonlyArray1<'py, u32>),
}

/// Raise a failed check as `ConfigError`.
pub fn checked(py: Python<'_>, result: Result<(), Invalid>) -> PyResult<()> {
    result.map_err(|message| config_error(py, message))
}

/// Run `work` (its checks, then the kernel) with the GIL released; a failed check becomes
/// `ConfigError`.
pub fn detached<T: Send>(
    py: Python<'_>,
    work: impl Send + FnOnce() -> Result<T, Invalid>,
) -> PyResult<T> {
    py.detach(work).map_err(|message| config_error(py, message))
}

/// A count from Python (a number of rows), 0 or more.
fn count(py: Python<'_>, n: i64) -> PyResult<usize> {
    if n < 0 {
        return Err(config_error(
            py,
            format!("n is {n}; pass a number of rows, 0 or more"),
        ));
    }
    Ok(n as usize)
}

/// Merge-count the common values of sorted sets ``a[k]`` and ``b[k]``.
#[pyfunction]
fn intersections<'py>(
    py: Python<'py>,
    values: Values<'py>,
    offsets: PyReadonlyArray1<'py, i64>,
    a: PyReadonlyArray1<'py, i64>,
    b: PyReadonlyArray1<'py, i64>,
) -> PyResult<Arr<'py, i64>> {
    let (o, x, y) = (slice(&offsets)?, slice(&a)?, slice(&b)?);
    checked(py, core::check_same_length(x.len(), y.len(), "a and b"))?;
    let out = match &values {
        Values::U64(v) => {
            let v = slice(v)?;
            detached(py, || {
                check_pairs(v, o, x, y)?;
                Ok(core::intersections(v, o, x, y))
            })?
        }
        Values::U32(v) => {
            let v = slice(v)?;
            detached(py, || {
                check_pairs(v, o, x, y)?;
                Ok(core::intersections(v, o, x, y))
            })?
        }
    };
    Ok(out.into_pyarray(py))
}

fn check_pairs<V: Copy + Ord>(
    values: &[V],
    offsets: &[i64],
    a: &[i64],
    b: &[i64],
) -> Result<(), Invalid> {
    core::check_offsets(offsets, values.len())?;
    core::check_sorted_runs(values, offsets)?;
    let sets = offsets.len() - 1;
    core::check_rows(a, sets, "a")?;
    core::check_rows(b, sets, "b")
}

/// Sort and de-duplicate each document's run of values; return ``(values, offsets)``.
#[pyfunction]
fn unique_per_doc<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Arr<'py, u64>, Arr<'py, i64>)> {
    let (v, o) = (slice(&values)?, slice(&doc_offsets)?);
    let (u, offs) = detached(py, || {
        core::check_offsets(o, v.len())?;
        Ok(core::unique_per_doc(v, o))
    })?;
    Ok((u.into_pyarray(py), offs.into_pyarray(py)))
}

/// The top 32 bits of each document's values, sorted and de-duplicated.
#[pyfunction]
fn unique_per_doc32<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Arr<'py, u32>, Arr<'py, i64>)> {
    let (v, o) = (slice(&values)?, slice(&doc_offsets)?);
    let (u, offs) = detached(py, || {
        core::check_offsets(o, v.len())?;
        Ok(core::unique_per_doc32(v, o))
    })?;
    Ok((u.into_pyarray(py), offs.into_pyarray(py)))
}

/// Roots (smallest members) of the components of ``n`` elements joined by ``(a[k], b[k])``.
#[pyfunction]
fn components<'py>(
    py: Python<'py>,
    n: i64,
    a: PyReadonlyArray1<'py, i64>,
    b: PyReadonlyArray1<'py, i64>,
) -> PyResult<Arr<'py, i64>> {
    let n = count(py, n)?;
    let (x, y) = (slice(&a)?, slice(&b)?);
    let roots = detached(py, || {
        check_edges(n, x, y)?;
        Ok(core::components(n, x, y))
    })?;
    Ok(roots.into_pyarray(py))
}

fn check_edges(n: usize, a: &[i64], b: &[i64]) -> Result<(), Invalid> {
    core::check_same_length(a.len(), b.len(), "a and b")?;
    core::check_rows(a, n, "a")?;
    core::check_rows(b, n, "b")
}

/// Pairs of items sharing a key, from keys sorted ascending (see the reference).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn bucket_pairs<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, u64>,
    items: PyReadonlyArray1<'py, i64>,
    codes: PyReadonlyArray2<'py, u64>,
    cap: i64,
    radius: i64,
) -> PyResult<(Arr<'py, i64>, Arr<'py, i64>, i64, i64)> {
    let (k, it) = (slice(&keys)?, slice(&items)?);
    let (c, rows, words) = matrix(&codes)?;
    let (a, b, over, largest) = detached(py, || {
        core::check_same_length(k.len(), it.len(), "keys and items")?;
        if radius >= 0 {
            core::check_same_length(k.len(), rows, "keys and codes")?;
        }
        if k.windows(2).any(|w| w[0] > w[1]) {
            return Err("keys must be sorted ascending; sort keys and items by key".into());
        }
        Ok(core::bucket_pairs(k, it, c, words, cap, radius))
    })?;
    Ok((a.into_pyarray(py), b.into_pyarray(py), over, largest))
}

/// Distinct ``(a, b)`` pairs sorted by ``a`` then ``b``, for ``0 <= a < n``.
#[pyfunction]
fn unique_pairs<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, i64>,
    b: PyReadonlyArray1<'py, i64>,
    n: i64,
) -> PyResult<(Arr<'py, i64>, Arr<'py, i64>)> {
    let n = count(py, n)?;
    let (x, y) = (slice(&a)?, slice(&b)?);
    let (p, q) = detached(py, || {
        core::check_same_length(x.len(), y.len(), "a and b")?;
        core::check_rows(x, n, "a")?;
        Ok(core::unique_pairs(x, y, n))
    })?;
    Ok((p.into_pyarray(py), q.into_pyarray(py)))
}

/// CSR ``(indptr, neighbor, edge)`` of the undirected pairs ``(i[k], j[k])``.
#[pyfunction]
fn center_adjacency<'py>(
    py: Python<'py>,
    n: i64,
    i: PyReadonlyArray1<'py, i64>,
    j: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Arr<'py, i64>, Arr<'py, i64>, Arr<'py, i64>)> {
    let n = count(py, n)?;
    let (x, y) = (slice(&i)?, slice(&j)?);
    let (p, nb, e) = detached(py, || {
        check_edges(n, x, y)?;
        Ok(core::center_adjacency(n, x, y))
    })?;
    Ok((p.into_pyarray(py), nb.into_pyarray(py), e.into_pyarray(py)))
}

/// CENTER clustering in row order over ``center_adjacency``'s arrays: ``(root, to_root)``.
#[pyfunction]
fn center_pass<'py>(
    py: Python<'py>,
    indptr: PyReadonlyArray1<'py, i64>,
    nbr: PyReadonlyArray1<'py, i64>,
    edge: PyReadonlyArray1<'py, i64>,
    sim: PyReadonlyArray1<'py, f64>,
) -> PyResult<(Arr<'py, i64>, Arr<'py, f64>)> {
    let (p, nb, e, s) = (slice(&indptr)?, slice(&nbr)?, slice(&edge)?, slice(&sim)?);
    let (root, to_root) = detached(py, || {
        core::check_adjacency(p, nb, e, s.len())?;
        Ok(core::center_pass(p, nb, e, s))
    })?;
    Ok((root.into_pyarray(py), to_root.into_pyarray(py)))
}

/// Golomb-Rice bit strings of each document's deltas, padded to ``nbytes[i]`` bytes.
#[pyfunction]
fn rice_encode<'py>(
    py: Python<'py>,
    deltas: PyReadonlyArray1<'py, u64>,
    counts: PyReadonlyArray1<'py, i64>,
    k: PyReadonlyArray1<'py, i64>,
    nbytes: PyReadonlyArray1<'py, i64>,
) -> PyResult<Arr<'py, u8>> {
    let (d, c, kk, nb) = (
        slice(&deltas)?,
        slice(&counts)?,
        slice(&k)?,
        slice(&nbytes)?,
    );
    let body = detached(py, || {
        core::check_rice_encode(d, c, kk, nb)?;
        Ok(core::rice_encode(d, c, kk, nb))
    })?;
    Ok(body.into_pyarray(py))
}

/// Decode ``rice_encode`` bit strings: the deltas, and 1 per blob that decodes cleanly.
#[pyfunction]
fn rice_decode<'py>(
    py: Python<'py>,
    body: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    counts: PyReadonlyArray1<'py, i64>,
    k: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Arr<'py, u64>, Arr<'py, u8>)> {
    let (bd, s, c, kk) = (slice(&body)?, slice(&starts)?, slice(&counts)?, slice(&k)?);
    let (deltas, ok) = detached(py, || {
        core::check_rice_decode(bd.len(), s, c, kk)?;
        Ok(core::rice_decode(bd, s, c, kk))
    })?;
    Ok((deltas.into_pyarray(py), ok.into_pyarray(py)))
}

/// Format-2 set blobs of every document in one buffer, and the blob boundaries.
#[pyfunction]
fn rice_sets<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u64>,
    offsets: PyReadonlyArray1<'py, i64>,
    margin: i64,
    max_width: i64,
) -> PyResult<(Arr<'py, u8>, Arr<'py, i64>)> {
    let (v, o) = (slice(&values)?, slice(&offsets)?);
    blobs(py, v, o, margin, max_width, core::rice_sets)
}

/// `rice_sets` of 32-bit values taken as the top halves of 64-bit ones (`v << 32`).
#[pyfunction]
fn rice_sets32<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, i64>,
    margin: i64,
    max_width: i64,
) -> PyResult<(Arr<'py, u8>, Arr<'py, i64>)> {
    let (v, o) = (slice(&values)?, slice(&offsets)?);
    blobs(py, v, o, margin, max_width, core::rice_sets32)
}

/// A set-blob encoder of `rice_sets` over values of type `V` (it checks that they rise).
type Encode<V> = fn(&[V], &[i64], i64, i64) -> Result<(Vec<u8>, Vec<i64>), Invalid>;

/// The checks and the GIL-free run shared by `rice_sets` and `rice_sets32`.
fn blobs<'py, V: Copy + Ord + Sync>(
    py: Python<'py>,
    v: &[V],
    o: &[i64],
    margin: i64,
    max_width: i64,
    encode: Encode<V>,
) -> PyResult<(Arr<'py, u8>, Arr<'py, i64>)> {
    let (buf, starts) = detached(py, || {
        core::check_rice_widths(margin, max_width)?;
        core::check_offsets(o, v.len())?;
        encode(v, o, margin, max_width)
    })?;
    Ok((buf.into_pyarray(py), starts.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bucket_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(center_adjacency, m)?)?;
    m.add_function(wrap_pyfunction!(center_pass, m)?)?;
    m.add_function(wrap_pyfunction!(components, m)?)?;
    m.add_function(wrap_pyfunction!(intersections, m)?)?;
    m.add_function(wrap_pyfunction!(rice_decode, m)?)?;
    m.add_function(wrap_pyfunction!(rice_encode, m)?)?;
    m.add_function(wrap_pyfunction!(rice_sets, m)?)?;
    m.add_function(wrap_pyfunction!(rice_sets32, m)?)?;
    m.add_function(wrap_pyfunction!(unique_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(unique_per_doc, m)?)?;
    m.add_function(wrap_pyfunction!(unique_per_doc32, m)?)?;
    Ok(())
}
