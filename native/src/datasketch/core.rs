//! datasketch's token hash (the first 4 or 8 bytes of SHA-1, little-endian) of many tokens,
//! and its permutation schemes over those hashes (min per slot).
//!
//! SHA-1 comes from the RustCrypto `sha1` crate. A token of at most 55 bytes is one SHA-1
//! block, and one block through the CPU's SHA instructions is a chain of 20 dependent
//! four-round steps: the crate, which hashes one message at a time, waits on that chain. So
//! on a CPU with the SHA extensions (`sha_ni`) the one-block tokens go through
//! [`sha_ni::one_block`], which runs the crate's step sequence for eight tokens side by side
//! (written by hand: no crate hashes many messages at once). Longer tokens, and every token
//! on other CPUs, go through the crate.

use sha1::{Digest, Sha1};

/// Tokens hashed side by side.
const LANES: usize = 8;
const INIT: [u32; 5] = [
    0x6745_2301,
    0xEFCD_AB89,
    0x98BA_DCFE,
    0x1032_5476,
    0xC3D2_E1F0,
];

/// A permutation scheme of datasketch 2.0.0.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scheme {
    /// `a * fmix32(h) + b mod 2**32`, uint32 slots, `h` = `sha1_hash32`.
    Affine32,
    /// `a * fmix64(h) + b mod 2**64`, uint64 slots, `h` = `sha1_hash64`.
    Affine64,
    /// `((a * h + b) mod 2**64) mod (2**61 - 1)`, low 32 bits, uint64 slots.
    Legacy,
}

impl Scheme {
    pub fn parse(name: &str) -> Option<Scheme> {
        match name {
            "affine32" => Some(Scheme::Affine32),
            "affine64" => Some(Scheme::Affine64),
            "legacy" => Some(Scheme::Legacy),
            _ => None,
        }
    }

    /// Whether the token hash is 64 bits (`sha1_hash64`).
    pub fn wide(self) -> bool {
        self == Scheme::Affine64
    }

    /// The empty sketch's slot value.
    pub fn empty(self) -> u64 {
        if self == Scheme::Affine64 {
            u64::MAX
        } else {
            0xFFFF_FFFF
        }
    }
}

/// The token hash of a digest's first two state words: `sha1_hash32` (4 bytes) or
/// `sha1_hash64` (8 bytes), the digest's leading bytes read little-endian.
#[inline(always)]
fn prefix(s0: u32, s1: u32, wide: bool) -> u64 {
    let lo = s0.swap_bytes() as u64;
    if wide {
        lo | ((s1.swap_bytes() as u64) << 32)
    } else {
        lo
    }
}

/// `sha1_hash32` / `sha1_hash64` of one token by the crate.
#[inline]
pub fn sha1_prefix(token: &[u8], wide: bool) -> u64 {
    let digest = Sha1::digest(token);
    let mut word = [0u8; 8];
    let width = if wide { 8 } else { 4 };
    word[..width].copy_from_slice(&digest[..width]);
    u64::from_le_bytes(word)
}

/// The padded single SHA-1 block of a token of at most 55 bytes.
#[inline(always)]
fn pad(token: &[u8], block: &mut [u8; 64]) {
    *block = [0u8; 64];
    block[..token.len()].copy_from_slice(token);
    block[token.len()] = 0x80;
    block[56..].copy_from_slice(&((token.len() as u64) * 8).to_be_bytes());
}

