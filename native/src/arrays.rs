//! Borrowing numpy arrays as slices, and handing vectors back as arrays.

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The elements of a 1-D array as one slice; an error for a non-contiguous array.
pub fn slice<'a, T: numpy::Element>(array: &'a PyReadonlyArray1<'_, T>) -> PyResult<&'a [T]> {
    array.as_slice().map_err(|_| {
        PyValueError::new_err(format!(
            "a kernel needs a contiguous array, got one of shape {:?} with strides {:?}; \
             pass numpy.ascontiguousarray(...)",
            array.shape(),
            array.strides()
        ))
    })
}

/// The elements of a C-ordered 2-D array as one slice, with its rows and columns; an error
/// for any other layout.
pub fn matrix<'a, T: numpy::Element>(
    array: &'a PyReadonlyArray2<'_, T>,
) -> PyResult<(&'a [T], usize, usize)> {
    let (rows, cols) = (array.shape()[0], array.shape()[1]);
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "a kernel needs a C-ordered array, got one of shape {:?} with strides {:?}; \
             pass numpy.ascontiguousarray(...)",
            array.shape(),
            array.strides()
        )));
    }
    Ok((slice_any(array)?, rows, cols))
}

fn slice_any<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    array: &'a numpy::PyReadonlyArray<'_, T, D>,
) -> PyResult<&'a [T]> {
    array
        .as_slice()
        .map_err(|_| PyValueError::new_err("a kernel needs a contiguous array"))
}

/// Byte ranges `buf[starts[i]..ends[i]]`, checked once against the buffer.
pub fn ranges(len: usize, starts: &[i64], ends: &[i64]) -> PyResult<()> {
    if starts.len() != ends.len() {
        return Err(PyValueError::new_err(format!(
            "starts and ends differ in length ({} and {})",
            starts.len(),
            ends.len()
        )));
    }
    for (&a, &b) in starts.iter().zip(ends) {
        if a < 0 || b < a || b as u64 > len as u64 {
            return Err(PyValueError::new_err(format!(
                "byte range [{a}, {b}) is outside the buffer of {len} bytes"
            )));
        }
    }
    Ok(())
}
