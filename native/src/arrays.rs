//! Borrowing numpy arrays as slices, and checking the offsets that cut them into runs.

use std::borrow::Cow;

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyValueError};
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

/// The elements of a 1-D array as a slice, copied only when the array is strided.
pub fn vector<'a, T: numpy::Element + Copy>(array: &'a PyReadonlyArray1<'_, T>) -> Cow<'a, [T]> {
    match array.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}

/// A 2-D array as `(row-major elements, rows, columns)`, copied only when it is not
/// C-contiguous.
pub fn matrix<'a, T: numpy::Element + Copy>(
    array: &'a PyReadonlyArray2<'_, T>,
) -> (Cow<'a, [T]>, usize, usize) {
    let shape = array.shape();
    let (rows, cols) = (shape[0], shape[1]);
    if array.is_c_contiguous() {
        if let Ok(s) = array.as_slice() {
            return (Cow::Borrowed(s), rows, cols);
        }
    }
    (
        Cow::Owned(array.as_array().iter().copied().collect()),
        rows,
        cols,
    )
}

/// Check `offsets`, the `n + 1` bounds of `n` runs of an array of `len` items: non-empty,
/// non-decreasing, within `[0, len]`.
pub fn offsets(name: &str, offsets: &[i64], len: usize) -> PyResult<()> {
    let Some(&first) = offsets.first() else {
        return Err(PyValueError::new_err(format!(
            "{name} must hold at least one offset (n + 1 for n documents), got none"
        )));
    };
    if first < 0 {
        return Err(PyValueError::new_err(format!(
            "{name} must start at 0 or later, got {first}"
        )));
    }
    for w in offsets.windows(2) {
        if w[1] < w[0] {
            return Err(PyValueError::new_err(format!(
                "{name} must not decrease, got {} after {}",
                w[1], w[0]
            )));
        }
    }
    let last = offsets[offsets.len() - 1];
    if last as u64 > len as u64 {
        return Err(PyValueError::new_err(format!(
            "{name} ends at {last}, beyond the {len} items it indexes"
        )));
    }
    Ok(())
}

/// Document offsets: `buf[offsets[d]..offsets[d + 1]]` is document `d`; they must rise
/// within the buffer (the message names the first document that does not).
pub fn doc_offsets(len: usize, offsets: &[i64]) -> PyResult<()> {
    for (d, w) in offsets.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        if a < 0 || b < a || b as u64 > len as u64 {
            return Err(PyValueError::new_err(format!(
                "document {d} spans bytes [{a}, {b}), not a range of the buffer of {len} bytes; \
                 offsets must rise from 0 to at most the buffer's length"
            )));
        }
    }
    Ok(())
}

/// The elements of a writable 1-D array as one mutable slice (a contiguous array).
pub fn slice_mut<'a, T: numpy::Element>(
    array: &'a mut numpy::PyReadwriteArray1<'_, T>,
) -> PyResult<&'a mut [T]> {
    let (shape, strides) = (array.shape().to_vec(), array.strides().to_vec());
    array.as_slice_mut().map_err(|_| {
        PyValueError::new_err(format!(
            "a kernel needs a contiguous array, got one of shape {shape:?} with strides \
             {strides:?}; pass numpy.ascontiguousarray(...)"
        ))
    })
}

/// A lookup table indexed by code point: it must have an entry for each of them.
pub fn code_point_table<T>(name: &str, table: &[T]) -> PyResult<()> {
    if table.len() < 0x110000 {
        return Err(PyValueError::new_err(format!(
            "the {name} table has {} entries, not one per code point (0x110000); \
             pass the table neardup._kernels builds",
            table.len()
        )));
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

/// Document offsets into `len` elements: at least one, non-decreasing, inside them.
pub fn run_offsets(len: usize, offsets: &[i64]) -> PyResult<()> {
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

/// A mask of class flags as the reference applies it to a ``uint8`` table (numpy refuses
/// an integer that is not a ``uint8``).
pub fn uint8_mask(mask: i64) -> PyResult<u8> {
    u8::try_from(mask).map_err(|_| {
        PyOverflowError::new_err(format!("Python integer {mask} out of bounds for uint8"))
    })
}
