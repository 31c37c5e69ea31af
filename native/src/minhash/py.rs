//! Bindings of the minhash family: the names of `neardup._kernels.minhash`, with
//! its argument dtypes, return dtypes and shapes, and its `ConfigError`s (same messages).

use std::borrow::Cow;

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyReadwriteArray1,
};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;

use super::core;
use super::words::{self, Extra, Words};
use crate::arrays::{matrix, offsets, same_length, vector};
use crate::errors::{at_least, config_error, config_same_length};

type Rows<'py> = Bound<'py, PyArray2<u64>>;
type Rows32<'py> = Bound<'py, PyArray2<u32>>;
type U64s<'py> = Bound<'py, PyArray1<u64>>;
type I64s<'py> = Bound<'py, PyArray1<i64>>;
/// Borrowed (or copied, when strided) `(lo, hi, doc_offsets)`.
type Features<'a> = (Cow<'a, [u64]>, Cow<'a, [u64]>, Cow<'a, [i64]>);

/// Entries of `tables.char_classes()` and `tables.simple_lower()`: one per code point.
const TABLE_LEN: usize = 0x110000;

/// `values` as an `(n, width)` array (`values.len() == n * width`).
fn rows<T: numpy::Element>(
    py: Python<'_>,
    values: Vec<T>,
    n: usize,
    width: usize,
) -> Bound<'_, PyArray2<T>> {
    Array2::from_shape_vec((n, width), values)
        .expect("a kernel returns n * width values")
        .into_pyarray(py)
}

/// Feature hashes (lo, hi) of the k-shingles of token hashes, with their doc offsets.
#[pyfunction]
fn combine_shingles<'py>(
    py: Python<'py>,
    toks: PyReadonlyArray1<'py, u64>,
    tok_offsets: PyReadonlyArray1<'py, i64>,
    k: i64,
    short_joined: bool,
    seed: u64,
) -> PyResult<(U64s<'py>, U64s<'py>, I64s<'py>)> {
    let k = at_least(py, "k (tokens per shingle)", k, 1)?;
    let (t, o) = (vector(&toks), vector(&tok_offsets));
    offsets("tok_offsets", &o, t.len())?;
    let (lo, hi, offs) = py.detach(|| core::combine_shingles(&t, &o, k, short_joined, seed));
    Ok((
        lo.into_pyarray(py),
        hi.into_pyarray(py),
        offs.into_pyarray(py),
    ))
}

/// The checked `(lo, hi, doc_offsets)` of a double-hashing kernel.
fn features_in<'a>(
    lo: &'a PyReadonlyArray1<'_, u64>,
    hi: &'a PyReadonlyArray1<'_, u64>,
    doc_offsets: &'a PyReadonlyArray1<'_, i64>,
) -> PyResult<Features<'a>> {
    let (l, h, o) = (vector(lo), vector(hi), vector(doc_offsets));
    same_length("lo and hi", l.len(), h.len())?;
    offsets("doc_offsets", &o, l.len())?;
    Ok((l, h, o))
}

/// Slot i = min over the features of ``(lo >> 32) + i * (hi >> 32)`` (mod 2**32).
#[pyfunction]
fn minhash_double32<'py>(
    py: Python<'py>,
    lo: PyReadonlyArray1<'py, u64>,
    hi: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
    num_perm: i64,
) -> PyResult<Rows<'py>> {
    let np = at_least(py, "num_perm", num_perm, 0)?;
    let (l, h, o) = features_in(&lo, &hi, &doc_offsets)?;
    let out = py.detach(|| core::minhash_double32(&l, &h, &o, np));
    Ok(rows(py, out, o.len() - 1, np))
}

/// Slot i of document d = min over its features of ``lo + i*hi`` (mod 2**64).
#[pyfunction]
fn minhash_double<'py>(
    py: Python<'py>,
    lo: PyReadonlyArray1<'py, u64>,
    hi: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
    num_perm: i64,
) -> PyResult<Rows<'py>> {
    let np = at_least(py, "num_perm", num_perm, 0)?;
    let (l, h, o) = features_in(&lo, &hi, &doc_offsets)?;
    let out = py.detach(|| core::minhash_double(&l, &h, &o, np));
    Ok(rows(py, out, o.len() - 1, np))
}

