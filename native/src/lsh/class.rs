//! `BandIndex`: the state and the per-call work of `neardup.index.lsh.LSHIndex` (its base
//! class) and of the native table of `neardup.compat.datasketch.MinHashLSH`.
//!
//! One object holds the keys, the rows and the band-key table (`store`), so that an `add` or a
//! `query` from Python is one method call: no argument unboxing per array, no Python frame
//! around the work. What is not the per-call path (validation of unusual input, the bulk
//! paths' checks, plans, bytes) stays in the Python subclass, which the fast paths call back
//! (`_add_general`, `_query_general`, `_candidates_general`) for anything unusual.
//!
//! Two modes. The estimate mode (`LSHIndex`) keeps each row's slots folded to 32 bits,
//! ranks hits by their estimated Jaccard, and never returns an empty sketch. The exact mode
//! (the datasketch drop-in) keeps the raw slots, returns candidates unranked, and checks
//! each candidate's band against the query's, so that its buckets are datasketch's exactly
//! (a 64-bit key shared by two different bands makes no extra candidate); empty sketches
//! are ordinary rows there, as in datasketch.

use numpy::{
    PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyList, PyTuple, PyType};
use pyo3::PyTraverseError;

use super::core;
use super::input::{py_shape, row_count, slots, u32_rows};
use super::store::{Chunks, Table};

const MIN_SLOTS: i64 = 512;
const MIN_ENTRIES: i64 = 256;

static INPUT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn input_error(py: Python<'_>, message: String) -> PyErr {
    match INPUT_ERROR.import(py, "neardup.errors", "InputError") {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(err) => err,
    }
}

/// The per-call state of a banded LSH index over MinHash sketches (see the module docs).
#[pyclass(subclass, module = "neardup._native.lsh")]
pub struct BandIndex {
    num_perm: usize,
    bands: usize,
    exact: bool,
    sketch_type: Option<Py<PyType>>,
    /// Where a `sketch_type` object keeps `hashvalues`, `scheme` and `params` (its slots),
    /// with the type's version tag when they were read (see `Members`).
    members: Option<Members>,
    params: Option<(Py<PyAny>, Py<PyAny>)>,
    /// Folded slots of the rows (estimate mode).
    sig: Chunks<u32>,
    /// Raw slots of the rows (exact mode).
    raw: Chunks<u64>,
    /// Slot width of the exact mode's sketches in bytes (0: none yet).
    width: usize,
    /// Per row, its state in the low byte (0 removed, 1 live, 2 live but empty) and above it
    /// the stamp of the last query that met it (one word: a candidate costs one load).
    meta: Vec<u64>,
    /// The rows planned for (`nbytes` reports them, as the numpy twin's arrays hold them).
    cap: usize,
    table: Table,
    keys: Vec<Py<PyAny>>,
    /// The rows whose key is a container (the only keys the cycle collector needs to see:
    /// `int` and `str` keys cannot be part of a cycle, and visiting every key costs the
    /// collector a call per key on each pass).
    gc_rows: Vec<usize>,
    row: Py<PyDict>,
    n: usize,
    dead: usize,
    /// `(row, first entry)` of the last per-call add while its entries head their chains.
    last: Option<(usize, usize)>,
    /// The sketch object of the last per-call add and its slots (a frozen value: a query of
    /// the same object skips reading and checking it again).
    last_sketch: Option<(Py<PyAny>, Py<PyArray1<u64>>)>,
    q32: Vec<u32>,
    q64: Vec<u64>,
    heads: Vec<i64>,
    hits: Vec<(usize, usize)>,
    found: Vec<i64>,
}

/// What a fast path reads of a sketch: its slots, when it is the expected kind.
enum Sketch<'py> {
    Slots(Bound<'py, PyArray1<u64>>),
    Other,
}

/// The ranked hits of the folded query `q` from the chain heads `heads` (the stamp already
/// advanced): `(num_perm - equal slots, row)` of each live row not met yet whose estimate
/// is at least `min_est`.
#[allow(clippy::too_many_arguments)]
fn walk_ranked(
    table: &Table,
    sig: &Chunks<u32>,
    meta: &mut [u64],
    heads: &[i64],
    q: &[u32],
    min_est: f64,
    hits: &mut Vec<(usize, usize)>,
    itself: Option<usize>,
) {
    let p = q.len();
    let stamp = (table.stamp as u64) << 8;
    for &h in heads {
        let mut e = h;
        while e >= 0 {
            let (r, prev) = table.entry(e);
            e = prev;
            let m = meta[r];
            if m & !0xFF == stamp || m as u8 != 1 {
                continue;
            }
            meta[r] = stamp | 1;
            // (the query's own row, `itself`, equals it in every slot)
            let eq = if Some(r) == itself {
                p
            } else {
                core::same(sig.row(r), q)
            };
            if (eq as f64) / (p as f64) < min_est {
                continue;
            }
            hits.push((p - eq, r));
        }
    }
}

/// The unranked candidates from the chain heads (estimate mode: live rows, no slot read).
fn walk_unranked(table: &Table, meta: &mut [u64], heads: &[i64], out: &mut Vec<i64>) {
    let stamp = (table.stamp as u64) << 8;
    for &h in heads {
        let mut e = h;
        while e >= 0 {
            let (r, prev) = table.entry(e);
            e = prev;
            let m = meta[r];
            if m & !0xFF == stamp || m as u8 != 1 {
                continue;
            }
            meta[r] = stamp | 1;
            out.push(r as i64);
        }
    }
}

/// The exact mode's candidates: rows not removed whose band `j` (on the chain of `heads[j]`)
/// equals the query's.
fn walk_exact(
    table: &Table,
    raw: &Chunks<u64>,
    meta: &mut [u64],
    heads: &[i64],
    q: &[u64],
    out: &mut Vec<i64>,
) {
    let stamp = (table.stamp as u64) << 8;
    let rows = table.rows;
    for (j, &h) in heads.iter().enumerate() {
        let band = &q[j * rows..(j + 1) * rows];
        let mut e = h;
        while e >= 0 {
            let (r, prev) = table.entry(e);
            e = prev;
            let m = meta[r];
            if m & !0xFF == stamp || m as u8 == 0 {
                continue;
            }
            if &raw.row(r)[j * rows..(j + 1) * rows] != band {
                continue; // another band under the same 64-bit key
            }
            meta[r] = stamp | (m & 0xFF);
            out.push(r as i64);
        }
    }
}

