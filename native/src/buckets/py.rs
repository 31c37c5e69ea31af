//! Bindings of the buckets family: the names of `neardup._kernels.buckets`, which
//! checks its arguments the same way and raises the same `ConfigError` messages.

use numpy::PyUntypedArrayMethods;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyReadwriteArray1,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::core::{self, Found, Walk, PROFILE};
use crate::arrays::{slice, slice2, slice2 as matrix};
use crate::errors::config_error;
use crate::sets::core::{check_offsets, check_sorted_runs_on};
use crate::sets::py::{detached, Values};

type Arr<'py, T> = Bound<'py, PyArray1<T>>;

/// ``(n, 32)`` uint8 counts of each row's values by their low 5 bits (saturating at 255),
/// and whether a row has a full cell.
#[pyfunction]
fn set_profiles<'py>(
    py: Python<'py>,
    values: Values<'py>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Bound<'py, PyArray2<u8>>, Arr<'py, bool>)> {
    let o = slice(&offsets)?;
    let (prof, big) = match &values {
        Values::U64(v) => {
            let v = slice(v)?;
            detached(py, || {
                check_offsets(o, v.len())?;
                Ok(core::set_profiles(v, o))
            })?
        }
        Values::U32(v) => {
            let v = slice(v)?;
            detached(py, || {
                check_offsets(o, v.len())?;
                Ok(core::set_profiles(v, o))
            })?
        }
    };
    let n = o.len() - 1;
    Ok((
        prof.into_pyarray(py).reshape([n, PROFILE])?,
        big.into_pyarray(py),
    ))
}

/// The threshold and row-count checks both walks make first (the reference's order).
fn walk_scalars(threshold: f64, n: usize) -> Result<(), String> {
    if !(0.0..=1.0).contains(&threshold) {
        return Err("threshold must be between 0 and 1; pass a similarity".into());
    }
    if n >= u32::MAX as usize {
        return Err(format!(
            "keys has {n} rows; the walk takes fewer than 2**32 - 1"
        ));
    }
    Ok(())
}

/// The shape checks of the walks' arrays against the ``n`` rows of keys.
#[allow(clippy::too_many_arguments)]
fn walk_shapes(
    exact: bool,
    filtered: bool,
    n: usize,
    offsets: usize,
    sig_rows: usize,
    num_perm: usize,
    prof_rows: usize,
    big: usize,
) -> Result<(), String> {
    if exact && offsets != n + 1 {
        return Err("offsets must have one entry more than keys has rows".into());
    }
    if !exact && sig_rows != n {
        return Err("sigs must have one row per row of keys".into());
    }
    if !exact && num_perm == 0 && n > 0 {
        return Err("sigs must have at least one column (slot)".into());
    }
    if filtered && (prof_rows != n || big != n) {
        return Err("prof and big must have one row per row of keys".into());
    }
    Ok(())
}

/// The shape of the masks a walk was given (``shared_rows``'s), if any.
fn walk_masks(shape: Option<(usize, usize)>, n: usize, bands: usize) -> Result<(), String> {
    match shape {
        Some(got) if got != (bands, n.div_ceil(64)) => Err(format!(
            "masks must be shared_rows(keys)[0]: ({bands}, {}) words, got {got:?}",
            n.div_ceil(64)
        )),
        _ => Ok(()),
    }
}

