//! Bindings of the datasketch family: the names of `neardup._kernels.datasketch`.
//!
//! The token lists are read in place, the GIL held: each token's bytes (a `bytes` object's
//! buffer, a `str`'s UTF-8) are copied once, straight into the token's padded SHA-1 block
//! (the copy SHA-1 needs anyway), so no reference to a token is kept. The blocks are then
//! hashed and the permutations applied with the GIL released, `CHUNK` tokens at a time.
//! Where the AVX-512 lanes are the SHA-1 path, a run of one-block tokens hashes each group
//! of sixteen blocks as soon as it is padded, the GIL held (~0.15 us a group): reading the
//! objects waits on memory and hashing on the vector units, and done together the one hides
//! the other.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple, PyType};

use super::core::{self, Scheme};

/// Tokens hashed per release of the GIL (their blocks, 64 bytes each, stay in the caches).
const CHUNK: usize = 1024;

const MSG_BYTES: &str = "tokens must be bytes for the SHA-1 hash; encode str tokens (e.g. \
     t.encode('utf-8')) or pass your own hash function";
const MSG_MIXED: &str = "tokens must be all bytes or all str (UTF-8 encoded); encode them \
     (e.g. t.encode('utf-8')) or pass your own hash function";

static INPUT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn input_error(py: Python<'_>, message: &str) -> PyErr {
    match INPUT_ERROR.import(py, "neardup.errors", "InputError") {
        Ok(class) => PyErr::from_type(class.clone(), message.to_string()),
        Err(err) => err,
    }
}

/// Tokens gathered for one release of the GIL, and the segments `(set, tokens)` they
/// belong to. Each token's bytes are copied as it is read (the GIL held), so no reference
/// to a token is kept: a token of at most 55 bytes straight into its padded SHA-1 block,
/// a longer one into `long`.
struct Batch {
    /// The padded blocks of the one-block tokens (`CHUNK` of them, `nb` used).
    blocks: Vec<core::Block>,
    nb: usize,
    /// Each block's token position in the batch (`CHUNK` of them, `nb` used).
    at: Vec<u32>,
    /// The longer tokens' bytes back to back, and `(position, start, end)` of each.
    long: Vec<u8>,
    long_at: Vec<(u32, usize, usize)>,
    /// Tokens in the batch.
    count: usize,
    segments: Vec<(usize, usize)>,
    hashes: Vec<u64>,
    block_hashes: Vec<u64>,
    saw_str: bool,
    saw_bytes: bool,
    text: bool,
    wide: bool,
    /// Whether the runs pad with AVX-512 BW masked loads and hash as they read (this CPU
    /// has AVX-512 F and BW, and its faster SHA-1 path is the AVX-512 lanes).
    masked: bool,
    /// Blocks already hashed into `block_hashes` (whole groups, by the runs).
    hashed: usize,
}

/// Items read ahead of the one being read: their objects are asked for early, so that the
/// loads of a token's type, size and bytes find them in the cache.
const AHEAD: usize = 32;

/// A run of exact `bytes` (or, when `text`, exact `str`) tokens of at most one block each,
/// read straight off a list into their padded blocks.
struct Run {
    list: *mut pyo3::ffi::PyObject,
    /// The list's length.
    n: usize,
    /// `PyBytes_Type` or `PyUnicode_Type`: the run stops at any other type.
    kind: *mut pyo3::ffi::PyTypeObject,
    text: bool,
    blocks: *mut core::Block,
    at: *mut u32,
    /// The token hashes of the blocks (`CHUNK` of them), and `sha1_hash64` or `sha1_hash32`.
    hashes: *mut u64,
    wide: bool,
}

