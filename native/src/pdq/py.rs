//! Bindings of the pdq family: the names of `neardup._kernels.pdq`.

use numpy::ndarray::ArrayView3;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyReadonlyArray3,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyValueError, PyZeroDivisionError};
use pyo3::prelude::*;

use super::core;

type F32Array2<'py> = Bound<'py, PyArray2<f32>>;

/// The 16x64 DCT-II matrix of ``pdqhashing.cpp`` (read-only), as the C++ computes it.
#[pyfunction]
fn dct_matrix(py: Python<'_>) -> PyResult<F32Array2<'_>> {
    let out = core::dct_matrix()
        .to_vec()
        .into_pyarray(py)
        .reshape([16, 64])?;
    out.call_method1("setflags", (false,))?;
    Ok(out)
}

/// ``computeJaroszFilterWindowSize``: the per-pass box width, ``ceil(old / (2 new))``.
#[pyfunction]
#[pyo3(signature = (old, new = 64))]
fn jarosz_window(old: i64, new: i64) -> PyResult<i64> {
    if new == 0 {
        return Err(PyZeroDivisionError::new_err(
            "integer division or modulo by zero",
        ));
    }
    Ok(core::jarosz_window(old, new))
}

/// ``decimateFloat``'s source index of each output sample (centres, not corners).
#[pyfunction]
#[pyo3(signature = (old, new = 64))]
fn decimation_indices(py: Python<'_>, old: i64, new: i64) -> Bound<'_, PyArray1<i64>> {
    core::decimation_indices(old, new).into_pyarray(py)
}

/// The luma of every pixel of an ``(h, w, 3+)`` uint8 view (any strides), row-major.
fn luma_of(rgb: &ArrayView3<'_, u8>) -> PyResult<Vec<f32>> {
    let (h, w, c) = rgb.dim();
    if c < 3 {
        return Err(PyIndexError::new_err(format!(
            "index {c} is out of bounds for axis 2 with size {c}; pass (h, w, 3|4) RGB(A) pixels"
        )));
    }
    let mut out = Vec::with_capacity(h * w);
    for row in rgb.outer_iter() {
        for px in row.outer_iter() {
            out.push(core::luma(px[0], px[1], px[2]));
        }
    }
    Ok(out)
}

/// Luma of an ``(h, w, 3+)`` uint8 array: ``float32(R * 0.299 + G * 0.587 + B * 0.114)``
/// evaluated in float64.
#[pyfunction]
fn luma_rgb<'py>(py: Python<'py>, rgb: PyReadonlyArray3<'py, u8>) -> PyResult<F32Array2<'py>> {
    let view = rgb.as_array();
    let (h, w, _) = view.dim();
    let out = py.detach(|| luma_of(&view))?;
    out.into_pyarray(py).reshape([h, w])
}

/// The DCT as a ``(16, 16)`` array and the quality.
fn hashed(py: Python<'_>, (dct, q): (Vec<f32>, i64)) -> PyResult<(F32Array2<'_>, i64)> {
    Ok((dct.into_pyarray(py).reshape([16, 16])?, q))
}

/// ``pdqFloat256FromFloatLuma`` of one float32 luma image: the 16x16 DCT and the quality.
#[pyfunction]
fn pdq_float<'py>(py: Python<'py>, luma: &Bound<'py, PyAny>) -> PyResult<(F32Array2<'py>, i64)> {
    let luma: PyReadonlyArray2<'py, f32> = match luma.extract() {
        Ok(array) => array,
        Err(_) => {
            let ndim: usize = luma.getattr("ndim")?.extract()?;
            if ndim != 2 {
                return Err(PyValueError::new_err(format!(
                    "a luma image has 2 dimensions, got {ndim}"
                )));
            }
            luma.call_method1("astype", ("float32",))?.extract()?
        }
    };
    let (rows, cols) = (luma.shape()[0], luma.shape()[1]);
    let view = luma.as_array();
    let out = py.detach(|| match view.as_slice() {
        Some(flat) => core::pdq_float(flat, rows, cols),
        None => core::pdq_float(&view.iter().copied().collect::<Vec<_>>(), rows, cols),
    });
    hashed(py, out)
}

/// ``pdq_float`` of ``luma_rgb``, in one call.
#[pyfunction]
fn pdq_rgb<'py>(
    py: Python<'py>,
    rgb: PyReadonlyArray3<'py, u8>,
) -> PyResult<(F32Array2<'py>, i64)> {
    let view = rgb.as_array();
    let (rows, cols, _) = view.dim();
    let out = py.detach(|| luma_of(&view).map(|luma| core::pdq_float(&luma, rows, cols)))?;
    hashed(py, out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MIN_HASHABLE_DIM", core::MIN_HASHABLE_DIM)?;
    m.add_function(wrap_pyfunction!(dct_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(jarosz_window, m)?)?;
    m.add_function(wrap_pyfunction!(decimation_indices, m)?)?;
    m.add_function(wrap_pyfunction!(luma_rgb, m)?)?;
    m.add_function(wrap_pyfunction!(pdq_float, m)?)?;
    m.add_function(wrap_pyfunction!(pdq_rgb, m)?)?;
    Ok(())
}
