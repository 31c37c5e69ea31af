//! datasketch's token hash (the first 4 or 8 bytes of SHA-1, little-endian) of many tokens,
//! and its permutation schemes over those hashes (min per slot).
//!
//! SHA-1 comes from the RustCrypto `sha1` crate. A token of at most 55 bytes is one SHA-1
//! block, and one block through the CPU's SHA instructions is a chain of 20 dependent
//! four-round steps: the crate, which hashes one message at a time, waits on that chain. So
//! on a CPU with the SHA extensions (`sha_ni`) the one-block tokens can go through
//! [`sha_ni::one_block`], which runs the crate's step sequence for eight tokens side by side
//! (written by hand: no crate hashes many messages at once). On a CPU with AVX-512,
//! [`avx512::one_block`] hashes sixteen blocks at once in vector lanes; with both, [`path`]
//! measures which is faster once per process (on Zen 4 the lanes: ~9 against ~14 ns a
//! block). Longer tokens, and every token on other CPUs, go through the crate.
//!
//! Tokens are padded into their blocks with [`pad_raw`] as the caller reads them. The
//! floor of each stage: `cargo test --release --lib floor -- --ignored --nocapture`.

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

/// Bytes of the longest token that fits one SHA-1 block with its padding.
pub const ONE_BLOCK: usize = 55;

/// A padded SHA-1 block.
pub type Block = [u8; 64];

/// Write the padded single SHA-1 block of the `len` bytes at `src` (`len <= 55`) into
/// `block`. The bytes are moved by two overlapping loads of the widest power of two that
/// fits (no call to `memcpy`, no byte loop): this runs once per token while the token list
/// is read.
///
/// # Safety
/// `src` must be valid for reads of `len` bytes, and `len <= ONE_BLOCK`.
#[inline(always)]
pub unsafe fn pad_raw(src: *const u8, len: usize, block: &mut Block) {
    debug_assert!(len <= ONE_BLOCK);
    *block = [0u8; 64];
    let dst = block.as_mut_ptr();
    // SAFETY (all arms): both loads end within `src[..len]` and both stores within
    // `block[..len]` (len <= 55 < 64)
    unsafe {
        macro_rules! two {
            ($t:ty, $w:expr) => {{
                let head = std::ptr::read_unaligned(src.cast::<$t>());
                let tail = std::ptr::read_unaligned(src.add(len - $w).cast::<$t>());
                std::ptr::write_unaligned(dst.cast::<$t>(), head);
                std::ptr::write_unaligned(dst.add(len - $w).cast::<$t>(), tail);
            }};
        }
        if len >= 32 {
            two!([u8; 32], 32);
        } else if len >= 16 {
            two!([u8; 16], 16);
        } else if len >= 8 {
            two!(u64, 8);
        } else if len >= 4 {
            two!(u32, 4);
        } else if len > 0 {
            *dst = *src;
            *dst.add(len / 2) = *src.add(len / 2);
            *dst.add(len - 1) = *src.add(len - 1);
        }
    }
    block[len] = 0x80;
    block[56..].copy_from_slice(&((len as u64) * 8).to_be_bytes());
}

/// Whether this CPU has what [`pad_masked`] is compiled for (AVX-512 F and BW).
pub fn masked_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`pad_raw`] with AVX-512 BW: one masked load of the `len` bytes (the bytes past them
/// read as zeros and are never touched), the `0x80` byte or-ed in, one 64-byte store, and
/// the length in bits (< 2**16) in the last two bytes.
///
/// # Safety
/// `src` must be valid for reads of `len` bytes, `len <= ONE_BLOCK`, and the CPU must have
/// AVX-512 F and BW ([`masked_available`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn pad_masked(src: *const u8, len: usize, block: &mut Block) {
    use std::arch::x86_64::*;
    debug_assert!(len <= ONE_BLOCK);
    // SAFETY: the masked load touches only the `len` bytes the caller vouches for; the
    // store writes the 64-byte block; the CPU has the features (the caller's promise)
    unsafe {
        let bytes = _mm512_maskz_loadu_epi8((1u64 << len) - 1, src.cast());
        let end = _mm512_maskz_set1_epi8(1u64 << len, 0x80u8 as i8);
        _mm512_storeu_si512(block.as_mut_ptr().cast(), _mm512_or_si512(bytes, end));
    }
    block[62..].copy_from_slice(&((len as u16) * 8).to_be_bytes());
}

