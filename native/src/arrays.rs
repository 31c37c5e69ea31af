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

/// Document offsets into `len` elements: at least one, non-decreasing, inside them.
pub fn offsets(len: usize, offsets: &[i64]) -> PyResult<()> {
    let bad = |why: &str| {
        PyValueError::new_err(format!(
            "offsets {why}; pass n + 1 non-decreasing offsets into the {len} elements"
        ))
    };
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else {
        return Err(bad("are empty"));
    };
    if first < 0 || last as u64 > len as u64 {
        return Err(bad(&format!("run from {first} to {last}")));
    }
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(bad("decrease somewhere"));
    }
    Ok(())
}

/// Two arrays of one length each (`what` names them in the error).
pub fn same_length(what: &str, a: usize, b: usize) -> PyResult<()> {
    if a != b {
        return Err(PyValueError::new_err(format!(
            "{what} differ in length ({a} and {b})"
        )));
    }
    Ok(())
}
