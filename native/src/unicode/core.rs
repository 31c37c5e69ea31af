//! The embedded Unicode tables, raw: `build.rs` decodes `tables.bin` (format:
//! `scripts/unicode_tables.py`) and writes each array in its dtype, which is included here
//! as it is. Nothing is decoded or copied at run time: the bindings hand out read-only numpy
//! views of these statics, whose pages the process reads only where a kernel looks.

/// An array's numpy dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    U8,
    I32,
    I64,
}

/// One array of a family: its name, dtype and raw bytes (the target's byte order, aligned
/// for the dtype).
pub struct Table {
    pub name: &'static str,
    pub dtype: Dtype,
    pub bytes: &'static [u8],
}

impl Table {
    /// The values as `u8` (a `U8` table).
    pub fn u8s(&self) -> &'static [u8] {
        assert_eq!(self.dtype, Dtype::U8);
        self.bytes
    }

    /// The values as `i32` (an `I32` table).
    pub fn i32s(&self) -> &'static [i32] {
        assert_eq!(self.dtype, Dtype::I32);
        // SAFETY: the bytes are a whole number of native-order i32, 8-byte aligned (`Aligned`).
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast(), self.bytes.len() / 4) }
    }

    /// The values as `i64` (an `I64` table).
    pub fn i64s(&self) -> &'static [i64] {
        assert_eq!(self.dtype, Dtype::I64);
        // SAFETY: as in `i32s`, for i64.
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast(), self.bytes.len() / 8) }
    }
}

/// Raw bytes aligned for every dtype.
#[repr(C, align(8))]
struct Aligned<T: ?Sized>(T);

include!(concat!(env!("OUT_DIR"), "/unicode_tables.rs"));

/// The Unicode version the embedded tables follow.
pub fn version() -> &'static str {
    VERSION
}

/// The arrays of `family`, or `None` if there is no such family.
pub fn family(family: &str) -> Option<&'static [Table]> {
    FAMILIES
        .iter()
        .find(|(name, _)| *name == family)
        .map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_embedded() {
        assert_eq!(version(), "14.0.0");
        let classes = family("classes").unwrap();
        let lower = classes.iter().find(|a| a.name == "lower").unwrap();
        assert_eq!(lower.i32s().len(), 0x110000);
        assert_eq!(lower.i32s()['A' as usize], 'a' as i32);
        assert_eq!(lower.i32s()[0x10FFFF], 0x10FFFF);
        assert!(family("canonicalize").is_some());
        assert!(family("nothing").is_none());
    }
}
