//! Decoding `tables.bin` (format: `scripts/unicode_tables.py`), at build time: `build.rs`
//! includes this file and writes each array raw, which the crate then embeds as it is
//! (see `core`). Hand-written: the format is ours, a few run-length coded arrays, and a
//! decompression crate would do more than needed. Standard library only.

/// One decoded array: its name, numpy dtype code (1 u8, 4 i32, 8 i64) and values.
pub struct Array {
    pub name: String,
    pub dtype: u8,
    pub values: Vec<i64>,
}

/// A family of arrays by name.
pub struct Family {
    pub name: String,
    pub arrays: Vec<Array>,
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| "the Unicode tables are truncated".to_string())?;
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
        Err("a varint of the Unicode tables is too long".to_string())
    }
}

/// The Unicode version of the tables and every family.
pub fn decode(data: &[u8]) -> Result<(String, Vec<Family>), String> {
    let mut r = Reader { data, at: 0 };
    if r.bytes(6)? != b"NDUT1\n" {
        return Err("the Unicode tables have an unknown format".to_string());
    }
    let version = r.name()?;
    let mut families = Vec::new();
    for _ in 0..r.u32()? {
        let name = r.name()?;
        let count = r.u32()?;
        let mut arrays = Vec::with_capacity(count as usize);
        for _ in 0..count {
            arrays.push(array(&mut r)?);
        }
        families.push(Family { name, arrays });
    }
    Ok((version, families))
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
            return Err(format!("Unicode table {name:?} is longer than stated"));
        }
        for _ in 0..count {
            last = if mode == 1 { last + value } else { value };
            values.push(last);
        }
    }
    if values.len() != len {
        return Err(format!("Unicode table {name:?} is shorter than stated"));
    }
    Ok(Array {
        name,
        dtype,
        values,
    })
}