/// Checks a walk's arguments in the reference's order (threshold and rows, then the
/// caller's own `$extra(bands)` check, then the arrays' shapes), makes the `Walk` over
/// `$values` (u64 or u32 sets) and evaluates `$run` on it with the GIL released.
macro_rules! with_walk {
    ($py:expr, $keys:expr, $values:expr, $offsets:expr, $sigs:expr, $prof:expr, $big:expr,
     $exact:expr, $threshold:expr, $join:expr, $threads:expr, $extra:expr, $masks:expr,
     |$w:ident| $run:expr) => {{
        let (py, exact, threshold) = ($py, $exact, $threshold);
        let (k, n, bands) = matrix($keys)?;
        let o = slice($offsets)?;
        let (s, sig_rows, num_perm) = matrix($sigs)?;
        let (p, prof_rows, cells) = matrix($prof)?;
        let g = slice($big)?;
        let masks: &[u64] = match $masks {
            Some(m) => slice2(m)?.0,
            None => &[],
        };
        let masks_shape = $masks.map(|m| (m.shape()[0], m.shape()[1]));
        let filtered = exact && cells == PROFILE;
        let extra: &dyn Fn(usize) -> Result<(), String> = &$extra;
        let checked = walk_scalars(threshold, n)
            .and_then(|()| extra(bands))
            .and_then(|()| {
                walk_shapes(
                    exact,
                    filtered,
                    n,
                    o.len(),
                    sig_rows,
                    num_perm,
                    prof_rows,
                    g.len(),
                )
            })
            .and_then(|()| walk_masks(masks_shape, n, bands));
        if let Err(message) = checked {
            return Err(config_error(py, message));
        }
        let (p, g) = if filtered { (p, g) } else { (&p[..0], &g[..0]) };
        macro_rules! over {
            ($v:expr) => {{
                let $w = Walk {
                    keys: k,
                    n,
                    bands,
                    values: $v,
                    offsets: o,
                    sigs: s,
                    num_perm,
                    prof: p,
                    big: g,
                    exact,
                    threshold,
                    join: $join,
                    masks,
                };
                detached(py, || {
                    if exact {
                        check_offsets(o, $w.values.len())?;
                        check_sorted_runs_on($w.values, o, $threads)?;
                    }
                    Ok($run)
                })?
            }};
        }
        match $values {
            Values::U64(v) => over!(slice(v)?),
            Values::U32(v) => over!(slice(v)?),
        }
    }};
}

/// Walk every bucket of band columns ``band_start .. band_end - 1`` of ``keys``; verify
/// each pair of its rows once (in the first band they share). Returns ``(a, b, similarity,
/// roots, verified)`` (see the reference).
#[pyfunction]
#[pyo3(signature = (keys, values, offsets, sigs, prof, big, exact, threshold, join, band_start, band_end, masks=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn bucket_pairs_verified<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray2<'py, u64>,
    values: Values<'py>,
    offsets: PyReadonlyArray1<'py, i64>,
    sigs: PyReadonlyArray2<'py, u32>,
    prof: PyReadonlyArray2<'py, u8>,
    big: PyReadonlyArray1<'py, bool>,
    exact: bool,
    threshold: f64,
    join: bool,
    band_start: i64,
    band_end: i64,
    masks: Option<PyReadonlyArray2<'py, u64>>,
) -> PyResult<(
    Arr<'py, i64>,
    Arr<'py, i64>,
    Arr<'py, f64>,
    Arr<'py, i64>,
    i64,
)> {
    let bands_in = |bands: usize| {
        if band_start < 0 || band_end < band_start || band_end as u64 > bands as u64 {
            return Err(format!(
                "bands {band_start}..{band_end} are not within the {bands} band columns of keys"
            ));
        }
        Ok(())
    };
    let (lo, hi) = (band_start.max(0) as usize, band_end.max(0) as usize);
    let found: Found = with_walk!(
        py,
        &keys,
        &values,
        &offsets,
        &sigs,
        &prof,
        &big,
        exact,
        threshold,
        join,
        1,
        bands_in,
        masks.as_ref(),
        |walk| walk.run(lo, hi)
    );
    Ok((
        found.a.into_pyarray(py),
        found.b.into_pyarray(py),
        found.sim.into_pyarray(py),
        found.roots.into_pyarray(py),
        found.verified,
    ))
}

