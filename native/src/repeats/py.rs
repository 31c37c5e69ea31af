//! Bindings of the repeats family: the names of `neardup._kernels.repeats`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::core;
use crate::arrays::{ranges, same_length, slice, slice_mut};
use crate::errors::config_error;

type I64Array<'py> = Bound<'py, PyArray1<i64>>;
type BoolArray<'py> = Bound<'py, PyArray1<bool>>;

/// `min_length` and `prefix` as the twins check them (a `ConfigError` each).
fn window_args(py: Python<'_>, min_length: i64, prefix: i64) -> PyResult<(usize, usize)> {
    if min_length < 1 {
        return Err(config_error(
            py,
            format!("min_length must be at least 1 byte, got {min_length}"),
        ));
    }
    if prefix < 0 {
        return Err(config_error(
            py,
            format!("prefix must be 0 (none) or a byte position, got {prefix}"),
        ));
    }
    Ok((min_length as usize, prefix as usize))
}

/// The winnowing parameters: `1 <= k <= min_length`, texts below `2**32` bytes.
fn winnow_args(n: usize, min_length: i64, k: i64) -> PyResult<(usize, usize)> {
    if k < 1 || k > min_length {
        return Err(PyValueError::new_err(format!(
            "the k-gram length must be between 1 and min_length ({min_length}), got {k}"
        )));
    }
    if n as u64 >= 1 << 32 {
        return Err(PyValueError::new_err(format!(
            "the prefilter takes texts below 2**32 bytes, got {n}; mark the text without it"
        )));
    }
    Ok((min_length as usize, k as usize))
}

/// Every entry of a suffix array names a position of the text.
fn check_sa<S: Copy + Into<i64>>(n: usize, sa: &[S]) -> PyResult<()> {
    same_length("text and its suffix array", n, sa.len())?;
    if let Some(bad) = sa
        .iter()
        .map(|&s| s.into())
        .find(|&s| s < 0 || s >= n as i64)
    {
        return Err(PyValueError::new_err(format!(
            "suffix array entry {bad} is outside the text of {n} bytes; pass the text's own"
        )));
    }
    Ok(())
}

/// The byte mask of the marked windows, from the suffix array ``sa`` of ``text`` (false
/// within ``text[:prefix]``).
#[pyfunction]
fn repeat_mask<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    sa: &Bound<'py, PyAny>,
    min_length: i64,
    prefix: i64,
) -> PyResult<BoolArray<'py>> {
    let t = slice(&text)?;
    let (length, prefix) = window_args(py, min_length, prefix)?;
    let out = if let Ok(sa32) = sa.extract::<PyReadonlyArray1<'py, i32>>() {
        let s = slice(&sa32)?;
        check_sa(t.len(), s)?;
        py.detach(|| core::repeat_mask(t, s, length, prefix))
    } else {
        let wide = match sa.extract::<PyReadonlyArray1<'py, i64>>() {
            Ok(wide) => wide,
            Err(_) => sa.call_method1("astype", ("int64",))?.extract()?,
        };
        let s = slice(&wide)?;
        check_sa(t.len(), s)?;
        py.detach(|| core::repeat_mask(t, s, length, prefix))
    };
    Ok(out.into_pyarray(py))
}

/// The marks of ``repeat_mask`` without a suffix array (``len(text) < 2**32 - 1``).
#[pyfunction]
fn window_mask<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    min_length: i64,
    prefix: i64,
) -> PyResult<BoolArray<'py>> {
    let t = slice(&text)?;
    let (length, prefix) = window_args(py, min_length, prefix)?;
    if t.len() as u64 >= (1 << 32) - 1 {
        return Err(PyValueError::new_err(format!(
            "window_mask takes texts below 2**32 - 1 bytes, got {}; use repeat_mask with \
             the text's suffix array",
            t.len()
        )));
    }
    let out = py.detach(|| core::window_mask(t, length, prefix));
    Ok(out.into_pyarray(py))
}

/// Winnowing anchors: ``(positions, hashes, segment starts, segment ends)`` in text order.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn anchors<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    min_length: i64,
    k: i64,
) -> PyResult<(
    I64Array<'py>,
    Bound<'py, PyArray1<u64>>,
    I64Array<'py>,
    I64Array<'py>,
)> {
    let t = slice(&text)?;
    let (length, k) = winnow_args(t.len(), min_length, k)?;
    let (pos, hs, lo, hi) = py.detach(|| core::anchors(t, length, k));
    Ok((
        pos.into_pyarray(py),
        hs.into_pyarray(py),
        lo.into_pyarray(py),
        hi.into_pyarray(py),
    ))
}

