//! Bindings of the clusterjson family: the names of `neardup._kernels.clusterjson`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};

use super::core;
use crate::arrays::slice;
use crate::errors::config_error;

/// A `str` that has a UTF-8 form (no lone surrogate), else `None`.
fn text<'a>(item: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    let s = item.cast_exact::<PyString>().ok()?;
    s.to_str().ok()
}

/// The line of one cluster into `out`, or `false` (and `out` as it may be) for a cluster
/// that is not one of `int` id, `tuple` of `str` members and a `str` representative.
fn one(out: &mut Vec<u8>, c: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = c.py();
    let id = c.getattr(intern!(py, "id"))?;
    let Ok(id) = id.cast_exact::<PyInt>() else {
        return Ok(false);
    };
    let Ok(id) = id.extract::<i64>() else {
        return Ok(false);
    };
    let members = c.getattr(intern!(py, "members"))?;
    let Ok(members) = members.cast_exact::<PyTuple>() else {
        return Ok(false);
    };
    let rep = c.getattr(intern!(py, "representative"))?;
    let Some(rep) = text(&rep) else {
        return Ok(false);
    };
    let items: Vec<Bound<'_, PyAny>> = members.iter().collect();
    let mut texts = Vec::with_capacity(items.len());
    for item in &items {
        match text(item) {
            Some(t) => texts.push(t),
            None => return Ok(false),
        }
    }
    core::push_line(out, id, rep, texts.into_iter());
    Ok(true)
}

/// The JSON lines of ``clusters`` (a list of objects with ``id``, ``members`` and
/// ``representative``), each as ``json.JSONEncoder(ensure_ascii=False)`` writes
/// ``{"cluster": id, "size": len(members), "representative": ..., "members": [...]}``
/// followed by a newline; ``None`` when a cluster's id is not an ``int`` (or does not fit
/// 64 bits), its members are not a ``tuple`` of ``str``, or an id is not a ``str`` or
/// holds a lone surrogate.
#[pyfunction]
fn cluster_lines(clusters: &Bound<'_, PyList>) -> PyResult<Option<String>> {
    let mut out = Vec::with_capacity(clusters.len() * 96);
    for c in clusters.iter() {
        if !one(&mut out, &c)? {
            return Ok(None);
        }
    }
    // every piece is a str's UTF-8 or ASCII
    Ok(Some(String::from_utf8(out).expect("UTF-8 pieces")))
}

/// `cluster_groups`' `(order, starts)`.
type Groups<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// ``(order, starts)``: the clusters of two or more of ``roots`` (``int64``; row ``i``'s
/// group is ``roots[i]``), as ``neardup.cluster.cluster_groups`` gives them: every row whose
/// root is another row and every row named as another's root, grouped by their own root
/// (ascending) and ascending inside a group, which starts at ``starts[g]`` of ``order``.
/// ``ConfigError`` for a root outside ``[0, len(roots))``.
#[pyfunction]
fn cluster_groups<'py>(
    py: Python<'py>,
    roots: PyReadonlyArray1<'py, i64>,
) -> PyResult<Groups<'py>> {
    let r = slice(&roots)?;
    match py.detach(|| core::groups(r)) {
        Ok((order, starts)) => Ok((order.into_pyarray(py), starts.into_pyarray(py))),
        Err(i) => Err(config_error(
            py,
            format!(
                "roots must be rows in [0, {}), got {} at row {i}",
                r.len(),
                r[i]
            ),
        )),
    }
}

/// The members of each group of ``order`` (what ``cluster_groups`` gives) as a tuple of
/// ``ids``: group ``g`` is ``tuple(ids[j] for j in order[starts[g]:starts[g + 1]])``, the
/// last one running to the end of ``order``. ``ConfigError`` when ``starts`` does not begin
/// at 0, decreases or passes the end of ``order``, or a position is outside ``ids``.
#[pyfunction]
fn member_tuples<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyList>,
    order: PyReadonlyArray1<'py, i64>,
    starts: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyList>> {
    let order = slice(&order)?;
    let starts = slice(&starts)?;
    let n = ids.len();
    if let Some(&p) = order.iter().find(|&&p| p < 0 || p as u64 >= n as u64) {
        return Err(config_error(
            py,
            format!("order must hold positions in [0, {n}) of ids, got {p}"),
        ));
    }
    let bad = starts.first().is_some_and(|&s| s != 0)
        || starts.windows(2).any(|w| w[1] < w[0])
        || starts
            .last()
            .is_some_and(|&s| s as u64 > order.len() as u64);
    if bad {
        return Err(config_error(
            py,
            format!(
                "starts must begin at 0 and ascend to at most {} (the length of order)",
                order.len()
            ),
        ));
    }
    let out = PyList::empty(py);
    for (g, &lo) in starts.iter().enumerate() {
        let lo = lo as usize;
        let hi = starts.get(g + 1).map_or(order.len(), |&h| h as usize);
        // SAFETY: a new tuple of `hi - lo` empty slots (a slot left empty, on an error, is
        // skipped when the tuple is freed), each filled once below with an owned reference
        let tuple = unsafe { ffi::PyTuple_New((hi - lo) as ffi::Py_ssize_t) };
        let tuple = unsafe { Bound::from_owned_ptr_or_err(py, tuple)? };
        for (k, j) in (lo..hi).enumerate() {
            if let Some(&ahead) = order.get(j + AHEAD) {
                prefetch_item(ids, ahead);
            }
            let item = ids.get_item(order[j] as usize)?;
            // SAFETY: slot `k` of the new tuple, set once
            unsafe { ffi::PyTuple_SET_ITEM(tuple.as_ptr(), k as ffi::Py_ssize_t, item.into_ptr()) };
        }
        out.append(tuple)?;
    }
    Ok(out)
}

/// How many members ahead `member_tuples` asks the cache for the id it will take: the ids
/// of a cluster lie anywhere in the list, and each taken id is written (its count of
/// references), so without the hint each one waits for memory.
const AHEAD: usize = 12;

/// A hint to load item `at` of `list` into the cache (nothing when it is not an item).
fn prefetch_item(list: &Bound<'_, PyList>, at: i64) {
    let ptr = list.as_ptr();
    // SAFETY: the item is read only when `at` is inside the list (the GIL is held, so the
    // list does not change meanwhile)
    unsafe {
        if at >= 0 && (at as ffi::Py_ssize_t) < ffi::PyList_GET_SIZE(ptr) {
            prefetch_ptr(ffi::PyList_GET_ITEM(ptr, at as ffi::Py_ssize_t));
        }
    }
}

fn prefetch_ptr(ptr: *mut ffi::PyObject) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cluster_lines, m)?)?;
    m.add_function(wrap_pyfunction!(cluster_groups, m)?)?;
    m.add_function(wrap_pyfunction!(member_tuples, m)?)?;
    Ok(())
}
