//! Bindings of the idset family: the names of `neardup._kernels.idset`.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use super::core::{id_hash, Hashes};
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

    fn __len__(&self) -> usize {
        self.hashes.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<IdSet>()?;
    Ok(())
}