/// ``(starts, ends)`` of the candidate regions around the repeated anchors.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn regions<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    pos: PyReadonlyArray1<'py, i64>,
    hs: PyReadonlyArray1<'py, u64>,
    seg_lo: PyReadonlyArray1<'py, i64>,
    seg_hi: PyReadonlyArray1<'py, i64>,
    min_length: i64,
    k: i64,
) -> PyResult<(I64Array<'py>, I64Array<'py>)> {
    let t = slice(&text)?;
    let (p, h, lo, hi) = (slice(&pos)?, slice(&hs)?, slice(&seg_lo)?, slice(&seg_hi)?);
    let (length, k) = winnow_args(t.len(), min_length, k)?;
    same_length("positions and hashes", p.len(), h.len())?;
    ranges(t.len(), lo, hi)?;
    same_length("positions and segments", p.len(), lo.len())?;
    if let Some(j) = (0..p.len()).find(|&j| p[j] < lo[j] || p[j] >= hi[j]) {
        return Err(PyValueError::new_err(format!(
            "anchor {} lies outside its segment [{}, {}); pass the anchors' own segments",
            p[j], lo[j], hi[j]
        )));
    }
    let (s, e) = py.detach(|| core::regions(t, p, h, lo, hi, length, k));
    Ok((s.into_pyarray(py), e.into_pyarray(py)))
}

/// ``(starts, ends)`` of the regions around the anchors whose hash is among ``other``.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn shared_regions<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    pos: PyReadonlyArray1<'py, i64>,
    hs: PyReadonlyArray1<'py, u64>,
    other: PyReadonlyArray1<'py, u64>,
    min_length: i64,
    k: i64,
) -> PyResult<(I64Array<'py>, I64Array<'py>)> {
    let (t, p, h, o) = (slice(&text)?, slice(&pos)?, slice(&hs)?, slice(&other)?);
    let (length, k) = winnow_args(t.len(), min_length, k)?;
    same_length("positions and hashes", p.len(), h.len())?;
    if let Some(&a) = p
        .iter()
        .find(|&&a| a < 0 || a as u64 >= t.len() as u64 || t[a as usize] == core::SEP)
    {
        return Err(PyValueError::new_err(format!(
            "anchor {a} is not a position of the text's segments; pass the text's own anchors"
        )));
    }
    if p.windows(2).any(|w| w[1] < w[0]) {
        return Err(PyValueError::new_err(
            "anchors must come in text order; pass the text's own anchors",
        ));
    }
    let (s, e) = py.detach(|| core::shared_regions(t, p, h, o, length, k));
    Ok((s.into_pyarray(py), e.into_pyarray(py)))
}

/// The regions joined, each after a ``0xFF`` separator, and where each starts in the join.
#[pyfunction]
fn gather<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Bound<'py, PyArray1<u8>>, I64Array<'py>)> {
    let (t, s, e) = (slice(&text)?, slice(&starts)?, slice(&ends)?);
    ranges(t.len(), s, e)?;
    let (sub, at) = py.detach(|| core::gather(t, s, e));
    Ok((sub.into_pyarray(py), at.into_pyarray(py)))
}

/// The checks of scatter: regions inside `n` bytes, each one's marks inside the join's mask.
fn scatter_args(sub: usize, at: &[i64], s: &[i64], e: &[i64], n: i64) -> PyResult<usize> {
    if n < 0 {
        return Err(PyValueError::new_err(format!("a text of {n} bytes")));
    }
    ranges(n as usize, s, e)?;
    same_length("at and starts", at.len(), s.len())?;
    for j in 0..at.len() {
        if at[j] < 0 || (at[j] + e[j] - s[j]) as u64 > sub as u64 {
            return Err(PyValueError::new_err(format!(
                "region {j} starts at {} of a join of {sub} bytes; pass gather's own output",
                at[j]
            )));
        }
    }
    Ok(n as usize)
}

/// A mask over the regions' join put back over the ``n``-byte text, and how many bytes of
/// each region are marked.
#[pyfunction]
fn scatter_counts<'py>(
    py: Python<'py>,
    sub_mask: PyReadonlyArray1<'py, bool>,
    at: PyReadonlyArray1<'py, i64>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    n: i64,
) -> PyResult<(BoolArray<'py>, I64Array<'py>)> {
    let (m, a, s, e) = (
        slice(&sub_mask)?,
        slice(&at)?,
        slice(&starts)?,
        slice(&ends)?,
    );
    let n = scatter_args(m.len(), a, s, e, n)?;
    let (mask, counts) = py.detach(|| core::scatter_counts(m, a, s, e, n));
    Ok((mask.into_pyarray(py), counts.into_pyarray(py)))
}

/// A mask over the regions' join put back over the ``n``-byte text (false outside them).
#[pyfunction]
fn scatter<'py>(
    py: Python<'py>,
    sub_mask: PyReadonlyArray1<'py, bool>,
    at: PyReadonlyArray1<'py, i64>,
    starts: PyReadonlyArray1<'py, i64>,
    ends: PyReadonlyArray1<'py, i64>,
    n: i64,
) -> PyResult<BoolArray<'py>> {
    Ok(scatter_counts(py, sub_mask, at, starts, ends, n)?.0)
}

