//! Bindings of the canonicalize family: the names of
//! `neardup._kernels.canonicalize`.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::core;
use crate::arrays::uint8_mask;
use crate::arrays::{code_point_table, slice};
use crate::text::py::decode_error;

type Array<'py, T> = Bound<'py, PyArray1<T>>;

/// NFKC o casefold o NFKC of every document, after dropping the code points whose flags meet
/// ``strip_mask`` (see ``neardup._kernels.canonicalize.canonicalize``); returns
/// ``(out_buf, out_offsets, status)``.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn canonicalize<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    flags: PyReadonlyArray1<'py, u8>,
    strip_mask: i64,
    ccc: PyReadonlyArray1<'py, u8>,
    dec_off: PyReadonlyArray1<'py, i32>,
    dec_data: PyReadonlyArray1<'py, i32>,
    cf_off: PyReadonlyArray1<'py, i32>,
    cf_data: PyReadonlyArray1<'py, i32>,
    one_off: PyReadonlyArray1<'py, i32>,
    one_data: PyReadonlyArray1<'py, i32>,
    pair_keys: PyReadonlyArray1<'py, i64>,
    pair_vals: PyReadonlyArray1<'py, i32>,
    lower_ascii: bool,
    fallback_from: i64,
) -> PyResult<(Array<'py, u8>, Array<'py, i64>, Array<'py, u8>)> {
    let (b, o) = (slice(&buf)?, slice(&offsets)?);
    if o.is_empty() {
        // what numpy says to the reference's np.zeros(len(offsets) - 1)
        return Err(PyValueError::new_err("negative dimensions are not allowed"));
    }
    crate::arrays::doc_offsets(b.len(), o)?;
    let t = core::Tables {
        flags: slice(&flags)?,
        ccc: slice(&ccc)?,
        dec_off: slice(&dec_off)?,
        dec_data: slice(&dec_data)?,
        cf_off: slice(&cf_off)?,
        cf_data: slice(&cf_data)?,
        one_off: slice(&one_off)?,
        one_data: slice(&one_data)?,
        pair_keys: slice(&pair_keys)?,
        pair_vals: slice(&pair_vals)?,
    };
    code_point_table("flags", t.flags)?;
    if t.pair_keys.len() != t.pair_vals.len() {
        return Err(PyValueError::new_err(format!(
            "pair_keys and pair_vals differ in length ({} and {}); pass the tables \
             neardup._unicode.canonical builds",
            t.pair_keys.len(),
            t.pair_vals.len()
        )));
    }
    let strip_mask = uint8_mask(strip_mask)?;
    let found = py.detach(|| core::canonicalize(b, o, &t, strip_mask, lower_ascii, fallback_from));
    match found {
        Ok(c) => Ok((
            c.buf.into_pyarray(py),
            c.offsets.into_pyarray(py),
            c.status.into_pyarray(py),
        )),
        Err(d) => Err(decode_error(py, &b[o[d] as usize..o[d + 1] as usize])),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
    Ok(())
}