/// The offsets of a sketch class's `hashvalues`, `scheme` and `params` slots (`__slots__`
/// members), read straight off the objects on the per-call path: three attribute lookups are
/// a fifth of an `add`. Used only for objects of exactly that class while its version tag
/// is the one these offsets were read under (a changed class takes `getattr` again).
struct Members {
    offsets: [isize; 3],
    tag: u32,
}

impl Members {
    fn of(kind: &Bound<'_, PyType>) -> Option<Members> {
        let mut offsets = [0isize; 3];
        for (o, name) in offsets.iter_mut().zip(["hashvalues", "scheme", "params"]) {
            let desc = kind.getattr(name).ok()?;
            // SAFETY: reads of a live descriptor object, after checking it is a member
            // descriptor (whose layout is `PyMemberDescrObject`)
            unsafe {
                let member_type = std::ptr::addr_of_mut!(pyo3::ffi::PyMemberDescr_Type);
                if pyo3::ffi::Py_TYPE(desc.as_ptr()) != member_type {
                    return None;
                }
                let def = (*(desc.as_ptr() as *mut pyo3::ffi::PyMemberDescrObject)).d_member;
                if def.is_null() || (*def).type_code != pyo3::ffi::Py_T_OBJECT_EX {
                    return None;
                }
                *o = (*def).offset;
            }
        }
        // SAFETY: a field read of a live type object
        let tag = unsafe { (*kind.as_type_ptr()).tp_version_tag };
        (tag != 0).then_some(Members { offsets, tag })
    }

    /// `(hashvalues, scheme, params)` of `obj` (of type `kind`), or None when a slot is unset
    /// or the class changed since.
    #[allow(clippy::type_complexity)]
    fn read<'py>(
        &self,
        kind: &Bound<'py, PyType>,
        obj: &Bound<'py, PyAny>,
    ) -> Option<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = obj.py();
        // SAFETY: `obj` is exactly of type `kind` (checked by the caller), whose layout has an
        // object pointer at each offset while its version tag is unchanged
        unsafe {
            if (*kind.as_type_ptr()).tp_version_tag != self.tag {
                return None;
            }
            let at = |offset: isize| {
                let field = (obj.as_ptr() as *const u8).offset(offset);
                let ptr = *(field as *const *mut pyo3::ffi::PyObject);
                (!ptr.is_null()).then(|| Bound::from_borrowed_ptr(py, ptr))
            };
            Some((
                at(self.offsets[0])?,
                at(self.offsets[1])?,
                at(self.offsets[2])?,
            ))
        }
    }
}

