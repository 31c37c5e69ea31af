//! The tokens of a document by its ASCII bytes, the common case of the fused sketch.
//!
//! The document goes through the tokenizer's byte table (an ASCII word byte becomes its
//! lowercase, any other byte 0) in one pass, which also gives two bit masks per 64-byte
//! block: the word bytes, and the bytes >= 0x80. A run of word bytes is a token, hashed in
//! place. A run of word and non-ASCII bytes that holds a non-ASCII byte is a *region* for
//! the general tokenizer (decoding, classes, case table): an ASCII byte that is no word byte
//! ends every token and splits no UTF-8 sequence, so the general tokenizer gives the same
//! tokens on the region alone as on the whole document. The pass is a table lookup of 128
//! entries: one `vpermi2b` per 64 bytes with AVX-512 VBMI, eight `pshufb` per 32 bytes with
//! AVX2, a byte at a time otherwise. Every path writes the same bytes.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// How the translation pass runs on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Scalar,
    Avx2,
    Vbmi,
}

impl Pass {
    /// The fastest pass this CPU runs (std caches the detection).
    pub fn detect() -> Pass {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vbmi")
            {
                return Pass::Vbmi;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Pass::Avx2;
            }
        }
        Pass::Scalar
    }
}

/// The buffers of [`doc_tokens_ascii`]: the translated bytes, their block masks and the
/// runs.
#[derive(Default)]
pub struct AsciiScratch {
    bytes: Vec<u8>,
    masks: Vec<u64>,
    highs: Vec<u64>,
    starts: Vec<u32>,
    ends: Vec<u32>,
}

/// Bit `i` set when `block[i]` is not 0.
#[inline(always)]
fn nonzero64(block: &[u8]) -> u64 {
    block
        .iter()
        .take(64)
        .enumerate()
        .fold(0u64, |m, (i, &b)| m | (((b != 0) as u64) << i))
}