impl Run {
    /// Read items `j..` into blocks `nb..` (token positions `count..`) until the list ends,
    /// the batch is full, or an item is not of the run's kind or longer than one block;
    /// returns the new `(j, nb, count, hashed)`. `masked`: pad with AVX-512 BW masked loads
    /// and hash each group of blocks `hashed..` as soon as it is padded (the SHA-1 of one
    /// group runs while the loads of the next tokens, prefetched, are in flight: reading
    /// the objects is bound by memory, hashing by the vector units).
    ///
    /// # Safety
    /// The GIL is held, `list` is a list of length `n`, `j <= n`, and `blocks` and `at`
    /// hold `CHUNK` entries with `nb <= count <= CHUNK`; `masked` only where
    /// [`core::masked_available`].
    #[inline(always)]
    unsafe fn go(&self, masked: bool, at: Cursor) -> Cursor {
        #[cfg(target_arch = "x86_64")]
        if masked {
            // SAFETY: the caller's promises, and the CPU's features
            return unsafe { self.go_avx512(at) };
        }
        // SAFETY: the caller's promises
        unsafe { self.go_with::<false>(at) }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn go_avx512(&self, at: Cursor) -> Cursor {
        // SAFETY: as for `go`
        unsafe { self.go_with::<true>(at) }
    }

    #[inline(always)]
    unsafe fn go_with<const MASKED: bool>(&self, at: Cursor) -> Cursor {
        let Cursor {
            mut j,
            mut nb,
            mut count,
            mut hashed,
        } = at;
        use pyo3::ffi;
        let (lp, n) = (self.list, self.n);
        while j < n && count < CHUNK {
            // SAFETY: `j < n`, the list's length with the GIL held; a borrowed item
            let item = unsafe { ffi::PyList_GET_ITEM(lp, j as _) };
            #[cfg(target_arch = "x86_64")]
            if j + AHEAD < n {
                // SAFETY: as above; a prefetch of the item's object reads nothing
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    let next = ffi::PyList_GET_ITEM(lp, (j + AHEAD) as _) as *const i8;
                    _mm_prefetch::<_MM_HINT_T0>(next);
                    _mm_prefetch::<_MM_HINT_T0>(next.wrapping_add(64));
                }
            }
            // SAFETY: a live object
            if unsafe { ffi::Py_TYPE(item) } != self.kind {
                break;
            }
            let (data, len) = if self.text {
                let mut size: ffi::Py_ssize_t = 0;
                // SAFETY: an exact `str`: its UTF-8 (its own bytes when ASCII, else
                // cached in it), valid while it lives
                let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(item, &mut size) };
                if data.is_null() {
                    // lone surrogates: the general path encodes them
                    // SAFETY: the GIL is held; the error just raised is dropped
                    unsafe { ffi::PyErr_Clear() };
                    break;
                }
                (data.cast::<u8>(), size as usize)
            } else {
                // SAFETY: an exact `bytes` object: its immutable buffer and size
                unsafe {
                    (
                        ffi::PyBytes_AS_STRING(item).cast::<u8>(),
                        ffi::Py_SIZE(item) as usize,
                    )
                }
            };
            if len > core::ONE_BLOCK {
                break;
            }
            // SAFETY: `len` readable bytes at `data`; `nb <= count < CHUNK`, the length of
            // `blocks` and `at`; MASKED only where the caller checked the CPU
            unsafe {
                let block = &mut *self.blocks.add(nb);
                #[cfg(target_arch = "x86_64")]
                if MASKED {
                    core::pad_masked(data, len, block);
                } else {
                    core::pad_raw(data, len, block);
                }
                #[cfg(not(target_arch = "x86_64"))]
                core::pad_raw(data, len, block);
                *self.at.add(nb) = count as u32;
            }
            nb += 1;
            count += 1;
            j += 1;
            #[cfg(target_arch = "x86_64")]
            if MASKED && nb - hashed >= core::GROUP {
                // SAFETY: blocks `hashed..hashed + GROUP` are padded and within CHUNK, and
                // so are their hashes; MASKED only where the CPU has AVX-512 F and BW
                unsafe {
                    core::hash_group(
                        &*self.blocks.add(hashed).cast::<[core::Block; core::GROUP]>(),
                        self.wide,
                        &mut *self.hashes.add(hashed).cast::<[u64; core::GROUP]>(),
                    );
                }
                hashed += core::GROUP;
            }
        }
        Cursor {
            j,
            nb,
            count,
            hashed,
        }
    }
}