/// `hv` as a 1-D contiguous native `uint64` array of `n` slots, or None. The dtype is
/// compared with numpy's own `uint64` descriptor first (what every such array made the usual
/// way holds), and only otherwise by numpy's equivalence test.
fn u64_row(hv: Bound<'_, PyAny>, n: usize) -> Option<Bound<'_, PyArray1<u64>>> {
    static U64: PyOnceLock<Py<numpy::PyArrayDescr>> = PyOnceLock::new();
    let py = hv.py();
    let untyped = hv.cast::<PyUntypedArray>().ok()?;
    if untyped.ndim() != 1 || untyped.len() != n || !untyped.is_c_contiguous() {
        return None;
    }
    let builtin = U64.get_or_init(py, || numpy::dtype::<u64>(py).unbind());
    if untyped.dtype().as_ptr() == builtin.as_ptr() {
        // SAFETY: a 1-D array whose descriptor is numpy's uint64 descriptor
        return Some(unsafe { hv.cast_into_unchecked::<PyArray1<u64>>() });
    }
    hv.cast_into::<PyArray1<u64>>().ok()
}

/// Append the slots `src` as a row: raw (exact mode) or folded, with its state (1 live, 2
/// live but empty in estimate mode) and its query stamp.
fn push_row<T: Copy + Into<u64>>(
    exact: bool,
    src: &[T],
    sig: &mut Chunks<u32>,
    raw: &mut Chunks<u64>,
    meta: &mut Vec<u64>,
) {
    if exact {
        for (d, &v) in raw.push().iter_mut().zip(src) {
            *d = v.into();
        }
        meta.push(1);
    } else {
        let row = sig.push();
        for (d, &v) in row.iter_mut().zip(src) {
            *d = core::fold(v.into());
        }
        meta.push(if core::is_empty_by(src) { 2 } else { 1 });
    }
}

impl BandIndex {
    fn empty(py: Python<'_>) -> Self {
        BandIndex {
            num_perm: 0,
            bands: 0,
            exact: false,
            sketch_type: None,
            members: None,
            params: None,
            sig: Chunks::new(1),
            raw: Chunks::new(1),
            width: 0,
            meta: Vec::new(),
            cap: 0,
            table: Table::new(1, 0, 1, 1),
            keys: Vec::new(),
            gc_rows: Vec::new(),
            row: PyDict::new(py).unbind(),
            n: 0,
            dead: 0,
            last: None,
            last_sketch: None,
            q32: Vec::new(),
            q64: Vec::new(),
            heads: Vec::new(),
            hits: Vec::new(),
            found: Vec::new(),
        }
    }

    fn ready(&self) -> PyResult<()> {
        if self.num_perm == 0 {
            return Err(PyValueError::new_err(
                "this BandIndex was not set up; call _setup(num_perm, bands, rows) first",
            ));
        }
        Ok(())
    }

    /// An empty table and no rows (the keys' parameters kept).
    fn clear_rows(&mut self, py: Python<'_>, rows: usize) {
        self.table = Table::new(MIN_SLOTS, MIN_ENTRIES, self.bands, rows);
        self.sig = Chunks::new(self.num_perm);
        self.raw = Chunks::new(self.num_perm);
        self.meta = Vec::new();
        self.cap = 0;
        self.keys = Vec::new();
        self.gc_rows = Vec::new();
        self.row = PyDict::new(py).unbind();
        self.n = 0;
        self.dead = 0;
        self.last = None;
        self.last_sketch = None;
    }

    /// An error when `k` more rows would pass the table's limit of `2**32 - 1` rows or band
    /// entries (entries are pairs of `u32`).
    fn check_room(&self, k: usize) -> PyResult<()> {
        let entries = self.table.entry_count() as u64 + (k * self.bands) as u64;
        if (self.n + k) as u64 >= u32::MAX as u64 || entries >= u32::MAX as u64 {
            return Err(PyValueError::new_err(
                "an LSH index holds fewer than 2**32 rows and band entries; split the \
                 collection over several indexes",
            ));
        }
        Ok(())
    }

    /// Room for `k` more rows and their entries (rows at least double, as the numpy twin's
    /// arrays; the table as `plan_growth` says).
    fn reserve(&mut self, k: usize) {
        let need = self.n + k;
        if need <= self.cap && self.table.fits((k * self.bands) as i64) {
            return;
        }
        if need > self.cap {
            let cap = need.max(2 * self.cap).max(64);
            self.meta.reserve_exact(cap - self.meta.len());
            self.cap = cap;
        }
        self.table.reserve((k * self.bands) as i64);
    }

    /// The band keys of row `r` into `heads`, their slots asked for from memory.
    fn band_keys_of(&mut self, r: usize) {
        let rows = self.table.rows;
        self.heads.resize(self.bands, 0);
        if self.exact {
            core::band_keys_into(self.raw.row(r), rows, &mut self.heads);
        } else {
            core::band_keys_into(self.sig.row(r), rows, &mut self.heads);
        }
        self.table.prefetch_all(&self.heads);
    }

    /// File row `r` (its slots stored) under its band keys. Returns its first entry.
    fn file_row(&mut self, r: usize) -> usize {
        self.band_keys_of(r);
        self.table.file(&mut self.heads, r as i64)
    }

    /// The state of every row.
    fn states(&self) -> Vec<u8> {
        self.meta[..self.n].iter().map(|&m| m as u8).collect()
    }

    /// Drop the last row pushed (its add did not happen).
    fn pop_row(&mut self) {
        if self.exact {
            self.raw.pop();
        } else {
            self.sig.pop();
        }
        self.meta.pop();
    }

    /// Append the key of the next row.
    fn push_key(&mut self, key: &Bound<'_, PyAny>) {
        // SAFETY: a type flag read of a live object
        if unsafe { pyo3::ffi::PyObject_IS_GC(key.as_ptr()) } != 0 {
            self.gc_rows.push(self.keys.len());
        }
        self.keys.push(key.clone().unbind());
    }

    /// `gc_rows` from `keys`.
    fn track_keys(&mut self, py: Python<'_>) {
        self.gc_rows = (0..self.keys.len())
            // SAFETY: a type flag read of a live object
            .filter(|&r| unsafe { pyo3::ffi::PyObject_IS_GC(self.keys[r].bind(py).as_ptr()) } != 0)
            .collect();
    }

    fn push_row(&mut self, src: &[u64]) {
        push_row(
            self.exact,
            src,
            &mut self.sig,
            &mut self.raw,
            &mut self.meta,
        );
    }

    /// Append `keys` with the rows of `src` (already checked: new keys, `num_perm` wide).
    fn append_rows<T: Copy + Into<u64> + Send + Sync>(
        &mut self,
        py: Python<'_>,
        keys: &[Bound<'_, PyAny>],
        src: &[T],
    ) -> PyResult<()> {
        let k = keys.len();
        if k == 0 {
            return Ok(());
        }
        self.check_room(k)?;
        self.reserve(k);
        let lo = self.n;
        let (p, exact, bands) = (self.num_perm, self.exact, self.bands);
        {
            let (sig, raw, meta, table) = (
                &mut self.sig,
                &mut self.raw,
                &mut self.meta,
                &mut self.table,
            );
            py.detach(|| {
                let mut heads = vec![0i64; bands];
                let rows = table.rows;
                for i in 0..k {
                    let r = lo + i;
                    push_row(exact, &src[i * p..(i + 1) * p], sig, raw, meta);
                    if exact {
                        core::band_keys_into(raw.row(r), rows, &mut heads);
                    } else {
                        core::band_keys_into(sig.row(r), rows, &mut heads);
                    }
                    table.file(&mut heads, r as i64);
                }
            });
        }
        let dict = self.row.bind(py).clone();
        for (i, key) in keys.iter().enumerate() {
            dict.set_item(key, lo + i)?;
            self.push_key(key);
        }
        self.n = lo + k;
        self.last = None;
        Ok(())
    }

    /// The slots of `mh` when it is a sketch of the index's type and parameters with
    /// `num_perm` contiguous `uint64` slots (else the general path takes it).
    fn sketch<'py>(&self, mh: &Bound<'py, PyAny>) -> PyResult<Sketch<'py>> {
        let py = mh.py();
        let Some(kind) = &self.sketch_type else {
            return Ok(Sketch::Other);
        };
        if !mh.get_type().is(kind.bind(py)) {
            return Ok(Sketch::Other);
        }
        let Some((scheme, params)) = &self.params else {
            return Ok(Sketch::Other);
        };
        let read = self
            .members
            .as_ref()
            .and_then(|m| m.read(kind.bind(py), mh));
        let (hv, s, p) = match read {
            Some(fields) => fields,
            None => (
                mh.getattr(intern!(py, "hashvalues"))?,
                mh.getattr(intern!(py, "scheme"))?,
                mh.getattr(intern!(py, "params"))?,
            ),
        };
        if !p.is(params.bind(py)) && !p.eq(params.bind(py))? {
            return Ok(Sketch::Other);
        }
        if !s.is(scheme.bind(py)) && !s.eq(scheme.bind(py))? {
            return Ok(Sketch::Other);
        }
        Ok(match u64_row(hv, self.num_perm) {
            Some(a) => Sketch::Slots(a),
            None => Sketch::Other,
        })
    }

    /// Fold `hv` into the query buffer; false for an empty query.
    fn fold_query(&mut self, hv: &[u64]) -> bool {
        self.q32.resize(self.num_perm, 0);
        core::fold_row(hv, &mut self.q32)
    }

    /// The heads of the last add's entries when `same` says the query is its row.
    fn fused_heads(&mut self, same: bool) -> bool {
        match self.last {
            Some((_, first)) if same => {
                self.heads.resize(self.bands, 0);
                for (j, h) in self.heads.iter_mut().enumerate() {
                    *h = (first + j) as i64;
                }
                true
            }
            _ => false,
        }
    }

    /// The ranked hits of the query in `q32` into `hits` (sorted, best first).
    fn ranked(&mut self, min_est: f64) {
        self.hits.clear();
        // the query is the last add's sketch: its entries head the chains of its keys
        let same = matches!(self.last, Some((r, _)) if self.meta[r] as u8 == 1 && self.sig.row(r) == self.q32);
        if !self.fused_heads(same) {
            self.heads.resize(self.bands, 0);
            core::band_keys_into(&self.q32, self.table.rows, &mut self.heads);
            self.table.heads(&mut self.heads);
        }
        self.table.stamp += 1;
        walk_ranked(
            &self.table,
            &self.sig,
            &mut self.meta,
            &self.heads,
            &self.q32,
            min_est,
            &mut self.hits,
            None,
        );
        self.hits.sort_unstable();
    }

    /// The ranked hits of row `r`'s own slots, `r` being the last add (its entries head its
    /// keys' chains): the query of the sketch just added, as `ranked` finds them.
    fn ranked_row(&mut self, r: usize, min_est: f64) {
        self.hits.clear();
        if self.meta[r] as u8 == 2 {
            return; // an empty sketch: never a hit
        }
        self.fused_heads(true);
        self.table.stamp += 1;
        let this = &mut *self;
        walk_ranked(
            &this.table,
            &this.sig,
            &mut this.meta,
            &this.heads,
            this.sig.row(r),
            min_est,
            &mut this.hits,
            Some(r),
        );
        this.hits.sort_unstable();
    }

    /// The hits in `hits` as a list of `(key, estimate)`.
    fn hit_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        hits_list(py, &self.hits, &self.keys, self.num_perm)
    }

    /// The unranked candidates of the slots `q` into `found` (estimate mode skips an empty
    /// query; exact mode compares each candidate's band with the query's).
    fn unranked(&mut self, q: &[u64]) {
        self.found.clear();
        if self.exact {
            let same = matches!(self.last, Some((r, _)) if self.raw.row(r) == q);
            if !self.fused_heads(same) {
                self.heads.resize(self.bands, 0);
                core::band_keys_into(q, self.table.rows, &mut self.heads);
                self.table.heads(&mut self.heads);
            }
            self.table.stamp += 1;
            walk_exact(
                &self.table,
                &self.raw,
                &mut self.meta,
                &self.heads,
                q,
                &mut self.found,
            );
            return;
        }
        if !self.fold_query(q) {
            return;
        }
        self.heads.resize(self.bands, 0);
        core::band_keys_into(&self.q32, self.table.rows, &mut self.heads);
        self.table.heads(&mut self.heads);
        self.table.stamp += 1;
        walk_unranked(&self.table, &mut self.meta, &self.heads, &mut self.found);
    }

    fn found_keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.found.iter().map(|&r| self.keys[r as usize].bind(py)),
        )
    }

    /// Rebuild without the removed rows (renumbering the rest), as `LSHIndex` does once they
    /// are a quarter of the index.
    fn compact(&mut self, py: Python<'_>) -> PyResult<()> {
        let live: Vec<usize> = (0..self.n).filter(|&r| self.meta[r] as u8 != 0).collect();
        let keys: Vec<Py<PyAny>> = live.iter().map(|&r| self.keys[r].clone_ref(py)).collect();
        let state: Vec<u8> = live.iter().map(|&r| self.meta[r] as u8).collect();
        let values: Vec<u64> = if self.exact {
            live.iter()
                .flat_map(|&r| self.raw.row(r).iter().copied())
                .collect()
        } else {
            live.iter()
                .flat_map(|&r| self.sig.row(r).iter().map(|&v| v as u64))
                .collect()
        };
        let rows = self.table.rows;
        self.clear_rows(py, rows);
        self.restore(py, keys, &values, &state)
    }

    /// Rows `0..len(keys)` from `keys`, their slots (folded ones in estimate mode, as `u64`)
    /// and states; files the live rows in order.
    fn restore(
        &mut self,
        py: Python<'_>,
        keys: Vec<Py<PyAny>>,
        values: &[u64],
        state: &[u8],
    ) -> PyResult<()> {
        let count = keys.len();
        self.check_room(count)?;
        self.reserve(count);
        let p = self.num_perm;
        for r in 0..count {
            let src = &values[r * p..(r + 1) * p];
            if self.exact {
                self.raw.push().copy_from_slice(src);
            } else {
                for (d, &v) in self.sig.push().iter_mut().zip(src) {
                    *d = v as u32;
                }
            }
        }
        self.meta.extend(state[..count].iter().map(|&s| s as u64));
        let dict = PyDict::new(py);
        for (i, key) in keys.iter().enumerate() {
            dict.set_item(key.bind(py), i)?;
        }
        self.row = dict.unbind();
        self.keys = keys;
        self.track_keys(py);
        self.n = count;
        for r in 0..count {
            if self.meta[r] as u8 == 1 {
                self.file_row(r);
            }
        }
        self.last = None;
        Ok(())
    }

    fn rows_array<'py, T: numpy::Element + Copy + Default>(
        py: Python<'py>,
        data: &Chunks<T>,
        rows: &[usize],
        p: usize,
    ) -> PyResult<Bound<'py, PyArray2<T>>> {
        let mut flat: Vec<T> = Vec::with_capacity(rows.len() * p);
        for &r in rows {
            flat.extend_from_slice(data.row(r));
        }
        PyArray1::from_vec(py, flat).reshape([rows.len(), p])
    }

    fn check_values<'py>(&self, values: &Bound<'py, PyAny>) -> PyResult<super::input::Slots<'py>> {
        let (src, shape) = slots(values)?;
        self.check_shape(&shape, src.as_slice().len())?;
        Ok(src)
    }

    /// The errors of the numpy twin's `_check_values` for `len` values of shape `shape`.
    fn check_shape(&self, shape: &[usize], len: usize) -> PyResult<()> {
        let k = row_count(len, self.num_perm)?;
        if shape.len() != 2 || shape[0] != k {
            return Err(PyValueError::new_err(format!(
                "expected a (n, {}) array of sketches, got shape {}",
                self.num_perm,
                py_shape(shape)
            )));
        }
        Ok(())
    }
}