/// Each document's kept bytes packed again: document ``j`` keeps every byte with
/// ``at[j] == -1``, none with ``at[j] == -2``, otherwise those unmarked in
/// ``sub_mask[at[j]:][:its length]``; ``(kept, kept_offsets, removed)``.
#[pyfunction]
fn cut<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    sub_mask: PyReadonlyArray1<'py, bool>,
    at: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Bound<'py, PyArray1<u8>>, I64Array<'py>, I64Array<'py>)> {
    let (t, o, m, a) = (
        slice(&text)?,
        slice(&offsets)?,
        slice(&sub_mask)?,
        slice(&at)?,
    );
    check_cut(t.len(), o, a, m.len())?;
    let (kept, kept_offsets, removed) = py.detach(|| core::cut(t, o, m, a));
    Ok((
        kept.into_pyarray(py),
        kept_offsets.into_pyarray(py),
        removed.into_pyarray(py),
    ))
}

/// The documents of `offsets` lie in the text of `n` bytes and their places `at` in the
/// join of `marks` bytes (or are -1 / -2).
fn check_cut(n: usize, o: &[i64], a: &[i64], marks: usize) -> PyResult<()> {
    same_length("offsets and at (plus one)", o.len(), a.len() + 1)?;
    ranges(n, &o[..a.len()], &o[1..])?;
    for j in 0..a.len() {
        let bad = if a[j] >= 0 {
            (a[j] + o[j + 1] - o[j]) as u64 > marks as u64
        } else {
            a[j] != core::KEEP && a[j] != core::DROP
        };
        if bad {
            return Err(PyValueError::new_err(format!(
                "document {j} has marks at {} of {marks} (-1: keep it, -2: drop it); pass \
                 the join's own positions",
                a[j]
            )));
        }
    }
    Ok(())
}

/// ``cut(text, offsets, window_mask(joined, min_length, 0), at)`` in one call, the marks
/// kept as runs (no mask of the join's size); ``(kept, kept_offsets, removed)``.
#[pyfunction]
fn window_cut<'py>(
    py: Python<'py>,
    text: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    joined: PyReadonlyArray1<'py, u8>,
    at: PyReadonlyArray1<'py, i64>,
    min_length: i64,
) -> PyResult<(Bound<'py, PyArray1<u8>>, I64Array<'py>, I64Array<'py>)> {
    let (t, o, jn, a) = (
        slice(&text)?,
        slice(&offsets)?,
        slice(&joined)?,
        slice(&at)?,
    );
    let (length, _) = window_args(py, min_length, 0)?;
    check_cut(t.len(), o, a, jn.len())?;
    if jn.len() as u64 >= (1 << 32) - 1 {
        return Err(PyValueError::new_err(format!(
            "window_cut takes joins below 2**32 - 1 bytes, got {}; use cut with the join's \
             repeat_mask",
            jn.len()
        )));
    }
    let (kept, kept_offsets, removed) = py.detach(|| {
        let spans = core::window_spans(jn, length, 0);
        core::cut_spans(t, o, &spans, a)
    });
    Ok((
        kept.into_pyarray(py),
        kept_offsets.into_pyarray(py),
        removed.into_pyarray(py),
    ))
}

/// ``window_cut(text, offsets, text, at, min_length)`` with the kept bytes written into
/// ``text`` itself, from its start (no buffer of their size); ``(kept_offsets, removed)``,
/// the kept bytes then being ``text[:kept_offsets[-1]]``. The documents must follow each
/// other (``offsets`` never decreases: checked).
#[pyfunction]
fn window_cut_in_place<'py>(
    py: Python<'py>,
    mut text: PyReadwriteArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    at: PyReadonlyArray1<'py, i64>,
    min_length: i64,
) -> PyResult<(I64Array<'py>, I64Array<'py>)> {
    let (length, _) = window_args(py, min_length, 0)?;
    let (o, a) = (slice(&offsets)?, slice(&at)?);
    let t = slice_mut(&mut text)?;
    check_cut(t.len(), o, a, t.len())?;
    if t.len() as u64 >= (1 << 32) - 1 {
        return Err(PyValueError::new_err(format!(
            "window_cut_in_place takes texts below 2**32 - 1 bytes, got {}; use cut with \
             the text's repeat_mask",
            t.len()
        )));
    }
    let (kept_offsets, removed) = py.detach(|| {
        let spans = core::window_spans(t, length, 0);
        core::cut_spans_in_place(t, o, &spans, a)
    });
    Ok((kept_offsets.into_pyarray(py), removed.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(repeat_mask, m)?)?;
    m.add_function(wrap_pyfunction!(window_mask, m)?)?;
    m.add_function(wrap_pyfunction!(anchors, m)?)?;
    m.add_function(wrap_pyfunction!(regions, m)?)?;
    m.add_function(wrap_pyfunction!(shared_regions, m)?)?;
    m.add_function(wrap_pyfunction!(gather, m)?)?;
    m.add_function(wrap_pyfunction!(scatter, m)?)?;
    m.add_function(wrap_pyfunction!(scatter_counts, m)?)?;
    m.add_function(wrap_pyfunction!(cut, m)?)?;
    m.add_function(wrap_pyfunction!(window_cut, m)?)?;
    m.add_function(wrap_pyfunction!(window_cut_in_place, m)?)?;
    Ok(())
}