/// Where a [`Run`] starts and ends: the list item `j`, the blocks padded (`nb`) and hashed
/// (`hashed`, in whole groups), and the tokens in the batch (`count`).
#[derive(Clone, Copy)]
struct Cursor {
    j: usize,
    nb: usize,
    count: usize,
    hashed: usize,
}

/// A thread's buffers of a finished [`Batch`] (blocks, positions, block hashes), kept for its
/// next one: a call of a few tokens (`update`) then costs no 76 KB to allocate and zero.
/// Every entry is written before it is read, so what a buffer held before does not matter.
type Spare = (Vec<core::Block>, Vec<u32>, Vec<u64>);

thread_local! {
    static SPARE: std::cell::RefCell<Option<Spare>> = const { std::cell::RefCell::new(None) };
}

impl Drop for Batch {
    fn drop(&mut self) {
        let bufs = (
            std::mem::take(&mut self.blocks),
            std::mem::take(&mut self.at),
            std::mem::take(&mut self.block_hashes),
        );
        // (a thread being torn down has no slot left: the buffers are then just freed)
        let _ = SPARE.try_with(|spare| {
            if let Ok(mut slot) = spare.try_borrow_mut() {
                *slot = Some(bufs);
            }
        });
    }
}

impl Batch {
    fn new(text: bool, wide: bool) -> Self {
        let (blocks, at, block_hashes) = SPARE
            .with(|spare| spare.borrow_mut().take())
            .unwrap_or_else(|| (vec![[0u8; 64]; CHUNK], vec![0; CHUNK], vec![0u64; CHUNK]));
        Batch {
            blocks,
            nb: 0,
            at,
            long: Vec::new(),
            long_at: Vec::new(),
            count: 0,
            segments: Vec::new(),
            hashes: Vec::new(),
            block_hashes,
            saw_str: false,
            saw_bytes: false,
            text,
            wide,
            masked: core::masked_available() && core::path() == core::Path::Avx512,
            hashed: 0,
        }
    }

    /// Add the `len` bytes at `ptr` as the next token (copied now).
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `len` bytes.
    #[inline(always)]
    unsafe fn add_raw(&mut self, ptr: *const u8, len: usize) {
        let pos = self.count as u32;
        if len <= core::ONE_BLOCK {
            // SAFETY: `nb < CHUNK` (a full batch is flushed before the next token), and the
            // caller's promise on `ptr`
            unsafe { core::pad_raw(ptr, len, self.blocks.get_unchecked_mut(self.nb)) };
            self.at[self.nb] = pos;
            self.nb += 1;
        } else {
            let start = self.long.len();
            // SAFETY: the caller's promise on `ptr`
            self.long
                .extend_from_slice(unsafe { std::slice::from_raw_parts(ptr, len) });
            self.long_at.push((pos, start, self.long.len()));
        }
        self.count += 1;
    }

    fn add_bytes(&mut self, data: &[u8]) {
        // SAFETY: a slice's bytes
        unsafe { self.add_raw(data.as_ptr(), data.len()) }
    }

    /// Add one token of set `set`; true when the batch is full (call `flush`). The errors
    /// of the numpy twin's `_Tokens.raw`.
    fn push(&mut self, set: usize, token: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.token(token)?;
        Ok(self.counted(set))
    }

    /// Count the token just added in set `set`'s segment; true when the batch is full.
    #[inline(always)]
    fn counted(&mut self, set: usize) -> bool {
        match self.segments.last_mut() {
            Some((s, count)) if *s == set => *count += 1,
            _ => self.segments.push((set, 1)),
        }
        self.count >= CHUNK
    }

