//! The MinHash kernels over slices: feature hashes, slot rows per scheme, band keys, estimates.
//!
//! The definitions are those of `neardup._kernels.minhash` (its module docstring),
//! all arithmetic wrapping on unsigned integers. Offsets arrays are `n + 1` non-decreasing
//! positions into the item array, checked by the bindings before any kernel runs.

use super::slots;
use crate::simd::{self, multiversion};

/// The golden-ratio constant of the feature hash and of SplitMix64.
pub const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
/// The slot value of an empty document in the 32-bit schemes.
pub const MAX32: u64 = 0xFFFF_FFFF;
/// The Mersenne prime 2**61 - 1 of datasketch's legacy permutations.
pub const PRIME61: u64 = (1 << 61) - 1;

/// MurmurHash3's 64-bit finalizer.
#[inline(always)]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

/// SplitMix64's output function of `x + MIX`.
#[inline(always)]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(MIX);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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

/// One step of the feature and band-key hashes: `(rotl(h, 27) ^ t) * MIX`.
#[inline(always)]
pub fn mix(h: u64, t: u64) -> u64 {
    (h.rotate_left(27) ^ t).wrapping_mul(MIX)
}

/// `x mod (2**61 - 1)`, exactly: `2**61 = 1` modulo the prime, so `x = q * 2**61 + l` is
/// `q + l` (at most `2**61 + 6`), one subtraction away from the remainder.
#[inline(always)]
fn mod61(x: u64) -> u64 {
    let r = (x & PRIME61) + (x >> 61);
    if r >= PRIME61 {
        r - PRIME61
    } else {
        r
    }
}

/// `(lo, hi)` of the shingle of the token hashes `toks`, `width` mixed in last.
#[inline(always)]
pub fn feature(toks: &[u64], width: u64, seed: u64) -> (u64, u64) {
    let mut h = seed ^ MIX;
    for &t in toks {
        h = mix(h, t);
    }
    h ^= width;
    (fmix64(h), fmix64(h.wrapping_add(MIX)))
}

/// The `k`-shingle features of one document's `toks` into `lo` and `hi` (cleared first), as
/// the reference's `combine_shingles` makes them: `len - k + 1` shingles of `k` tokens; a
/// shorter non-empty document gives one shingle of all its tokens (`joined`) or one per token.
/// The full shingles are mixed one token position at a time over all of them (a loop over
/// the shingles, which vectorizes): the same bits as one shingle after the other.
#[inline(always)]
pub fn doc_shingles(
    toks: &[u64],
    k: usize,
    joined: bool,
    seed: u64,
    lo: &mut Vec<u64>,
    hi: &mut Vec<u64>,
) {
    lo.clear();
    hi.clear();
    let nt = toks.len();
    if nt >= k {
        let n = nt - k + 1;
        lo.resize(n, seed ^ MIX);
        hi.resize(n, 0);
        for q in 0..k {
            let t = &toks[q..q + n];
            for (h, &x) in lo.iter_mut().zip(t) {
                *h = mix(*h, x);
            }
        }
        let width = k as u64;
        for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
            let x = *l ^ width;
            *l = fmix64(x);
            *h = fmix64(x.wrapping_add(MIX));
        }
    } else if nt > 0 && joined {
        let (l, h) = feature(toks, nt as u64, seed);
        lo.push(l);
        hi.push(h);
    } else {
        for &t in toks {
            let (l, h) = feature(&[t], 1, seed);
            lo.push(l);
            hi.push(h);
        }
    }
}

