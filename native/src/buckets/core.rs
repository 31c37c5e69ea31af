//! The bucket walk: every bucket of some band columns of the keys, each pair of its rows
//! verified once (in the first band the two rows share), with union-find on the way.
//!
//! The order of the walk is part of the result: bands in order, a band's buckets by their
//! first row, a bucket's pairs `(u, v)` in ascending rows. In join mode a pair whose rows are
//! already in one cluster is skipped unverified, so the accepted pairs are the spanning
//! forest that this order builds. `neardup._kernels.buckets` gives the same pairs,
//! roots and count by another road (all candidates at once, then the order replayed).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use crate::sets::core::find;

/// Cells of a set profile: a set's values counted by their low 5 bits (32 cells: half the
/// memory of 64, the largest buffer of the walk and its peak at 100k documents).
pub const PROFILE: usize = 32;
/// A profile cell holds at most this count; a row with a cell this full is not filtered.
pub const FULL: u8 = 255;

/// `(n, PROFILE)` counts (C order) of each row's values by `value % PROFILE`, saturating at
/// `FULL`, and whether a row has a cell of `FULL` or more (its profile bounds nothing).
pub fn set_profiles<V: Copy + Into<u64>>(values: &[V], offsets: &[i64]) -> (Vec<u8>, Vec<bool>) {
    let n = offsets.len() - 1;
    let mut prof = vec![0u8; n * PROFILE];
    let mut big = vec![false; n];
    let mut counts = [0u64; PROFILE];
    for r in 0..n {
        // counted wide, then saturated once: a cell reaches FULL only past FULL - 1
        counts.fill(0);
        for &v in &values[offsets[r] as usize..offsets[r + 1] as usize] {
            counts[(v.into() as usize) & (PROFILE - 1)] += 1;
        }
        let row = &mut prof[r * PROFILE..(r + 1) * PROFILE];
        let mut most = 0u64;
        for (cell, &c) in row.iter_mut().zip(&counts) {
            *cell = c.min(FULL as u64) as u8;
            most = most.max(c);
        }
        big[r] = most >= FULL as u64;
    }
    (prof, big)
}

/// A set member type of the walk: 32-bit members have an AVX2 intersection count.
pub trait Member: Copy + Ord {
    /// `values` as 32-bit members, if they are.
    fn as_u32(values: &[Self]) -> Option<&[u32]>;
}

impl Member for u32 {
    #[inline(always)]
    fn as_u32(values: &[u32]) -> Option<&[u32]> {
        Some(values)
    }
}

impl Member for u64 {
    #[inline(always)]
    fn as_u32(_: &[u64]) -> Option<&[u32]> {
        None
    }
}

/// The inputs of one walk (checked by the bindings): `keys` is `(n, bands)` in C order; with
/// `exact`, `values`/`offsets` are each row's sorted set (CSR), else `sigs` is `(n,
/// num_perm)` 32-bit signatures; `prof`/`big` come from [`set_profiles`] (empty: no filter).
pub struct Walk<'a, V> {
    pub keys: &'a [u64],
    pub n: usize,
    pub bands: usize,
    pub values: &'a [V],
    pub offsets: &'a [i64],
    pub sigs: &'a [u32],
    pub num_perm: usize,
    pub prof: &'a [u8],
    pub big: &'a [bool],
    pub exact: bool,
    pub threshold: f64,
    pub join: bool,
    /// Each band's rows that share its key with another row (`shared_rows`'s masks:
    /// `bands` runs of `n.div_ceil(64)` words), or empty: the grouping of a band then
    /// takes only those rows (the others are buckets of one row, which no walk reads).
    pub masks: &'a [u64],
}

/// What a walk found: accepted pairs `a < b` with their similarity (in walk order), each
/// row's cluster root (its smallest member), and how many pairs were compared.
pub struct Found {
    pub a: Vec<i64>,
    pub b: Vec<i64>,
    pub sim: Vec<f64>,
    pub roots: Vec<i64>,
    pub verified: i64,
}

/// One less than the intersection that a Jaccard of `threshold` needs (conservative):
/// `inter / (na + nb - inter) >= t` needs `inter >= t (na + nb) / (1 + t)`.
#[inline]
fn need(na: i64, nb: i64, threshold: f64) -> i64 {
    let x = threshold * (na + nb) as f64 / (1.0 + threshold);
    // ceil(x) for x >= 0 without the libm call (the baseline target has no `roundsd`)
    // SAFETY: x is finite, at least 0 and at most the sizes' sum: it truncates into an i64
    let t: i64 = unsafe { x.to_int_unchecked() };
    t + ((t as f64) < x) as i64 - 1
}

/// Whether a sorted run has no repeated value (the AVX2 count needs sets, not multisets).
#[inline(always)]
fn strict<V: Copy + Ord>(run: &[V]) -> bool {
    // a fold, not `all`: no early exit, so the compiler vectorizes it
    run.windows(2).fold(true, |ok, p| ok & (p[0] < p[1]))
}

/// The size of the intersection of the sorted runs `a` and `b` (a merge: equal values pair
/// off, repeats too), or `None` once it certainly stays below `need` (the rest cannot catch
/// up).
#[inline(always)]
fn common<V: Copy + Ord>(a: &[V], b: &[V], need: i64) -> Option<i64> {
    let (na, nb) = (a.len(), b.len());
    let (mut i, mut j, mut inter) = (0usize, 0usize, 0i64);
    loop {
        let left = (na - i).min(nb - j);
        if inter + (left as i64) < need {
            return None;
        }
        if left == 0 {
            return Some(inter);
        }
        // each branch-free step moves i or j (or both) by one: `left` steps read no value
        // past either end
        for _ in 0..left.min(16) {
            // SAFETY: i < na and j < nb, by the bound on the steps above
            let (x, y) = unsafe { (*a.get_unchecked(i), *b.get_unchecked(j)) };
            inter += (x == y) as i64;
            i += (x <= y) as usize;
            j += (y <= x) as usize;
        }
    }
}

