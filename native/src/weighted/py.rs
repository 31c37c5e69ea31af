//! Bindings of the weighted family: the names of `neardup._kernels.weighted`.

use numpy::ndarray::Array3;
use numpy::{IntoPyArray, PyArray3, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

use super::core;
use crate::arrays::{matrix, offsets, vector};
use crate::errors::{config_error, config_same_length};

/// ``(n_docs, sample_size, 2)`` samples ``(k, t)`` of CSR rows (empty rows give -1).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn icws<'py>(
    py: Python<'py>,
    cidx: PyReadonlyArray1<'py, i64>,
    logv: PyReadonlyArray1<'py, f32>,
    indptr: PyReadonlyArray1<'py, i64>,
    rs: PyReadonlyArray2<'py, f32>,
    ln_cs: PyReadonlyArray2<'py, f32>,
    betas: PyReadonlyArray2<'py, f32>,
    sparse_form: bool,
) -> PyResult<Bound<'py, PyArray3<i64>>> {
    let ((r, size, dim), (c, cs, cd), (b, bs, bd)) = (matrix(&rs), matrix(&ln_cs), matrix(&betas));
    if (cs, cd) != (size, dim) || (bs, bd) != (size, dim) {
        return Err(config_error(
            py,
            format!(
                "rs, ln_cs and betas must have one shape, got ({size}, {dim}), ({cs}, {cd}) \
                 and ({bs}, {bd})"
            ),
        ));
    }
    let (ci, lv, ip) = (vector(&cidx), vector(&logv), vector(&indptr));
    config_same_length(py, "cidx and logv", ci.len(), lv.len())?;
    offsets("indptr", &ip, ci.len())?;
    // the columns the rows use, resolved as numpy indexes (negative from the end)
    let (first, last) = (ip[0] as usize, ip[ip.len() - 1] as usize);
    let mut cols = vec![0usize; ci.len()];
    for j in first..last {
        let k = ci[j];
        let col = if k < 0 { k + dim as i64 } else { k };
        if col < 0 || col >= dim as i64 {
            return Err(PyIndexError::new_err(format!(
                "index {k} is out of bounds for axis 1 with size {dim}"
            )));
        }
        cols[j] = col as usize;
    }
    let params = core::Params {
        rs: &r,
        ln_cs: &c,
        betas: &b,
        size,
        dim,
    };
    let out = py.detach(|| core::icws(&ci, &cols, &lv, &ip, &params, sparse_form));
    let samples = Array3::from_shape_vec((ip.len() - 1, size, 2), out).expect("n * size * 2");
    Ok(samples.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(icws, m)?)?;
    Ok(())
}