/// [`doc_shingles`] with the top 32 bits of each `lo` and `hi` into `fa` and `fb` (all three
/// cleared first) instead of `hi`: the inputs of the 32-bit slot loops, written in the pass
/// that finalizes the features (no second pass over `lo` and `hi`, no `hi` stored).
#[inline(always)]
pub fn doc_shingles32(
    toks: &[u64],
    k: usize,
    joined: bool,
    seed: u64,
    lo: &mut Vec<u64>,
    fa: &mut Vec<u32>,
    fb: &mut Vec<u32>,
) {
    lo.clear();
    fa.clear();
    fb.clear();
    let nt = toks.len();
    if nt >= k {
        let n = nt - k + 1;
        lo.resize(n, seed ^ MIX);
        fa.resize(n, 0);
        fb.resize(n, 0);
        for q in 0..k {
            let t = &toks[q..q + n];
            for (h, &x) in lo.iter_mut().zip(t) {
                *h = mix(*h, x);
            }
        }
        let width = k as u64;
        for ((l, a), b) in lo.iter_mut().zip(fa.iter_mut()).zip(fb.iter_mut()) {
            let x = *l ^ width;
            *l = fmix64(x);
            *a = (*l >> 32) as u32;
            *b = (fmix64(x.wrapping_add(MIX)) >> 32) as u32;
        }
    } else if nt > 0 && joined {
        let (l, h) = feature(toks, nt as u64, seed);
        lo.push(l);
        fa.push((l >> 32) as u32);
        fb.push((h >> 32) as u32);
    } else {
        for &t in toks {
            let (l, h) = feature(&[t], 1, seed);
            lo.push(l);
            fa.push((l >> 32) as u32);
            fb.push((h >> 32) as u32);
        }
    }
}

/// Feature hashes `(lo, hi)` of the `k`-shingles (`k >= 1`) of every document's token
/// hashes, with the per-document feature offsets.
pub fn combine_shingles(
    toks: &[u64],
    tok_offsets: &[i64],
    k: usize,
    joined: bool,
    seed: u64,
) -> (Vec<u64>, Vec<u64>, Vec<i64>) {
    combine_shingles_mv(toks, tok_offsets, k, joined, seed)
}

multiversion! {
    fn combine_shingles_mv(
        toks: &[u64], tok_offsets: &[i64], k: usize, joined: bool, seed: u64
    ) -> (Vec<u64>, Vec<u64>, Vec<i64>) = combine_shingles_body;
}

#[inline(always)]
fn combine_shingles_body(
    toks: &[u64],
    tok_offsets: &[i64],
    k: usize,
    joined: bool,
    seed: u64,
) -> (Vec<u64>, Vec<u64>, Vec<i64>) {
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    let mut offsets = Vec::with_capacity(tok_offsets.len());
    offsets.push(0i64);
    let (mut dlo, mut dhi) = (Vec::new(), Vec::new());
    for w in tok_offsets.windows(2) {
        let doc = &toks[w[0] as usize..w[1] as usize];
        doc_shingles(doc, k, joined, seed, &mut dlo, &mut dhi);
        lo.extend_from_slice(&dlo);
        hi.extend_from_slice(&dhi);
        offsets.push(lo.len() as i64);
    }
    (lo, hi, offsets)
}

/// The longest run of `offsets` (the scratch size of a per-document pass).
fn longest(offsets: &[i64]) -> usize {
    offsets
        .windows(2)
        .map(|w| (w[1] - w[0]) as usize)
        .max()
        .unwrap_or(0)
}

/// Preset `xxh3`: slot `i` = min over the features of `(lo >> 32) + i * (hi >> 32)` mod 2**32.
pub fn minhash_double32(lo: &[u64], hi: &[u64], offsets: &[i64], num_perm: usize) -> Vec<u64> {
    minhash_double32_mv(lo, hi, offsets, num_perm)
}

multiversion! {
    fn minhash_double32_mv(lo: &[u64], hi: &[u64], offsets: &[i64], num_perm: usize) -> Vec<u64>
        = minhash_double32_body;
}

#[inline(always)]
fn minhash_double32_body(lo: &[u64], hi: &[u64], offsets: &[i64], num_perm: usize) -> Vec<u64> {
    let level = simd::level();
    let n_docs = offsets.len() - 1;
    let mut out = vec![0u64; n_docs * num_perm];
    let cap = longest(offsets);
    let mut fa = vec![0u32; cap];
    let mut fb = vec![0u32; cap];
    for (d, w) in offsets.windows(2).enumerate() {
        let (a, b) = (w[0] as usize, w[1] as usize);
        let nf = b - a;
        for (j, (&l, &h)) in lo[a..b].iter().zip(&hi[a..b]).enumerate() {
            fa[j] = (l >> 32) as u32;
            fb[j] = (h >> 32) as u32;
        }
        let row = &mut out[d * num_perm..(d + 1) * num_perm];
        slots::double32(&fa[..nf], &fb[..nf], row, level);
    }
    out
}