/// The padded single SHA-1 block of a token of at most 55 bytes.
#[inline(always)]
pub fn pad(token: &[u8], block: &mut Block) {
    assert!(token.len() <= ONE_BLOCK);
    // SAFETY: the slice's bytes, and its length checked
    unsafe { pad_raw(token.as_ptr(), token.len(), block) }
}

/// How the one-block tokens are hashed on this CPU.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Path {
    /// [`sha_ni::one_block`], eight blocks side by side.
    ShaNi,
    /// [`avx512::one_block`], sixteen blocks in vector lanes.
    Avx512,
    /// The `sha1` crate, one block at a time.
    Crate,
}

/// The faster of the paths this CPU has, picked once per process. With both SHA-NI and
/// AVX-512 it is measured, not assumed: on Zen 4 the AVX-512 lanes hash a block in ~9 ns
/// against ~14 for SHA-NI (its four-round instruction issues once in two cycles), while
/// other CPUs rank them the other way. Both give the same bits.
pub fn path() -> Path {
    static PATH: std::sync::OnceLock<Path> = std::sync::OnceLock::new();
    *PATH.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            match (sha_ni::available(), avx512::available()) {
                (true, true) => return calibrate(),
                (true, false) => return Path::ShaNi,
                (false, true) => return Path::Avx512,
                (false, false) => {}
            }
        }
        Path::Crate
    })
}

/// The path of the two vector paths that hashed 256 blocks faster (best of 9 alternating
/// trials each, ~0.1 ms in all: the minimum leaves out the trials another thread slowed).
#[cfg(target_arch = "x86_64")]
fn calibrate() -> Path {
    let data: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
    let blocks: Vec<Block> = (0..256)
        .map(|i| {
            let mut b = [0u8; 64];
            pad(&data[i % 9..i % 9 + 20 + i % 30], &mut b);
            b
        })
        .collect();
    let mut out = vec![0u64; blocks.len()];
    let mut best = [u128::MAX; 2];
    for _ in 0..9 {
        for (i, p) in [Path::ShaNi, Path::Avx512].into_iter().enumerate() {
            let t = std::time::Instant::now();
            hash_with(p, &blocks, false, &mut out);
            best[i] = best[i].min(t.elapsed().as_nanos());
            std::hint::black_box(&out);
        }
    }
    if best[1] < best[0] {
        Path::Avx512
    } else {
        Path::ShaNi
    }
}

/// The token hash (`sha1_hash64` when `wide`, else `sha1_hash32`) of each padded single
/// block into `out` (one value per block).
pub fn sha1_blocks(blocks: &[Block], wide: bool, out: &mut [u64]) {
    hash_with(path(), blocks, wide, out)
}

/// [`sha1_blocks`] through `path` (which this CPU must have). A tail that does not fill the
/// lanes is hashed as one more group, its empty lanes hashing zeros, when it has at least a
/// quarter of them; the crate hashes a shorter one.
pub fn hash_with(path: Path, blocks: &[Block], wide: bool, out: &mut [u64]) {
    let n = blocks.len().min(out.len());
    let (blocks, out) = (&blocks[..n], &mut out[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        match path {
            Path::ShaNi => {
                // SAFETY: the CPU has the features `one_block` is compiled for
                done = lanes::<LANES>(blocks, wide, out, |b, w| unsafe { sha_ni::one_block(b, w) });
            }
            Path::Avx512 => {
                // SAFETY: as above
                done = lanes::<{ avx512::LANES }>(blocks, wide, out, |b, w| unsafe {
                    avx512::one_block(b, w)
                });
            }
            Path::Crate => {}
        }
    }
    for (b, o) in blocks[done..].iter().zip(&mut out[done..]) {
        let mut state = INIT;
        sha1::block_api::compress(&mut state, std::slice::from_ref(b));
        *o = prefix(state[0], state[1], wide);
    }
}

/// Blocks per group of [`hash_group`].
pub const GROUP: usize = 16;

/// The token hashes of one group of sixteen blocks through the AVX-512 lanes, for a caller
/// that hashes as it reads (see `py::Run`): called right after the group is padded, its
/// work overlaps the loads of the next tokens.
///
/// # Safety
/// The CPU must have AVX-512 F and BW ([`masked_available`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn hash_group(blocks: &[Block; GROUP], wide: bool, out: &mut [u64; GROUP]) {
    let mut words = [[0u32; 2]; GROUP];
    // SAFETY: the caller's promise on the CPU's features
    unsafe { avx512::one_block(blocks, &mut words) };
    for (o, w) in out.iter_mut().zip(&words) {
        *o = prefix(w[0], w[1], wide);
    }
}