/// [`common`] of two sets of distinct 32-bit values, 8 by 8 values: each value of one block
/// against all 8 of the other (4 rotations of each 128-bit half), then the block with the
/// smaller last value moves on (both if equal); the rest by [`common`]. Only the pairs of
/// equal values are counted, once each, so the count is the merge's.
///
/// # Safety
/// The CPU must have AVX2 and POPCNT (the caller is compiled for them).
#[cfg(target_arch = "x86_64")]
#[inline(never)] // its own registers: inlined into the walk, the loop spilled to the stack
#[target_feature(enable = "avx2,bmi2,popcnt")]
unsafe fn common_avx2(a: &[u32], b: &[u32], need: i64) -> Option<i64> {
    use core::arch::x86_64::*;
    let (na, nb) = (a.len(), b.len());
    let (mut i, mut j, mut inter) = (0usize, 0usize, 0i64);
    if na >= 8 && nb >= 8 {
        let (last_a, last_b) = (na - 8, nb - 8); // the last blocks' starts
        loop {
            if inter + ((na - i).min(nb - j) as i64) < need {
                return None;
            }
            // SAFETY: i <= last_a and j <= last_b: 8 values from each lie in a and b
            let (va, vb, la, lb) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                    _mm256_loadu_si256(b.as_ptr().add(j).cast()),
                    *a.get_unchecked(i + 7),
                    *b.get_unchecked(j + 7),
                )
            };
            let vs = _mm256_permute2x128_si256::<1>(vb, vb);
            let m0 = _mm256_or_si256(
                _mm256_cmpeq_epi32(va, vb),
                _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0x39>(vb)),
            );
            let m1 = _mm256_or_si256(
                _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0x4E>(vb)),
                _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0x93>(vb)),
            );
            let m2 = _mm256_or_si256(
                _mm256_cmpeq_epi32(va, vs),
                _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0x39>(vs)),
            );
            let m3 = _mm256_or_si256(
                _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0x4E>(vs)),
                _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32::<0x93>(vs)),
            );
            let m = _mm256_or_si256(_mm256_or_si256(m0, m1), _mm256_or_si256(m2, m3));
            inter += _mm256_movemask_ps(_mm256_castsi256_ps(m)).count_ones() as i64;
            i += ((la <= lb) as usize) << 3;
            j += ((lb <= la) as usize) << 3;
            if i > last_a || j > last_b {
                break;
            }
        }
    }
    common(&a[i..], &b[j..], need - inter).map(|c| inter + c)
}

/// The first of `roots[from..]` other than `r` (`roots.len()` if none), 8 at a time with
/// `SIMD` (compiled for AVX2).
#[inline(always)]
fn next_other<const SIMD: bool>(roots: &[u32], from: usize, r: u32) -> usize {
    let mut y = from;
    #[cfg(target_arch = "x86_64")]
    if SIMD {
        use core::arch::x86_64::*;
        // SAFETY: AVX2 by `SIMD`; each load reads 8 roots from y, which lie in `roots`
        unsafe {
            let vr = _mm256_set1_epi32(r as i32);
            while y + 8 <= roots.len() {
                let chunk = _mm256_loadu_si256(roots.as_ptr().add(y).cast());
                let same = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(chunk, vr)));
                if same != 0xFF {
                    return y + (!same as u32).trailing_zeros() as usize;
                }
                y += 8;
            }
        }
    }
    while y < roots.len() && roots[y] == r {
        y += 1;
    }
    y
}

/// Whether two rows' keys of the earlier bands share one (no early exit: vectorized).
#[inline(always)]
fn share_a_key(ku: &[u64], kv: &[u64]) -> bool {
    ku.iter().zip(kv).fold(false, |any, (p, q)| any | (p == q))
}

/// Each row's state for the AVX2 count: unknown, a set (distinct values), or with repeats.
const UNSEEN: u8 = 0;
const DISTINCT: u8 = 1;
const REPEATS: u8 = 2;

impl<V> Walk<'_, V> {
    /// Band `band`'s mask of rows (see `masks`), if the walk has masks.
    #[inline]
    fn mask(&self, band: usize) -> Option<&[u64]> {
        let words = self.n.div_ceil(64);
        (!self.masks.is_empty()).then(|| &self.masks[band * words..(band + 1) * words])
    }
}