/// The checked `(hv, doc_offsets, a, b)` of a datasketch permutation kernel.
fn permutation_in(py: Python<'_>, hv: usize, offs: &[i64], a: usize, b: usize) -> PyResult<()> {
    config_same_length(py, "the permutations a and b", a, b)?;
    offsets("doc_offsets", offs, hv)
}

/// datasketch 2.x ``affine32``: ``a * fmix32(h) + b mod 2**32``, min per slot.
#[pyfunction]
fn minhash_affine32<'py>(
    py: Python<'py>,
    hv: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
    a: PyReadonlyArray1<'py, u64>,
    b: PyReadonlyArray1<'py, u64>,
) -> PyResult<Rows<'py>> {
    let (h, o, a, b) = (vector(&hv), vector(&doc_offsets), vector(&a), vector(&b));
    permutation_in(py, h.len(), &o, a.len(), b.len())?;
    let k = a.len();
    let out = py.detach(|| {
        // the low 32 bits of a * h + b depend only on the low 32 bits of a, h and b
        let h32: Vec<u32> = h.iter().map(|&x| x as u32).collect();
        let a32: Vec<u32> = a.iter().map(|&x| x as u32).collect();
        let b32: Vec<u32> = b.iter().map(|&x| x as u32).collect();
        let slots = core::affine32(&h32, &o, &a32, &b32);
        slots.into_iter().map(u64::from).collect::<Vec<u64>>()
    });
    Ok(rows(py, out, o.len() - 1, k))
}

/// datasketch ``legacy``: ``((a*h + b) mod 2**64) mod (2**61 - 1)``, low 32 bits, min.
#[pyfunction]
fn minhash_legacy<'py>(
    py: Python<'py>,
    hv: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
    a: PyReadonlyArray1<'py, u64>,
    b: PyReadonlyArray1<'py, u64>,
) -> PyResult<Rows<'py>> {
    let (h, o, a, b) = (vector(&hv), vector(&doc_offsets), vector(&a), vector(&b));
    permutation_in(py, h.len(), &o, a.len(), b.len())?;
    let out = py.detach(|| core::minhash_legacy(&h, &o, &a, &b));
    Ok(rows(py, out, o.len() - 1, a.len()))
}

/// One-permutation hashing with optimal densification (Shrivastava 2017).
#[pyfunction]
fn oph<'py>(
    py: Python<'py>,
    h: PyReadonlyArray1<'py, u64>,
    doc_offsets: PyReadonlyArray1<'py, i64>,
    num_perm: i64,
    seed: u64,
) -> PyResult<Rows<'py>> {
    let np = at_least(py, "num_perm", num_perm, 1)?;
    let (h, o) = (vector(&h), vector(&doc_offsets));
    offsets("doc_offsets", &o, h.len())?;
    let out = py.detach(|| core::oph(&h, &o, np, seed));
    Ok(rows(py, out, o.len() - 1, np))
}

/// 64-bit key of every (document, band) (see the reference for the definition).
#[pyfunction]
fn band_keys<'py>(
    py: Python<'py>,
    sig: PyReadonlyArray2<'py, u32>,
    bands: i64,
    rows: i64,
) -> PyResult<Rows<'py>> {
    let (s, n, width) = matrix(&sig);
    if bands < 0 || rows < 0 {
        return Err(config_error(
            py,
            format!("bands and rows must not be negative, got bands={bands}, rows={rows}"),
        ));
    }
    let (b, r) = (bands as usize, rows as usize);
    if (b as u128) * (r as u128) > width as u128 {
        return Err(config_error(
            py,
            format!(
                "bands * rows = {} is more than the {width} slots of a sketch",
                (b as u128) * (r as u128)
            ),
        ));
    }
    let out = py.detach(|| core::band_keys(&s, n, width, b, r));
    Ok(self::rows(py, out, n, b))
}

