//! Bindings of the jsonl family: the names of `neardup._kernels.jsonl`.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use super::core;
use crate::arrays::{ranges, slice, slice_mut};

type Array<'py, T> = Bound<'py, PyArray1<T>>;
type Found<'py> = (
    Array<'py, u8>,
    Array<'py, i64>,
    Array<'py, i64>,
    Array<'py, u8>,
);

/// Starts and ends (newline excluded) of the complete lines of ``data[:limit]``.
#[pyfunction]
fn line_bounds<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    limit: i64,
) -> PyResult<(Array<'py, i64>, Array<'py, i64>)> {
    let d = slice(&data)?;
    // data[:limit], as Python slices (a negative limit counts from the end)
    let n = d.len() as i64;
    let cut = if limit < 0 {
        (n + limit).max(0)
    } else {
        limit.min(n)
    } as usize;
    let (starts, ends) = py.detach(|| core::line_bounds(&d[..cut]));
    Ok((starts.into_pyarray(py), ends.into_pyarray(py)))
}

/// The output buffers must hold the lines' bytes (what the unescaped fields can take).
fn room(name: &str, have: usize, need: u64) -> PyResult<()> {
    if (have as u64) < need {
        return Err(PyValueError::new_err(format!(
            "the {name} buffer holds {have} bytes, fewer than the {need} bytes of the lines; \
             pass buffers at least as long as the lines together"
        )));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn scan<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    id_key: PyReadonlyArray1<'py, u8>,
    text_key: PyReadonlyArray1<'py, u8>,
    mut texts: PyReadwriteArray1<'py, u8>,
    mut ids: PyReadwriteArray1<'py, u8>,
    want_spans: bool,
) -> PyResult<core::Scan> {
    let (d, s, e) = (slice(&data)?, slice(&starts)?, slice(&ends)?);
    let (idk, tk) = (slice(&id_key)?, slice(&text_key)?);
    ranges(d.len(), s, e)?;
    let need: u64 = s.iter().zip(e).map(|(&a, &b)| (b - a) as u64).sum();
    let (t, i) = (slice_mut(&mut texts)?, slice_mut(&mut ids)?);
    room("texts", t.len(), need)?;
    room("ids", i.len(), need)?;
    Ok(py.detach(|| core::scan_lines(d, s, e, idk, tk, t, i, want_spans)))
}

fn found(py: Python<'_>, scan: core::Scan) -> Found<'_> {
    (
        scan.status.into_pyarray(py),
        scan.text_offsets.into_pyarray(py),
        scan.id_offsets.into_pyarray(py),
        scan.id_kind.into_pyarray(py),
    )
}

/// Scan lines ``data[starts[k]:ends[k]]`` (no newline) of one top-level object each; returns
/// ``(status, text_offsets, id_offsets, id_kind)`` (see
/// ``neardup._kernels.jsonl.scan_lines``).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scan_lines<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    id_key: PyReadonlyArray1<'py, u8>,
    text_key: PyReadonlyArray1<'py, u8>,
    texts: PyReadwriteArray1<'py, u8>,
    ids: PyReadwriteArray1<'py, u8>,
) -> PyResult<Found<'py>> {
    let s = scan(py, data, starts, ends, id_key, text_key, texts, ids, false)?;
    Ok(found(py, s))
}

/// :func:`scan_lines`, plus ``text_spans``: for each ``OK`` line where its text value's JSON
/// string lies in ``data`` (``[k, 0]``: its opening quote, ``[k, 1]``: just after its closing
/// quote), ``-1`` for every other line.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn scan_lines_spans<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    id_key: PyReadonlyArray1<'py, u8>,
    text_key: PyReadonlyArray1<'py, u8>,
    texts: PyReadwriteArray1<'py, u8>,
    ids: PyReadwriteArray1<'py, u8>,
) -> PyResult<(
    Array<'py, u8>,
    Array<'py, i64>,
    Array<'py, i64>,
    Array<'py, u8>,
    Bound<'py, PyArray2<i64>>,
)> {
    let mut s = scan(py, data, starts, ends, id_key, text_key, texts, ids, true)?;
    let n = s.status.len();
    let spans =
        Array2::from_shape_vec((n, 2), std::mem::take(&mut s.spans)).expect("two spans per line");
    let (status, toff, ioff, kind) = found(py, s);
    Ok((status, toff, ioff, kind, spans.into_pyarray(py)))
}

/// The ids of rows ``rows`` of a scanned chunk (what ``scan_lines`` gave): row ``r``'s id
/// ``ids[id_offsets[r]:id_offsets[r + 1]]`` decoded as UTF-8 (``surrogatepass``, as the
/// scanner writes a lone surrogate), or its line number ``first_line + r + 1`` as a string
/// when it has none (``id_kind[r] == 0``).
///
/// Raises:
///     ValueError: offsets that do not fit the kinds or the buffer, or a row out of range.
///     UnicodeDecodeError: an id that is not UTF-8.
#[pyfunction]
fn row_ids<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray1<'py, u8>,
    id_offsets: PyReadonlyArray1<'py, i64>,
    id_kind: PyReadonlyArray1<'py, u8>,
    rows: PyReadonlyArray1<'py, i64>,
    first_line: i64,
) -> PyResult<Bound<'py, PyList>> {
    let (buf, off, kind, rows) = (
        slice(&ids)?,
        slice(&id_offsets)?,
        slice(&id_kind)?,
        slice(&rows)?,
    );
    if off.len() != kind.len() + 1 {
        return Err(PyValueError::new_err(
            "id_offsets must have one entry more than id_kind; pass scan_lines' arrays",
        ));
    }
    if rows.iter().any(|&r| r < 0 || r as usize >= kind.len()) {
        return Err(PyValueError::new_err(
            "rows must be rows of id_kind (0 <= row < its length)",
        ));
    }
    let fits = |r: usize| 0 <= off[r] && off[r] <= off[r + 1] && off[r + 1] as usize <= buf.len();
    if !rows.iter().all(|&r| fits(r as usize)) {
        return Err(PyValueError::new_err(
            "id_offsets must rise within the ids buffer; pass scan_lines' arrays",
        ));
    }
    let out = PyList::empty(py);
    for &r in rows {
        let r = r as usize;
        let item = if kind[r] == 0 {
            PyString::new(py, &(first_line + r as i64 + 1).to_string()).into_any()
        } else {
            let raw = &buf[off[r] as usize..off[r + 1] as usize];
            match std::str::from_utf8(raw) {
                Ok(text) => PyString::new(py, text).into_any(),
                // a lone surrogate (or bytes that are not UTF-8: Python's error)
                Err(_) => {
                    PyBytes::new(py, raw).call_method1("decode", ("utf-8", "surrogatepass"))?
                }
            }
        };
        out.append(item)?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(line_bounds, m)?)?;
    m.add_function(wrap_pyfunction!(row_ids, m)?)?;
    m.add_function(wrap_pyfunction!(scan_lines, m)?)?;
    m.add_function(wrap_pyfunction!(scan_lines_spans, m)?)?;
    Ok(())
}
