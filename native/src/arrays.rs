//! Borrowing numpy arrays as slices, and handing vectors back as arrays.

use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
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

/// The elements of a C-contiguous 2-D array as one row-major slice, with its row count and
/// row width; an error for any other layout.
pub fn slice2<'a, T: numpy::Element>(
    array: &'a numpy::PyReadonlyArray2<'_, T>,
) -> PyResult<(&'a [T], usize, usize)> {
    let shape = array.shape();
    let (rows, cols) = (shape[0], shape[1]);
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "a kernel needs a C-contiguous array, got one of shape {:?} with strides {:?}; \
             pass numpy.ascontiguousarray(...)",
            array.shape(),
            array.strides()
        )));
    }
    let data = array.as_slice().map_err(|_| {
        PyValueError::new_err(
            "a kernel needs a C-contiguous array; pass numpy.ascontiguousarray(...)",
        )
    })?;
    Ok((data, rows, cols))
}

/// Offsets `offsets[0] <= offsets[1] <= ...`, all within `0 ..= len` (documents or groups
/// `offsets[d] .. offsets[d + 1]` of something `len` long); at least one offset.
pub fn offsets(len: usize, offsets: &[i64], what: &str) -> PyResult<()> {
    if offsets.is_empty() {
        return Err(PyValueError::new_err(format!(
            "{what} need at least one offset (n + 1 for n groups)"
        )));
    }
    let mut prev = 0i64;
    for (i, &o) in offsets.iter().enumerate() {
        if o < 0 || o as u64 > len as u64 || (i > 0 && o < prev) {
            return Err(PyValueError::new_err(format!(
                "{what}: offset {i} is {o}, not a non-decreasing position in 0..={len}"
            )));
        }
        prev = o;
    }
    Ok(())
}