#[pymethods]
impl BandIndex {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        py: Python<'_>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Self {
        BandIndex::empty(py)
    }

    /// Make this an empty index of ``bands`` bands of ``rows`` slots over sketches of
    /// ``num_perm`` slots. ``sketch_type``: the sketch class whose ``hashvalues``, ``scheme``
    /// and ``params`` the per-call paths read; ``exact``: the exact mode (module docs).
    #[pyo3(signature = (num_perm, bands, rows, sketch_type=None, exact=false))]
    fn _setup(
        &mut self,
        py: Python<'_>,
        num_perm: usize,
        bands: usize,
        rows: usize,
        sketch_type: Option<Bound<'_, PyType>>,
        exact: bool,
    ) -> PyResult<()> {
        if num_perm == 0 || bands == 0 || rows == 0 || bands * rows > num_perm {
            return Err(PyValueError::new_err(format!(
                "an index needs 1 <= bands * rows <= num_perm, got num_perm={num_perm}, \
                 bands={bands}, rows={rows}"
            )));
        }
        self.num_perm = num_perm;
        self.bands = bands;
        self.exact = exact;
        self.members = sketch_type.as_ref().and_then(Members::of);
        self.sketch_type = sketch_type.map(Bound::unbind);
        self.params = None;
        self.width = 0;
        self.clear_rows(py, rows);
        Ok(())
    }

    /// The sketches' ``(scheme, params)`` this index holds, or None.
    #[getter(_params)]
    fn get_params(&self, py: Python<'_>) -> Option<(Py<PyAny>, Py<PyAny>)> {
        self.params
            .as_ref()
            .map(|(s, p)| (s.clone_ref(py), p.clone_ref(py)))
    }

    #[setter(_params)]
    fn set_params(&mut self, value: Option<(Py<PyAny>, Py<PyAny>)>) {
        self.params = value;
    }

    /// Rows used (removed ones included).
    #[getter(_n)]
    fn get_n(&self) -> usize {
        self.n
    }

    /// The dict key -> row of the indexed keys (read it; change it only through the index).
    #[getter(_rows_dict)]
    fn get_rows_dict(&self, py: Python<'_>) -> Py<PyDict> {
        self.row.clone_ref(py)
    }

    /// Removed rows not yet dropped.
    #[getter(_dead)]
    fn get_dead(&self) -> usize {
        self.dead
    }

    fn __len__(&self) -> usize {
        self.n - self.dead
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.row.bind(py).contains(key)
    }

    /// Index one sketch under ``key`` (an existing ``key`` is replaced).
    fn add(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>, mh: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        this.ready()?;
        let hv = match this.sketch(mh)? {
            Sketch::Slots(hv) if !this.exact => hv,
            _ => {
                drop(this);
                slf.call_method1(intern!(py, "_add_general"), (key, mh))?;
                return Ok(());
            }
        };
        let r = this.n;
        this.check_room(1)?;
        this.reserve(1);
        {
            // SAFETY: the GIL is held and no Python code runs while the slice is read
            let src = unsafe { hv.as_slice() }.map_err(|_| PyValueError::new_err("slots"))?;
            this.push_row(src);
        }
        // the row's band keys and their slots asked for first: those loads overlap the key's
        // dict entry (a new key is filed under its row at once: one lookup)
        this.band_keys_of(r);
        let new = this.row.bind(py).set_default(key, r);
        if !matches!(new, Ok(true)) {
            this.pop_row();
            new?;
            drop(this);
            slf.call_method1(intern!(py, "_add_general"), (key, mh))?;
            return Ok(());
        }
        let first = {
            let this = &mut *this;
            this.table.file(&mut this.heads, r as i64)
        };
        this.push_key(key);
        this.n = r + 1;
        this.last = Some((r, first));
        this.last_sketch = Some((mh.clone().unbind(), hv.unbind()));
        Ok(())
    }

    /// Keys sharing a band with ``mh``, each with its estimated Jaccard, best first.
    #[pyo3(signature = (mh, *, min_similarity=None))]
    fn query<'py>(
        slf: &Bound<'py, Self>,
        mh: &Bound<'py, PyAny>,
        min_similarity: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        this.ready()?;
        let same = match &this.last_sketch {
            Some((last, hv)) if last.bind(py).is(mh) => Some(hv.bind(py).clone()),
            _ => None,
        };
        if let (Some(_), Some((r, _))) = (&same, this.last) {
            // the sketch just added (a frozen value): its folded row and its entries serve
            let min_est = match min_similarity {
                Some(m) if !m.is_none() => m.extract::<f64>()?,
                _ => -1.0,
            };
            this.ranked_row(r, min_est);
            return Ok(this.hit_list(py)?.into_any());
        }
        let checked = match same {
            Some(hv) => Sketch::Slots(hv), // the last add's sketch: checked then
            None => this.sketch(mh)?,
        };
        let hv = match checked {
            Sketch::Slots(hv) if !this.exact => hv,
            _ => {
                drop(this);
                return slf.call_method1(intern!(py, "_query_general"), (mh, min_similarity));
            }
        };
        if this.n == 0 {
            return Ok(PyList::empty(py).into_any());
        }
        let min_est = match min_similarity {
            Some(m) if !m.is_none() => m.extract::<f64>()?,
            _ => -1.0,
        };
        let live = {
            // SAFETY: the GIL is held and no Python code runs while the slice is read
            let src = unsafe { hv.as_slice() }.map_err(|_| PyValueError::new_err("slots"))?;
            this.fold_query(src)
        };
        if !live {
            return Ok(PyList::empty(py).into_any());
        }
        this.ranked(min_est);
        Ok(this.hit_list(py)?.into_any())
    }

    /// Remove ``key`` from the index.
    fn remove(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.ready()?;
        let dict = self.row.bind(py);
        let Some(r) = dict.get_item(key)? else {
            return Err(input_error(
                py,
                format!(
                    "key {} is not in the index; check `key in index` first",
                    key.repr()?
                ),
            ));
        };
        let r: usize = r.extract()?;
        dict.del_item(key)?;
        self.meta[r] &= !0xFF;
        self.keys[r] = py.None();
        self.dead += 1;
        Ok(())
    }

    /// The key indexed in insertion slot ``row``.
    fn key_of(&self, py: Python<'_>, row: isize) -> PyResult<Py<PyAny>> {
        let n = self.keys.len() as isize;
        let at = if row < 0 { row + n } else { row };
        if at < 0 || at >= n {
            return Err(PyIndexError::new_err("list index out of range"));
        }
        Ok(self.keys[at as usize].clone_ref(py))
    }

    /// Keys sharing a band key with one sketch given as its slot values, unranked.
    fn candidates<'py>(
        slf: &Bound<'py, Self>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        this.ready()?;
        let ok = !this.exact
            && values
                .cast::<PyUntypedArray>()
                .map(|a| a.ndim() == 1 && a.len() == this.num_perm && a.dtype().kind() == b'u')
                .unwrap_or(false);
        if !ok {
            drop(this);
            return slf.call_method1(intern!(py, "_candidates_general"), (values,));
        }
        if this.n == 0 {
            return Ok(PyList::empty(py).into_any());
        }
        let (src, _) = slots(values)?;
        this.unranked(src.as_slice());
        Ok(this.found_keys(py)?.into_any())
    }

    /// Exact mode: add ``values`` (a 1-D uint32 or uint64 array of ``num_perm`` slots) under
    /// a new ``key``. Returns 1, 0 (``key`` is indexed: nothing done) or -1 (not such an
    /// array, or another width than the indexed sketches': nothing done).
    fn _insert_values(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<i32> {
        self.ready()?;
        let Some(width) = exact_width(values, self.num_perm) else {
            return Ok(-1);
        };
        if !self.exact || (self.width != 0 && self.width != width) {
            return Ok(-1);
        }
        if self.row.bind(py).contains(key)? {
            return Ok(0);
        }
        if self.dead > 64.max(self.n / 4) {
            self.compact(py)?;
        }
        self.check_room(1)?;
        self.row.bind(py).set_item(key, self.n)?;
        let (src, _) = slots(values)?;
        self.q64.clear();
        self.q64.extend_from_slice(src.as_slice());
        drop(src);
        self.reserve(1);
        let r = self.n;
        let q = std::mem::take(&mut self.q64);
        self.push_row(&q);
        self.q64 = q;
        let first = self.file_row(r);
        self.push_key(key);
        self.n = r + 1;
        self.width = width;
        self.last = Some((r, first));
        Ok(1)
    }

    /// Exact mode: the keys whose bucket in some band is the query's (band by band, each
    /// bucket newest first), or None when ``values`` is not a 1-D array of the indexed
    /// sketches' width and ``num_perm`` slots.
    fn _candidates_exact<'py>(
        &mut self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        self.ready()?;
        let Some(width) = exact_width(values, self.num_perm) else {
            return Ok(None);
        };
        if !self.exact || (self.width != 0 && self.width != width) {
            return Ok(None);
        }
        if self.n == 0 {
            return Ok(Some(PyList::empty(py)));
        }
        let (src, _) = slots(values)?;
        self.q64.clear();
        self.q64.extend_from_slice(src.as_slice());
        drop(src);
        let q = std::mem::take(&mut self.q64);
        self.unranked(&q);
        self.q64 = q;
        Ok(Some(self.found_keys(py)?))
    }

    /// Slot width in bytes of the exact mode's sketches (0: none indexed yet).
    #[getter(_width)]
    fn get_width(&self) -> usize {
        self.width
    }

    /// Append new ``keys`` (a list, no repeats, none indexed) with their sketches ``values``
    /// (``(len(keys), num_perm)``, any unsigned dtype; exact mode: the indexed width).
    fn _append(
        &mut self,
        py: Python<'_>,
        keys: &Bound<'_, PyList>,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.ready()?;
        let narrow = u32_rows(values);
        let src = match narrow {
            Some(_) => None,
            None => Some(self.check_values(values)?),
        };
        if let Some(ro) = &narrow {
            self.check_shape(ro.shape(), ro.len())?;
        }
        let k = match (&narrow, &src) {
            (Some(ro), _) => ro.len() / self.num_perm,
            (_, Some(src)) => src.as_slice().len() / self.num_perm,
            _ => unreachable!("one of them is set"),
        };
        if keys.len() != k {
            return Err(PyValueError::new_err(format!(
                "_append got {} keys for {k} sketches",
                keys.len()
            )));
        }
        if self.exact && k > 0 {
            let width = values
                .cast::<PyUntypedArray>()
                .map(|a| a.dtype().itemsize())
                .unwrap_or(8);
            self.width = width;
        }
        let keys: Vec<Bound<'_, PyAny>> = keys.iter().collect();
        match (narrow, src) {
            // (uint32 sketches, datasketch's, as they are: no widened copy)
            (Some(ro), _) => self.append_rows(py, &keys, ro.as_slice()?),
            (_, Some(src)) => self.append_rows(py, &keys, src.as_slice()),
            _ => unreachable!("one of them is set"),
        }
    }

    /// The hits of every row of ``values`` (``(k, num_perm)``, any unsigned dtype), as
    /// lists of ``(key, estimate)``, best first.
    fn _query_lists<'py>(
        &mut self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
        min_est: f64,
    ) -> PyResult<Bound<'py, PyList>> {
        self.ready()?;
        let src = self.check_values(values)?;
        let src = src.as_slice();
        let p = self.num_perm;
        let nq = src.len() / p;
        let out = PyList::empty(py);
        if self.n == 0 || self.exact {
            for _ in 0..nq {
                out.append(PyList::empty(py))?;
            }
            return Ok(out);
        }
        let (offsets, hits) = {
            let (table, sig, meta) = (&mut self.table, &self.sig, &mut self.meta);
            let bands = self.bands;
            py.detach(|| {
                let mut offsets = vec![0usize; nq + 1];
                let mut hits = Vec::new();
                let mut q = vec![0u32; p];
                let mut heads = vec![0i64; bands];
                for i in 0..nq {
                    let start = hits.len();
                    if core::fold_row(&src[i * p..(i + 1) * p], &mut q) {
                        core::band_keys_into(&q, table.rows, &mut heads);
                        table.heads(&mut heads);
                        table.stamp += 1;
                        walk_ranked(table, sig, meta, &heads, &q, min_est, &mut hits, None);
                        hits[start..].sort_unstable();
                    }
                    offsets[i + 1] = hits.len();
                }
                (offsets, hits)
            })
        };
        for i in 0..nq {
            out.append(hits_list(
                py,
                &hits[offsets[i]..offsets[i + 1]],
                &self.keys,
                p,
            )?)?;
        }
        Ok(out)
    }

    /// The unranked candidates of every row of ``values`` (``(k, num_perm)``), as lists of
    /// keys (exact mode: of the indexed width).
    fn _candidate_lists<'py>(
        &mut self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.ready()?;
        let src = self.check_values(values)?;
        let src = src.as_slice();
        let p = self.num_perm;
        let out = PyList::empty(py);
        for i in 0..src.len() / p {
            if self.n == 0 {
                out.append(PyList::empty(py))?;
                continue;
            }
            self.unranked(&src[i * p..(i + 1) * p]);
            out.append(self.found_keys(py)?)?;
        }
        Ok(out)
    }

    /// The rows not removed, in insertion order: ``(keys, slots, states, rows)`` (slots
    /// folded to uint32 in estimate mode, raw uint64 in exact mode).
    fn _live<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.ready()?;
        let live: Vec<usize> = (0..self.n).filter(|&r| self.meta[r] as u8 != 0).collect();
        let keys = PyList::new(py, live.iter().map(|&r| self.keys[r].bind(py)))?;
        let slots = if self.exact {
            Self::rows_array(py, &self.raw, &live, self.num_perm)?.into_any()
        } else {
            Self::rows_array(py, &self.sig, &live, self.num_perm)?.into_any()
        };
        let state: Vec<u8> = live.iter().map(|&r| self.meta[r] as u8).collect();
        let rows: Vec<i64> = live.iter().map(|&r| r as i64).collect();
        PyTuple::new(
            py,
            [
                keys.into_any(),
                slots,
                PyArray1::from_vec(py, state).into_any(),
                PyArray1::from_vec(py, rows).into_any(),
            ],
        )
    }

    /// Copies of the folded slots and the states of rows ``0.._n`` (estimate mode).
    #[allow(clippy::type_complexity)]
    fn _arrays<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray2<u32>>, Bound<'py, PyArray1<u8>>)> {
        self.ready()?;
        let all: Vec<usize> = (0..self.n).collect();
        let sig = Self::rows_array(py, &self.sig, &all, self.num_perm)?;
        Ok((sig, PyArray1::from_vec(py, self.states())))
    }

    /// Drop removed rows (renumbering the rest) once they are a quarter of the index.
    fn _maybe_compact(&mut self, py: Python<'_>) -> PyResult<()> {
        self.ready()?;
        if self.dead <= 64.max(self.n / 4) {
            return Ok(());
        }
        self.compact(py)
    }

    /// Rows from saved ones: ``keys`` (a list), their slots ``sig`` (``(len(keys),
    /// num_perm)``: uint32 folded, or the raw slots in exact mode) and ``state`` (uint8);
    /// the live rows' band keys are filed in order.
    fn _restore(
        &mut self,
        py: Python<'_>,
        keys: &Bound<'_, PyList>,
        sig: &Bound<'_, PyAny>,
        state: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.ready()?;
        let rows = self.table.rows;
        self.clear_rows(py, rows);
        let count = keys.len();
        let (values, _) = slots(sig)?;
        let values = values.as_slice();
        let (st, _) = slots(state)?;
        let st: Vec<u8> = st.as_slice().iter().map(|&v| v as u8).collect();
        if values.len() < count * self.num_perm || st.len() < count {
            return Err(PyValueError::new_err(
                "saved rows are shorter than their keys",
            ));
        }
        let keys: Vec<Py<PyAny>> = keys.iter().map(Bound::unbind).collect();
        self.restore(py, keys, values, &st)
    }

    /// The pickled state: the same names (``_sig``, ``_state``, ``_tab``, ``_keys``, ``_row``,
    /// ``_n``, ``_dead``, ``_params``) as the numpy twin's and earlier versions' pickles.
    fn _dump<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.ready()?;
        let out = PyDict::new(py);
        let all: Vec<usize> = (0..self.n).collect();
        if self.exact {
            out.set_item(
                "_raw",
                Self::rows_array(py, &self.raw, &all, self.num_perm)?,
            )?;
        } else {
            out.set_item(
                "_sig",
                Self::rows_array(py, &self.sig, &all, self.num_perm)?,
            )?;
        }
        out.set_item("_state", PyArray1::from_vec(py, self.states()))?;
        // (the query stamp restarts at 0 with fresh marks)
        out.set_item("_tab", PyArray1::from_vec(py, self.table.to_tab()))?;
        out.set_item(
            "_keys",
            PyList::new(py, self.keys.iter().map(|k| k.bind(py)))?,
        )?;
        out.set_item("_row", self.row.bind(py).copy()?)?;
        out.set_item("_n", self.n)?;
        out.set_item("_dead", self.dead)?;
        out.set_item("_params", self.get_params(py))?;
        out.set_item("_width", self.width)?;
        Ok(out)
    }

    /// Set the rows and the table from :meth:`_dump`'s dict (or an earlier version's
    /// pickled ``LSHIndex`` state, whose arrays may hold more rows than ``_n``).
    fn _load(&mut self, py: Python<'_>, state: &Bound<'_, PyDict>) -> PyResult<()> {
        self.ready()?;
        let get = |name: &str| -> PyResult<Bound<'_, PyAny>> {
            state
                .get_item(name)?
                .ok_or_else(|| PyValueError::new_err(format!("pickled index lacks {name}")))
        };
        let n: usize = get("_n")?.extract()?;
        let p = self.num_perm;
        let rows = self.table.rows;
        self.clear_rows(py, rows);
        self.reserve(n);
        let (values, _) = slots(&get(if self.exact { "_raw" } else { "_sig" })?)?;
        let values = values.as_slice();
        let (st, _) = slots(&get("_state")?)?;
        let st = st.as_slice();
        if values.len() < n * p || st.len() < n {
            return Err(PyValueError::new_err(
                "pickled index rows are shorter than _n",
            ));
        }
        for r in 0..n {
            let src = &values[r * p..(r + 1) * p];
            if self.exact {
                self.raw.push().copy_from_slice(src);
            } else {
                for (d, &v) in self.sig.push().iter_mut().zip(src) {
                    *d = v as u32;
                }
            }
        }
        self.meta.extend(st[..n].iter().map(|&v| v as u8 as u64));
        let tab = get("_tab")?.extract::<numpy::PyReadonlyArray1<'_, i64>>()?;
        let table = Table::from_tab(tab.as_slice()?)
            .filter(|t| t.bands == self.bands && t.rows == rows)
            .ok_or_else(|| PyValueError::new_err("pickled index has a malformed table"))?;
        self.table = table;
        self.table.stamp = 0;
        let keys = get("_keys")?;
        self.keys = keys
            .try_iter()?
            .take(n)
            .map(|k| k.map(Bound::unbind))
            .collect::<PyResult<_>>()?;
        if self.keys.len() != n {
            return Err(PyValueError::new_err(
                "pickled index has fewer keys than _n",
            ));
        }
        self.track_keys(py);
        self.row = get("_row")?.cast::<PyDict>()?.copy()?.unbind();
        self.n = n;
        self.dead = get("_dead")?.extract()?;
        self.params = get("_params")?.extract()?;
        if let Some(w) = state.get_item("_width")? {
            self.width = w.extract()?;
        }
        Ok(())
    }

    /// Bytes of the rows' arrays and the table (not the keys and their dict).
    fn _nbytes(&self) -> usize {
        let width = if self.exact { 8 } else { 4 };
        let (slots, capacity) = (self.table.slot_count(), self.table.capacity());
        self.cap * (self.num_perm * width + 1 + 8)
            + core::table_len(slots as usize, capacity as usize, core::HEADER) * 8
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.row)?;
        for &r in &self.gc_rows {
            visit.call(&self.keys[r])?;
        }
        if let Some(t) = &self.sketch_type {
            visit.call(t)?;
        }
        if let Some((s, p)) = &self.params {
            visit.call(s)?;
            visit.call(p)?;
        }
        if let Some((m, hv)) = &self.last_sketch {
            visit.call(m)?;
            visit.call(hv)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.keys.clear();
        self.gc_rows.clear();
        self.sketch_type = None;
        self.members = None;
        self.params = None;
        self.last_sketch = None;
        Python::attach(|py| self.row = PyDict::new(py).unbind());
    }
}

