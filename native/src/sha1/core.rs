//! The batch SHA-1 prefixes: the first 4 or 8 digest bytes, read little-endian.
//!
//! Each span is padded here (FIPS 180-4, 5.1.1). The one-block spans (at most 55 bytes: most
//! tokens) are hashed many side by side by the datasketch family's SHA-1 lanes; the blocks
//! of a longer span go straight to the `sha1` crate's compression function (SHA-NI when the
//! CPU has it, chosen at run time).

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

/// Spans padded and hashed per batch: their blocks (64 KB) stay in the caches.
const BATCH: usize = 1024;

/// The first `width` (4 or 8) SHA-1 bytes of every `buf[starts[i]..ends[i]]`, little-endian;
/// the ranges must lie in `buf`. A span of at most 55 bytes is one block: those are padded
/// and hashed many at a time ([`crate::datasketch::core::sha1_blocks`]: SHA-NI or AVX-512
/// lanes, whichever is faster here); a longer one goes through the crate.
pub fn sha1_prefixes(buf: &[u8], starts: &[i64], ends: &[i64], width: usize) -> Vec<u64> {
    use crate::datasketch::core::{pad, sha1_blocks, Block, ONE_BLOCK};
    let wide = width == 8;
    let n = starts.len().min(ends.len());
    let mut out = vec![0u64; n];
    let mut blocks: Vec<Block> = vec![[0u8; 64]; BATCH];
    let mut at: Vec<usize> = Vec::with_capacity(BATCH);
    let mut hashes = vec![0u64; BATCH];
    let mut hash_batch = |blocks: &[Block], at: &mut Vec<usize>, out: &mut [u64]| {
        sha1_blocks(blocks, wide, &mut hashes[..blocks.len()]);
        for (&i, &h) in at.iter().zip(&hashes) {
            out[i] = h;
        }
        at.clear();
    };
    for i in 0..n {
        let span = &buf[starts[i] as usize..ends[i] as usize];
        if span.len() <= ONE_BLOCK {
            pad(span, &mut blocks[at.len()]);
            at.push(i);
            if at.len() == BATCH {
                hash_batch(&blocks, &mut at, &mut out);
            }
        } else {
            out[i] = prefix(&sha1_state(span), wide);
        }
    }
    let k = at.len();
    hash_batch(&blocks[..k], &mut at, &mut out);
    out
}

/// The first 4 (8 when `wide`) digest bytes read little-endian: digest bytes 0..4 are
/// `h[0]` big-endian, so its bytes swapped.
fn prefix(h: &[u32; 5], wide: bool) -> u64 {
    let low = h[0].swap_bytes() as u64;
    if wide {
        low | (h[1].swap_bytes() as u64) << 32
    } else {
        low
    }
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
    fn many_spans_of_mixed_lengths_match_the_digest() {
        let data: Vec<u8> = (0..3000u32).map(|i| (i * 11 + 5) as u8).collect();
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        for i in 0..2500i64 {
            let len = [0, 3, 20, 55, 56, 64, 119, 30][i as usize % 8] + i % 5;
            starts.push(i % 300);
            ends.push(i % 300 + len);
        }
        for width in [4, 8] {
            let got = sha1_prefixes(&data, &starts, &ends, width);
            for (k, (&a, &b)) in starts.iter().zip(&ends).enumerate() {
                let digest = Sha1::digest(&data[a as usize..b as usize]);
                let mut word = [0u8; 8];
                word[..width].copy_from_slice(&digest[..width]);
                assert_eq!(got[k], u64::from_le_bytes(word), "{k}");
            }
        }
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
