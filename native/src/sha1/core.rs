//! The batch SHA-1 prefixes: the first 4 or 8 digest bytes, read little-endian.
//!
//! Each span is padded here (FIPS 180-4, 5.1.1) and its blocks go straight to the `sha1`
//! crate's compression function (SHA-NI when the CPU has it, chosen at run time): a token of
//! a few bytes is one block, and the `Digest` machinery around it cost more than the block.

use sha1::block_api::compress;

const H0: [u32; 5] = [
    0x6745_2301,
    0xEFCD_AB89,
    0x98BA_DCFE,
    0x1032_5476,
    0xC3D2_E1F0,
];

/// The SHA-1 state after hashing `data` (its digest is the state's words, big-endian).
fn sha1_state(data: &[u8]) -> [u32; 5] {
    let mut state = H0;
    let full = data.chunks_exact(64);
    let rest = full.remainder();
    for chunk in full {
        let block: &[u8; 64] = chunk.try_into().expect("64-byte chunk");
        compress(&mut state, std::slice::from_ref(block));
    }
    // the tail: leftover bytes, 0x80, zeros, the length in bits (big-endian), in 1 or 2 blocks
    let mut tail = [[0u8; 64]; 2];
    let blocks = if rest.len() < 56 { 1 } else { 2 };
    let flat = tail.as_flattened_mut();
    flat[..rest.len()].copy_from_slice(rest);
    flat[rest.len()] = 0x80;
    let bits = (data.len() as u64).wrapping_mul(8);
    flat[64 * blocks - 8..64 * blocks].copy_from_slice(&bits.to_be_bytes());
    compress(&mut state, &tail[..blocks]);
    state
}

/// The first `width` (4 or 8) SHA-1 bytes of every `buf[starts[i]..ends[i]]`, little-endian;
/// the ranges must lie in `buf`.
pub fn sha1_prefixes(buf: &[u8], starts: &[i64], ends: &[i64], width: usize) -> Vec<u64> {
    starts
        .iter()
        .zip(ends)
        .map(|(&a, &b)| {
            let h = sha1_state(&buf[a as usize..b as usize]);
            // digest bytes 0..4 are h[0] big-endian: read little-endian, its bytes swapped
            let low = h[0].swap_bytes() as u64;
            if width == 8 {
                low | (h[1].swap_bytes() as u64) << 32
            } else {
                low
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha1::{Digest, Sha1};

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

    #[test]
    fn every_length_matches_the_digest() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in 0..data.len() {
            let digest = Sha1::digest(&data[..len]);
            let want = u64::from_le_bytes(digest[..8].try_into().unwrap());
            assert_eq!(
                sha1_prefixes(&data, &[0], &[len as i64], 8),
                vec![want],
                "{len}"
            );
        }
    }
}
