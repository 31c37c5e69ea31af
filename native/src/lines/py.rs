//! Bindings of the lines family: the names of `neardup._kernels.lines`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::core;
use crate::arrays::{ranges, run_offsets as check_offsets, same_length, slice, slice2};

type I64Array<'py> = Bound<'py, PyArray1<i64>>;

/// ``(starts, ends, trimmed_starts, trimmed_ends, doc)`` of every line, in document order.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn line_spans<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<(
    I64Array<'py>,
    I64Array<'py>,
    I64Array<'py>,
    I64Array<'py>,
    I64Array<'py>,
)> {
    let (b, o) = (slice(&buf)?, slice(&offsets)?);
    check_offsets(b.len(), o)?;
    let s = py.detach(|| core::line_spans(b, o));
    Ok((
        s.starts.into_pyarray(py),
        s.ends.into_pyarray(py),
        s.trimmed_starts.into_pyarray(py),
        s.trimmed_ends.into_pyarray(py),
        s.doc.into_pyarray(py),
    ))
}

/// ``(buffer, offsets)``: each document's kept lines joined by ``\n``.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn kept_text<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    line_starts: PyReadonlyArray1<'py, i64>,
    line_ends: PyReadonlyArray1<'py, i64>,
    line_doc: PyReadonlyArray1<'py, i64>,
    keep_line: PyReadonlyArray1<'py, bool>,
) -> PyResult<(Bound<'py, PyArray1<u8>>, I64Array<'py>)> {
    let (b, o) = (slice(&buf)?, slice(&offsets)?);
    let (s, e, d, k) = (
        slice(&line_starts)?,
        slice(&line_ends)?,
        slice(&line_doc)?,
        slice(&keep_line)?,
    );
    check_offsets(b.len(), o)?;
    ranges(b.len(), s, e)?;
    same_length("line_starts and line_doc", s.len(), d.len())?;
    same_length("line_starts and keep_line", s.len(), k.len())?;
    let (out, out_off) = py.detach(|| core::kept_text(b, o.len() - 1, s, e, d, k));
    Ok((out.into_pyarray(py), out_off.into_pyarray(py)))
}

/// ``(buffer, offsets)``: the texts of ``docs`` as JSON strings, quotes included, each as
/// ``json.dumps(text, ensure_ascii=False)`` writes it.
#[pyfunction]
fn json_strings<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    docs: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Bound<'py, PyArray1<u8>>, I64Array<'py>)> {
    let (b, o, d) = (slice(&buf)?, slice(&offsets)?, slice(&docs)?);
    check_offsets(b.len(), o)?;
    let n_docs = o.len() as i64 - 1;
    if let Some(&bad) = d.iter().find(|&&x| x < 0 || x >= n_docs) {
        return Err(PyIndexError::new_err(format!(
            "document {bad} is out of range for {n_docs} documents"
        )));
    }
    let (out, out_off) = py.detach(|| core::json_strings(b, o, d));
    Ok((out.into_pyarray(py), out_off.into_pyarray(py)))
}

/// Each record ``changed[j]`` of ``lines`` that has a text span, its line replaced in place
/// by the line with the JSON string of its new text (``buf[offsets[k]:offsets[k + 1]]``);
/// returns the changed records without a span, left as they were (see
/// ``neardup._kernels.lines.splice_lines``).
#[pyfunction]
fn splice_lines<'py>(
    py: Python<'py>,
    lines: &Bound<'py, PyList>,
    spans: PyReadonlyArray2<'py, i64>,
    changed: PyReadonlyArray1<'py, i64>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<I64Array<'py>> {
    let (b, o, c) = (slice(&buf)?, slice(&offsets)?, slice(&changed)?);
    let (sp, rows, cols) = slice2(&spans)?;
    check_offsets(b.len(), o)?;
    let n = o.len() - 1;
    same_length("lines and offsets[1:]", lines.len(), n)?;
    same_length("spans and offsets[1:]", rows, n)?;
    if cols != 2 {
        return Err(PyValueError::new_err(format!(
            "spans must have two columns (start, end), got {cols}"
        )));
    }
    if let Some(&bad) = c.iter().find(|&&x| x < 0 || x as usize >= n) {
        return Err(PyIndexError::new_err(format!(
            "document {bad} is out of range for {n} documents"
        )));
    }
    let mut scratch = Vec::new();
    let mut left = Vec::new();
    for &k in c {
        let k = k as usize;
        let (a, e) = (sp[2 * k], sp[2 * k + 1]);
        if a < 0 {
            left.push(k as i64);
            continue;
        }
        let item = lines.get_item(k)?;
        let line = item.cast::<PyBytes>()?.as_bytes();
        if a as u64 > e as u64 || e as u64 > line.len() as u64 {
            return Err(PyValueError::new_err(format!(
                "record {k}: its text span {a}..{e} is not inside its line of {} bytes",
                line.len()
            )));
        }
        let text = &b[o[k] as usize..o[k + 1] as usize];
        core::splice_line(&mut scratch, line, a as usize, e as usize, text);
        lines.set_item(k, PyBytes::new(py, &scratch))?;
    }
    Ok(left.into_pyarray(py))
}