/// The token hash of every token into `out` (`sha1_hash64` when `wide`, else `sha1_hash32`).
pub fn sha1_prefixes<T: AsRef<[u8]>>(tokens: &[T], wide: bool, out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if sha_ni::available() {
            // SAFETY: the CPU has the features `one_block` is compiled for
            unsafe { sha_ni_prefixes(tokens, wide, out) };
            return;
        }
    }
    for (o, t) in out.iter_mut().zip(tokens) {
        *o = sha1_prefix(t.as_ref(), wide);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
unsafe fn sha_ni_prefixes<T: AsRef<[u8]>>(tokens: &[T], wide: bool, out: &mut [u64]) {
    let mut blocks = [[0u8; 64]; LANES];
    let mut at = [0usize; LANES];
    let mut words = [[0u32; 2]; LANES];
    let mut k = 0;
    for (i, t) in tokens.iter().enumerate() {
        let t = t.as_ref();
        if t.len() > 55 {
            out[i] = sha1_prefix(t, wide);
            continue;
        }
        pad(t, &mut blocks[k]);
        at[k] = i;
        k += 1;
        if k == LANES {
            sha_ni::one_block(&blocks, &mut words); // (same target features)
            for (&i, w) in at.iter().zip(&words) {
                out[i] = prefix(w[0], w[1], wide);
            }
            k = 0;
        }
    }
    for (&i, t) in at[..k].iter().zip(&blocks[..k]) {
        let mut state = INIT;
        sha1::block_api::compress(&mut state, std::slice::from_ref(t));
        out[i] = prefix(state[0], state[1], wide);
    }
}

#[cfg(target_arch = "x86_64")]
mod sha_ni {
    //! The `sha1` crate's SHA-NI compression (`compress/x86_sha.rs`) for [`super::LANES`]
    //! single blocks side by side: each of its steps is issued for every block before the
    //! next step, so that the blocks' dependency chains overlap.

    use super::LANES;
    use std::arch::x86_64::*;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("sha")
            && std::is_x86_feature_detected!("sse2")
            && std::is_x86_feature_detected!("ssse3")
            && std::is_x86_feature_detected!("sse4.1")
    }

    /// The first two state words `(a, b)` of SHA-1 after one block, for each block.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub fn one_block(blocks: &[[u8; 64]; LANES], out: &mut [[u32; 2]; LANES]) {
        let mask = _mm_set_epi64x(0x0001_0203_0405_0607, 0x0809_0A0B_0C0D_0E0F);
        let init = _mm_set_epi32(
            super::INIT[0] as i32,
            super::INIT[1] as i32,
            super::INIT[2] as i32,
            super::INIT[3] as i32,
        );
        let e0 = _mm_set_epi32(super::INIT[4] as i32, 0, 0, 0);
        let zero = _mm_setzero_si128();
        let (mut w0, mut w1, mut w2, mut w3, mut w4) = (
            [zero; LANES],
            [zero; LANES],
            [zero; LANES],
            [zero; LANES],
            [zero; LANES],
        );
        let (mut h0, mut h1) = ([init; LANES], [zero; LANES]);
        for s in 0..LANES {
            let p: *const __m128i = blocks[s].as_ptr().cast();
            // SAFETY: each block is 64 bytes: four unaligned 16-byte loads
            unsafe {
                w0[s] = _mm_shuffle_epi8(_mm_loadu_si128(p), mask);
                w1[s] = _mm_shuffle_epi8(_mm_loadu_si128(p.add(1)), mask);
                w2[s] = _mm_shuffle_epi8(_mm_loadu_si128(p.add(2)), mask);
                w3[s] = _mm_shuffle_epi8(_mm_loadu_si128(p.add(3)), mask);
            }
            h1[s] = _mm_add_epi32(e0, w0[s]);
        }
        macro_rules! rounds4 {
            ($a:ident, $b:ident, $w:ident, $i:expr) => {
                for s in 0..LANES {
                    $b[s] = _mm_sha1rnds4_epu32::<$i>($a[s], _mm_sha1nexte_epu32($b[s], $w[s]));
                }
            };
        }
        macro_rules! schedule_rounds4 {
            ($a:ident, $b:ident, $v0:ident, $v1:ident, $v2:ident, $v3:ident, $v4:ident, $i:expr) => {
                for s in 0..LANES {
                    let m1 = _mm_sha1msg1_epu32($v0[s], $v1[s]);
                    $v4[s] = _mm_sha1msg2_epu32(_mm_xor_si128(m1, $v2[s]), $v3[s]);
                }
                rounds4!($a, $b, $v4, $i);
            };
        }
        // rounds 0..20
        for s in 0..LANES {
            h1[s] = _mm_sha1rnds4_epu32::<0>(h0[s], h1[s]);
        }
        rounds4!(h1, h0, w1, 0);
        rounds4!(h0, h1, w2, 0);
        rounds4!(h1, h0, w3, 0);
        schedule_rounds4!(h0, h1, w0, w1, w2, w3, w4, 0);
        // rounds 20..40
        schedule_rounds4!(h1, h0, w1, w2, w3, w4, w0, 1);
        schedule_rounds4!(h0, h1, w2, w3, w4, w0, w1, 1);
        schedule_rounds4!(h1, h0, w3, w4, w0, w1, w2, 1);
        schedule_rounds4!(h0, h1, w4, w0, w1, w2, w3, 1);
        schedule_rounds4!(h1, h0, w0, w1, w2, w3, w4, 1);
        // rounds 40..60
        schedule_rounds4!(h0, h1, w1, w2, w3, w4, w0, 2);
        schedule_rounds4!(h1, h0, w2, w3, w4, w0, w1, 2);
        schedule_rounds4!(h0, h1, w3, w4, w0, w1, w2, 2);
        schedule_rounds4!(h1, h0, w4, w0, w1, w2, w3, 2);
        schedule_rounds4!(h0, h1, w0, w1, w2, w3, w4, 2);
        // rounds 60..80
        schedule_rounds4!(h1, h0, w1, w2, w3, w4, w0, 3);
        schedule_rounds4!(h0, h1, w2, w3, w4, w0, w1, 3);
        schedule_rounds4!(h1, h0, w3, w4, w0, w1, w2, 3);
        schedule_rounds4!(h0, h1, w4, w0, w1, w2, w3, 3);
        schedule_rounds4!(h1, h0, w0, w1, w2, w3, w4, 3);
        let _ = h1;
        for s in 0..LANES {
            // the state holds (d, c, b, a) from the low lane up
            let abcd = _mm_add_epi32(init, h0[s]);
            out[s] = [
                _mm_extract_epi32::<3>(abcd) as u32,
                _mm_extract_epi32::<2>(abcd) as u32,
            ];
        }
    }
}