impl<V: Member> Walk<'_, V> {
    #[inline]
    fn size(&self, r: usize) -> i64 {
        self.offsets[r + 1] - self.offsets[r]
    }

    /// Whether rows u and v certainly miss the threshold: the smaller set is below
    /// `threshold` times the larger, or the profiles bound their intersection below what
    /// the threshold needs.
    #[inline(always)]
    fn cannot_reach(&self, u: usize, v: usize) -> bool {
        let (na, nb) = (self.size(u), self.size(v));
        if na + nb == 0 {
            return false;
        }
        if (na.min(nb) as f64) < self.threshold * na.max(nb) as f64 {
            return true;
        }
        if self.big[u] || self.big[v] {
            return false;
        }
        let pu = &self.prof[u * PROFILE..(u + 1) * PROFILE];
        let pv = &self.prof[v * PROFILE..(v + 1) * PROFILE];
        let bound: u32 = pu.iter().zip(pv).map(|(&x, &y)| x.min(y) as u32).sum();
        (bound as i64) < need(na, nb, self.threshold)
    }

    /// The similarity a pair of rows is verified with: exact Jaccard, or the sketch estimate
    /// when no sets are given; `None` when the set profiles show it cannot reach the threshold.
    #[inline(always)]
    fn similarity<const SIMD: bool>(
        &self,
        u: usize,
        v: usize,
        filtered: bool,
        seen: &mut [u8],
    ) -> Option<f64> {
        if !self.exact {
            return Some(self.estimate(u, v));
        }
        if filtered && self.cannot_reach(u, v) {
            return None;
        }
        Some(self.jaccard::<SIMD>(u, v, seen))
    }

    /// Whether row r's values are distinct (worked out on first use, kept in `seen`).
    #[inline(always)]
    fn distinct(&self, r: usize, seen: &mut [u8]) -> bool {
        if seen[r] == UNSEEN {
            let run = &self.values[self.offsets[r] as usize..self.offsets[r + 1] as usize];
            seen[r] = if strict(run) { DISTINCT } else { REPEATS };
        }
        seen[r] == DISTINCT
    }

    /// Exact Jaccard of the sets of rows u and v, or -1.0 once it cannot reach the threshold
    /// (size filter, then a merge that stops when the rest cannot catch up). With `SIMD`
    /// (compiled for AVX2) two 32-bit sets of distinct values are counted 8 by 8.
    #[inline(always)]
    fn jaccard<const SIMD: bool>(&self, u: usize, v: usize, seen: &mut [u8]) -> f64 {
        let a = &self.values[self.offsets[u] as usize..self.offsets[u + 1] as usize];
        let b = &self.values[self.offsets[v] as usize..self.offsets[v + 1] as usize];
        let (na, nb) = (a.len() as i64, b.len() as i64);
        if na + nb == 0 {
            return 0.0;
        }
        if (na.min(nb) as f64) / (na.max(nb) as f64) < self.threshold {
            return -1.0;
        }
        let need = need(na, nb, self.threshold);
        #[cfg(target_arch = "x86_64")]
        if SIMD && na >= 8 && nb >= 8 {
            if let (Some(a32), Some(b32)) = (V::as_u32(a), V::as_u32(b)) {
                if self.distinct(u, seen) && self.distinct(v, seen) {
                    // SAFETY: `SIMD` is set only in the walk compiled for AVX2
                    return match unsafe { common_avx2(a32, b32, need) } {
                        Some(inter) => inter as f64 / (na + nb - inter) as f64,
                        None => -1.0,
                    };
                }
            }
        }
        let _ = seen;
        match common(a, b, need) {
            Some(inter) => inter as f64 / (na + nb - inter) as f64,
            None => -1.0,
        }
    }

    /// The share of equal signature slots of rows u and v.
    #[inline]
    fn estimate(&self, u: usize, v: usize) -> f64 {
        let p = self.num_perm;
        let (su, sv) = (
            &self.sigs[u * p..(u + 1) * p],
            &self.sigs[v * p..(v + 1) * p],
        );
        let same = su.iter().zip(sv).filter(|(x, y)| x == y).count();
        same as f64 / p as f64
    }

    /// The keys of bands `0..band` of each of `members`, side by side in `out` (each row read
    /// once, for the first-shared-band test of its pairs).
    fn earlier_keys(&self, members: &[u32], band: usize, out: &mut Vec<u64>) {
        out.clear();
        for &m in members {
            let row = m as usize * self.bands;
            out.extend_from_slice(&self.keys[row..row + band]);
        }
    }

    /// Walk every bucket of band columns `band_start .. band_end`; see the module docs.
    pub fn run(&self, band_start: usize, band_end: usize) -> Found {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::level() != crate::simd::Level::Base {
            // SAFETY: the CPU has AVX2
            return unsafe { self.run_avx2(band_start, band_end) };
        }
        self.run_on::<false>(band_start, band_end)
    }

    /// [`Walk::run`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2, BMI2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi2,popcnt")]
    unsafe fn run_avx2(&self, band_start: usize, band_end: usize) -> Found {
        self.run_on::<true>(band_start, band_end)
    }

    #[inline(always)]
    fn run_on<const SIMD: bool>(&self, band_start: usize, band_end: usize) -> Found {
        let n = self.n;
        let mut parent: Vec<i64> = (0..n as i64).collect();
        let (mut oa, mut ob, mut os) = (Vec::new(), Vec::new(), Vec::new());
        let mut verified = 0i64;
        let filtered = self.exact && !self.prof.is_empty();
        let mut seen = vec![UNSEEN; if SIMD && self.exact { n } else { 0 }];
        let mut groups = Groups::new(n);
        let mut roots: Vec<u32> = Vec::new(); // of the members, with join
        let mut before: Vec<u64> = Vec::new(); // the members' keys of the earlier bands
        for band in band_start..band_end {
            groups.group_part(self.keys, self.bands, band, 0, 1, self.mask(band));
            for bucket in 0..groups.buckets() {
                let members = groups.members(bucket);
                let e = members.len();
                if e < 2 {
                    continue;
                }
                if self.join {
                    // each member's cluster root, kept current below
                    roots.clear();
                    roots.extend(members.iter().map(|&m| find(&mut parent, m as i64) as u32));
                    if roots.iter().all(|&x| x == roots[0]) {
                        continue; // every pair of this bucket is in one cluster already
                    }
                }
                self.earlier_keys(members, band, &mut before);
                for x in 0..e - 1 {
                    let u = members[x] as usize;
                    let ku = &before[x * band..(x + 1) * band];
                    let mut y = x;
                    loop {
                        // in join mode the root test is the cheaper one: try it first (the
                        // next member in another cluster)
                        y = if self.join {
                            next_other::<SIMD>(&roots, y + 1, roots[x])
                        } else {
                            y + 1
                        };
                        if y >= e {
                            break;
                        }
                        let v = members[y] as usize;
                        // a pair is verified in the first band its rows share
                        let kv = &before[y * band..(y + 1) * band];
                        if share_a_key(ku, kv) {
                            continue;
                        }
                        let Some(sim) = self.similarity::<SIMD>(u, v, filtered, &mut seen) else {
                            continue;
                        };
                        verified += 1;
                        if sim < self.threshold {
                            continue;
                        }
                        if self.join {
                            // the smaller root stays; relabel the other's members
                            let keep = roots[x].min(roots[y]);
                            let gone = roots[x].max(roots[y]);
                            parent[gone as usize] = keep as i64;
                            for z in roots.iter_mut() {
                                if *z == gone {
                                    *z = keep;
                                }
                            }
                        }
                        oa.push(u as i64); // u < v: members ascend
                        ob.push(v as i64);
                        os.push(sim);
                    }
                }
            }
        }
        if !self.join {
            for (&x, &y) in oa.iter().zip(&ob) {
                let (x, y) = (find(&mut parent, x), find(&mut parent, y));
                if x < y {
                    parent[y as usize] = x;
                } else if y < x {
                    parent[x as usize] = y;
                }
            }
        }
        for i in 0..n {
            let p = parent[i] as usize; // smaller than i: already final
            parent[i] = parent[p];
        }
        Found {
            a: oa,
            b: ob,
            sim: os,
            roots: parent,
            verified,
        }
    }
}