/// Preset `txtfp`: slot `i` = min over the features of `lo + i * hi` mod 2**64.
pub fn minhash_double(lo: &[u64], hi: &[u64], offsets: &[i64], num_perm: usize) -> Vec<u64> {
    minhash_double_mv(lo, hi, offsets, num_perm, simd::level())
}

multiversion! {
    fn minhash_double_mv(
        lo: &[u64], hi: &[u64], offsets: &[i64], num_perm: usize, level: simd::Level
    ) -> Vec<u64> = minhash_double_body;
}

/// The slots of each document's features: with AVX-512 (64-bit minimum and multiply in
/// vector registers) a pass over the slots per feature, which the compiler vectorizes;
/// otherwise blocks of 32 slots kept in registers while the features stream past (measured
/// 2x faster without those instructions, 1.3x slower with them).
#[inline(always)]
fn minhash_double_body(
    lo: &[u64],
    hi: &[u64],
    offsets: &[i64],
    num_perm: usize,
    level: simd::Level,
) -> Vec<u64> {
    const B: usize = 32;
    let n_docs = offsets.len() - 1;
    let mut out = vec![u64::MAX; n_docs * num_perm];
    let idx: Vec<u64> = (0..num_perm as u64).collect();
    for (d, w) in offsets.windows(2).enumerate() {
        let (fl, fh) = (
            &lo[w[0] as usize..w[1] as usize],
            &hi[w[0] as usize..w[1] as usize],
        );
        let row = &mut out[d * num_perm..(d + 1) * num_perm];
        if level == simd::Level::Avx512 {
            for (&l, &h) in fl.iter().zip(fh) {
                for (o, &i) in row.iter_mut().zip(&idx) {
                    *o = (*o).min(l.wrapping_add(i.wrapping_mul(h)));
                }
            }
            continue;
        }
        for (block, first) in row.chunks_mut(B).zip((0..).step_by(B)) {
            let mut acc = [u64::MAX; B];
            let mut at = [0u64; B];
            for (k, v) in at.iter_mut().enumerate() {
                *v = (first + k) as u64;
            }
            for (&l, &h) in fl.iter().zip(fh) {
                for k in 0..B {
                    acc[k] = acc[k].min(l.wrapping_add(at[k].wrapping_mul(h)));
                }
            }
            block.copy_from_slice(&acc[..block.len()]);
        }
    }
    out
}

/// datasketch 2.x `affine32` slots, `(n_docs * num_perm)` uint32: slot `i` = min over the
/// document's hashes `h` of `a[i] * fmix32(h) + b[i]` mod 2**32 (`2**32 - 1` without any).
pub fn affine32(hv: &[u32], offsets: &[i64], a: &[u32], b: &[u32]) -> Vec<u32> {
    affine32_mv(hv, offsets, a, b)
}

multiversion! {
    fn affine32_mv(hv: &[u32], offsets: &[i64], a: &[u32], b: &[u32]) -> Vec<u32>
        = affine32_body;
}

#[inline(always)]
fn affine32_body(hv: &[u32], offsets: &[i64], a: &[u32], b: &[u32]) -> Vec<u32> {
    let level = simd::level();
    let k = a.len().min(b.len());
    let (a, b) = (&a[..k], &b[..k]);
    let n_docs = offsets.len() - 1;
    let mut out = vec![u32::MAX; n_docs * k];
    let mut mixed = Vec::new();
    for (d, w) in offsets.windows(2).enumerate() {
        mixed.clear();
        mixed.extend(hv[w[0] as usize..w[1] as usize].iter().map(|&x| fmix32(x)));
        slots::affine32(&mixed, a, b, &mut out[d * k..(d + 1) * k], level);
    }
    out
}

/// datasketch `legacy` slots: min over the document's hashes `h` of
/// `((a[i] * h + b[i]) mod 2**64) mod (2**61 - 1)`, low 32 bits (`2**32 - 1` without any).
pub fn minhash_legacy(hv: &[u64], offsets: &[i64], a: &[u64], b: &[u64]) -> Vec<u64> {
    minhash_legacy_mv(hv, offsets, a, b)
}

multiversion! {
    fn minhash_legacy_mv(hv: &[u64], offsets: &[i64], a: &[u64], b: &[u64]) -> Vec<u64>
        = minhash_legacy_body;
}

