//! Bindings of the forest family: the names of `neardup._kernels.forest`.

use numpy::{
    IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::core;
use crate::arrays::{slice, slice2};

fn slice3<'a, T: numpy::Element>(
    array: &'a PyReadonlyArray3<'_, T>,
    what: &str,
) -> PyResult<(&'a [T], [usize; 3])> {
    let shape = array.shape();
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "{what} must be C-contiguous; pass numpy.ascontiguousarray(...)"
        )));
    }
    let data = array
        .as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be C-contiguous")))?;
    Ok((data, [shape[0], shape[1], shape[2]]))
}

/// Candidates of queries ``q`` (nq, l, k): flat row ids and per-query offsets.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn query<'py>(
    py: Python<'py>,
    vals: PyReadonlyArray3<'py, u32>,
    order: PyReadonlyArray2<'py, i64>,
    live: PyReadonlyArray1<'py, u8>,
    q: PyReadonlyArray3<'py, u32>,
    topk: i64,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
    let (v, [trees, n, k]) = slice3(&vals, "vals")?;
    let (o, otrees, on) = slice2(&order)?;
    let l = slice(&live)?;
    let (qs, [nq, qtrees, qk]) = slice3(&q, "q")?;
    if (otrees, on) != (trees, n) || (qtrees, qk) != (trees, k) {
        return Err(PyValueError::new_err(format!(
            "vals {:?}, order {:?} and q {:?} do not fit: (l, n, k), (l, n) and (nq, l, k)",
            [trees, n, k],
            [otrees, on],
            q.shape()
        )));
    }
    if let Some(bad) = o.iter().find(|&&r| r < 0 || r as u64 >= l.len() as u64) {
        return Err(PyValueError::new_err(format!(
            "order holds row {bad}, outside the {} rows of live",
            l.len()
        )));
    }
    let forest = core::Forest {
        vals: v,
        order: o,
        live: l,
        trees,
        n,
        k,
    };
    let (rows, offsets) = py.detach(|| core::query(&forest, qs, nq, topk));
    Ok((rows.into_pyarray(py), offsets.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(query, m)?)?;
    Ok(())
}
