//! The `affine32` slots of every document: the loop of `crate::minhash::core::affine32`,
//! which the minhash family's datasketch preset shares.

pub use crate::minhash::core::affine32;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minhash::core::fmix32;

    #[test]
    fn slots_are_the_minimum_of_the_permuted_hashes() {
        let (a, b) = ([3u32, 0xFFFF_FFFF], [7u32, 1]);
        let hv = [1u32, 2, 3];
        let out = affine32(&hv, &[0, 3, 3], &a, &b);
        for i in 0..2 {
            let want = hv
                .iter()
                .map(|&h| a[i].wrapping_mul(fmix32(h)).wrapping_add(b[i]))
                .min()
                .unwrap();
            assert_eq!(out[i], want);
            assert_eq!(out[2 + i], u32::MAX);
        }
    }
}