/// `out[i] = table[doc[i]]` (0 for a byte >= 0x80), the non-zero masks of `out`'s 64-byte
/// blocks and the masks of `doc`'s bytes >= 0x80; whether there is such a byte. `out` holds
/// `doc.len()` rounded up to 64 bytes, `masks` and `highs` one entry per block; the bytes
/// after the document are 0.
#[inline(always)]
fn translate_scalar(
    doc: &[u8],
    table: &[u8; 256],
    out: &mut [u8],
    masks: &mut [u64],
    highs: &mut [u64],
) -> bool {
    let mut high = 0u8;
    for (o, &b) in out.iter_mut().zip(doc) {
        *o = if b < 0x80 { table[b as usize] } else { 0 };
        high |= b;
    }
    out[doc.len()..].fill(0);
    for (m, block) in masks.iter_mut().zip(out.chunks_exact(64)) {
        *m = nonzero64(block);
    }
    highs.fill(0);
    if high >= 0x80 {
        for (h, block) in highs.iter_mut().zip(doc.chunks(64)) {
            *h = block
                .iter()
                .enumerate()
                .fold(0u64, |m, (i, &b)| m | (((b >= 0x80) as u64) << i));
        }
    }
    high >= 0x80
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// The last, partial 64-byte block of `doc` zero-padded (all zeros when there is none),
    /// and the number of whole blocks before it.
    #[inline(always)]
    fn tail(doc: &[u8]) -> ([u8; 64], usize) {
        let whole = doc.len() / 64;
        let mut b = [0u8; 64];
        b[..doc.len() - 64 * whole].copy_from_slice(&doc[64 * whole..]);
        (b, whole)
    }

    /// Block `k` of `doc`: in place when whole, else the padded `last`.
    #[inline(always)]
    fn block<'a>(doc: &'a [u8], k: usize, whole: usize, last: &'a [u8; 64]) -> &'a [u8] {
        if k < whole {
            &doc[64 * k..64 * k + 64]
        } else {
            last
        }
    }

    /// `translate_scalar` with AVX-512 VBMI: the 128-entry table in two registers, one
    /// two-register byte permutation per block.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub fn translate_vbmi(
        doc: &[u8],
        table: &[u8; 256],
        out: &mut [u8],
        masks: &mut [u64],
        highs: &mut [u64],
    ) -> bool {
        // SAFETY: `table` holds 256 bytes: the two loads read its first 128.
        let (t0, t1) = unsafe {
            (
                _mm512_loadu_si512(table.as_ptr().cast()),
                _mm512_loadu_si512(table.as_ptr().add(64).cast()),
            )
        };
        let mut any = 0u64;
        let (last, whole) = tail(doc);
        let blocks = out
            .chunks_exact_mut(64)
            .zip(masks.iter_mut())
            .zip(highs.iter_mut());
        for (k, ((o, m), h)) in blocks.enumerate() {
            let bytes = block(doc, k, whole, &last);
            // SAFETY: `bytes` and `o` hold 64 bytes each.
            unsafe {
                let v = _mm512_loadu_si512(bytes.as_ptr().cast());
                let high = _mm512_movepi8_mask(v); // the bytes >= 0x80
                                                   // table[v & 0x7F] for the ASCII bytes, 0 for the others
                let t = _mm512_maskz_mov_epi8(!high, _mm512_permutex2var_epi8(t0, v, t1));
                *m = _mm512_test_epi8_mask(t, t);
                *h = high;
                any |= high;
                _mm512_storeu_si512(o.as_mut_ptr().cast(), t);
            }
        }
        any != 0
    }

    /// `translate_scalar` with AVX2: the table in eight 16-byte rows, one `pshufb` per row;
    /// a byte meets row `r` when `(byte ^ (r << 4)) + 0x70` (saturating) keeps the top bit
    /// clear, which `pshufb` reads as "write 0".
    #[target_feature(enable = "avx2")]
    pub fn translate_avx2(
        doc: &[u8],
        table: &[u8; 256],
        out: &mut [u8],
        masks: &mut [u64],
        highs: &mut [u64],
    ) -> bool {
        let mut rows = [_mm256_setzero_si256(); 8];
        for (r, row) in rows.iter_mut().enumerate() {
            // SAFETY: `table` holds 256 bytes: row `r` is its 16 bytes from `16 * r`.
            let half = unsafe { _mm_loadu_si128(table.as_ptr().add(16 * r).cast()) };
            *row = _mm256_broadcastsi128_si256(half);
        }
        let bias = _mm256_set1_epi8(0x70);
        let zero = _mm256_setzero_si256();
        let mut any = 0u64;
        let (last, whole) = tail(doc);
        let blocks = out
            .chunks_exact_mut(64)
            .zip(masks.iter_mut())
            .zip(highs.iter_mut());
        for (k, ((o, m), h)) in blocks.enumerate() {
            let bytes = block(doc, k, whole, &last);
            let (mut mask, mut high) = (0u64, 0u64);
            for half in 0..2 {
                // SAFETY: `bytes` and `o` hold 64 bytes: each half reads and writes 32.
                unsafe {
                    let v = _mm256_loadu_si256(bytes.as_ptr().add(32 * half).cast());
                    high |= (_mm256_movemask_epi8(v) as u32 as u64) << (32 * half);
                    let mut t = zero;
                    for (r, row) in rows.iter().enumerate() {
                        let idx = _mm256_adds_epu8(
                            _mm256_xor_si256(v, _mm256_set1_epi8((r << 4) as i8)),
                            bias,
                        );
                        t = _mm256_or_si256(t, _mm256_shuffle_epi8(*row, idx));
                    }
                    let zeros = _mm256_movemask_epi8(_mm256_cmpeq_epi8(t, zero)) as u32;
                    mask |= (!zeros as u64) << (32 * half);
                    _mm256_storeu_si256(o.as_mut_ptr().add(32 * half).cast(), t);
                }
            }
            *m = mask;
            *h = high;
            any |= high;
        }
        any != 0
    }
}

