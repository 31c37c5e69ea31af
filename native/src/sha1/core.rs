//! The batch SHA-1 prefixes: the first 4 or 8 digest bytes, read little-endian.

use sha1::{Digest, Sha1};

/// The first `width` (4 or 8) SHA-1 bytes of every `buf[starts[i]..ends[i]]`, little-endian;
/// the ranges must lie in `buf`.
pub fn sha1_prefixes(buf: &[u8], starts: &[i64], ends: &[i64], width: usize) -> Vec<u64> {
    starts
        .iter()
        .zip(ends)
        .map(|(&a, &b)| {
            let digest = Sha1::digest(&buf[a as usize..b as usize]);
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(&digest[..width]);
            u64::from_le_bytes(word)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_prefixes() {
        // SHA-1("abc") = a9993e36 4706816a ...; SHA-1("") = da39a3ee 5e6b4b0d ...
        let buf = b"abc";
        assert_eq!(sha1_prefixes(buf, &[0], &[3], 4), vec![0x363e_99a9]);
        assert_eq!(
            sha1_prefixes(buf, &[0], &[3], 8),
            vec![0x6a81_0647_363e_99a9]
        );
        assert_eq!(sha1_prefixes(buf, &[1], &[1], 4), vec![0xeea3_39da]);
    }
}