#[inline(always)]
fn minhash_legacy_body(hv: &[u64], offsets: &[i64], a: &[u64], b: &[u64]) -> Vec<u64> {
    let k = a.len().min(b.len());
    let (a, b) = (&a[..k], &b[..k]);
    let n_docs = offsets.len() - 1;
    let mut out = vec![MAX32; n_docs * k];
    for (d, w) in offsets.windows(2).enumerate() {
        let sig = &mut out[d * k..(d + 1) * k];
        for &h in &hv[w[0] as usize..w[1] as usize] {
            for ((s, &ai), &bi) in sig.iter_mut().zip(a).zip(b) {
                let v = mod61(ai.wrapping_mul(h).wrapping_add(bi)) & MAX32;
                *s = (*s).min(v);
            }
        }
    }
    out
}

/// One-permutation hashing with optimal densification (Shrivastava 2017), `num_perm >= 1`.
pub fn oph(h: &[u64], offsets: &[i64], num_perm: usize, seed: u64) -> Vec<u64> {
    let k = num_perm as u64;
    let n_docs = offsets.len() - 1;
    let mut out = vec![u64::MAX; n_docs * num_perm];
    let mut src = vec![0u64; num_perm];
    for (d, w) in offsets.windows(2).enumerate() {
        let sig = &mut out[d * num_perm..(d + 1) * num_perm];
        for &x in &h[w[0] as usize..w[1] as usize] {
            let bin = (((x >> 32) * k) >> 32) as usize;
            if x < sig[bin] {
                sig[bin] = x;
            }
        }
        let filled = sig.iter().filter(|&&v| v != u64::MAX).count();
        if filled == 0 || filled == num_perm {
            continue;
        }
        src.copy_from_slice(sig);
        for (i, s) in sig.iter_mut().enumerate() {
            if src[i] != u64::MAX {
                continue;
            }
            let mut t = 1u64;
            loop {
                let z = splitmix64(seed ^ ((i as u64) << 32) ^ t);
                let j = (((z >> 32) * k) >> 32) as usize;
                if src[j] != u64::MAX {
                    *s = src[j];
                    break;
                }
                t = t.wrapping_add(1);
            }
        }
    }
    out
}

/// The 64-bit key of every (row, band) of `sig` (`n` rows of `width` 32-bit slots): for band
/// `j`, `h = (j + 1) * MIX`, then `h = mix(h, v)` for each of its `rows` slots, key `fmix64(h)`.
pub fn band_keys(sig: &[u32], n: usize, width: usize, bands: usize, rows: usize) -> Vec<u64> {
    // written in place, neither zeroed first nor pushed key by key; the bands' chains side by
    // side were slower (their slots are strided), with AVX-512 too
    let mut out: Vec<u64> = Vec::with_capacity(n * bands);
    if bands == 0 {
        return out;
    }
    let keys = &mut out.spare_capacity_mut()[..n * bands];
    for (d, keys) in keys.chunks_exact_mut(bands).enumerate() {
        let row = &sig[d * width..d * width + bands * rows];
        for (j, key) in keys.iter_mut().enumerate() {
            let mut h = (j as u64 + 1).wrapping_mul(MIX);
            for &v in &row[j * rows..(j + 1) * rows] {
                h = mix(h, v as u64);
            }
            key.write(fmix64(h));
        }
    }
    // SAFETY: the loop wrote every one of the n * bands keys
    unsafe { out.set_len(n * bands) };
    out
}

/// Fraction of equal slots between rows `a[ai[t]]` and `b[bi[t]]` (rows of `width` slots;
/// the indices already resolved to rows in range).
pub fn estimate(a: &[u32], ai: &[usize], b: &[u32], bi: &[usize], width: usize) -> Vec<f64> {
    estimate_mv(a, ai, b, bi, width)
}

multiversion! {
    fn estimate_mv(a: &[u32], ai: &[usize], b: &[u32], bi: &[usize], width: usize) -> Vec<f64>
        = estimate_body;
}