/// MurmurHash3's 32-bit finalizer.
#[inline(always)]
pub fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

/// MurmurHash3's 64-bit finalizer.
#[inline(always)]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

const PRIME61: u64 = (1 << 61) - 1;

/// The slot-wise minimum of `out` and the permuted `affine32` hashes (four tokens per pass
/// over the slots, so that each slot is loaded and stored once per four tokens).
#[inline(always)]
fn affine32_body(hashes: &[u64], a: &[u32], b: &[u32], out: &mut [u32]) {
    let n = a.len().min(b.len()).min(out.len());
    let (a, b, out) = (&a[..n], &b[..n], &mut out[..n]);
    let mut chunks = hashes.chunks_exact(4);
    for c in &mut chunks {
        let m = [
            fmix32(c[0] as u32),
            fmix32(c[1] as u32),
            fmix32(c[2] as u32),
            fmix32(c[3] as u32),
        ];
        for i in 0..n {
            let (ai, bi) = (a[i], b[i]);
            let v0 = ai.wrapping_mul(m[0]).wrapping_add(bi);
            let v1 = ai.wrapping_mul(m[1]).wrapping_add(bi);
            let v2 = ai.wrapping_mul(m[2]).wrapping_add(bi);
            let v3 = ai.wrapping_mul(m[3]).wrapping_add(bi);
            out[i] = out[i].min(v0.min(v1)).min(v2.min(v3));
        }
    }
    for &h in chunks.remainder() {
        let m = fmix32(h as u32);
        for i in 0..n {
            out[i] = out[i].min(a[i].wrapping_mul(m).wrapping_add(b[i]));
        }
    }
}

#[inline(always)]
fn affine64_body(hashes: &[u64], a: &[u64], b: &[u64], out: &mut [u64]) {
    let n = a.len().min(b.len()).min(out.len());
    let (a, b, out) = (&a[..n], &b[..n], &mut out[..n]);
    for &h in hashes {
        let m = fmix64(h);
        for i in 0..n {
            out[i] = out[i].min(a[i].wrapping_mul(m).wrapping_add(b[i]));
        }
    }
}

#[inline(always)]
fn legacy_body(hashes: &[u64], a: &[u64], b: &[u64], out: &mut [u64]) {
    let n = a.len().min(b.len()).min(out.len());
    let (a, b, out) = (&a[..n], &b[..n], &mut out[..n]);
    for &h in hashes {
        for i in 0..n {
            let v = (a[i].wrapping_mul(h).wrapping_add(b[i]) % PRIME61) & 0xFFFF_FFFF;
            out[i] = out[i].min(v);
        }
    }
}

/// Defines `$name`, which runs `$body` compiled for AVX-512, for AVX2 or for the baseline,
/// as the CPU allows (the same source: the same bits on every path).
macro_rules! dispatch {
    ($name:ident, $body:ident, $t:ty) => {
        pub fn $name(hashes: &[u64], a: &[$t], b: &[$t], out: &mut [$t]) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2")]
                fn v4(hashes: &[u64], a: &[$t], b: &[$t], out: &mut [$t]) {
                    $body(hashes, a, b, out)
                }
                #[target_feature(enable = "avx2")]
                fn v3(hashes: &[u64], a: &[$t], b: &[$t], out: &mut [$t]) {
                    $body(hashes, a, b, out)
                }
                if std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512dq")
                    && std::is_x86_feature_detected!("avx512vl")
                {
                    // SAFETY: the CPU has every feature v4 is compiled for
                    return unsafe { v4(hashes, a, b, out) };
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2
                    return unsafe { v3(hashes, a, b, out) };
                }
            }
            $body(hashes, a, b, out)
        }
    };
}

dispatch!(affine32, affine32_body, u32);
dispatch!(affine64, affine64_body, u64);
dispatch!(legacy, legacy_body, u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_equal_the_crate_for_every_length() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
        let tokens: Vec<&[u8]> = (0..130).map(|n| &data[..n]).collect();
        for wide in [false, true] {
            let mut out = vec![0u64; tokens.len()];
            sha1_prefixes(&tokens, wide, &mut out);
            for (t, o) in tokens.iter().zip(&out) {
                assert_eq!(*o, sha1_prefix(t, wide));
            }
        }
        // SHA-1("abc") = a9993e36 4706816a ...
        assert_eq!(sha1_prefix(b"abc", false), 0x363e_99a9);
        assert_eq!(sha1_prefix(b"abc", true), 0x6a81_0647_363e_99a9);
    }

    #[test]
    fn affine32_is_the_minimum_over_tokens() {
        let (a, b) = ([3u32, 0xFFFF_FFFF], [7u32, 1]);
        let hashes = [1u64, 2, 3, 4, 5];
        let mut out = [u32::MAX; 2];
        affine32(&hashes, &a, &b, &mut out);
        for i in 0..2 {
            let want = hashes
                .iter()
                .map(|&h| a[i].wrapping_mul(fmix32(h as u32)).wrapping_add(b[i]))
                .min()
                .unwrap();
            assert_eq!(out[i], want);
        }
    }
}