/// Union-find shared by the threads of [`Walk::roots_shared`]: a root is linked under the
/// smaller root only (so `parent[x] <= x`, and a component's root is its smallest member), by
/// compare-and-swap; finds halve paths.
struct SharedForest {
    parent: Vec<AtomicU32>,
}

impl SharedForest {
    fn new(n: usize) -> Self {
        SharedForest {
            parent: (0..n as u32).map(AtomicU32::new).collect(),
        }
    }

    #[inline]
    fn find(&self, mut x: u32) -> u32 {
        loop {
            let p = self.parent[x as usize].load(Ordering::Acquire);
            if p == x {
                return x;
            }
            let g = self.parent[p as usize].load(Ordering::Acquire);
            if g != p {
                // path halving; losing the race only leaves a longer path
                let _ = self.parent[x as usize].compare_exchange_weak(
                    p,
                    g,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            }
            x = p;
        }
    }

    /// Join the components of `a` and `b`: the root they then share.
    #[inline]
    fn union(&self, a: u32, b: u32) -> u32 {
        loop {
            let (ra, rb) = (self.find(a), self.find(b));
            if ra == rb {
                return ra;
            }
            let (keep, gone) = (ra.min(rb), ra.max(rb));
            if self.parent[gone as usize]
                .compare_exchange(gone, keep, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return keep;
            }
        }
    }
}

impl<V: Member + Sync> Walk<'_, V> {
    /// Each row's cluster root (its smallest member), as [`Walk::run`] gives them in join
    /// mode over every band, on `threads` threads: each takes the next band not yet walked
    /// and walks it as the serial walk does (a pair is tested in the first band its rows
    /// share), against one union-find that all of them update. A pair already in one
    /// cluster is skipped whichever thread joined it, so the threads test about the pairs
    /// that one walk tests, and the roots are the components of the accepted pairs: the
    /// same whatever the order the threads run in (which pairs are tested may differ).
    pub fn roots_shared(&self, threads: usize) -> Vec<i64> {
        let n = self.n;
        let forest = SharedForest::new(n);
        let next = AtomicUsize::new(0);
        let threads = threads.clamp(1, self.bands.max(1));
        // the work, handed out in order: one band at a time, except that each of the last
        // `threads` bands is cut into `LAST_PARTS` parts of its buckets, so that the threads
        // end closer together (the bands cost less as the walk goes on, but the last one
        // still left one thread alone for ~0.1-0.2 s at 1M documents)
        let split = if threads > 1 {
            threads.min(self.bands)
        } else {
            0
        };
        let walk_bands = || self.walk_bands(&forest, &next, split);
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(walk_bands);
            }
            walk_bands();
        });
        let mut parent: Vec<i64> = forest
            .parent
            .into_iter()
            .map(|p| p.into_inner() as i64)
            .collect();
        for i in 0..n {
            let p = parent[i] as usize; // smaller than i: already final
            parent[i] = parent[p];
        }
        parent
    }
}

