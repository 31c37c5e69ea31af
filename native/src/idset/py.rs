//! Bindings of the idset family: the names of `neardup._kernels.idset`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use super::core::{id_hash, Hashes};
use crate::arrays::slice;
use crate::errors::config_error;

/// The 64-bit hashes of the ids added so far (XXH3-64 of their UTF-8 bytes, lone surrogates
/// passed through as Python's ``surrogatepass`` writes them).
#[pyclass(module = "neardup._native.idset")]
struct IdSet {
    hashes: Hashes,
}

/// The hash of one id (a `str`), else the twin's `ConfigError`.
fn hash_of(item: &Bound<'_, PyAny>) -> PyResult<u64> {
    let Ok(s) = item.cast::<PyString>() else {
        return Err(config_error(
            item.py(),
            format!("ids must be strings, got {}", item.get_type().name()?),
        ));
    };
    match s.to_str() {
        Ok(text) => Ok(id_hash(text.as_bytes())),
        Err(_) => {
            // lone surrogates: the bytes of str.encode("utf-8", "surrogatepass")
            let raw = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
            Ok(id_hash(raw.cast::<PyBytes>()?.as_bytes()))
        }
    }
}

#[pymethods]
impl IdSet {
    #[new]
    fn new() -> Self {
        IdSet {
            hashes: Hashes::default(),
        }
    }

    /// Add ``ids`` in order. Returns -1 when every hash was new, else the place in ``ids``
    /// of the first id whose hash was seen before (in an earlier call or earlier in
    /// ``ids``); the ids before it are added, it and the ids after it are not.
    fn add(&mut self, ids: &Bound<'_, PyAny>) -> PyResult<i64> {
        if let Ok(list) = ids.cast::<PyList>() {
            for (k, item) in list.iter().enumerate() {
                if !self.hashes.insert(hash_of(&item)?) {
                    return Ok(k as i64);
                }
            }
            return Ok(-1);
        }
        for (k, item) in ids.try_iter()?.enumerate() {
            if !self.hashes.insert(hash_of(&item?)?) {
                return Ok(k as i64);
            }
        }
        Ok(-1)
    }

    /// Add the ids of ``hashes`` (what ``hash_ids`` gave), as ``add`` adds ids, with the GIL
    /// released.
    fn add_hashes(&mut self, py: Python<'_>, hashes: PyReadonlyArray1<'_, u64>) -> PyResult<i64> {
        let h = slice(&hashes)?;
        let set = &mut self.hashes;
        Ok(py.detach(|| set.insert_all(h)))
    }

    fn __len__(&self) -> usize {
        self.hashes.len()
    }
}

/// The 64-bit hash of each of ``ids`` (what ``IdSet.add`` keeps), so that the ids can be
/// hashed on one thread and added on another (``IdSet.add_hashes``).
#[pyfunction]
fn hash_ids<'py>(py: Python<'py>, ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let mut out: Vec<u64> = Vec::new();
    if let Ok(list) = ids.cast::<PyList>() {
        out.reserve(list.len());
        for item in list.iter() {
            out.push(hash_of(&item)?);
        }
    } else {
        for item in ids.try_iter()? {
            out.push(hash_of(&item?)?);
        }
    }
    Ok(out.into_pyarray(py))
}

/// The hash of each id of a packed batch, id ``k`` being ``buf[offsets[k]:offsets[k + 1]]``
/// (its UTF-8 bytes): what ``hash_ids`` gives for the decoded ids, with no string made.
#[pyfunction]
fn hash_packed_ids<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let (b, o) = (slice(&buf)?, slice(&offsets)?);
    let ok = !o.is_empty()
        && o[0] >= 0
        && o.windows(2).all(|w| w[0] <= w[1])
        && o[o.len() - 1] as u64 <= b.len() as u64;
    if !ok {
        return Err(config_error(
            py,
            "offsets must start at 0 or later, never decrease and end within the buffer; \
             pass the ids' boundaries"
                .to_string(),
        ));
    }
    let out: Vec<u64> = py.detach(|| {
        o.windows(2)
            .map(|w| id_hash(&b[w[0] as usize..w[1] as usize]))
            .collect()
    });
    Ok(out.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<IdSet>()?;
    m.add_function(wrap_pyfunction!(hash_ids, m)?)?;
    m.add_function(wrap_pyfunction!(hash_packed_ids, m)?)?;
    Ok(())
}