/// `(key, estimate)` of each hit `(num_perm - equal slots, row)`, as a list.
fn hits_list<'py>(
    py: Python<'py>,
    hits: &[(usize, usize)],
    keys: &[Py<PyAny>],
    num_perm: usize,
) -> PyResult<Bound<'py, PyList>> {
    // (the list and its tuples built in place: a query's result is its whole cost per hit)
    let list = unsafe { pyo3::ffi::PyList_New(hits.len() as pyo3::ffi::Py_ssize_t) };
    // SAFETY: a new reference (or NULL, raised as the error)
    let list = unsafe { Bound::from_owned_ptr_or_err(py, list)? };
    for (i, &(d, r)) in hits.iter().enumerate() {
        let est = PyFloat::new(py, core::estimate(d, num_perm));
        let pair = PyTuple::new(py, [keys[r].bind(py).clone(), est.into_any()])?;
        // SAFETY: `list` is new, of `hits.len()` empty items; SET_ITEM steals the reference
        unsafe {
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as pyo3::ffi::Py_ssize_t, pair.into_ptr())
        };
    }
    Ok(unsafe { list.cast_into_unchecked::<PyList>() })
}

/// The slot width of a 1-D uint32 or uint64 array of `num_perm` slots, else None.
fn exact_width(values: &Bound<'_, PyAny>, num_perm: usize) -> Option<usize> {
    let a = values.cast::<PyUntypedArray>().ok()?;
    if a.ndim() != 1 || a.len() != num_perm {
        return None;
    }
    let dtype = a.dtype();
    let width = dtype.itemsize();
    (dtype.kind() == b'u' && (width == 4 || width == 8)).then_some(width)
}