/// The token hashes of the blocks `N` at a time through `one_block`; returns how many
/// blocks were hashed: all of them, or all but a tail shorter than a quarter of `N` (a
/// longer tail is copied into one more group of `N`).
#[inline(always)]
fn lanes<const N: usize>(
    blocks: &[Block],
    wide: bool,
    out: &mut [u64],
    mut one_block: impl FnMut(&[Block; N], &mut [[u32; 2]; N]),
) -> usize {
    let mut words = [[0u32; 2]; N];
    for (bs, os) in blocks.chunks_exact(N).zip(out.chunks_exact_mut(N)) {
        one_block(bs.try_into().expect("N blocks"), &mut words);
        for (o, w) in os.iter_mut().zip(&words) {
            *o = prefix(w[0], w[1], wide);
        }
    }
    let full = blocks.len() - blocks.len() % N;
    let tail = &blocks[full..];
    if tail.len() * 4 < N {
        return full;
    }
    let mut group = [[0u8; 64]; N];
    group[..tail.len()].copy_from_slice(tail);
    one_block(&group, &mut words);
    for (o, w) in out[full..].iter_mut().zip(&words) {
        *o = prefix(w[0], w[1], wide);
    }
    blocks.len()
}

/// The token hash of every token into `out` (`sha1_hash64` when `wide`, else `sha1_hash32`).
pub fn sha1_prefixes<T: AsRef<[u8]>>(tokens: &[T], wide: bool, out: &mut [u64]) {
    let mut blocks = Vec::new();
    let mut at = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let t = t.as_ref();
        if t.len() > ONE_BLOCK {
            out[i] = sha1_prefix(t, wide);
        } else {
            let mut b = [0u8; 64];
            pad(t, &mut b);
            blocks.push(b);
            at.push(i);
        }
    }
    let mut hashes = vec![0u64; blocks.len()];
    sha1_blocks(&blocks, wide, &mut hashes);
    for (&i, h) in at.iter().zip(hashes) {
        out[i] = h;
    }
}

#[cfg(target_arch = "x86_64")]
mod sha_ni {
    //! The `sha1` crate's SHA-NI compression (`compress/x86_sha.rs`) for [`super::LANES`]
    //! single blocks side by side: each of its steps is issued for every block before the
    //! next step, so that the blocks' dependency chains overlap.

