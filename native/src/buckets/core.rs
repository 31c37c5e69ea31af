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
    for r in 0..n {
        let row = &mut prof[r * PROFILE..(r + 1) * PROFILE];
        for &v in &values[offsets[r] as usize..offsets[r + 1] as usize] {
            let cell = &mut row[(v.into() as usize) & (PROFILE - 1)];
            if *cell == FULL - 1 {
                big[r] = true;
            }
            if *cell < FULL {
                *cell += 1;
            }
        }
    }
    (prof, big)
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
    let t = x as i64;
    t + ((t as f64) < x) as i64 - 1
}

impl<V: Copy + Ord> Walk<'_, V> {
    #[inline]
    fn size(&self, r: usize) -> i64 {
        self.offsets[r + 1] - self.offsets[r]
    }

    /// Whether rows u and v certainly miss the threshold: the smaller set is below
    /// `threshold` times the larger, or the profiles bound their intersection below what
    /// the threshold needs.
    #[inline]
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
    fn similarity(&self, u: usize, v: usize, filtered: bool) -> Option<f64> {
        if !self.exact {
            return Some(self.estimate(u, v));
        }
        if filtered && self.cannot_reach(u, v) {
            return None;
        }
        Some(self.jaccard(u, v))
    }

    /// Exact Jaccard of the sets of rows u and v, or -1.0 once it cannot reach the threshold
    /// (size filter, then a merge that stops when the rest cannot catch up).
    #[inline]
    fn jaccard(&self, u: usize, v: usize) -> f64 {
        let (mut i, ie) = (self.offsets[u] as usize, self.offsets[u + 1] as usize);
        let (mut j, je) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
        let (na, nb) = ((ie - i) as i64, (je - j) as i64);
        if na + nb == 0 {
            return 0.0;
        }
        if (na.min(nb) as f64) / (na.max(nb) as f64) < self.threshold {
            return -1.0;
        }
        let need = need(na, nb, self.threshold);
        let values = self.values;
        let mut inter = 0i64;
        while i < ie && j < je {
            // a branch-free merge step; every 16 steps, stop if the rest cannot catch up
            for _ in 0..16 {
                if i >= ie || j >= je {
                    break;
                }
                let (x, y) = (values[i], values[j]);
                inter += (x == y) as i64;
                i += (x <= y) as usize;
                j += (y <= x) as usize;
            }
            if inter + ((ie - i).min(je - j) as i64) < need {
                return -1.0;
            }
        }
        inter as f64 / (na + nb - inter) as f64
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
        let n = self.n;
        let mut parent: Vec<i64> = (0..n as i64).collect();
        let (mut oa, mut ob, mut os) = (Vec::new(), Vec::new(), Vec::new());
        let mut verified = 0i64;
        let filtered = self.exact && !self.prof.is_empty();
        let mut groups = Groups::new(n);
        let mut roots: Vec<i64> = Vec::new(); // of the members, with join
        let mut before: Vec<u64> = Vec::new(); // the members' keys of the earlier bands
        for band in band_start..band_end {
            groups.group(self.keys, self.bands, band);
            for bucket in 0..groups.buckets() {
                let members = groups.members(bucket);
                let e = members.len();
                if e < 2 {
                    continue;
                }
                if self.join {
                    // each member's cluster root, kept current below
                    roots.clear();
                    roots.extend(members.iter().map(|&m| find(&mut parent, m as i64)));
                    if roots.iter().all(|&x| x == roots[0]) {
                        continue; // every pair of this bucket is in one cluster already
                    }
                }
                self.earlier_keys(members, band, &mut before);
                for x in 0..e - 1 {
                    let u = members[x] as usize;
                    let ku = &before[x * band..(x + 1) * band];
                    for y in x + 1..e {
                        let v = members[y] as usize;
                        // in join mode the root test is the cheaper one: try it first
                        if self.join && roots[x] == roots[y] {
                            continue;
                        }
                        // a pair is verified in the first band its rows share
                        let kv = &before[y * band..(y + 1) * band];
                        if ku.iter().zip(kv).any(|(p, q)| p == q) {
                            continue;
                        }
                        let Some(sim) = self.similarity(u, v, filtered) else {
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
                            parent[gone as usize] = keep;
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

impl<V: Copy + Ord + Sync> Walk<'_, V> {
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
        let whole = self.bands - split;
        let units = whole + split * LAST_PARTS;
        let unit = |u: usize| -> (usize, usize, usize) {
            if u < whole {
                (u, 0, 1)
            } else {
                let k = u - whole;
                (whole + k / LAST_PARTS, k % LAST_PARTS, LAST_PARTS)
            }
        };
        let walk_bands = || {
            let mut groups = Groups::new(n);
            let mut roots: Vec<u32> = Vec::new();
            let mut before: Vec<u64> = Vec::new();
            let filtered = self.exact && !self.prof.is_empty();
            loop {
                let u = next.fetch_add(1, Ordering::Relaxed);
                if u >= units {
                    break;
                }
                let (band, part, parts) = unit(u);
                groups.group_part(self.keys, self.bands, band, part, parts);
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
                        for y in x + 1..e {
                            // equal here: joined (by this thread or another); a stale
                            // difference only costs a test
                            if roots[x] == roots[y] {
                                continue;
                            }
                            let v = members[y] as usize;
                            let kv = &before[y * band..(y + 1) * band];
                            if ku.iter().zip(kv).any(|(p, q)| p == q) {
                                continue;
                            }
                            let Some(sim) = self.similarity(u, v, filtered) else {
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
        };
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

/// The buckets of one band column that hold two rows or more: bucket ids given in order of
/// each key's first row (an open-addressing table, Fibonacci hashing on the top bits),
/// then the rows of those buckets placed by a counting sort, so that each bucket's rows
/// ascend and the buckets come in the order of their first rows. O(n), no sort; the rows of
/// single-row buckets (most rows) are never placed.
struct Groups {
    n: usize,
    shift: u32,
    slot_key: Vec<u64>,
    slot_id: Vec<u32>, // EMPTY: a free slot
    id: Vec<u32>,      // each row's bucket
    count: Vec<u32>,   // each bucket's rows, then its place among the kept buckets (or EMPTY)
    start: Vec<u32>,   // each kept bucket's first place in `rows`, and one past the last
    rows: Vec<u32>,
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
            slot_key: vec![0; slots],
            slot_id: vec![EMPTY; slots],
            id: vec![0; n],
            count: Vec::with_capacity(n),
            start: Vec::new(),
            rows: Vec::new(),
        }
    }

    fn group(&mut self, keys: &[u64], bands: usize, band: usize) {
        self.group_part(keys, bands, band, 0, 1);
    }

    /// The buckets of band column `band` whose key falls in part `part` of `parts` (a
    /// bucket's rows share its key, so the parts of a band hold all its buckets once each):
    /// the rows of the other parts go to an empty bucket.
    fn group_part(&mut self, keys: &[u64], bands: usize, band: usize, part: usize, parts: usize) {
        self.slot_id.fill(EMPTY);
        self.count.clear();
        if parts > 1 {
            self.count.push(0); // bucket 0: the rows of the other parts (never kept)
        }
        let in_part = |key: u64| parts == 1 || part_of(key, parts) == part;
        let mask = self.slot_id.len() - 1;
        /// Rows ahead whose table slot is prefetched: the slots are random, the loop
        /// memory-bound.
        const AHEAD: usize = 16;
        let slot = |key: u64| (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        for r in 0..self.n {
            #[cfg(target_arch = "x86_64")]
            if r + AHEAD < self.n {
                use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                let at = slot(keys[(r + AHEAD) * bands + band]);
                // SAFETY: a prefetch reads nothing; the addresses lie in the tables.
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(self.slot_id.as_ptr().wrapping_add(at).cast());
                    _mm_prefetch::<_MM_HINT_T0>(self.slot_key.as_ptr().wrapping_add(at).cast());
                }
            }
            let key = keys[r * bands + band];
            if !in_part(key) {
                self.id[r] = 0;
                continue;
            }
            let mut at = slot(key);
            let id = loop {
                let id = self.slot_id[at];
                if id == EMPTY {
                    let id = self.count.len() as u32;
                    self.slot_id[at] = id;
                    self.slot_key[at] = key;
                    self.count.push(0);
                    break id;
                }
                if self.slot_key[at] == key {
                    break id;
                }
                at = (at + 1) & mask;
            };
            self.count[id as usize] += 1;
            self.id[r] = id;
        }
        // the buckets of two rows or more, in order: their first places (exclusive prefix
        // sums); `count` becomes each bucket's kept number, or EMPTY
        self.start.clear();
        let mut sum = 0u32;
        for c in self.count.iter_mut() {
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
        for r in 0..self.n {
            let kept = self.count[self.id[r] as usize];
            if kept != EMPTY {
                let slot = &mut next[kept as usize];
                self.rows[*slot as usize] = r as u32;
                *slot += 1;
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
        for band in 0..2 {
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
                    groups.group_part(&keys, 2, band, part, parts);
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
        };
        let want = walk.run(0, bands).roots;
        for threads in [1, 2, 3, 8] {
            assert_eq!(walk.roots_shared(threads), want);
        }
    }

    #[test]
    fn profiles_saturate() {
        let values: Vec<u32> = vec![64; 300];
        let (prof, big) = set_profiles(&values, &[0, 300]);
        assert_eq!(prof[0], FULL);
        assert!(big[0]);
    }
}
