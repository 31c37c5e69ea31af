//! The batch hashes: one seed for every range.

use xxhash_rust::xxh3::{xxh3_128_with_seed, xxh3_64_with_seed};

/// XXH3-64 of every `buf[starts[i]..ends[i]]`; the ranges must lie in `buf`.
pub fn xxh3_64_ranges(buf: &[u8], starts: &[i64], ends: &[i64], seed: u64) -> Vec<u64> {
    starts
        .iter()
        .zip(ends)
        .map(|(&a, &b)| xxh3_64_with_seed(&buf[a as usize..b as usize], seed))
        .collect()
}

/// XXH3-128 of every range as (low 64 bits, high 64 bits).
pub fn xxh3_128_ranges(
    buf: &[u8],
    starts: &[i64],
    ends: &[i64],
    seed: u64,
) -> (Vec<u64>, Vec<u64>) {
    let mut lo = Vec::with_capacity(starts.len());
    let mut hi = Vec::with_capacity(starts.len());
    for (&a, &b) in starts.iter().zip(ends) {
        let h = xxh3_128_with_seed(&buf[a as usize..b as usize], seed);
        lo.push(h as u64);
        hi.push((h >> 64) as u64);
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_known_values() {
        // XXH3-64 of the empty input with seed 0 (the xxHash test vectors)
        assert_eq!(
            xxh3_64_ranges(b"", &[0], &[0], 0),
            vec![0x2D06_8005_38D3_94C2]
        );
        let (lo, hi) = xxh3_128_ranges(b"abcabc", &[0, 3], &[3, 6], 7);
        assert_eq!(lo[0], lo[1]);
        assert_eq!(hi[0], hi[1]);
    }
}