/// ``(changed, out, out_offsets, kept_lengths, bad)``: the documents that lose a unit and
/// their kept text as JSON strings (see ``neardup._kernels.lines.kept_json``).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn kept_json<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    drop: PyReadonlyArray1<'py, bool>,
    unit_off: PyReadonlyArray1<'py, i64>,
    paragraph: bool,
) -> PyResult<(
    I64Array<'py>,
    Bound<'py, PyArray1<u8>>,
    I64Array<'py>,
    I64Array<'py>,
    i64,
)> {
    let (b, o, dr, u) = (
        slice(&buf)?,
        slice(&offsets)?,
        slice(&drop)?,
        slice(&unit_off)?,
    );
    check_offsets(b.len(), o)?;
    if u.len() != o.len() || u.first() != Some(&0) || u.last() != Some(&(dr.len() as i64)) {
        let end = |x: Option<&i64>| x.map_or("None".to_string(), |v| v.to_string());
        return Err(PyValueError::new_err(format!(
            "unit_off must run from 0 to the {} units, one offset per document and one more \
             ({}), got {} from {} to {}",
            dr.len(),
            o.len(),
            u.len(),
            end(u.first()),
            end(u.last())
        )));
    }
    check_offsets(dr.len(), u)?;
    let r = py.detach(|| core::kept_json(b, o, dr, u, paragraph));
    Ok((
        r.changed.into_pyarray(py),
        r.out.into_pyarray(py),
        r.out_offsets.into_pyarray(py),
        r.kept_lengths.into_pyarray(py),
        r.bad,
    ))
}

/// Document frequencies of unit hashes (a hash map, 30 to 60 bytes per distinct hash).
#[pyclass(module = "neardup._native.lines")]
#[derive(Default)]
struct UnitTable {
    table: core::UnitTable,
}

#[pymethods]
impl UnitTable {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Count each ``(doc, hash)`` pair once (``docs``: non-decreasing over all calls, a
    /// document's pairs in one call).
    fn add(
        &mut self,
        py: Python<'_>,
        hashes: PyReadonlyArray1<'_, u64>,
        docs: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<()> {
        let (h, d) = (slice(&hashes)?, slice(&docs)?);
        same_length("hashes and docs", h.len(), d.len())?;
        let table = &mut self.table;
        py.detach(|| table.add(h, d));
        Ok(())
    }

    /// The document count of each hash (0 for unseen).
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        hashes: PyReadonlyArray1<'py, u64>,
    ) -> PyResult<I64Array<'py>> {
        let h = slice(&hashes)?;
        let table = &self.table;
        let out = py.detach(|| table.lookup(h));
        Ok(out.into_pyarray(py))
    }

    /// How many hashes occur in at least ``n`` documents.
    fn at_least(&self, n: i64) -> usize {
        self.table.at_least(n)
    }

    fn __len__(&self) -> usize {
        self.table.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(line_spans, m)?)?;
    m.add_function(wrap_pyfunction!(kept_text, m)?)?;
    m.add_function(wrap_pyfunction!(json_strings, m)?)?;
    m.add_function(wrap_pyfunction!(kept_json, m)?)?;
    m.add_function(wrap_pyfunction!(splice_lines, m)?)?;
    m.add_class::<UnitTable>()?;
    Ok(())
}
