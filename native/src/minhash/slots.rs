//! The slot loops of the 32-bit schemes, the hot loops of MinHash, in explicit SIMD.
//!
//! A document's slots are reduced in blocks held in vector registers while its features
//! stream past: for double hashing, slot `i` takes `a_j + i * b_j` (one multiply per block,
//! then one add per register: the next register's slots are `W` further on); for datasketch's
//! `affine32`, `a_i * fmix32(h_j) + b_i`. Written with `core::arch` intrinsics because the
//! compiler's auto-vectorization of these loops changes with the block size and the target
//! (measured: from 2 to 250 µs per document for the same loop); every path gives the same
//! values as the scalar loop, which also runs the slots left over after the blocks.

use crate::simd::Level;

/// A slot row's element: the 32-bit slots as `u64` (the public rows) or as they are (`u32`,
/// the rows the default path's band keys read, also as `MaybeUninit<u32>`). Implemented for
/// these only (the SIMD blocks store a 4-byte `Slot` as `u32` lanes).
pub trait Slot: Copy {
    fn of(v: u32) -> Self;
}

impl Slot for u64 {
    #[inline(always)]
    fn of(v: u32) -> Self {
        v as u64
    }
}

impl Slot for u32 {
    #[inline(always)]
    fn of(v: u32) -> Self {
        v
    }
}

/// A `u32` slot written into a row's spare capacity (`double32` writes every slot of its
/// output, so the row needs no zeroing first).
impl Slot for std::mem::MaybeUninit<u32> {
    #[inline(always)]
    fn of(v: u32) -> Self {
        std::mem::MaybeUninit::new(v)
    }
}

/// Slot `first + k` into `out[k]`: min over the features of `fa[j] + (first + k) * fb[j]`
/// (mod 2**32), `2**32 - 1` without features.
#[inline(always)]
fn double32_scalar<S: Slot>(fa: &[u32], fb: &[u32], out: &mut [S], first: usize) {
    for (k, o) in out.iter_mut().enumerate() {
        let i = (first + k) as u32;
        let mut m = u32::MAX;
        for (&a, &b) in fa.iter().zip(fb) {
            m = m.min(a.wrapping_add(i.wrapping_mul(b)));
        }
        *o = S::of(m);
    }
}

/// Slot `i` of `out` = min over the features `j` of `fa[j] + i * fb[j]` (mod 2**32), or
/// `2**32 - 1` without features (`fa` and `fb` of one length). Every slot of `out` is
/// written (the SIMD blocks, then the scalar loop for the rest).
#[inline]
pub fn double32<S: Slot>(fa: &[u32], fb: &[u32], out: &mut [S], level: Level) {
    let n = fa.len().min(fb.len());
    let (fa, fb) = (&fa[..n], &fb[..n]);
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: `level` comes from `simd::level()`, which checked the CPU's features.
        Level::Avx512 => return unsafe { x86::double32_avx512(fa, fb, out, 0) },
        Level::Avx2 => return unsafe { x86::double32_avx2(fa, fb, out, 0) },
        Level::Base => {}
    }
    let _ = level;
    double32_scalar(fa, fb, out, 0)
}

/// `sig[i] = min(sig[i], min over mixed hashes h of a[i] * h + b[i])` (mod 2**32).
#[inline(always)]
fn affine32_scalar(mixed: &[u32], a: &[u32], b: &[u32], sig: &mut [u32]) {
    for &h in mixed {
        for ((s, &ai), &bi) in sig.iter_mut().zip(a).zip(b) {
            *s = (*s).min(ai.wrapping_mul(h).wrapping_add(bi));
        }
    }
}

