//! Decoding `tables.bin` (format: `scripts/unicode_tables.py`). Hand-written: the format is
//! ours, a few run-length coded arrays, and a decompression crate would do more than needed.

/// The embedded file.
pub static DATA: &[u8] = include_bytes!("tables.bin");

/// The values of one array, in its numpy dtype (code 1 u8, 4 i32, 8 i64).
pub enum Values {
    U8(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

impl Values {
    /// The value at `k`, widened (for tests).
    pub fn get(&self, k: usize) -> i64 {
        match self {
            Values::U8(v) => i64::from(v[k]),
            Values::I32(v) => i64::from(v[k]),
            Values::I64(v) => v[k],
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::U8(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One array of a family: its name and values.
pub struct Array {
    pub name: String,
    pub values: Values,
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| "the embedded Unicode tables are truncated".to_string())?;
        let out = &self.data[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.bytes(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.bytes(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.bytes(8)?.try_into().unwrap()))
    }
    fn name(&mut self) -> Result<String, String> {
        let n = self.u8()? as usize;
        Ok(String::from_utf8_lossy(self.bytes(n)?).into_owned())
    }
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a varint of the embedded Unicode tables is too long".to_string())
    }
}

/// The Unicode version the embedded tables follow.
pub fn version() -> Result<String, String> {
    let mut r = Reader { data: DATA, at: 0 };
    if r.bytes(6)? != b"NDUT1\n" {
        return Err("the embedded Unicode tables have an unknown format".to_string());
    }
    r.name()
}

/// The arrays of `family`, or `None` if the file has no such family.
pub fn family(family: &str) -> Result<Option<Vec<Array>>, String> {
    let mut r = Reader { data: DATA, at: 0 };
    r.bytes(6)?;
    r.name()?;
    for _ in 0..r.u32()? {
        let name = r.name()?;
        let count = r.u32()?;
        if name != family {
            for _ in 0..count {
                skip(&mut r)?;
            }
            continue;
        }
        let mut arrays = Vec::with_capacity(count as usize);
        for _ in 0..count {
            arrays.push(array(&mut r)?);
        }
        return Ok(Some(arrays));
    }
    Ok(None)
}

/// Read past one array (of a family not asked for).
fn skip(r: &mut Reader<'_>) -> Result<(), String> {
    r.name()?;
    r.bytes(2)?;
    r.u64()?;
    for _ in 0..r.u64()? {
        r.varint()?;
        r.varint()?;
    }
    Ok(())
}

/// Decode one array straight into its dtype (the values fit it: the generator wrote them
/// from arrays of that dtype), so no wider copy of a table is ever held.
fn array(r: &mut Reader<'_>) -> Result<Array, String> {
    let name = r.name()?;
    let dtype = r.u8()?;
    let mode = r.u8()?;
    let len = r.u64()? as usize;
    let runs = r.u64()?;
    let values = match dtype {
        1 => Values::U8(runs_into(r, &name, mode, len, runs, |v| v as u8)?),
        4 => Values::I32(runs_into(r, &name, mode, len, runs, |v| v as i32)?),
        _ => Values::I64(runs_into(r, &name, mode, len, runs, |v| v)?),
    };
    Ok(Array { name, values })
}

/// The `runs` (value, count) pairs of an array of `len` values, each value cast by `cast`.
fn runs_into<T: Copy>(
    r: &mut Reader<'_>,
    name: &str,
    mode: u8,
    len: usize,
    runs: u64,
    cast: impl Fn(i64) -> T,
) -> Result<Vec<T>, String> {
    let mut values: Vec<T> = Vec::with_capacity(len);
    let mut last = 0i64;
    for _ in 0..runs {
        let z = r.varint()?;
        let value = ((z >> 1) as i64) ^ -((z & 1) as i64);
        let count = r.varint()? as usize;
        if values.len() + count > len {
            return Err(format!(
                "embedded Unicode table {name:?} is longer than stated"
            ));
        }
        if mode == 1 {
            for _ in 0..count {
                last += value;
                values.push(cast(last));
            }
        } else {
            last = value;
            values.extend(std::iter::repeat_n(cast(value), count));
        }
    }
    if values.len() != len {
        return Err(format!(
            "embedded Unicode table {name:?} is shorter than stated"
        ));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_decodes() {
        assert_eq!(version().unwrap(), "14.0.0");
        let classes = family("classes").unwrap().unwrap();
        let lower = classes.iter().find(|a| a.name == "lower").unwrap();
        assert_eq!(lower.values.len(), 0x110000);
        assert_eq!(lower.values.get('A' as usize), 'a' as i64);
        assert!(matches!(lower.values, Values::I32(_)));
        assert!(family("canonicalize").unwrap().is_some());
        assert!(family("nothing").unwrap().is_none());
    }
}