/// Each row's cluster root (its smallest member): the roots of ``bucket_pairs_verified``
/// in join mode over every band column, the bands walked on ``threads`` threads that share
/// one union-find.
#[pyfunction]
#[pyo3(signature = (keys, values, offsets, sigs, prof, big, exact, threshold, threads, masks=None))]
#[allow(clippy::too_many_arguments)]
fn bucket_roots<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray2<'py, u64>,
    values: Values<'py>,
    offsets: PyReadonlyArray1<'py, i64>,
    sigs: PyReadonlyArray2<'py, u32>,
    prof: PyReadonlyArray2<'py, u8>,
    big: PyReadonlyArray1<'py, bool>,
    exact: bool,
    threshold: f64,
    threads: i64,
    masks: Option<PyReadonlyArray2<'py, u64>>,
) -> PyResult<Arr<'py, i64>> {
    let threads_ok = |_bands: usize| {
        if threads < 1 {
            return Err(format!("threads must be at least 1, got {threads}"));
        }
        Ok(())
    };
    let threads = threads.clamp(1, 256) as usize;
    let roots: Vec<i64> = with_walk!(
        py,
        &keys,
        &values,
        &offsets,
        &sigs,
        &prof,
        &big,
        exact,
        threshold,
        true,
        threads,
        threads_ok,
        masks.as_ref(),
        |walk| walk.roots_shared(threads)
    );
    Ok(roots.into_pyarray(py))
}

/// Which rows share their key of some band column of ``keys`` with another row: each
/// band's rows as ``(bands, ceil(n / 64))`` mask words (bit ``r % 64`` of word ``r // 64``),
/// which a walk takes (``masks=``), and each row's "in some band" (the rows whose sets a walk
/// reads), found on ``threads`` threads.
#[pyfunction]
fn shared_rows<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray2<'py, u64>,
    threads: i64,
) -> PyResult<(Bound<'py, PyArray2<u64>>, Arr<'py, bool>)> {
    let (k, n, bands) = matrix(&keys)?;
    if let Err(message) = walk_scalars(0.0, n) {
        return Err(config_error(py, message));
    }
    if threads < 1 {
        return Err(config_error(
            py,
            format!("threads must be at least 1, got {threads}"),
        ));
    }
    let threads = threads.clamp(1, 256) as usize;
    let (masks, any) = py.detach(|| core::shared_rows(k, n, bands, threads));
    Ok((
        masks.into_pyarray(py).reshape([bands, n.div_ceil(64)])?,
        any.into_pyarray(py),
    ))
}

/// Move the runs of the rows with ``keep`` to the front of ``values``, in order (in place),
/// and rewrite ``offsets`` (in place) so that the other rows' runs are empty. Returns the
/// number of values kept.
#[pyfunction]
fn compact_sets(
    py: Python<'_>,
    mut values: PyReadwriteArray1<'_, u32>,
    mut offsets: PyReadwriteArray1<'_, i64>,
    keep: PyReadonlyArray1<'_, bool>,
) -> PyResult<i64> {
    let keep = slice(&keep)?;
    let v = values.as_slice_mut().map_err(contiguous)?;
    let o = offsets.as_slice_mut().map_err(contiguous)?;
    let kept = detached(py, || {
        if o.len() != keep.len() + 1 {
            return Err("offsets must have one entry more than keep".to_string());
        }
        check_offsets(o, v.len())?;
        Ok(core::compact_runs(v, o, keep))
    })?;
    Ok(kept as i64)
}

fn contiguous(_: numpy::AsSliceError) -> PyErr {
    PyValueError::new_err("a kernel needs contiguous arrays; pass numpy.ascontiguousarray(...)")
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bucket_pairs_verified, m)?)?;
    m.add_function(wrap_pyfunction!(bucket_roots, m)?)?;
    m.add_function(wrap_pyfunction!(compact_sets, m)?)?;
    m.add_function(wrap_pyfunction!(set_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(shared_rows, m)?)?;
    Ok(())
}