/// Write the positions `base + i` of the set bits `i` of `bits` to `out[k..]`, four at a
/// time without a branch per bit (up to three more are written past them, and overwritten
/// later: `out` has that room); return the new `k`.
#[inline(always)]
fn emit(mut bits: u64, base: u32, out: &mut [u32], mut k: usize) -> usize {
    let end = k + bits.count_ones() as usize;
    while k < end {
        for slot in &mut out[k..k + 4] {
            *slot = base + bits.trailing_zeros();
            bits &= bits.wrapping_sub(1);
        }
        k += 4;
    }
    end
}

/// The runs of set bits of the block masks as `[start, end)` positions in `starts` and
/// `ends`; return how many. The slices hold `64 * masks.len() / 2 + 8` entries.
#[inline(always)]
fn word_runs(masks: &[u64], starts: &mut [u32], ends: &mut [u32]) -> usize {
    let mut carry = 0u64; // the previous block's last byte is a word byte
    let (mut ks, mut ke) = (0, 0);
    for (b, &m) in masks.iter().enumerate() {
        let base = (64 * b) as u32;
        let before = (m << 1) | carry; // bit i: byte i - 1 is a word byte
        ks = emit(m & !before, base, starts, ks);
        ke = emit(!m & before, base, ends, ke);
        carry = m >> 63;
    }
    if carry != 0 {
        ends[ke] = (64 * masks.len()) as u32; // a run to the end of the last block
        ke += 1;
    }
    debug_assert_eq!(ks, ke);
    ks
}

/// Whether a bit of `masks` (64 per block) is set in the positions `[a, e)`.
#[inline(always)]
fn any_in(masks: &[u64], a: usize, e: usize) -> bool {
    (a / 64..e.div_ceil(64)).any(|b| {
        let lo = a.max(64 * b) - 64 * b;
        let hi = e.min(64 * b + 64) - 64 * b;
        let span = if hi - lo == 64 {
            u64::MAX
        } else {
            ((1u64 << (hi - lo)) - 1) << lo
        };
        masks[b] & span != 0
    })
}

