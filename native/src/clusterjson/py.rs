//! Bindings of the clusterjson family: the names of `neardup._kernels.clusterjson`.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};

use super::core;

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cluster_lines, m)?)?;
    Ok(())
}