    use std::arch::x86_64::*;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("sha")
            && std::is_x86_feature_detected!("sse2")
            && std::is_x86_feature_detected!("ssse3")
            && std::is_x86_feature_detected!("sse4.1")
    }

    /// The first two state words `(a, b)` of SHA-1 after one block, for each block.
    #[inline]
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub fn one_block<const LANES: usize>(blocks: &[[u8; 64]; LANES], out: &mut [[u32; 2]; LANES]) {
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

#[cfg(target_arch = "x86_64")]
mod avx512 {
    //! SHA-1 of sixteen single blocks at once in the lanes of AVX-512 registers (one 32-bit
    //! lane per message, the rounds of FIPS 180-4 written out): no SHA instruction, so it
    //! runs on the vector units beside the SHA unit's work, and on CPUs without SHA-NI.

    use std::arch::x86_64::*;

    pub const LANES: usize = 16;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
    }

    /// The 16x16 transpose of the blocks' 32-bit words (`w[t]` lane `i`: word `t` of block `i`).
    /// Inlined into `one_block` (as a function of its own its 1 KB of arguments went through
    /// memory).
    #[inline(always)]
    fn transpose(r: [__m512i; 16]) -> [__m512i; 16] {
        // SAFETY (every intrinsic): called only from `one_block`, compiled for AVX-512 F/BW
        unsafe {
            let mut a = [_mm512_setzero_si512(); 16];
            for k in 0..8 {
                a[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
                a[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
            }
            let mut b = [_mm512_setzero_si512(); 16];
            for q in 0..4 {
                b[4 * q] = _mm512_unpacklo_epi64(a[4 * q], a[4 * q + 2]);
                b[4 * q + 1] = _mm512_unpackhi_epi64(a[4 * q], a[4 * q + 2]);
                b[4 * q + 2] = _mm512_unpacklo_epi64(a[4 * q + 1], a[4 * q + 3]);
                b[4 * q + 3] = _mm512_unpackhi_epi64(a[4 * q + 1], a[4 * q + 3]);
            }
            // b[4q + j], 128-bit group L: word 4L + j of blocks 4q..4q+3
            let mut out = [_mm512_setzero_si512(); 16];
            for j in 0..4 {
                let (x0, x1, x2, x3) = (b[j], b[4 + j], b[8 + j], b[12 + j]);
                let y0 = _mm512_shuffle_i32x4::<0x44>(x0, x1);
                let y1 = _mm512_shuffle_i32x4::<0xEE>(x0, x1);
                let y2 = _mm512_shuffle_i32x4::<0x44>(x2, x3);
                let y3 = _mm512_shuffle_i32x4::<0xEE>(x2, x3);
                out[j] = _mm512_shuffle_i32x4::<0x88>(y0, y2);
                out[4 + j] = _mm512_shuffle_i32x4::<0xDD>(y0, y2);
                out[8 + j] = _mm512_shuffle_i32x4::<0x88>(y1, y3);
                out[12 + j] = _mm512_shuffle_i32x4::<0xDD>(y1, y3);
            }
            out
        }
    }

    /// The working state of sixteen messages: the schedule's last 16 words and `a..e`.
    struct State {
        w: [__m512i; 16],
        a: __m512i,
        b: __m512i,
        c: __m512i,
        d: __m512i,
        e: __m512i,
    }

    /// Round `T` of FIPS 180-4 (6.1.2), its schedule word computed in place. Written for a
    /// constant `T` and called once per round (see `one_block`): every index is then a
    /// constant and the schedule stays in registers (a loop over the rounds kept it in
    /// memory, 9.2 against 11.8 ns a block on Zen 4).
    #[inline(always)]
    fn round<const T: usize>(s: &mut State) {
        // SAFETY (every intrinsic): called only from `one_block`, compiled for AVX-512 F/BW
        unsafe {
            if T >= 16 {
                let x = _mm512_ternarylogic_epi32::<0x96>(
                    s.w[(T + 13) % 16],
                    s.w[(T + 8) % 16],
                    s.w[(T + 2) % 16],
                );
                s.w[T % 16] = _mm512_rol_epi32::<1>(_mm512_xor_si512(x, s.w[T % 16]));
            }
            let (f, k) = if T < 20 {
                (
                    _mm512_ternarylogic_epi32::<0xCA>(s.b, s.c, s.d),
                    0x5A82_7999u32,
                )
            } else if T < 40 {
                (
                    _mm512_ternarylogic_epi32::<0x96>(s.b, s.c, s.d),
                    0x6ED9_EBA1u32,
                )
            } else if T < 60 {
                (
                    _mm512_ternarylogic_epi32::<0xE8>(s.b, s.c, s.d),
                    0x8F1B_BCDCu32,
                )
            } else {
                (
                    _mm512_ternarylogic_epi32::<0x96>(s.b, s.c, s.d),
                    0xCA62_C1D6u32,
                )
            };
            let ek = _mm512_add_epi32(s.e, _mm512_set1_epi32(k as i32));
            let tmp = _mm512_add_epi32(
                _mm512_add_epi32(_mm512_rol_epi32::<5>(s.a), f),
                _mm512_add_epi32(ek, s.w[T % 16]),
            );
            s.e = s.d;
            s.d = s.c;
            s.c = _mm512_rol_epi32::<30>(s.b);
            s.b = s.a;
            s.a = tmp;
        }
    }

    macro_rules! rounds {
        ($s:ident; $($t:literal)*) => { $( round::<$t>(&mut $s); )* };
    }

    /// The first two state words `(a, b)` of SHA-1 after one block, for each block.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub fn one_block(blocks: &[[u8; 64]; LANES], out: &mut [[u32; 2]; LANES]) {
        let mut r = [_mm512_setzero_si512(); 16];
        for (v, b) in r.iter_mut().zip(blocks) {
            // SAFETY: a 64-byte block
            *v = unsafe { _mm512_loadu_si512(b.as_ptr().cast()) };
        }
        let swap = _mm512_broadcast_i32x4(_mm_set_epi8(
            12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
        ));
        let mut w = transpose(r);
        for v in w.iter_mut() {
            *v = _mm512_shuffle_epi8(*v, swap);
        }
        let init = super::INIT.map(|x| _mm512_set1_epi32(x as i32));
        let [a, b, c, d, e] = init;
        let mut s = State { w, a, b, c, d, e };
        rounds!(s; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19
            20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39
            40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59
            60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79);
        let (mut sa, mut sb) = ([0u32; LANES], [0u32; LANES]);
        // SAFETY: 16 u32 each
        unsafe {
            _mm512_storeu_si512(sa.as_mut_ptr().cast(), _mm512_add_epi32(s.a, init[0]));
            _mm512_storeu_si512(sb.as_mut_ptr().cast(), _mm512_add_epi32(s.b, init[1]));
        }
        for (o, (x, y)) in out.iter_mut().zip(sa.iter().zip(&sb)) {
            *o = [*x, *y];
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

/// `x mod (2**61 - 1)` for any `u64` (the Mersenne fold, no division): `x = hi * 2**61 +
/// lo` is `hi + lo` modulo the prime, and `hi + lo <= 2**61 + 6` needs at most one
/// subtraction. It vectorizes where `%` by a constant (a 64-bit high multiply) does not.
#[inline(always)]
fn mod_prime61(x: u64) -> u64 {
    let y = (x & PRIME61) + (x >> 61);
    if y >= PRIME61 {
        y - PRIME61
    } else {
        y
    }
}

#[inline(always)]
fn legacy_body(hashes: &[u64], a: &[u64], b: &[u64], out: &mut [u64]) {
    let n = a.len().min(b.len()).min(out.len());
    let (a, b, out) = (&a[..n], &b[..n], &mut out[..n]);
    for &h in hashes {
        for i in 0..n {
            let v = mod_prime61(a[i].wrapping_mul(h).wrapping_add(b[i])) & 0xFFFF_FFFF;
            out[i] = out[i].min(v);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod affine32_avx512 {
    //! The `affine32` slots with AVX-512, 128 slots (eight registers) at a time: the
    //! parameters and the running minimum stay in registers across all the tokens, so a
    //! token costs one broadcast and eight multiply-add-min triples, no load or store.

    use std::arch::x86_64::*;

    /// The minimum over the tokens in `out[..done]` (returns `done`, a multiple of 16; the
    /// caller does the rest).
    #[target_feature(enable = "avx512f")]
    pub fn slots(hashes: &[u64], a: &[u32], b: &[u32], out: &mut [u32]) -> usize {
        let n = a.len().min(b.len()).min(out.len());
        let mut i = 0;
        while i + 128 <= n {
            tile::<8>(hashes, &a[i..i + 128], &b[i..i + 128], &mut out[i..i + 128]);
            i += 128;
        }
        while i + 16 <= n {
            tile::<1>(hashes, &a[i..i + 16], &b[i..i + 16], &mut out[i..i + 16]);
            i += 16;
        }
        i
    }

    /// `16 * G` slots through every token, two tokens per step.
    #[inline(always)]
    fn tile<const G: usize>(hashes: &[u64], a: &[u32], b: &[u32], out: &mut [u32]) {
        assert!(a.len() >= 16 * G && b.len() >= 16 * G && out.len() >= 16 * G);
        // SAFETY (every intrinsic): called only from `slots`, compiled for AVX-512 F; the
        // loads and stores are within the 16 * G slots checked above
        unsafe {
            let load = |s: &[u32], g: usize| _mm512_loadu_si512(s.as_ptr().add(16 * g).cast());
            let av: [__m512i; G] = std::array::from_fn(|g| load(a, g));
            let bv: [__m512i; G] = std::array::from_fn(|g| load(b, g));
            let mut ov: [__m512i; G] = std::array::from_fn(|g| load(out, g));
            let mut pairs = hashes.chunks_exact(2);
            for p in &mut pairs {
                let m0 = _mm512_set1_epi32(super::fmix32(p[0] as u32) as i32);
                let m1 = _mm512_set1_epi32(super::fmix32(p[1] as u32) as i32);
                for g in 0..G {
                    let v0 = _mm512_add_epi32(_mm512_mullo_epi32(av[g], m0), bv[g]);
                    let v1 = _mm512_add_epi32(_mm512_mullo_epi32(av[g], m1), bv[g]);
                    ov[g] = _mm512_min_epu32(ov[g], _mm512_min_epu32(v0, v1));
                }
            }
            for &h in pairs.remainder() {
                let m = _mm512_set1_epi32(super::fmix32(h as u32) as i32);
                for g in 0..G {
                    let v = _mm512_add_epi32(_mm512_mullo_epi32(av[g], m), bv[g]);
                    ov[g] = _mm512_min_epu32(ov[g], v);
                }
            }
            for (g, v) in ov.iter().enumerate() {
                _mm512_storeu_si512(out.as_mut_ptr().add(16 * g).cast(), *v);
            }
        }
    }
}

/// The slot-wise minimum of `out` and the permuted `affine32` hashes of `hashes`: whole
/// registers of slots through [`affine32_avx512`] on a CPU with AVX-512, the rest (and every
/// slot elsewhere) through [`affine32_body`]. The same bits on every path.
pub fn affine32(hashes: &[u64], a: &[u32], b: &[u32], out: &mut [u32]) {
    let n = a.len().min(b.len()).min(out.len());
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::simd::level() == crate::simd::Level::Avx512 {
        // SAFETY: the CPU has AVX-512 F
        done = unsafe { affine32_avx512::slots(hashes, a, b, out) };
    }
    if done < n {
        affine32_rest(hashes, &a[done..n], &b[done..n], &mut out[done..n]);
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

dispatch!(affine32_rest, affine32_body, u32);
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

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_lane_path_equals_the_crate() {
        let data: Vec<u8> = (0..100u32).map(|i| (i * 13 + 5) as u8).collect();
        let blocks: Vec<Block> = (0..=ONE_BLOCK)
            .cycle()
            .take(96)
            .map(|n| {
                let mut b = [0u8; 64];
                pad(&data[n % 7..n % 7 + n], &mut b);
                b
            })
            .collect();
        let want: Vec<u64> = (0..=ONE_BLOCK)
            .cycle()
            .take(96)
            .map(|n| sha1_prefix(&data[n % 7..n % 7 + n], true))
            .collect();
        let mut paths = vec![Path::Crate];
        if sha_ni::available() {
            paths.push(Path::ShaNi);
        }
        if avx512::available() {
            paths.push(Path::Avx512);
        }
        // whole groups, and tails above and below a quarter of the lanes
        for p in paths {
            for n in [0, 1, 2, 3, 4, 5, 7, 8, 13, 17, 35, 96] {
                let mut out = vec![0u64; n];
                hash_with(p, &blocks[..n], true, &mut out);
                assert_eq!(out, want[..n], "{p:?}, {n} blocks");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn masked_padding_equals_the_plain_padding() {
        if !masked_available() {
            return;
        }
        let data: Vec<u8> = (0..64u32).map(|i| (i * 29 + 1) as u8).collect();
        for len in 0..=ONE_BLOCK {
            let (mut want, mut got) = ([7u8; 64], [9u8; 64]);
            pad(&data[3..3 + len], &mut want);
            #[target_feature(enable = "avx512f,avx512bw")]
            unsafe fn masked(src: &[u8], out: &mut Block) {
                // SAFETY: the slice's bytes; the features are checked by the test
                unsafe { pad_masked(src.as_ptr(), src.len(), out) }
            }
            // SAFETY: checked above
            unsafe { masked(&data[3..3 + len], &mut got) };
            assert_eq!(got, want, "{len}");
        }
    }

    #[test]
    fn affine32_equals_the_scalar_loop_for_every_width() {
        let hashes: Vec<u64> = (0..37u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20)
            .collect();
        for n in [1, 15, 16, 17, 100, 128, 129, 144, 256, 300] {
            let a: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(0x85EB_CA6B) | 1)
                .collect();
            let b: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0xC2B2_AE35)).collect();
            for k in [0, 1, 2, 3, 37] {
                let mut out = vec![u32::MAX; n];
                out[0] = 5;
                let mut want = out.clone();
                affine32(&hashes[..k], &a, &b, &mut out);
                for &h in &hashes[..k] {
                    let m = fmix32(h as u32);
                    for i in 0..n {
                        want[i] = want[i].min(a[i].wrapping_mul(m).wrapping_add(b[i]));
                    }
                }
                assert_eq!(out, want, "{n} slots, {k} tokens");
            }
        }
    }

    #[test]
    fn legacy_fold_equals_the_remainder() {
        let xs = [
            0,
            1,
            PRIME61 - 1,
            PRIME61,
            PRIME61 + 1,
            2 * PRIME61,
            u64::MAX,
            u64::MAX - 7,
            1 << 63,
        ];
        for x in xs
            .into_iter()
            .chain((0..10_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
        {
            assert_eq!(mod_prime61(x), x % PRIME61, "{x}");
        }
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

#[cfg(test)]
mod floor {
    use super::*;

    /// This thread's CPU time (ns): the machine is shared, so wall time is not the work.
    fn cpu_ns() -> u64 {
        extern "C" {
            fn clock_gettime(clock: i32, ts: *mut [i64; 2]) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3; // (Linux)
        let mut ts = [0i64; 2];
        // SAFETY: the C library's clock_gettime writes one timespec (two 64-bit words on
        // x86_64 Linux)
        assert_eq!(
            unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) },
            0
        );
        (ts[0] * 1_000_000_000 + ts[1]) as u64
    }

    /// Not a test: the CPU ns per token of each stage of the bulk path, on one-block tokens
    /// of 20-49 bytes (`cargo test --release --lib floor -- --ignored --nocapture`).
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    #[ignore]
    fn floor() {
        let n = 1 << 20;
        let toks: Vec<Vec<u8>> = (0..n)
            .map(|i: usize| {
                format!("token {i:07} of a shingle of five words, padded out")[..20 + i % 30].into()
            })
            .collect();
        let mut blocks = vec![[0u8; 64]; n];
        let mut out = vec![0u64; n];
        let mut other = vec![0u64; n];
        let per = |t0: u64| (cpu_ns() - t0) as f64 / n as f64;
        let names = [
            "pad",
            "SHA-NI x8",
            "AVX-512 x16",
            "crate x1",
            "affine32/128",
            "pad, AVX-512 masked",
        ];
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        for _ in 0..9 {
            let t = cpu_ns();
            for (t, b) in toks.iter().zip(blocks.iter_mut()) {
                pad(t, b);
            }
            times[0].push(per(t));
            let t = cpu_ns();
            lanes::<LANES>(&blocks, false, &mut out, |b, w| unsafe {
                sha_ni::one_block(b, w)
            });
            times[1].push(per(t));
            let t = cpu_ns();
            lanes::<16>(&blocks, false, &mut other, |b, w| unsafe {
                avx512::one_block(b, w)
            });
            times[2].push(per(t));
            assert_eq!(other, out);
            let t = cpu_ns();
            for (b, o) in blocks.iter().zip(other.iter_mut()) {
                let mut state = INIT;
                sha1::block_api::compress(&mut state, std::slice::from_ref(b));
                *o = prefix(state[0], state[1], false);
            }
            times[3].push(per(t));
            assert_eq!(other, out);
            let (a, b): (Vec<u32>, Vec<u32>) = (0..128).map(|i| (i * 2 + 1, i * 7)).unzip();
            let mut row = vec![u32::MAX; 128];
            let t = cpu_ns();
            for c in out.chunks(1024) {
                affine32(c, &a, &b, &mut row);
            }
            times[4].push(per(t));
            if masked_available() {
                #[target_feature(enable = "avx512f,avx512bw")]
                fn masked(toks: &[Vec<u8>], blocks: &mut [Block]) {
                    for (t, b) in toks.iter().zip(blocks.iter_mut()) {
                        // SAFETY: the token's bytes (at most 49); the features are checked
                        unsafe { pad_masked(t.as_ptr(), t.len(), b) };
                    }
                }
                let t = cpu_ns();
                // SAFETY: checked
                unsafe { masked(&toks, &mut blocks) };
                times[5].push(per(t));
            } else {
                times[5].push(0.0);
            }
        }
        println!("SHA-1 path picked here: {:?}", path());
        for (name, mut ts) in names.iter().zip(times) {
            ts.sort_by(f64::total_cmp);
            println!(
                "{name}: median {:.1} ns/token (min {:.1}, max {:.1})",
                ts[4], ts[0], ts[8]
            );
        }
    }
}