#[inline(always)]
fn estimate_body(a: &[u32], ai: &[usize], b: &[u32], bi: &[usize], width: usize) -> Vec<f64> {
    /// Pairs ahead whose rows are prefetched: the rows are random, the loop memory-bound.
    const AHEAD: usize = 8;
    let mut out = vec![0f64; ai.len()];
    for (t, o) in out.iter_mut().enumerate() {
        #[cfg(target_arch = "x86_64")]
        if t + AHEAD < ai.len() {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let (pa, pb) = (ai[t + AHEAD] * width, bi[t + AHEAD] * width);
            for off in (0..width).step_by(16) {
                // SAFETY: a prefetch reads nothing; the addresses lie in the rows (in range).
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(a.as_ptr().wrapping_add(pa + off).cast());
                    _mm_prefetch::<_MM_HINT_T0>(b.as_ptr().wrapping_add(pb + off).cast());
                }
            }
        }
        let (x, y) = (ai[t], bi[t]);
        let ra = &a[x * width..(x + 1) * width];
        let rb = &b[y * width..(y + 1) * width];
        // a sum of 0/1 (not a filtered count): the form the compiler vectorizes
        let same: u32 = ra.iter().zip(rb).map(|(p, q)| (p == q) as u32).sum();
        *o = same as f64 / width as f64;
    }
    out
}

/// Sort `run` and move its distinct values to the front; return how many. The rest of `run`
/// keeps the sorted values that were there (as the reference leaves them).
pub fn sort_unique<T: Ord + Copy>(run: &mut [T]) -> usize {
    run.sort_unstable();
    let mut m = 0;
    for k in 0..run.len() {
        if k == 0 || run[k] != run[m - 1] {
            run[m] = run[k];
            m += 1;
        }
    }
    m
}

/// The most buckets [`sorted_unique32`] counts into (longer runs take `sort_unique`).
const MAX_BUCKETS: usize = 1 << 14;