    /// Add the tokens of the list `list` (set `set`), flushing into `sink` when full. An
    /// exact `bytes` token of one block (an exact `str` when `text`) is read straight off
    /// the list (a type check, its size and its bytes padded into its block); any other goes
    /// through `push`.
    fn push_list<F>(
        &mut self,
        py: Python<'_>,
        set: usize,
        list: &Bound<'_, PyList>,
        sink: &mut F,
    ) -> PyResult<()>
    where
        F: FnMut(usize, &[u64]) + Send,
    {
        use pyo3::ffi;
        let bytes_type = std::ptr::addr_of_mut!(ffi::PyBytes_Type);
        let str_type = std::ptr::addr_of_mut!(ffi::PyUnicode_Type);
        let lp = list.as_ptr();
        let mut j = 0;
        // (the length is read again after each run and each other token: a flush releases
        // the GIL, and a token's `encode` may run Python code)
        loop {
            // SAFETY: a list, read with the GIL held
            let n = unsafe { ffi::PyList_GET_SIZE(lp) } as usize;
            if j >= n {
                break;
            }
            // the kind of a run: what the batch took so far, else the next token's
            // SAFETY: `j < n`, the list's length with the GIL held; a live borrowed item
            let first = unsafe { ffi::Py_TYPE(ffi::PyList_GET_ITEM(lp, j as _)) };
            let run_type = if self.saw_str || (!self.saw_bytes && first == str_type) {
                if self.text && !self.saw_bytes {
                    str_type
                } else {
                    std::ptr::null_mut()
                }
            } else {
                bytes_type
            };
            if !run_type.is_null() {
                // a run of exact `bytes` (or `str`) tokens of one block each, the batch's
                // counters in registers; it stops before any other token and when the batch
                // is full
                let text = run_type == str_type;
                let reader = Run {
                    list: lp,
                    n,
                    kind: run_type,
                    text,
                    blocks: self.blocks.as_mut_ptr(),
                    at: self.at.as_mut_ptr(),
                    hashes: self.block_hashes.as_mut_ptr(),
                    wide: self.wide,
                };
                let start = Cursor {
                    j,
                    nb: self.nb,
                    count: self.count,
                    hashed: self.hashed,
                };
                // SAFETY: a list read with the GIL held, `j < n` its length; `blocks`, `at`
                // and `block_hashes` hold CHUNK entries and `hashed <= nb <= count < CHUNK`
                let end = unsafe { reader.go(self.masked, start) };
                let (nb, count) = (end.nb, end.count);
                j = end.j;
                self.hashed = end.hashed;
                let run = count - self.count;
                if run > 0 {
                    if text {
                        self.saw_str = true;
                    } else {
                        self.saw_bytes = true;
                    }
                    self.nb = nb;
                    self.count = count;
                    match self.segments.last_mut() {
                        Some((s, c)) if *s == set => *c += run,
                        _ => self.segments.push((set, run)),
                    }
                }
                if count >= CHUNK {
                    self.flush(py, &mut *sink);
                    continue;
                }
                if j >= n {
                    break;
                }
            }
            // any other token: a `str`, a long `bytes`, a subclass, another type
            // SAFETY: `j` is below the list's length, read with the GIL held; the item is a
            // borrowed reference, upgraded to a held one before any Python code runs
            let token = unsafe { Bound::from_borrowed_ptr(py, ffi::PyList_GET_ITEM(lp, j as _)) };
            if self.push(set, &token)? {
                self.flush(py, &mut *sink);
            }
            j += 1;
        }
        Ok(())
    }

    fn token(&mut self, token: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = token.py();
        if let Ok(b) = token.cast::<PyBytes>() {
            self.saw_bytes = true;
            self.mixed(py)?;
            self.add_bytes(b.as_bytes());
            return Ok(());
        }
        if let Ok(s) = token.cast::<PyString>() {
            if !self.text {
                return Err(input_error(py, MSG_BYTES));
            }
            self.saw_str = true;
            self.mixed(py)?;
            match s.to_str() {
                Ok(text) => self.add_bytes(text.as_bytes()),
                Err(_) => {
                    // lone surrogates: their UTF-8 as Python's "surrogatepass" writes it
                    let encoded = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
                    self.add_bytes(encoded.cast::<PyBytes>()?.as_bytes());
                }
            }
            return Ok(());
        }
        let data = if let Ok(b) = token.cast::<PyByteArray>() {
            b.to_vec()
        } else {
            match buffer_bytes(token) {
                Some(data) => data,
                None => {
                    let msg = if self.text { MSG_MIXED } else { MSG_BYTES };
                    return Err(input_error(py, msg));
                }
            }
        };
        self.saw_bytes = true;
        self.mixed(py)?;
        self.add_bytes(&data);
        Ok(())
    }