/// Slot `i` of `sig` = min over the already mixed hashes `h` of `a[i] * h + b[i]`
/// (mod 2**32), `2**32 - 1` without any (`a`, `b` and `sig` of one length).
#[inline]
pub fn affine32(mixed: &[u32], a: &[u32], b: &[u32], sig: &mut [u32], level: Level) {
    sig.fill(u32::MAX);
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: `level` comes from `simd::level()`, which checked the CPU's features.
        Level::Avx512 => return unsafe { x86::affine32_avx512(mixed, a, b, sig) },
        Level::Avx2 => return unsafe { x86::affine32_avx2(mixed, a, b, sig) },
        Level::Base => {}
    }
    let _ = level;
    affine32_scalar(mixed, a, b, sig)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    use super::{affine32_scalar, double32_scalar, Slot};

    /// The double-hashing and affine blocks of one vector width: `R` registers of `W`
    /// lanes per block, then single registers, then the scalar loop.
    macro_rules! width {
        (
            $feature:literal, $double:ident, $affine:ident, $block:ident, $ablock:ident,
            $v:ty, $w:literal, $slli:ident, $log2w:literal, $set1:ident, $add:ident, $mullo:ident,
            $min:ident, $loadu:ident, $storeu:ident, $lanes:expr, $rest:path, $arest:path
        ) => {
            #[target_feature(enable = $feature)]
            fn $block<S: Slot, const R: usize>(
                fa: &[u32],
                fb: &[u32],
                out: &mut [S],
                first: usize,
            ) {
                let lanes: $v = $lanes;
                let idx0 = $add($set1(first as i32), lanes);
                let mut acc = [$set1(-1); R];
                for (&a, &b) in fa.iter().zip(fb) {
                    let vb = $set1(b as i32);
                    let step = $slli::<$log2w>(vb); // W * b: the next register's slots
                    let mut x = $add($set1(a as i32), $mullo(idx0, vb));
                    for r in acc.iter_mut() {
                        *r = $min(*r, x);
                        x = $add(x, step);
                    }
                }
                if std::mem::size_of::<S>() == 4 && out.len() >= R * $w {
                    // u32 slots (the 4-byte `Slot`s): the registers go straight out
                    for (r, v) in acc.iter().enumerate() {
                        // SAFETY: `out` holds at least R * W u32 lanes, `v` is W of them.
                        unsafe { $storeu(out.as_mut_ptr().add(r * $w).cast(), *v) };
                    }
                    return;
                }
                let mut tmp = [[0u32; $w]; R];
                for (t, v) in tmp.iter_mut().zip(acc.iter()) {
                    // SAFETY: `t` holds W u32 lanes, the width of `v`.
                    unsafe { $storeu(t.as_mut_ptr().cast(), *v) };
                }
                for (o, &v) in out.iter_mut().zip(tmp.iter().flatten()) {
                    *o = S::of(v);
                }
            }

            /// Slot `first + k` into `out[k]` (see `double32_scalar`).
            #[target_feature(enable = $feature)]
            pub fn $double<S: Slot>(fa: &[u32], fb: &[u32], out: &mut [S], first: usize) {
                const BIG: usize = 8 * $w;
                let mut i = 0;
                while i + BIG <= out.len() {
                    $block::<S, 8>(fa, fb, &mut out[i..i + BIG], first + i);
                    i += BIG;
                }
                while i + $w <= out.len() {
                    $block::<S, 1>(fa, fb, &mut out[i..i + $w], first + i);
                    i += $w;
                }
                // SAFETY: the caller's CPU has this function's features, a superset of the
                // rest's (none for the scalar loop).
                #[allow(unused_unsafe)]
                unsafe {
                    $rest(fa, fb, &mut out[i..], first + i)
                };
            }

            #[target_feature(enable = $feature)]
            fn $ablock<const R: usize>(mixed: &[u32], a: &[u32], b: &[u32], sig: &mut [u32]) {
                let mut va = [$set1(0); R];
                let mut vb = [$set1(0); R];
                for r in 0..R {
                    // SAFETY: `a`, `b` and `sig` hold R * W values (the caller's block).
                    unsafe {
                        va[r] = $loadu(a.as_ptr().add(r * $w).cast());
                        vb[r] = $loadu(b.as_ptr().add(r * $w).cast());
                    }
                }
                let mut acc = [$set1(-1); R];
                for &h in mixed {
                    let vh = $set1(h as i32);
                    for r in 0..R {
                        acc[r] = $min(acc[r], $add($mullo(va[r], vh), vb[r]));
                    }
                }
                for (r, v) in acc.iter().enumerate() {
                    // SAFETY: as above.
                    unsafe { $storeu(sig.as_mut_ptr().add(r * $w).cast(), *v) };
                }
            }

            /// `sig` (filled with `u32::MAX`) = min over `mixed` of `a * h + b`, slot by slot.
            #[target_feature(enable = $feature)]
            pub fn $affine(mixed: &[u32], a: &[u32], b: &[u32], sig: &mut [u32]) {
                const BIG: usize = 4 * $w;
                let n = sig.len().min(a.len()).min(b.len());
                let mut i = 0;
                while i + BIG <= n {
                    $ablock::<4>(mixed, &a[i..i + BIG], &b[i..i + BIG], &mut sig[i..i + BIG]);
                    i += BIG;
                }
                while i + $w <= n {
                    $ablock::<1>(mixed, &a[i..i + $w], &b[i..i + $w], &mut sig[i..i + $w]);
                    i += $w;
                }
                // SAFETY: as in the double-hashing loop.
                #[allow(unused_unsafe)]
                unsafe {
                    $arest(mixed, &a[i..n], &b[i..n], &mut sig[i..n])
                };
            }
        };
    }

    width!(
        "avx2",
        double32_avx2,
        affine32_avx2,
        block_avx2,
        ablock_avx2,
        __m256i,
        8,
        _mm256_slli_epi32,
        3,
        _mm256_set1_epi32,
        _mm256_add_epi32,
        _mm256_mullo_epi32,
        _mm256_min_epu32,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        double32_scalar,
        affine32_scalar
    );
    width!(
        "avx512f,avx2",
        double32_avx512,
        affine32_avx512,
        block_avx512,
        ablock_avx512,
        __m512i,
        16,
        _mm512_slli_epi32,
        4,
        _mm512_set1_epi32,
        _mm512_add_epi32,
        _mm512_mullo_epi32,
        _mm512_min_epu32,
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        double32_avx2,
        affine32_avx2
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::level;

    #[test]
    fn every_level_gives_the_scalar_slots() {
        let fa: Vec<u32> = (0..300u32).map(|x| x.wrapping_mul(0x9E37_79B9)).collect();
        let fb: Vec<u32> = (0..300u32)
            .map(|x| x.wrapping_mul(0x85EB_CA6B) ^ 5)
            .collect();
        let mut levels = vec![Level::Base];
        if level() != Level::Base {
            levels.push(Level::Avx2);
        }
        if level() == Level::Avx512 {
            levels.push(Level::Avx512);
        }
        for np in [0, 1, 7, 8, 9, 16, 63, 64, 65, 100, 128, 129, 200, 256, 300] {
            for nf in [0, 1, 17, 300] {
                let mut want = vec![0u64; np];
                double32_scalar(&fa[..nf], &fb[..nf], &mut want, 0);
                let mut want_aff = vec![u32::MAX; np];
                affine32_scalar(&fa[..nf], &fb[..np], &fa[..np], &mut want_aff);
                for &l in &levels {
                    let mut got = vec![0u64; np];
                    double32(&fa[..nf], &fb[..nf], &mut got, l);
                    assert_eq!(got, want, "double32 {l:?} np={np} nf={nf}");
                    let mut got32 = vec![0u32; np];
                    double32(&fa[..nf], &fb[..nf], &mut got32, l);
                    let wide: Vec<u64> = got32.iter().map(|&v| v as u64).collect();
                    assert_eq!(wide, want, "double32 as u32 {l:?} np={np} nf={nf}");
                    let mut spare = vec![std::mem::MaybeUninit::new(7u32); np];
                    double32(&fa[..nf], &fb[..nf], &mut spare, l);
                    // SAFETY: initialised above (and every slot written by double32)
                    let spare: Vec<u32> =
                        spare.iter().map(|v| unsafe { v.assume_init() }).collect();
                    assert_eq!(
                        spare, got32,
                        "double32 into spare room {l:?} np={np} nf={nf}"
                    );
                    let mut sig = vec![0u32; np];
                    affine32(&fa[..nf], &fb[..np], &fa[..np], &mut sig, l);
                    assert_eq!(sig, want_aff, "affine32 {l:?} np={np} nf={nf}");
                }
            }
        }
    }
}