/// The distinct values of `run` (32-bit hashes), sorted, into `out` (cleared first): what
/// `sort_unique` keeps, by a counting sort on the top bits into about one bucket per value
/// and an insertion pass over the nearly sorted result that drops repeats as it goes (linear
/// for uniform hashes). Runs too short or too long for it take `sort_unique`, and so does the
/// rest of a run whose insertion pass moves more than a few values per value (not uniform).
/// `counts` is scratch. Inlined, so that it is compiled for the caller's instruction set.
#[inline(always)]
pub fn sorted_unique32(run: &[u32], out: &mut Vec<u32>, counts: &mut Vec<u32>) {
    const SHORT: usize = 48;
    const MOVES_PER_VALUE: usize = 8;
    out.clear();
    out.extend_from_slice(run);
    let n = run.len();
    if !(SHORT..=MAX_BUCKETS).contains(&n) {
        let m = sort_unique(out);
        out.truncate(m);
        return;
    }
    // ceil(log2 n) bits: between one and two values per bucket
    let bits = usize::BITS - (n - 1).leading_zeros();
    let shift = 32 - bits;
    let buckets = 1usize << bits;
    if counts.len() < MAX_BUCKETS {
        counts.resize(MAX_BUCKETS, 0);
    }
    // a fixed-size view: the masked bucket indices need no bounds checks
    let counts: &mut [u32; MAX_BUCKETS] = (&mut counts[..MAX_BUCKETS]).try_into().unwrap();
    let slot = |v: u32| (v >> shift) as usize & (MAX_BUCKETS - 1);
    counts[..buckets].fill(0);
    for &v in run {
        counts[slot(v)] += 1;
    }
    let mut sum = 0u32;
    for c in counts[..buckets].iter_mut() {
        let here = *c;
        *c = sum; // each bucket's first place
        sum += here;
    }
    let placed = &mut out[..n];
    for &v in run {
        let at = &mut counts[slot(v)];
        placed[*at as usize] = v;
        *at += 1;
    }
    // buckets are in order: each value is at most a bucket away from its place; out[..m]
    // holds the distinct values so far, sorted (m <= k, so out[k] is still unread), and
    // `last` is out[m - 1], their largest (kept in a register: an insertion puts a smaller
    // value before it). `n >= SHORT`, so there is a first value.
    let (mut m, mut moves) = (1usize, 0usize);
    let mut last = placed[0];
    for k in 1..n {
        let v = placed[k];
        // most values come after every one so far, or repeat the last
        if v > last {
            placed[m] = v;
            last = v;
            m += 1;
            continue;
        }
        if v == last {
            continue;
        }
        let mut j = m - 1;
        while j > 0 && placed[j - 1] > v {
            j -= 1;
        }
        if j > 0 && placed[j - 1] == v {
            continue;
        }
        moves += m - j;
        placed.copy_within(j..m, j + 1);
        placed[j] = v;
        if moves > MOVES_PER_VALUE * n {
            // not uniform: sort what is left with what is done
            placed.copy_within(k + 1..n, m + 1);
            let u = sort_unique(&mut placed[..m + 1 + (n - k - 1)]);
            out.truncate(u);
            return;
        }
        m += 1;
    }
    out.truncate(m);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod61_is_the_remainder() {
        for x in [
            0,
            1,
            PRIME61 - 1,
            PRIME61,
            PRIME61 + 1,
            u64::MAX,
            u64::MAX - 7,
            1 << 61,
        ] {
            assert_eq!(mod61(x), x % PRIME61, "{x}");
        }
    }

    #[test]
    fn fmix64_of_zero_and_one() {
        assert_eq!(fmix64(0), 0);
        assert_eq!(fmix64(1), 0xB456_BCFC_34C2_CB2C);
    }

    #[test]
    fn shingles_by_position_equal_one_by_one() {
        let toks: Vec<u64> = (0..40u64).map(|x| x.wrapping_mul(MIX) ^ 77).collect();
        for k in 1..7 {
            let (mut lo, mut hi) = (Vec::new(), Vec::new());
            doc_shingles(&toks, k, true, 99, &mut lo, &mut hi);
            for j in 0..lo.len() {
                assert_eq!((lo[j], hi[j]), feature(&toks[j..j + k], k as u64, 99));
            }
        }
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        doc_shingles(&toks[..3], 5, false, 1, &mut lo, &mut hi);
        assert_eq!(lo.len(), 3);
        doc_shingles(&toks[..3], 5, true, 1, &mut lo, &mut hi);
        assert_eq!((lo[0], hi[0]), feature(&toks[..3], 3, 1));
    }

    #[test]
    fn doc_shingles32_gives_the_top_bits_of_doc_shingles() {
        let toks: Vec<u64> = (0..40u64).map(|x| x.wrapping_mul(MIX) ^ 3).collect();
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        let (mut lo2, mut fa, mut fb) = (Vec::new(), Vec::new(), Vec::new());
        for nt in [0, 1, 2, 4, 5, 6, 40] {
            for k in [1, 3, 5] {
                for joined in [true, false] {
                    doc_shingles(&toks[..nt], k, joined, 7, &mut lo, &mut hi);
                    doc_shingles32(&toks[..nt], k, joined, 7, &mut lo2, &mut fa, &mut fb);
                    assert_eq!(lo2, lo, "nt={nt} k={k} joined={joined}");
                    let top = |v: &[u64]| v.iter().map(|&x| (x >> 32) as u32).collect::<Vec<_>>();
                    assert_eq!(fa, top(&lo), "nt={nt} k={k} joined={joined}");
                    assert_eq!(fb, top(&hi), "nt={nt} k={k} joined={joined}");
                }
            }
        }
    }

    #[test]
    fn sorted_unique32_equals_sort_unique() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut out, mut counts) = (Vec::new(), Vec::new());
        for n in [
            0usize, 1, 5, 47, 48, 49, 64, 65, 100, 1000, 5000, 16384, 16385, 40000,
        ] {
            for kind in 0..4 {
                let run: Vec<u32> = (0..n)
                    .map(|_| match kind {
                        0 => next() as u32,                 // uniform hashes
                        1 => (next() % 50) as u32,          // many repeats
                        2 => (next() as u32) & 0x00FF_FFFF, // top bits all zero
                        _ => (next() as u32) | 0xFFFF_0000, // top bits all one
                    })
                    .collect();
                let mut want = run.clone();
                let m = sort_unique(&mut want);
                sorted_unique32(&run, &mut out, &mut counts);
                assert_eq!(out, want[..m], "n={n} kind={kind}");
            }
        }
    }

    #[test]
    fn sort_unique_keeps_the_sorted_tail() {
        let mut run = [5u32, 1, 5, 3, 1];
        assert_eq!(sort_unique(&mut run), 3);
        assert_eq!(run, [1, 3, 5, 5, 5]);
    }

    #[test]
    fn oph_densifies_from_filled_bins() {
        let out = oph(&[0x8000_0000_0000_0000], &[0, 1], 4, 7);
        assert!(out.iter().all(|&v| v == 0x8000_0000_0000_0000));
    }
}