/// Row indices `idx` into `n` rows, negative ones counted from the end (as numpy's).
fn resolve(idx: &[i64], n: usize) -> PyResult<Vec<usize>> {
    idx.iter()
        .map(|&i| {
            let j = if i < 0 { i + n as i64 } else { i };
            if j < 0 || j >= n as i64 {
                Err(PyIndexError::new_err(format!(
                    "index {i} is out of bounds for axis 0 with size {n}"
                )))
            } else {
                Ok(j as usize)
            }
        })
        .collect()
}

/// Fraction of equal slots between rows ``a32[ai[t]]`` and ``b32[bi[t]]``, for every t.
#[pyfunction]
fn estimate<'py>(
    py: Python<'py>,
    a32: PyReadonlyArray2<'py, u32>,
    ai: PyReadonlyArray1<'py, i64>,
    b32: PyReadonlyArray2<'py, u32>,
    bi: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let ((a, na, wa), (b, nb, wb)) = (matrix(&a32), matrix(&b32));
    if wa != wb {
        return Err(config_error(
            py,
            format!("the sketches have {wa} and {wb} slots; compare sketches of one num_perm"),
        ));
    }
    let (ai, bi) = (vector(&ai), vector(&bi));
    config_same_length(py, "ai and bi", ai.len(), bi.len())?;
    let (ra, rb) = (resolve(&ai, na)?, resolve(&bi, nb)?);
    let out = py.detach(|| core::estimate(&a, &ra, &b, &rb, wa));
    Ok(out.into_pyarray(py))
}

/// Sort ``run`` (a uint32 or uint64 array) in place and move its distinct values to the
/// front; return how many.
#[pyfunction]
fn sort_unique(py: Python<'_>, run: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(a) = run.cast::<PyArray1<u32>>() {
        return sort_in_place(py, &mut writable(a)?);
    }
    if let Ok(a) = run.cast::<PyArray1<u64>>() {
        return sort_in_place(py, &mut writable(a)?);
    }
    let dtype = match run.getattr("dtype") {
        Ok(d) => d.str()?.to_string(),
        Err(_) => run.get_type().name()?.to_string(),
    };
    Err(config_error(
        py,
        format!("sort_unique takes a 1-D uint32 or uint64 array, got {dtype}"),
    ))
}

/// The array borrowed for writing; numpy's error for a read-only one.
fn writable<'py, T: numpy::Element>(
    a: &Bound<'py, PyArray1<T>>,
) -> PyResult<PyReadwriteArray1<'py, T>> {
    a.try_readwrite()
        .map_err(|_| PyValueError::new_err("assignment destination is read-only"))
}

fn sort_in_place<T: numpy::Element + Ord + Copy + Send>(
    py: Python<'_>,
    a: &mut PyReadwriteArray1<'_, T>,
) -> PyResult<usize> {
    if let Ok(s) = a.as_slice_mut() {
        return Ok(py.detach(|| core::sort_unique(s)));
    }
    let mut owned: Vec<T> = a.as_array().iter().copied().collect();
    let m = py.detach(|| core::sort_unique(&mut owned));
    for (dst, src) in a.as_array_mut().iter_mut().zip(owned) {
        *dst = src;
    }
    Ok(m)
}

/// The fused pass over the checked arguments (the document bytes, offsets and tokenizer):
/// the number of documents and the pass's output.
#[allow(clippy::too_many_arguments)]
fn fused<'py>(
    py: Python<'py>,
    buf: &PyReadonlyArray1<'py, u8>,
    offs: &PyReadonlyArray1<'py, i64>,
    classes: &PyReadonlyArray1<'py, u8>,
    lower: &PyReadonlyArray1<'py, i32>,
    mask: i64,
    min_bytes: i64,
    k: i64,
    short_joined: bool,
    seed: u64,
    num_perm: i64,
    extra: Extra,
) -> PyResult<(usize, words::Sketched)> {
    let k = at_least(py, "k (tokens per shingle)", k, 1)?;
    let np = at_least(py, "num_perm", num_perm, 0)?;
    let (c, l) = (vector(classes), vector(lower));
    if c.len() < TABLE_LEN || l.len() < TABLE_LEN {
        return Err(config_error(
            py,
            format!(
                "classes and lower must be the 0x110000-entry tables of neardup._unicode.classes, \
                 got {} and {} entries",
                c.len(),
                l.len()
            ),
        ));
    }
    let (b, o) = (vector(buf), vector(offs));
    offsets("offsets", &o, b.len())?;
    let w = Words {
        classes: &c,
        lower: &l,
        mask: mask as u8, // the classes are 8 bits: only the mask's low byte meets them
        min_bytes,
        k,
        joined: short_joined,
        seed,
        num_perm: np,
    };
    let out = py.detach(|| words::sketch_words(&b, &o, &w, extra));
    Ok((o.len() - 1, out))
}

