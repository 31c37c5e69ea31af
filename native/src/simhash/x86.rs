//! The AVX-512 paths of the fused SimHash-64: the word tokenizer of pure-ASCII documents 64
//! bytes at a time, and the 64 bit votes of a document's feature hashes.
//!
//! The tokenizer looks each byte up in the 128-entry ASCII table of [`super::core::Tokenizer`]
//! with one `vpermi2b` per 64 bytes (AVX-512 VBMI), which gives the lowercased bytes and a
//! 64-bit mask of the word characters; tokens are then the runs of set bits, found with
//! `tzcnt` on the mask's transitions, so the branches go per token, not per byte. A document
//! with a byte >= 0x80 goes to the scalar tokenizer. Same tokens, same bytes: checked against
//! the scalar tokenizer by the tests of `core`.

use std::arch::x86_64::*;

/// The CPU has what [`classify`] needs (AVX-512 F, BW and VBMI).
pub fn has_vbmi() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vbmi")
}

/// The CPU has what [`majority`] needs (AVX-512 F and BW).
pub fn has_bw() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
}

/// `lows[i] = table[doc[i]]` for every byte (written up to the next multiple of 64, zeros
/// after the end), and bit `i % 64` of `masks[i / 64]` set iff `lows[i] != 0`. Returns
/// false, with `lows` and `masks` unfinished, as soon as a block holds a byte >= 0x80.
/// `lows` must hold at least `doc.len().div_ceil(64) * 64` bytes.
///
/// # Safety
///
/// The CPU must have AVX-512 F, BW and VBMI ([`has_vbmi`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub fn classify(doc: &[u8], table: &[u8; 128], lows: &mut [u8], masks: &mut Vec<u64>) -> bool {
    let n = doc.len();
    let blocks = n.div_ceil(64);
    assert!(lows.len() >= blocks * 64, "room for every block");
    masks.clear();
    // SAFETY: `table` holds 128 bytes: two unaligned 64-byte loads.
    let (tlo, thi) = unsafe {
        (
            _mm512_loadu_si512(table.as_ptr() as *const __m512i),
            _mm512_loadu_si512(table.as_ptr().add(64) as *const __m512i),
        )
    };
    for bi in 0..blocks {
        let off = bi * 64;
        let rem = n - off;
        // SAFETY: a full load reads doc[off..off + 64] (rem >= 64); the masked load reads
        // only the `rem` bytes left (the others are zero: byte 0 is no word character).
        let v = unsafe {
            if rem >= 64 {
                _mm512_loadu_si512(doc.as_ptr().add(off) as *const __m512i)
            } else {
                _mm512_maskz_loadu_epi8((1u64 << rem) - 1, doc.as_ptr().add(off) as *const i8)
            }
        };
        if _mm512_movepi8_mask(v) != 0 {
            return false;
        }
        let low = _mm512_permutex2var_epi8(tlo, v, thi);
        // SAFETY: lows holds blocks * 64 bytes (asserted above).
        unsafe { _mm512_storeu_si512(lows.as_mut_ptr().add(off) as *mut __m512i, low) };
        masks.push(_mm512_test_epi8_mask(low, low));
    }
    true
}

/// The SimHash-64 of unit-weight feature hashes (bit `b` set iff more than half of `hashes`
/// have it): one mask-to-bytes and one byte subtract per hash, 255 hashes per flush.
///
/// # Safety
///
/// The CPU must have AVX-512 F and BW ([`has_bw`]).
#[target_feature(enable = "avx512f,avx512bw")]
pub fn majority(hashes: &[u64]) -> u64 {
    let mut ones = [0u64; 64];
    for chunk in hashes.chunks(255) {
        // two accumulators: two subtracts in flight
        let (mut a, mut b) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        let mut pairs = chunk.chunks_exact(2);
        for p in &mut pairs {
            a = _mm512_sub_epi8(a, _mm512_movm_epi8(p[0]));
            b = _mm512_sub_epi8(b, _mm512_movm_epi8(p[1]));
        }
        if let [h] = pairs.remainder() {
            a = _mm512_sub_epi8(a, _mm512_movm_epi8(*h));
        }
        let mut counts = [[0u8; 64]; 2];
        // SAFETY: two stores of 64 bytes each into 64-byte arrays.
        unsafe {
            _mm512_storeu_si512(counts[0].as_mut_ptr() as *mut __m512i, a);
            _mm512_storeu_si512(counts[1].as_mut_ptr() as *mut __m512i, b);
        }
        for (i, one) in ones.iter_mut().enumerate() {
            *one += counts[0][i] as u64 + counts[1][i] as u64;
        }
    }
    let total = hashes.len() as u64;
    let mut code = 0u64;
    for (b, &n) in ones.iter().enumerate() {
        if 2 * n > total {
            code |= 1 << b;
        }
    }
    code
}

