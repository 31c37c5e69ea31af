//! The registers of every document: a hash `h` of `bits` bits goes to register
//! `h & (2**p - 1)`, with rank `bits - p - bit_length(h >> p) + 1` (wrapped to int8, as the
//! reference's `astype`); each register keeps its maximum rank, from 0.

/// `(n_docs * 2**p)` int8 registers of each document's hashes (`p < 64`).
pub fn registers(hashes: &[u64], offsets: &[i64], p: u32, bits: u32) -> Vec<i8> {
    let m = 1usize << p;
    let mask = (m as u64).wrapping_sub(1);
    let n_docs = offsets.len() - 1;
    let mut out = vec![0i8; n_docs * m];
    for (d, w) in offsets.windows(2).enumerate() {
        let regs = &mut out[d * m..(d + 1) * m];
        for &h in &hashes[w[0] as usize..w[1] as usize] {
            let length = 64 - (h >> p).leading_zeros() as i64;
            let rank = (bits as i64 - p as i64 - length + 1) as i8;
            let r = &mut regs[(h & mask) as usize];
            if rank > *r {
                *r = rank;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_counts_from_the_top_of_the_remaining_bits() {
        // p = 4, bits = 32: h = 0x10 goes to register 0 with rest 1 (one significant bit):
        // rank 32 - 4 - 1 + 1; h = 0x21 to register 1 with rest 2: rank 27
        let out = registers(&[0x10, 0x21], &[0, 2], 4, 32);
        assert_eq!(&out[..3], &[28, 27, 0]);
        assert_eq!(out.len(), 16);
    }
}