/// Fused tokenize -> xxh3_64 per token -> k-shingle features -> 32-bit double hashing.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn sketch_words<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    classes: PyReadonlyArray1<'py, u8>,
    lower: PyReadonlyArray1<'py, i32>,
    mask: i64,
    min_bytes: i64,
    k: i64,
    short_joined: bool,
    seed: u64,
    num_perm: i64,
) -> PyResult<Rows<'py>> {
    let (n, out) = fused(
        py,
        &buf,
        &offsets,
        &classes,
        &lower,
        mask,
        min_bytes,
        k,
        short_joined,
        seed,
        num_perm,
        Extra::Rows,
    )?;
    Ok(rows(py, out.rows, n, num_perm as usize))
}

/// :func:`sketch_words`, also returning (when ``emit``) every feature's ``lo`` hash and the
/// per-document feature offsets.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn sketch_words_features<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    classes: PyReadonlyArray1<'py, u8>,
    lower: PyReadonlyArray1<'py, i32>,
    mask: i64,
    min_bytes: i64,
    k: i64,
    short_joined: bool,
    seed: u64,
    num_perm: i64,
    emit: bool,
) -> PyResult<(Rows<'py>, U64s<'py>, I64s<'py>)> {
    let extra = if emit { Extra::Features } else { Extra::Rows };
    let (n, out) = fused(
        py,
        &buf,
        &offsets,
        &classes,
        &lower,
        mask,
        min_bytes,
        k,
        short_joined,
        seed,
        num_perm,
        extra,
    )?;
    Ok((
        rows(py, out.rows, n, num_perm as usize),
        out.feats.into_pyarray(py),
        out.offsets.into_pyarray(py),
    ))
}

/// :func:`sketch_words_features` with each document's features given as its sorted set of
/// their top 32 bits: ``(sigs, values, set_offsets)``; the slots (all below 2**32) as
/// ``uint32``, which is what the band keys read.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn sketch_words_sets32<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    classes: PyReadonlyArray1<'py, u8>,
    lower: PyReadonlyArray1<'py, i32>,
    mask: i64,
    min_bytes: i64,
    k: i64,
    short_joined: bool,
    seed: u64,
    num_perm: i64,
) -> PyResult<(Rows32<'py>, Bound<'py, PyArray1<u32>>, I64s<'py>)> {
    let (n, out) = fused(
        py,
        &buf,
        &offsets,
        &classes,
        &lower,
        mask,
        min_bytes,
        k,
        short_joined,
        seed,
        num_perm,
        Extra::Sets32,
    )?;
    Ok((
        rows(py, out.rows32, n, num_perm as usize),
        out.values.into_pyarray(py),
        out.offsets.into_pyarray(py),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(band_keys, m)?)?;
    m.add_function(wrap_pyfunction!(combine_shingles, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(minhash_affine32, m)?)?;
    m.add_function(wrap_pyfunction!(minhash_double, m)?)?;
    m.add_function(wrap_pyfunction!(minhash_double32, m)?)?;
    m.add_function(wrap_pyfunction!(minhash_legacy, m)?)?;
    m.add_function(wrap_pyfunction!(oph, m)?)?;
    m.add_function(wrap_pyfunction!(sketch_words, m)?)?;
    m.add_function(wrap_pyfunction!(sketch_words_features, m)?)?;
    m.add_function(wrap_pyfunction!(sketch_words_sets32, m)?)?;
    m.add_function(wrap_pyfunction!(sort_unique, m)?)?;
    Ok(())
}