    fn mixed(&self, py: Python<'_>) -> PyResult<()> {
        if self.saw_str && self.saw_bytes {
            return Err(input_error(py, MSG_MIXED));
        }
        Ok(())
    }

    /// Hash the gathered tokens and hand each segment's hashes to `sink(set, hashes)`, the
    /// GIL released; then forget them.
    fn flush<F>(&mut self, py: Python<'_>, mut sink: F)
    where
        F: FnMut(usize, &[u64]) + Send,
    {
        let count = self.count;
        let wide = self.wide;
        let hashed = self.hashed;
        let (blocks, at, bh) = (
            &self.blocks[..self.nb],
            &self.at[..self.nb],
            &mut self.block_hashes,
        );
        let (long, long_at, segments, hashes) =
            (&self.long, &self.long_at, &self.segments, &mut self.hashes);
        let mut work = || {
            // the blocks the runs did not hash
            core::sha1_blocks(&blocks[hashed..], wide, &mut bh[hashed..blocks.len()]);
            let hashes: &[u64] = if long_at.is_empty() {
                // every token is a block, in order
                &bh[..count]
            } else {
                // (sized on first use: most batches have no long token and never need it)
                if hashes.len() < count {
                    hashes.resize(CHUNK, 0);
                }
                let hashes = &mut hashes[..count];
                for (&pos, &h) in at.iter().zip(bh.iter()) {
                    hashes[pos as usize] = h;
                }
                for &(pos, s, e) in long_at {
                    hashes[pos as usize] = core::sha1_prefix(&long[s..e], wide);
                }
                hashes
            };
            let mut from = 0;
            for &(set, n) in segments {
                sink(set, &hashes[from..from + n]);
                from += n;
            }
        };
        if count >= 64 {
            py.detach(work);
        } else {
            work();
        }
        self.nb = 0;
        self.hashed = 0;
        self.count = 0;
        self.long.clear();
        self.long_at.clear();
        self.segments.clear();
    }
}

/// The bytes of a buffer-protocol object (``memoryview(token).tobytes()``), or None.
fn buffer_bytes(token: &Bound<'_, PyAny>) -> Option<Vec<u8>> {
    let py = token.py();
    let view = py
        .import("builtins")
        .ok()?
        .getattr("memoryview")
        .ok()?
        .call1((token,))
        .ok()?;
    let raw = view.call_method0("tobytes").ok()?;
    Some(raw.cast::<PyBytes>().ok()?.as_bytes().to_vec())
}

/// The items of a list or tuple without copying, else of any iterable.
fn items<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = obj.cast::<PyList>() {
        return Ok(list.iter().collect());
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return Ok(tuple.iter().collect());
    }
    obj.try_iter()?.collect()
}

fn scheme_of(name: &str) -> PyResult<Scheme> {
    Scheme::parse(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown scheme '{name}'; use affine32, affine64 or legacy"
        ))
    })
}

/// The permutation parameters as `u32` (affine32) or `u64` slices, checked.
enum Params {
    Narrow(Vec<u32>, Vec<u32>),
    Wide(Vec<u64>, Vec<u64>),
}

impl Params {
    fn len(&self) -> usize {
        match self {
            Params::Narrow(a, _) => a.len(),
            Params::Wide(a, _) => a.len(),
        }
    }
}

