//! Decoding `tables.bin` (format: `scripts/unicode_tables.py`). Hand-written: the format is
//! ours, a few run-length coded arrays, and a decompression crate would do more than needed.

/// The embedded file.
pub static DATA: &[u8] = include_bytes!("tables.bin");

/// One array of a family: its name, numpy dtype code (1 u8, 4 i32, 8 i64) and values.
pub struct Array {
    pub name: String,
    pub dtype: u8,
    pub values: Vec<i64>,
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
        let mut arrays = Vec::with_capacity(count as usize);
        for _ in 0..count {
            arrays.push(array(&mut r)?);
        }
        if name == family {
            return Ok(Some(arrays));
        }
    }
    Ok(None)
}

fn array(r: &mut Reader<'_>) -> Result<Array, String> {
    let name = r.name()?;
    let dtype = r.u8()?;
    let mode = r.u8()?;
    let len = r.u64()? as usize;
    let runs = r.u64()?;
    let mut values = Vec::with_capacity(len);
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
        for _ in 0..count {
            last = if mode == 1 { last + value } else { value };
            values.push(last);
        }
    }
    if values.len() != len {
        return Err(format!(
            "embedded Unicode table {name:?} is shorter than stated"
        ));
    }
    Ok(Array {
        name,
        dtype,
        values,
    })
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
        assert_eq!(lower.values['A' as usize], 'a' as i64);
        assert!(family("canonicalize").unwrap().is_some());
        assert!(family("nothing").unwrap().is_none());
    }
}