/// The CPU has what [`fnv1a_ranges`] needs (AVX-512 F and DQ).
pub fn has_dq() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq")
}

/// FNV-1a 64 of `buf[s..e]` for each range `(s, e)`, pushed to `out` in order: eight ranges
/// at a time in the lanes of one vector (one gather of eight words per eight bytes, then a
/// masked multiply per byte: a lane past its range's end keeps its hash). The gathers read
/// up to 7 bytes past the longest range of a group; a group that would read past `buf` is
/// hashed by the scalar loop, as are the last `len % 8` ranges.
///
/// # Safety
///
/// The CPU must have AVX-512 F and DQ ([`has_dq`]).
#[target_feature(enable = "avx512f,avx512dq")]
pub fn fnv1a_ranges(buf: &[u8], ranges: &[(usize, usize)], out: &mut Vec<u64>) {
    let prime = _mm512_set1_epi64(super::core::FNV_PRIME as i64);
    let low = _mm512_set1_epi64(0xff);
    let mut groups = ranges.chunks_exact(8);
    for g in &mut groups {
        let starts: [i64; 8] = std::array::from_fn(|l| g[l].0 as i64);
        let lens: [i64; 8] = std::array::from_fn(|l| (g[l].1 - g[l].0) as i64);
        let most = lens.iter().copied().max().unwrap_or(0) as usize;
        let reach = g.iter().map(|r| r.0).max().unwrap_or(0) + most.next_multiple_of(8);
        if reach > buf.len() {
            out.extend(g.iter().map(|&(s, e)| super::core::fnv1a(&buf[s..e])));
            continue;
        }
        // SAFETY: two unaligned loads of eight i64 from arrays of eight.
        let (vs, vl) = unsafe {
            (
                _mm512_loadu_si512(starts.as_ptr() as *const __m512i),
                _mm512_loadu_si512(lens.as_ptr() as *const __m512i),
            )
        };
        let mut h = _mm512_set1_epi64(super::core::FNV_OFFSET as i64);
        let mut j = 0usize;
        while j < most {
            let at = _mm512_add_epi64(vs, _mm512_set1_epi64(j as i64));
            // SAFETY: every lane reads buf[start + j .. start + j + 8], inside buf as
            // start + j + 8 <= start + most.next_multiple_of(8) <= reach <= buf.len().
            let mut words = unsafe { _mm512_i64gather_epi64::<1>(at, buf.as_ptr() as *const i64) };
            for t in 0..8 {
                let live = _mm512_cmpgt_epi64_mask(vl, _mm512_set1_epi64((j + t) as i64));
                let x = _mm512_xor_si512(h, _mm512_and_si512(words, low));
                h = _mm512_mask_mullo_epi64(h, live, x, prime);
                words = _mm512_srli_epi64::<8>(words);
            }
            j += 8;
        }
        let mut codes = [0u64; 8];
        // SAFETY: one store of eight u64 into an array of eight.
        unsafe { _mm512_storeu_si512(codes.as_mut_ptr() as *mut __m512i, h) };
        out.extend_from_slice(&codes);
    }
    out.extend(
        groups
            .remainder()
            .iter()
            .map(|&(s, e)| super::core::fnv1a(&buf[s..e])),
    );
}