/// xxh3_64 of each kept token of `doc` into `toks` (cleared first), with the byte `table` of
/// the tokenizer's ASCII word bytes: a run of them is a token (never split: no ASCII
/// ideograph or mark); a region that holds a byte >= 0x80 goes to `general`, which appends
/// the tokens of the bytes it is given.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn doc_tokens_ascii(
    doc: &[u8],
    table: &[u8; 256],
    min_bytes: i64,
    seed: u64,
    pass: Pass,
    scratch: &mut AsciiScratch,
    toks: &mut Vec<u64>,
    mut general: impl FnMut(&[u8], &mut Vec<u64>),
) {
    toks.clear();
    let n = doc.len();
    if n >= u32::MAX as usize - 64 {
        return general(doc, toks); // positions are u32: the general path takes it all
    }
    let blocks = n.div_ceil(64);
    let s = scratch;
    if s.masks.len() < blocks {
        s.bytes.resize(64 * blocks, 0);
        s.masks.resize(blocks, 0);
        s.highs.resize(blocks, 0);
        s.starts.resize(32 * blocks + 8, 0);
        s.ends.resize(32 * blocks + 8, 0);
    }
    let (out, masks, highs) = (
        &mut s.bytes[..64 * blocks],
        &mut s.masks[..blocks],
        &mut s.highs[..blocks],
    );
    let mixed = match pass {
        // SAFETY: `pass` comes from `Pass::detect`, which checked the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Pass::Vbmi => unsafe { x86::translate_vbmi(doc, table, out, masks, highs) },
        #[cfg(target_arch = "x86_64")]
        Pass::Avx2 => unsafe { x86::translate_avx2(doc, table, out, masks, highs) },
        _ => translate_scalar(doc, table, out, masks, highs),
    };
    if mixed {
        // the runs of word bytes and bytes >= 0x80: tokens, or regions for `general`
        for (m, &h) in masks.iter_mut().zip(highs.iter()) {
            *m |= h;
        }
    }
    let runs = word_runs(masks, &mut s.starts, &mut s.ends);
    let spans = s.starts[..runs].iter().zip(&s.ends[..runs]);
    let bytes = &s.bytes[..n];
    if !mixed {
        // the common case: every run is a token (a loop without the region test)
        toks.reserve(runs);
        for (&a, &e) in spans {
            let (a, e) = (a as usize, (e as usize).min(n));
            if (e - a) as i64 >= min_bytes {
                toks.push(xxh3_64_with_seed(&bytes[a..e], seed));
            }
        }
        return;
    }
    for (&a, &e) in spans {
        let (a, e) = (a as usize, (e as usize).min(n));
        if any_in(highs, a, e) {
            general(&doc[a..e], toks);
        } else if (e - a) as i64 >= min_bytes {
            toks.push(xxh3_64_with_seed(&bytes[a..e], seed));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> [u8; 256] {
        let mut t = [0u8; 256];
        for b in b'a'..=b'z' {
            t[b as usize] = b;
        }
        for b in b'A'..=b'Z' {
            t[b as usize] = b + 32;
        }
        t[b'_' as usize] = b'_';
        t[0x7F] = 0x7F; // the last entry of the table is a word byte too
        t
    }

    /// The tokens by definition: runs of table entries that are not 0.
    fn naive(doc: &[u8], table: &[u8; 256]) -> Vec<u64> {
        let lowered: Vec<u8> = doc.iter().map(|&b| table[b as usize]).collect();
        lowered
            .split(|&b| b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| xxh3_64_with_seed(w, 3))
            .collect()
    }

    #[test]
    fn every_pass_gives_the_runs_of_the_table() {
        let t = table();
        let mut passes = vec![Pass::Scalar];
        match Pass::detect() {
            Pass::Vbmi => passes.extend([Pass::Avx2, Pass::Vbmi]),
            Pass::Avx2 => passes.push(Pass::Avx2),
            Pass::Scalar => {}
        }
        let mut s = AsciiScratch::default();
        let mut toks = Vec::new();
        for len in [0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 300] {
            for gap in [3, 7, 64, 1000] {
                let doc: Vec<u8> = (0..len)
                    .map(|i| {
                        if i % gap == gap - 1 {
                            b' '
                        } else {
                            [b'A', b'z', 0x7F][i % 3]
                        }
                    })
                    .collect();
                for &p in &passes {
                    doc_tokens_ascii(&doc, &t, 1, 3, p, &mut s, &mut toks, |_, _| panic!());
                    assert_eq!(toks, naive(&doc, &t), "{p:?} len={len} gap={gap}");
                }
            }
        }
        // the regions around bytes >= 0x80 go to the general tokenizer, whole
        for &p in &passes {
            let mut doc = b"ab cd\xc3\xa9f gh ij\xff kl ".to_vec();
            doc.extend(vec![b'x'; 70]);
            doc.push(0x80);
            let mut regions = Vec::new();
            doc_tokens_ascii(&doc, &t, 1, 3, p, &mut s, &mut toks, |r, toks| {
                regions.push(r.to_vec());
                toks.push(0);
            });
            let mut last = vec![b'x'; 70];
            last.push(0x80);
            let want = vec![b"cd\xc3\xa9f".to_vec(), b"ij\xff".to_vec(), last];
            assert_eq!(regions, want, "{p:?}");
            let h = |w: &[u8]| xxh3_64_with_seed(w, 3);
            assert_eq!(toks, vec![h(b"ab"), 0, h(b"gh"), 0, h(b"kl"), 0], "{p:?}");
        }
    }
}