impl<V: Member + Sync> Walk<'_, V> {
    /// One thread's share of [`Walk::roots_shared`]: the next unit of work not yet walked
    /// (a band, or a part of one of the last `split` bands), until none is left (compiled
    /// for AVX2 where the CPU has it).
    fn walk_bands(&self, forest: &SharedForest, next: &AtomicUsize, split: usize) {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::level() != crate::simd::Level::Base {
            // SAFETY: the CPU has AVX2
            return unsafe { self.walk_bands_avx2(forest, next, split) };
        }
        self.walk_bands_on::<false>(forest, next, split)
    }

    /// [`Walk::walk_bands`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2, BMI2 and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi2,popcnt")]
    unsafe fn walk_bands_avx2(&self, forest: &SharedForest, next: &AtomicUsize, split: usize) {
        self.walk_bands_on::<true>(forest, next, split)
    }

    #[inline(always)]
    fn walk_bands_on<const SIMD: bool>(
        &self,
        forest: &SharedForest,
        next: &AtomicUsize,
        split: usize,
    ) {
        let mut groups = Groups::new(self.n);
        let mut roots: Vec<u32> = Vec::new();
        let mut before: Vec<u64> = Vec::new();
        let filtered = self.exact && !self.prof.is_empty();
        let mut seen = vec![UNSEEN; if SIMD && self.exact { self.n } else { 0 }];
        let whole = self.bands - split;
        let units = whole + split * LAST_PARTS;
        loop {
            let u = next.fetch_add(1, Ordering::Relaxed);
            if u >= units {
                break;
            }
            let (band, part, parts) = if u < whole {
                (u, 0, 1)
            } else {
                let k = u - whole;
                (whole + k / LAST_PARTS, k % LAST_PARTS, LAST_PARTS)
            };
            groups.group_part(self.keys, self.bands, band, part, parts, self.mask(band));
            for bucket in 0..groups.buckets() {
                let members = groups.members(bucket);
                let e = members.len();
                if e < 2 {
                    continue;
                }
                roots.clear();
                roots.extend(members.iter().map(|&m| forest.find(m)));
                if roots.iter().all(|&x| x == roots[0]) {
                    continue;
                }
                self.earlier_keys(members, band, &mut before);
                for x in 0..e - 1 {
                    let u = members[x] as usize;
                    let ku = &before[x * band..(x + 1) * band];
                    let mut y = x;
                    loop {
                        // the next member not seen in x's cluster: equal roots here mean
                        // joined (by this thread or another); a stale difference only costs
                        // a test
                        y = next_other::<SIMD>(&roots, y + 1, roots[x]);
                        if y >= e {
                            break;
                        }
                        let v = members[y] as usize;
                        let kv = &before[y * band..(y + 1) * band];
                        if share_a_key(ku, kv) {
                            continue;
                        }
                        let Some(sim) = self.similarity::<SIMD>(u, v, filtered, &mut seen) else {
                            continue;
                        };
                        if sim < self.threshold {
                            continue;
                        }
                        let keep = forest.union(u as u32, v as u32);
                        let (rx, ry) = (roots[x], roots[y]);
                        for z in roots.iter_mut() {
                            if *z == rx || *z == ry {
                                *z = keep;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The buckets of one band column that hold two rows or more: bucket ids given in order of
/// each key's first row (an open-addressing table, Fibonacci hashing on the top bits),
/// then the rows of those buckets placed by a counting sort, so that each bucket's rows
/// ascend and the buckets come in the order of their first rows. O(n), no sort; the rows of
/// single-row buckets (most rows) are never placed.
struct Groups {
    n: usize,
    shift: u32,
    /// The table; a slot whose `id` is below `base` is free (no clearing per column).
    slots: Vec<Slot>,
    /// The first id of this column's buckets: each column's ids follow the last one's.
    base: u32,
    id: Vec<u32>,    // each row's bucket
    count: Vec<u32>, // each bucket's rows, then its place among the kept buckets (or EMPTY)
    start: Vec<u32>, // each kept bucket's first place in `rows`, and one past the last
    rows: Vec<u32>,
    sel: Vec<u32>, // the rows of a band's mask
}

/// A slot of the table: a key and its bucket's id (`base` + the bucket), 12 bytes (packed:
/// the table is the largest buffer of the walk).
#[derive(Clone, Copy, Default)]
#[repr(C, packed(4))]
struct Slot {
    key: u64,
    id: u32,
}

const EMPTY: u32 = u32::MAX;
/// The parts each of the shared walk's last bands is cut into (see `roots_shared`).
const LAST_PARTS: usize = 2;

/// The part (of `parts`) that a band key's buckets belong to: bits of the key's product with
/// the table's multiplier below the ones that pick its slot.
#[inline]
fn part_of(key: u64, parts: usize) -> usize {
    ((key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16) % parts as u64) as usize
}

impl Groups {
    fn new(n: usize) -> Self {
        // at most half full: short probe runs
        let slots = (2 * n).next_power_of_two().max(2);
        Groups {
            n,
            shift: 64 - slots.trailing_zeros(),
            slots: vec![Slot::default(); slots],
            base: 1,
            id: vec![0; n],
            count: vec![0; n + 1], // the buckets, and bucket 0 of a part's other rows
            start: Vec::new(),
            rows: Vec::new(),
            sel: Vec::new(),
        }
    }

    #[cfg(test)]
    fn group(&mut self, keys: &[u64], bands: usize, band: usize) {
        self.group_part(keys, bands, band, 0, 1, None);
    }

    /// The buckets of band column `band` whose key falls in part `part` of `parts` (a
    /// bucket's rows share its key, so the parts of a band hold all its buckets once each):
    /// the rows of the other parts go to bucket 0, which is never kept.
    ///
    /// With `mask` (the band's rows that share its key with another row, `n.div_ceil(64)`
    /// words) only those rows are taken: the same kept buckets, without a table lookup for
    /// each row of a bucket of one (most rows in most bands).
    fn group_part(
        &mut self,
        keys: &[u64],
        bands: usize,
        band: usize,
        part: usize,
        parts: usize,
        mask: Option<&[u64]>,
    ) {
        let n = self.n;
        assert!(
            band < bands && keys.len() >= n * bands,
            "keys is (n, bands)"
        );
        if let Some(mask) = mask {
            assert!(
                mask.len() == n.div_ceil(64),
                "a mask word for every 64 rows"
            );
            self.sel.clear();
            for (w, &word) in mask.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let r = w * 64 + bits.trailing_zeros() as usize;
                    assert!(r < n, "a mask bit past the rows");
                    self.sel.push(r as u32);
                    bits &= bits - 1;
                }
            }
        }
        let masked = mask.is_some();
        // ids from 1 (a slot of id 0 was never set); past the last column's ids
        let base = match self.base.checked_add(1 + n as u32) {
            Some(_) if self.base > 0 => self.base,
            _ => {
                // the ids went round (or first use): every slot free again
                self.slots.fill(Slot::default());
                1
            }
        };
        let mask = self.slots.len() - 1;
        /// Rows ahead whose table slot is prefetched: the slots are random, the loop
        /// memory-bound.
        const AHEAD: usize = 16;
        let shift = self.shift;
        let slot = |key: u64| (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
        let (slots, count, id) = (
            &mut self.slots[..],
            &mut self.count[..=n],
            &mut self.id[..n],
        );
        let mut buckets = 0usize;
        if parts > 1 {
            count[0] = 0; // bucket 0: the rows of the other parts (never kept)
            buckets = 1;
        }
        let sel = &self.sel[..];
        let taken = if masked { sel.len() } else { n };
        // the row taken `k`-th: every row, or the mask's rows in order
        let row_at = |k: usize| -> usize {
            if masked {
                // SAFETY: k < sel.len()
                unsafe { *sel.get_unchecked(k) as usize }
            } else {
                k
            }
        };
        for k in 0..taken {
            let r = row_at(k);
            #[cfg(target_arch = "x86_64")]
            if k + AHEAD < taken {
                use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                let ahead = row_at(k + AHEAD);
                // SAFETY: the row lies in keys (asserted above)
                let at = slot(unsafe { *keys.get_unchecked(ahead * bands + band) });
                // SAFETY: a prefetch reads nothing; the address lies in the table.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(slots.as_ptr().wrapping_add(at).cast()) };
            }
            // SAFETY: the row lies in keys (asserted above)
            let key = unsafe { *keys.get_unchecked(r * bands + band) };
            // SAFETY: r < n, the length of id
            let row_id = unsafe { id.get_unchecked_mut(r) };
            if parts > 1 && part_of(key, parts) != part {
                *row_id = 0;
                continue;
            }
            let mut at = slot(key);
            let b = loop {
                // SAFETY: `at` is masked to the table's power-of-two length
                let s = unsafe { slots.get_unchecked_mut(at) };
                if s.id < base {
                    *s = Slot {
                        key,
                        id: base + buckets as u32,
                    };
                    // SAFETY: at most one new bucket per row (and bucket 0), so buckets <= n
                    unsafe { *count.get_unchecked_mut(buckets) = 0 };
                    buckets += 1;
                    break buckets - 1;
                }
                if s.key == key {
                    break (s.id - base) as usize;
                }
                at = (at + 1) & mask;
            };
            // SAFETY: b < buckets <= n + 1, the length of count
            unsafe { *count.get_unchecked_mut(b) += 1 };
            *row_id = b as u32;
        }
        self.base = base + buckets as u32;
        // the buckets of two rows or more, in order: their first places (exclusive prefix
        // sums); `count` becomes each bucket's kept number, or EMPTY
        self.start.clear();
        let mut sum = 0u32;
        for c in count[..buckets].iter_mut() {
            if *c < 2 {
                *c = EMPTY;
                continue;
            }
            self.start.push(sum);
            sum += *c;
            *c = (self.start.len() - 1) as u32;
        }
        let mut next = self.start.clone();
        self.start.push(sum);
        self.rows.resize(sum as usize, 0);
        for k in 0..taken {
            let r = row_at(k);
            // SAFETY: r < n; every taken row's bucket is below `buckets`
            let kept = unsafe { *count.get_unchecked(*id.get_unchecked(r) as usize) };
            if kept != EMPTY {
                let place = &mut next[kept as usize];
                self.rows[*place as usize] = r as u32;
                *place += 1;
            }
        }
    }

    fn buckets(&self) -> usize {
        self.start.len() - 1
    }

    fn members(&self, bucket: usize) -> &[u32] {
        &self.rows[self.start[bucket] as usize..self.start[bucket + 1] as usize]
    }
}

/// Which rows share their key of some band column of `keys` (row-major `(n, bands)`) with
/// another row: each band's rows as a mask (`bands` runs of `n.div_ceil(64)` words, bit
/// `r % 64` of word `r / 64`), and each row's "in some band" (the only rows whose sets a
/// walk ever reads: a bucket of one row has no pair). A walk given the masks groups only
/// their rows, which pays for this pass.
///
/// One table of keys per thread, reused column by column (its slots tagged as [`Groups`]
/// tags them, so no clearing per column), each slot holding a key and the first row that
/// had it; a key met again marks both rows. No bucket ids, counts or row lists: the table
/// (12 bytes a slot, at most half full) is what it adds to the run's memory, whose peak is
/// right here, after collection. `threads` threads take the bands in turn.
pub fn shared_rows(keys: &[u64], n: usize, bands: usize, threads: usize) -> (Vec<u64>, Vec<bool>) {
    assert!(keys.len() >= n * bands, "keys is (n, bands)");
    assert!(n < u32::MAX as usize, "fewer than 2**32 - 1 rows");
    let words = n.div_ceil(64);
    let mut masks = vec![0u64; bands * words];
    if n >= 2 && words > 0 {
        let threads = threads.clamp(1, bands.max(1));
        let mut mine: Vec<Vec<(usize, &mut [u64])>> = (0..threads).map(|_| Vec::new()).collect();
        for (band, mask) in masks.chunks_mut(words).enumerate() {
            mine[band % threads].push((band, mask));
        }
        if threads == 1 {
            mark_shared(keys, n, bands, mine.pop().unwrap_or_default());
        } else {
            std::thread::scope(|scope| {
                for share in mine {
                    scope.spawn(move || mark_shared(keys, n, bands, share));
                }
            });
        }
    }
    // a row is in some band's mask: the words of every band OR-ed, then their bits
    let mut union = vec![0u64; words];
    for mask in masks.chunks(words.max(1)) {
        for (u, &m) in union.iter_mut().zip(mask) {
            *u |= m;
        }
    }
    let any = (0..n).map(|r| union[r / 64] >> (r % 64) & 1 == 1).collect();
    (masks, any)
}

/// The marks of [`shared_rows`] for some bands, each with its mask.
fn mark_shared(keys: &[u64], n: usize, bands: usize, share: Vec<(usize, &mut [u64])>) {
    let slots = (2 * n).next_power_of_two();
    let (shift, mask) = (64 - slots.trailing_zeros(), slots - 1);
    let slot = |key: u64| (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
    let mut table = vec![Slot::default(); slots];
    // a slot holds `base + row` of the first row with its key in this column; below: free
    let mut base = 1u32;
    const AHEAD: usize = 16;
    for (band, marks) in share {
        if base.checked_add(n as u32).is_none() {
            table.fill(Slot::default());
            base = 1;
        }
        for r in 0..n {
            #[cfg(target_arch = "x86_64")]
            if r + AHEAD < n {
                use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                // SAFETY: the row lies in keys (asserted by the caller)
                let at = slot(unsafe { *keys.get_unchecked((r + AHEAD) * bands + band) });
                // SAFETY: a prefetch reads nothing; the address lies in the table.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(table.as_ptr().wrapping_add(at).cast()) };
            }
            // SAFETY: the row lies in keys (asserted by the caller)
            let key = unsafe { *keys.get_unchecked(r * bands + band) };
            let mut at = slot(key);
            loop {
                // SAFETY: `at` is masked to the table's power-of-two length
                let s = unsafe { table.get_unchecked_mut(at) };
                if s.id < base {
                    *s = Slot {
                        key,
                        id: base + r as u32,
                    };
                    break;
                }
                if s.key == key {
                    let first = (s.id - base) as usize;
                    marks[r / 64] |= 1 << (r % 64);
                    marks[first / 64] |= 1 << (first % 64);
                    break;
                }
                at = (at + 1) & mask;
            }
        }
        base += n as u32;
    }
}

/// Keep the runs `values[offsets[r]..offsets[r + 1]]` of the rows with `keep[r]`, in order,
/// at the front of `values` (moved in place), and make the other rows' runs empty: `offsets`
/// is rewritten to the new runs. Returns the values kept (the new `offsets[n]`).
pub fn compact_runs<V: Copy>(values: &mut [V], offsets: &mut [i64], keep: &[bool]) -> usize {
    let n = offsets.len() - 1;
    let mut to = 0usize;
    let mut start = offsets[0] as usize;
    offsets[0] = 0;
    for r in 0..n {
        let end = offsets[r + 1] as usize;
        if keep[r] {
            values.copy_within(start..end, to);
            to += end - start;
        }
        offsets[r + 1] = to as i64;
        start = end;
    }
    to
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docstring_example() {
        let keys = [1u64, 5, 1, 6, 2, 6];
        let values = [1u64, 2, 3, 1, 2, 3, 1, 2, 4];
        let offsets = [0i64, 3, 6, 9];
        let (prof, big) = set_profiles(&values, &offsets);
        for join in [false, true] {
            let walk = Walk {
                keys: &keys,
                n: 3,
                bands: 2,
                values: &values,
                offsets: &offsets,
                sigs: &[],
                num_perm: 0,
                prof: &prof,
                big: &big,
                exact: true,
                threshold: 0.5,
                join,
                masks: &[],
            };
            let found = walk.run(0, 2);
            assert_eq!(found.a, vec![0, 1]);
            assert_eq!(found.b, vec![1, 2]);
            assert_eq!(found.sim, vec![1.0, 0.5]);
            assert_eq!(found.roots, vec![0, 0, 0]);
            assert_eq!(found.verified, 2);
            for threads in 1..4 {
                assert_eq!(walk.roots_shared(threads), vec![0, 0, 0]);
            }
        }
    }

    #[test]
    fn groups_keep_the_shared_keys_in_first_row_order() {
        // small keys (not hashes), two band columns, and a run of colliding slots
        let n = 1000usize;
        let keys: Vec<u64> = (0..n as u64).flat_map(|r| [r % 7, r / 3]).collect();
        let mut groups = Groups::new(n);
        for (band, base) in [(0, None), (1, None), (0, Some(u32::MAX - 5)), (1, None)] {
            if let Some(base) = base {
                groups.base = base; // ids about to go round: the table is cleared
            }
            groups.group(&keys, 2, band);
            let mut want: Vec<Vec<u32>> = Vec::new();
            let mut first: Vec<u64> = Vec::new();
            for r in 0..n {
                let key = keys[r * 2 + band];
                match first.iter().position(|&k| k == key) {
                    Some(b) => want[b].push(r as u32),
                    None => {
                        first.push(key);
                        want.push(vec![r as u32]);
                    }
                }
            }
            want.retain(|rows| rows.len() > 1);
            let got: Vec<Vec<u32>> = (0..groups.buckets())
                .map(|b| groups.members(b).to_vec())
                .collect();
            assert_eq!(got, want);
        }
    }

    /// Sorted distinct values: a shared core of `core` values and `own` of each side's own
    /// (xorshift draws from `seed`).
    fn two_sets(seed: u64, core: usize, own: (usize, usize)) -> (Vec<u32>, Vec<u32>) {
        let mut x = seed | 1;
        let mut draw = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 5000) as u32
        };
        let shared: Vec<u32> = (0..core).map(|_| draw()).collect();
        let mut side = |k: usize| {
            let mut s: Vec<u32> = shared
                .iter()
                .copied()
                .chain((0..k).map(|_| draw()))
                .collect();
            s.sort_unstable();
            s.dedup();
            s
        };
        (side(own.0), side(own.1))
    }

    #[test]
    fn the_avx2_count_is_the_merges() {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            for seed in 1..400u64 {
                let core = (seed as usize * 7) % 300;
                let own = ((seed as usize * 13) % 40, (seed as usize * 29) % 90);
                let (a, b) = two_sets(seed, core, own);
                let all = common(&a, &b, i64::MIN).unwrap();
                for need in [-1, 0, all - 1, all, all + 1, a.len().min(b.len()) as i64] {
                    // SAFETY: the CPU has AVX2
                    let got = unsafe { common_avx2(&a, &b, need) };
                    // the exact count, or (only when it is below `need`) none
                    assert!(
                        got == Some(all) || (got.is_none() && need > all),
                        "{seed} {need}"
                    );
                    if need <= all {
                        assert_eq!(common(&a, &b, need), Some(all));
                    }
                }
            }
        }
    }

    #[test]
    fn the_avx2_walk_is_the_scalar_walk() {
        // rows of a few families of sets (some with repeats), keys from few values per band
        let (n, bands) = (300usize, 6usize);
        let mut x = 12345u64;
        let mut draw = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let keys: Vec<u64> = (0..n * bands).map(|_| draw(4)).collect();
        let (mut values, mut offsets) = (Vec::<u32>::new(), vec![0i64]);
        for r in 0..n {
            let (family, _) = two_sets(1 + r as u64 % 5, 40, (0, 0));
            let mut set: Vec<u32> = family.into_iter().filter(|_| draw(10) > 0).collect();
            set.extend((0..draw(6)).map(|_| draw(5000) as u32));
            if r % 7 == 0 {
                set.extend_from_slice(&set.clone()[..3.min(set.len())]); // repeats
            }
            set.sort_unstable();
            if r % 7 != 0 {
                set.dedup();
            }
            values.extend_from_slice(&set);
            offsets.push(values.len() as i64);
        }
        let (prof, big) = set_profiles(&values, &offsets);
        for (join, threshold) in [(true, 0.5), (false, 0.5), (true, 0.8), (false, 0.3)] {
            let walk = Walk {
                keys: &keys,
                n,
                bands,
                values: &values,
                offsets: &offsets,
                sigs: &[],
                num_perm: 0,
                prof: &prof,
                big: &big,
                exact: true,
                threshold,
                join,
                masks: &[],
            };
            let (fast, slow) = (walk.run(0, bands), walk.run_on::<false>(0, bands));
            assert_eq!((&fast.a, &fast.b, &fast.sim), (&slow.a, &slow.b, &slow.sim));
            assert_eq!((&fast.roots, fast.verified), (&slow.roots, slow.verified));
            // the walk given the shared rows' masks: the same walk
            let (masks, _) = shared_rows(&keys, n, bands, 2);
            let masked = Walk {
                masks: &masks,
                ..walk
            };
            for found in [masked.run(0, bands), masked.run_on::<false>(0, bands)] {
                assert_eq!(
                    (&found.a, &found.b, &found.sim),
                    (&slow.a, &slow.b, &slow.sim)
                );
                assert_eq!((&found.roots, found.verified), (&slow.roots, slow.verified));
            }
            if join {
                assert_eq!(masked.roots_shared(2), slow.roots);
            }
            assert!(fast.verified > 0 && (threshold > 0.5 || !slow.a.is_empty()));
            if join {
                assert_eq!(walk.roots_shared(2), slow.roots);
            }
        }
    }

    #[test]
    fn the_merge_counts_repeats_pairwise() {
        let (a, b) = ([1u32, 1, 2, 3, 3, 3], [1u32, 3, 3, 4]);
        assert_eq!(common(&a, &b, 0), Some(3));
        assert_eq!(common(&a, &b, 4), None);
        assert!(!strict(&a) && !strict(&b) && strict(&[1u32, 3, 4]) && strict::<u32>(&[]));
    }

    #[test]
    fn the_parts_of_a_band_hold_its_buckets_once_each() {
        let n = 1000usize;
        let keys: Vec<u64> = (0..n as u64).flat_map(|r| [r % 7, r / 3]).collect();
        let mut groups = Groups::new(n);
        for band in 0..2 {
            groups.group(&keys, 2, band);
            let mut whole: Vec<Vec<u32>> = (0..groups.buckets())
                .map(|b| groups.members(b).to_vec())
                .collect();
            for parts in [2, 3] {
                let mut got: Vec<Vec<u32>> = Vec::new();
                for part in 0..parts {
                    groups.group_part(&keys, 2, band, part, parts, None);
                    got.extend((0..groups.buckets()).map(|b| groups.members(b).to_vec()));
                }
                got.sort();
                whole.sort();
                assert_eq!(got, whole);
            }
        }
    }

    #[test]
    fn the_shared_walk_gives_the_roots_of_one_walk() {
        // rows in groups of near-equal sets: row r holds r / 5 * 10 .. r / 5 * 10 + 10,
        // minus one value for some rows; keys of 6 bands shared within groups
        let n = 600usize;
        let bands = 6usize;
        let mut values: Vec<u32> = Vec::new();
        let mut offsets = vec![0i64];
        let mut keys: Vec<u64> = Vec::new();
        for r in 0..n {
            let g = (r / 5) as u32;
            values.extend((g * 10..g * 10 + 10).filter(|v| r % 3 != 0 || v % 10 != 4));
            offsets.push(values.len() as i64);
            for b in 0..bands as u64 {
                keys.push(if (r as u64 + b) % 4 == 0 {
                    1_000_000 + r as u64
                } else {
                    g as u64 * 31 + b
                });
            }
        }
        let (prof, big) = set_profiles(&values, &offsets);
        let walk = Walk {
            keys: &keys,
            n,
            bands,
            values: &values,
            offsets: &offsets,
            sigs: &[],
            num_perm: 0,
            prof: &prof,
            big: &big,
            exact: true,
            threshold: 0.8,
            join: true,
            masks: &[],
        };
        let want = walk.run(0, bands).roots;
        for threads in [1, 2, 3, 8] {
            assert_eq!(walk.roots_shared(threads), want);
        }
    }

    #[test]
    fn shared_rows_are_the_rows_of_a_bucket_of_two() {
        // (5, 2): rows 0 and 3 share band 0's key 7; rows 1 and 4 share band 1's key 9
        let keys = [7u64, 1, 8, 9, 2, 3, 7, 4, 5, 9];
        for threads in 1..4 {
            let (masks, any) = shared_rows(&keys, 5, 2, threads);
            assert_eq!(masks, vec![0b01001, 0b10010]);
            assert_eq!(any, vec![true, true, false, true, true]);
        }
        assert_eq!(shared_rows(&keys[..2], 1, 2, 1), (vec![0, 0], vec![false]));
        assert_eq!(shared_rows(&[], 0, 3, 2), (vec![], vec![]));
        // many columns, so that the tags of the table go past a column's rows
        let many: Vec<u64> = (0..70u64)
            .flat_map(|r| (0..30u64).map(move |b| b * 1000 + r / 2))
            .collect();
        let (masks, any) = shared_rows(&many, 70, 30, 2);
        assert!(any.iter().all(|&s| s));
        assert!(masks.chunks(2).all(|m| m == [u64::MAX, 0b111111]));
    }

    #[test]
    fn compaction_keeps_the_runs_of_the_kept_rows() {
        let mut values = [1u32, 2, 3, 4, 5, 6, 7];
        let mut offsets = [0i64, 2, 2, 5, 7];
        let kept = compact_runs(&mut values, &mut offsets, &[false, true, true, false]);
        assert_eq!(kept, 3);
        assert_eq!(&values[..3], &[3, 4, 5]);
        assert_eq!(offsets, [0, 0, 0, 3, 3]);
    }

    #[test]
    fn profiles_saturate() {
        let values: Vec<u32> = vec![64; 300];
        let (prof, big) = set_profiles(&values, &[0, 300]);
        assert_eq!(prof[0], FULL);
        assert!(big[0]);
    }
}
