//! Sketch slots from Python: any unsigned numpy array, read as `u64` (borrowed when it is
//! already contiguous `uint64`, widened into a vector otherwise).

use numpy::{
    PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The slot values of an unsigned array, in C order.
pub enum Slots<'py> {
    Borrowed(PyReadonlyArrayDyn<'py, u64>),
    Owned(Vec<u64>),
}

impl Slots<'_> {
    pub fn as_slice(&self) -> &[u64] {
        match self {
            Slots::Borrowed(a) => a.as_slice().expect("checked contiguous"),
            Slots::Owned(v) => v,
        }
    }
}

fn widened<'py, T>(obj: &Bound<'py, PyAny>) -> Option<Vec<u64>>
where
    T: numpy::Element + Copy + Into<u64>,
{
    let a = obj.cast::<PyArrayDyn<T>>().ok()?;
    let ro = a.readonly();
    if let Ok(flat) = ro.as_slice() {
        return Some(flat.iter().map(|&v| v.into()).collect()); // (one vectorized pass)
    }
    Some(ro.as_array().iter().map(|&v| v.into()).collect())
}

/// The values of a contiguous `uint32` array (borrowed), for callers that take them as they
/// are; None for anything else.
pub fn u32_rows<'py>(obj: &Bound<'py, PyAny>) -> Option<numpy::PyReadonlyArrayDyn<'py, u32>> {
    let ro = obj.cast::<PyArrayDyn<u32>>().ok()?.readonly();
    ro.as_slice().is_ok().then_some(ro)
}

/// `obj` (an unsigned numpy array) as its values and its shape.
///
/// Errors as the numpy twins' `_unsigned`: `TypeError` for anything but an unsigned array.
pub fn slots<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Slots<'py>, Vec<usize>)> {
    let untyped = obj
        .cast::<PyUntypedArray>()
        .map_err(|_| not_unsigned(obj))?;
    let shape = untyped.shape().to_vec();
    if let Ok(a) = obj.cast::<PyArrayDyn<u64>>() {
        let ro = a.readonly();
        if ro.as_slice().is_ok() {
            return Ok((Slots::Borrowed(ro), shape));
        }
        return Ok((Slots::Owned(ro.as_array().iter().copied().collect()), shape));
    }
    let owned = widened::<u32>(obj)
        .or_else(|| widened::<u16>(obj))
        .or_else(|| widened::<u8>(obj))
        .ok_or_else(|| not_unsigned(obj))?;
    Ok((Slots::Owned(owned), shape))
}

fn not_unsigned(obj: &Bound<'_, PyAny>) -> PyErr {
    let what = obj
        .getattr("dtype")
        .map(|d| d.to_string())
        .unwrap_or_else(|_| obj.get_type().to_string());
    PyTypeError::new_err(format!(
        "sketch slots must be an unsigned integer array, got {what}; pass uint32 or uint64"
    ))
}

/// The number of rows of `num_perm` slots in `len` values (errors as the twins' `_rows`).
pub fn row_count(len: usize, num_perm: usize) -> PyResult<usize> {
    if num_perm == 0 || !len.is_multiple_of(num_perm) {
        return Err(PyValueError::new_err(format!(
            "{len} slot values do not make rows of {num_perm}; pass (k, num_perm) sketches"
        )));
    }
    Ok(len / num_perm)
}

/// A shape as Python prints a tuple: `(3,)`, `(2, 4)`.
pub fn py_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}