fn params(scheme: Scheme, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Params> {
    let want = if scheme == Scheme::Affine32 {
        "uint32"
    } else {
        "uint64"
    };
    let wrong = || {
        PyTypeError::new_err(format!(
            "permutation parameters of scheme {} must be 1-D {want} arrays of one length",
            name(scheme)
        ))
    };
    let p = if scheme == Scheme::Affine32 {
        let a = a.cast::<PyArray1<u32>>().map_err(|_| wrong())?;
        let b = b.cast::<PyArray1<u32>>().map_err(|_| wrong())?;
        Params::Narrow(
            a.readonly().as_array().to_vec(),
            b.readonly().as_array().to_vec(),
        )
    } else {
        let a = a.cast::<PyArray1<u64>>().map_err(|_| wrong())?;
        let b = b.cast::<PyArray1<u64>>().map_err(|_| wrong())?;
        Params::Wide(
            a.readonly().as_array().to_vec(),
            b.readonly().as_array().to_vec(),
        )
    };
    let same = match &p {
        Params::Narrow(a, b) => a.len() == b.len(),
        Params::Wide(a, b) => a.len() == b.len(),
    };
    if !same || p.len() == 0 {
        return Err(wrong());
    }
    Ok(p)
}

fn name(scheme: Scheme) -> &'static str {
    match scheme {
        Scheme::Affine32 => "affine32",
        Scheme::Affine64 => "affine64",
        Scheme::Legacy => "legacy",
    }
}

/// Fold the token hashes `hashes` into the slots `row` (u32 for affine32, else u64).
fn permute(scheme: Scheme, p: &Params, hashes: &[u64], row32: &mut [u32], row64: &mut [u64]) {
    match (scheme, p) {
        (Scheme::Affine32, Params::Narrow(a, b)) => core::affine32(hashes, a, b, row32),
        (Scheme::Affine64, Params::Wide(a, b)) => core::affine64(hashes, a, b, row64),
        (Scheme::Legacy, Params::Wide(a, b)) => core::legacy(hashes, a, b, row64),
        _ => unreachable!("params are checked against the scheme"),
    }
}

/// Iterate the items of a list or tuple (or any iterable), calling `each` on each.
fn each_item<'py, F>(obj: &Bound<'py, PyAny>, mut each: F) -> PyResult<()>
where
    F: FnMut(Bound<'py, PyAny>) -> PyResult<()>,
{
    if let Ok(list) = obj.cast::<PyList>() {
        return list.iter().try_for_each(each);
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return tuple.iter().try_for_each(each);
    }
    for item in obj.try_iter()? {
        each(item?)?;
    }
    Ok(())
}

/// Ask for the objects of the first `AHEAD` items of `set` if it is a list (a prefetch reads
/// nothing and cannot fault).
fn prefetch_head(set: &Bound<'_, PyAny>) {
    #[cfg(target_arch = "x86_64")]
    if let Ok(list) = set.cast::<PyList>() {
        use pyo3::ffi;
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let lp = list.as_ptr();
        // SAFETY: a list read with the GIL held, items below its length
        unsafe {
            let n = (ffi::PyList_GET_SIZE(lp) as usize).min(AHEAD);
            for k in 0..n {
                let item = ffi::PyList_GET_ITEM(lp, k as _) as *const i8;
                _mm_prefetch::<_MM_HINT_T0>(item);
                _mm_prefetch::<_MM_HINT_T0>(item.wrapping_add(64));
            }
        }
    }
}

/// Feed the tokens of `sets` (set `i` as segment `i`) through `batch` into `sink`.
fn feed<'py, F>(
    py: Python<'py>,
    sets: &[Bound<'py, PyAny>],
    batch: &mut Batch,
    sink: &mut F,
) -> PyResult<()>
where
    F: FnMut(usize, &[u64]) + Send,
{
    if let Some(first) = sets.first() {
        prefetch_head(first);
    }
    for (i, set) in sets.iter().enumerate() {
        if let Ok(list) = set.cast::<PyList>() {
            // the next list's first tokens (a run prefetches the rest as it reads): they
            // arrive while this list is read
            if let Some(next) = sets.get(i + 1) {
                prefetch_head(next);
            }
            batch.push_list(py, i, list, sink)?;
            continue;
        }
        each_item(set, |token| {
            if batch.push(i, &token)? {
                batch.flush(py, &mut *sink);
            }
            Ok(())
        })?;
    }
    batch.flush(py, &mut *sink);
    Ok(())
}

/// The slots of every token set: ``(len(sets), num_perm)``, uint32 for ``affine32`` and
/// uint64 otherwise, row ``i`` equal to datasketch's ``hashvalues`` after ``update_batch``
/// of set ``i`` with its default SHA-1 hash and the permutations ``(a, b)``. ``text``: str
/// tokens count as their UTF-8 bytes (else only bytes-like tokens are taken).
#[pyfunction]
fn sketch_sets<'py>(
    py: Python<'py>,
    sets: &Bound<'py, PyAny>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    scheme: &str,
    text: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let scheme = scheme_of(scheme)?;
    let p = params(scheme, a, b)?;
    let k = p.len();
    let sets = items(sets)?;
    let n = sets.len();
    let empty = scheme.empty();
    let mut batch = Batch::new(text, scheme.wide());
    if scheme == Scheme::Affine32 {
        let mut out = vec![empty as u32; n * k];
        let mut sink = |set: usize, h: &[u64]| {
            permute(scheme, &p, h, &mut out[set * k..(set + 1) * k], &mut []);
        };
        feed(py, &sets, &mut batch, &mut sink)?;
        Ok(PyArray1::from_vec(py, out).reshape([n, k])?.into_any())
    } else {
        let mut out = vec![empty; n * k];
        let mut sink = |set: usize, h: &[u64]| {
            permute(scheme, &p, h, &mut [], &mut out[set * k..(set + 1) * k]);
        };
        feed(py, &sets, &mut batch, &mut sink)?;
        Ok(PyArray1::from_vec(py, out).reshape([n, k])?.into_any())
    }
}

/// ``numpy.minimum(hashvalues, row)`` where ``row`` is the sketch of ``tokens`` (as
/// :func:`sketch_sets` makes it): a new array, datasketch's ``update_batch``. ``hashvalues``
/// must be a 1-D array of the scheme's dtype and ``num_perm`` slots.
#[pyfunction]
fn update<'py>(
    py: Python<'py>,
    hashvalues: &Bound<'py, PyAny>,
    tokens: &Bound<'py, PyAny>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    scheme: &str,
    text: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let scheme = scheme_of(scheme)?;
    let p = params(scheme, a, b)?;
    let k = p.len();
    let mut batch = Batch::new(text, scheme.wide());
    let mut all = Vec::new();
    let mut sink = |_: usize, h: &[u64]| all.extend_from_slice(h);
    feed(py, std::slice::from_ref(tokens), &mut batch, &mut sink)?;
    let wrong = || {
        PyTypeError::new_err(format!(
            "hashvalues of scheme {} must be a 1-D {} array of {k} slots",
            name(scheme),
            if scheme == Scheme::Affine32 {
                "uint32"
            } else {
                "uint64"
            }
        ))
    };
    if scheme == Scheme::Affine32 {
        let hv = hashvalues.cast::<PyArray1<u32>>().map_err(|_| wrong())?;
        let mut row = hv.readonly().as_array().to_vec();
        if row.len() != k {
            return Err(wrong());
        }
        permute(scheme, &p, &all, &mut row, &mut []);
        Ok(PyArray1::from_vec(py, row).into_any())
    } else {
        let hv = hashvalues.cast::<PyArray1<u64>>().map_err(|_| wrong())?;
        let mut row = hv.readonly().as_array().to_vec();
        if row.len() != k {
            return Err(wrong());
        }
        permute(scheme, &p, &all, &mut [], &mut row);
        Ok(PyArray1::from_vec(py, row).into_any())
    }
}

/// datasketch's ``sha1_hash64`` (``wide``) or ``sha1_hash32`` of every token, as uint64.
#[pyfunction]
fn sha1_tokens<'py>(
    py: Python<'py>,
    tokens: &Bound<'py, PyAny>,
    wide: bool,
    text: bool,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let mut batch = Batch::new(text, wide);
    let mut all = Vec::new();
    let mut sink = |_: usize, h: &[u64]| all.extend_from_slice(h);
    feed(py, std::slice::from_ref(tokens), &mut batch, &mut sink)?;
    Ok(PyArray1::from_vec(py, all))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sketch_sets, m)?)?;
    m.add_function(wrap_pyfunction!(update, m)?)?;
    m.add_function(wrap_pyfunction!(sha1_tokens, m)?)?;
    Ok(())
}
