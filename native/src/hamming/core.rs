//! The Hamming index over slices: block values, their stable radix sort, the all-pairs scan,
//! and [`Table`], the block tables of a growing set of codes.

use hashbrown::HashMap;

/// Bits `start .. end` (at most 64 of them) of one code of `words` u64 (least significant
/// word first), as the low bits of a u64.
#[inline(always)]
pub fn block_value(code: &[u64], start: usize, end: usize) -> u64 {
    let (k, off, width) = (start / 64, start % 64, end - start);
    let mut v = code[k] >> off;
    if off > 0 && off + width > 64 {
        v |= code[k + 1] << (64 - off);
    }
    if width < 64 {
        v &= (1u64 << width) - 1;
    }
    v
}

/// Bits `start .. end` of every row of `codes` (`words` u64 per row).
pub fn block_values(codes: &[u64], words: usize, start: usize, end: usize) -> Vec<u64> {
    codes
        .chunks_exact(words)
        .map(|c| block_value(c, start, end))
        .collect()
}

/// Stable LSD radix sort of `values` below `2**width` (digits of at most 16 bits): the sorted
/// values and the index of each.
pub fn radix_sort(values: Vec<u64>, width: usize) -> (Vec<u64>, Vec<i64>) {
    let n = values.len();
    let passes = width.div_ceil(16).max(1);
    let digit = width.div_ceil(passes).max(1);
    let size = 1usize << digit;
    let dmask = (size - 1) as u64;
    let mut keys = values;
    let mut order: Vec<i64> = (0..n as i64).collect();
    let mut tkeys = vec![0u64; n];
    let mut torder = vec![0i64; n];
    let mut count = vec![0usize; size + 1];
    for p in 0..passes {
        let shift = p * digit;
        count.fill(0);
        for &k in &keys {
            count[((k >> shift) & dmask) as usize + 1] += 1;
        }
        for c in 0..size {
            count[c + 1] += count[c];
        }
        for (&k, &o) in keys.iter().zip(&order) {
            let d = ((k >> shift) & dmask) as usize;
            let pos = count[d];
            count[d] = pos + 1;
            tkeys[pos] = k;
            torder[pos] = o;
        }
        std::mem::swap(&mut keys, &mut tkeys);
        std::mem::swap(&mut order, &mut torder);
    }
    (keys, order)
}

/// Values of block `start .. end` of every row sorted ascending (stable), and the row of each.
pub fn block_order(codes: &[u64], words: usize, start: usize, end: usize) -> (Vec<u64>, Vec<i64>) {
    radix_sort(block_values(codes, words, start, end), end - start)
}

#[inline(always)]
fn distance(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Every pair of rows within `radius`, each once: for each block `j`, rows sorted by the
/// block's value, runs of equal values scanned, candidates verified by popcount, and a pair
/// kept only if `j` is the first block it agrees on (`masks[jj]`: the bits of block `jj`).
/// Returns `(a, b, d)` with `a < b`, in block order, then sorted position.
pub fn all_pairs(
    codes: &[u64],
    words: usize,
    bounds: &[(usize, usize)],
    masks: &[u64],
    radius: i64,
) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, checked just above.
        return unsafe { all_pairs_popcnt(codes, words, bounds, masks, radius) };
    }
    all_pairs_body(codes, words, bounds, masks, radius)
}

/// [`all_pairs`] compiled with the POPCNT instruction (the baseline x86-64 target counts bits
/// with a dozen shifts and adds; the popcount is most of the scan).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn all_pairs_popcnt(
    codes: &[u64],
    words: usize,
    bounds: &[(usize, usize)],
    masks: &[u64],
    radius: i64,
) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    all_pairs_body(codes, words, bounds, masks, radius)
}

/// The pairs found so far.
#[derive(Default)]
struct Pairs {
    a: Vec<i64>,
    b: Vec<i64>,
    d: Vec<i64>,
}

/// Scan the run `lo .. hi` of rows with equal values of block `j` (`srt`: their codes,
/// `order`: their rows) for pairs within `radius` that agree on no earlier block.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn scan_run(
    srt: &[u64],
    order: &[i64],
    words: usize,
    lo: usize,
    hi: usize,
    j: usize,
    masks: &[u64],
    radius: i64,
    out: &mut Pairs,
) {
    for p in lo..hi {
        let cp = &srt[p * words..(p + 1) * words];
        for q in p + 1..hi {
            let cq = &srt[q * words..(q + 1) * words];
            let d = distance(cp, cq) as i64;
            if d > radius {
                continue;
            }
            let seen = (0..j).any(|jj| {
                let m = &masks[jj * words..(jj + 1) * words];
                cp.iter().zip(cq).zip(m).all(|((x, y), m)| (x ^ y) & m == 0)
            });
            if seen {
                continue;
            }
            let (a, b) = (order[p], order[q]);
            out.a.push(a.min(b));
            out.b.push(a.max(b));
            out.d.push(d);
        }
    }
}

#[inline(always)]
fn all_pairs_body(
    codes: &[u64],
    words: usize,
    bounds: &[(usize, usize)],
    masks: &[u64],
    radius: i64,
) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let n = codes.len().checked_div(words).unwrap_or(0);
    let mut out = Pairs::default();
    let mut srt = vec![0u64; n * words];
    let mut order = vec![0i64; n];
    let mut values = vec![0u64; n];
    for (j, &(start, end)) in bounds.iter().enumerate() {
        let width = end - start;
        if width <= 16 {
            // one counting sort: the codes land in block order, runs are the buckets
            let mut first = vec![0usize; (1 << width) + 1];
            for (v, c) in values.iter_mut().zip(codes.chunks_exact(words)) {
                *v = block_value(c, start, end);
                first[*v as usize + 1] += 1;
            }
            for v in 0..1 << width {
                first[v + 1] += first[v];
            }
            let mut at = first.clone();
            for (r, (&v, c)) in values.iter().zip(codes.chunks_exact(words)).enumerate() {
                let pos = at[v as usize];
                at[v as usize] = pos + 1;
                srt[pos * words..(pos + 1) * words].copy_from_slice(c);
                order[pos] = r as i64;
            }
            for v in 0..1 << width {
                let (lo, hi) = (first[v], first[v + 1]);
                if hi - lo > 1 {
                    scan_run(&srt, &order, words, lo, hi, j, masks, radius, &mut out);
                }
            }
        } else {
            let (keys, sorted) = block_order(codes, words, start, end);
            for (p, &o) in sorted.iter().enumerate() {
                let o = o as usize;
                srt[p * words..(p + 1) * words].copy_from_slice(&codes[o * words..(o + 1) * words]);
            }
            let mut lo = 0;
            while lo < n {
                let mut hi = lo + 1;
                while hi < n && keys[hi] == keys[lo] {
                    hi += 1;
                }
                if hi - lo > 1 {
                    scan_run(&srt, &sorted, words, lo, hi, j, masks, radius, &mut out);
                }
                lo = hi;
            }
        }
    }
    (out.a, out.b, out.d)
}

/// Block values at most this wide index a dense array of chain heads (2**16 u32: 256 KiB,
/// zero pages until touched); wider ones a hash map.
const DENSE_BITS: usize = 16;

/// The chain heads of one block: row + 1 of the newest filed row with each block value.
enum Heads {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

impl Heads {
    #[inline(always)]
    fn get(&self, v: u64) -> u32 {
        match self {
            Heads::Dense(h) => h[v as usize],
            Heads::Sparse(h) => h.get(&v).copied().unwrap_or(0),
        }
    }

    #[inline(always)]
    fn replace(&mut self, v: u64, head: u32) -> u32 {
        match self {
            Heads::Dense(h) => std::mem::replace(&mut h[v as usize], head),
            Heads::Sparse(h) => h.insert(v, head).unwrap_or(0),
        }
    }
}

/// The per-call Hamming table: rows of `words` u64 codes in insertion order, each live or
/// not, and for every block a chain of the rows per block value. Rows are filed into the
/// chains at the next query (a bulk add costs one copy), so that a query of radius
/// `r < blocks` visits only rows that equal the query on some block.
pub struct Table {
    words: usize,
    bounds: Vec<(usize, usize)>,
    codes: Vec<u64>,
    alive: Vec<bool>,
    /// rows `0 .. filed` are in the chains
    filed: usize,
    heads: Vec<Heads>,
    /// `next[row * blocks + j]`: the row + 1 filed before `row` with its block `j` value
    next: Vec<u32>,
    mark: Vec<u32>,
    stamp: u32,
}

/// The most rows a [`Table`] holds (rows are u32 in the chains, 0 the end of one).
pub const MAX_ROWS: usize = (u32::MAX - 1) as usize;

impl Table {
    /// An empty table of `words`-word codes cut at `bounds` (bit ranges of at most 64 bits
    /// within `64 * words`, checked by the caller).
    pub fn new(words: usize, bounds: Vec<(usize, usize)>) -> Self {
        let heads = bounds
            .iter()
            .map(|&(s, e)| {
                if e - s <= DENSE_BITS {
                    Heads::Dense(vec![0; 1 << (e - s)])
                } else {
                    Heads::Sparse(HashMap::new())
                }
            })
            .collect();
        Table {
            words,
            bounds,
            codes: Vec::new(),
            alive: Vec::new(),
            filed: 0,
            heads,
            next: Vec::new(),
            mark: Vec::new(),
            stamp: 0,
        }
    }

    pub fn words(&self) -> usize {
        self.words
    }

    pub fn blocks(&self) -> usize {
        self.bounds.len()
    }

    /// Rows held, live or not.
    pub fn len(&self) -> usize {
        self.alive.len()
    }

    pub fn is_empty(&self) -> bool {
        self.alive.is_empty()
    }

    pub fn codes(&self) -> &[u64] {
        &self.codes
    }

    pub fn alive(&self) -> &[bool] {
        &self.alive
    }

    /// Append rows (`codes`: whole rows of `words`, `alive`: one flag per row; checked by
    /// the caller, as is the row limit).
    pub fn add_rows(&mut self, codes: &[u64], alive: &[bool]) {
        self.codes.extend_from_slice(codes);
        self.alive.extend_from_slice(alive);
    }

    /// Append one live row; returns its index.
    pub fn add_row(&mut self, code: &[u64]) -> usize {
        self.codes.extend_from_slice(code);
        self.alive.push(true);
        self.alive.len() - 1
    }

    /// Mark `row` (below [`Table::len`]) dead: no query returns it again.
    pub fn kill(&mut self, row: usize) {
        self.alive[row] = false;
    }

    /// File the rows added since the last query into the chains.
    fn file(&mut self) {
        let (n, nb, words) = (self.alive.len(), self.bounds.len(), self.words);
        if self.filed == n {
            return;
        }
        self.next.resize(n * nb, 0);
        self.mark.resize(n, 0);
        for r in self.filed..n {
            let code = &self.codes[r * words..(r + 1) * words];
            for (j, (&(s, e), heads)) in self.bounds.iter().zip(&mut self.heads).enumerate() {
                self.next[r * nb + j] = heads.replace(block_value(code, s, e), r as u32 + 1);
            }
        }
        self.filed = n;
    }

    /// Live rows within `radius` of `q` (`words` u64) as `(distance, row)`, sorted, into
    /// `found` (cleared first). Radii
    /// below the number of blocks walk the chains of `q`'s block values (exact by the
    /// pigeonhole principle); larger ones scan every row.
    pub fn query(&mut self, q: &[u64], radius: u32, found: &mut Vec<(u32, u32)>) {
        found.clear();
        let (words, nb) = (self.words, self.bounds.len());
        if radius as usize >= nb {
            for (r, code) in self.codes.chunks_exact(words).enumerate() {
                if self.alive[r] {
                    let d = distance(code, q);
                    if d <= radius {
                        found.push((d, r as u32));
                    }
                }
            }
            found.sort_unstable();
            return;
        }
        self.file();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        for (j, (&(s, e), heads)) in self.bounds.iter().zip(&self.heads).enumerate() {
            let mut link = heads.get(block_value(q, s, e));
            while link != 0 {
                let r = (link - 1) as usize;
                link = self.next[r * nb + j];
                if self.mark[r] == stamp {
                    continue;
                }
                self.mark[r] = stamp;
                if !self.alive[r] {
                    continue;
                }
                let d = distance(&self.codes[r * words..(r + 1) * words], q);
                if d <= radius {
                    found.push((d, r as u32));
                }
            }
        }
        if found.len() > 1 {
            found.sort_unstable();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 3 == 2 {
                    x ^ 0b101 // a near copy of a random code
                } else {
                    x
                }
            })
            .collect()
    }

    #[test]
    fn radix_sort_is_stable_and_sorted() {
        let values: Vec<u64> = codes(500, 3).iter().map(|c| c & 0x3FF).collect();
        let (keys, order) = radix_sort(values.clone(), 10);
        let mut want: Vec<(u64, i64)> = values.iter().copied().zip(0..).collect();
        want.sort();
        assert_eq!(keys, want.iter().map(|w| w.0).collect::<Vec<_>>());
        assert_eq!(order, want.iter().map(|w| w.1).collect::<Vec<_>>());
    }

    #[test]
    fn pairs_and_queries_equal_brute_force() {
        let c = codes(400, 7);
        let near: Vec<u64> = c.iter().map(|x| x & 0xFFFF_0000_0000_00FF).collect();
        for set in [&c, &near] {
            let bounds = vec![(0, 16), (16, 32), (32, 48), (48, 64)];
            let masks: Vec<u64> = bounds
                .iter()
                .map(|&(s, e)| ((1u128 << e) - (1u128 << s)) as u64)
                .collect();
            let (a, b, d) = all_pairs(set, 1, &bounds, &masks, 3);
            let mut got: Vec<(i64, i64, i64)> = a
                .into_iter()
                .zip(b)
                .zip(d)
                .map(|((a, b), d)| (a, b, d))
                .collect();
            got.sort();
            let mut want = Vec::new();
            for i in 0..set.len() {
                for j in i + 1..set.len() {
                    let d = (set[i] ^ set[j]).count_ones() as i64;
                    if d <= 3 {
                        want.push((i as i64, j as i64, d));
                    }
                }
            }
            assert_eq!(got, want);
            let mut t = Table::new(1, bounds);
            let alive: Vec<bool> = (0..set.len()).map(|i| i % 5 != 0).collect();
            t.add_rows(set, &alive);
            let mut found = Vec::new();
            for (qi, q) in set.iter().enumerate().take(50) {
                for radius in [0, 3, 5] {
                    t.query(std::slice::from_ref(q), radius, &mut found);
                    let mut want: Vec<(u32, u32)> = (0..set.len())
                        .filter(|&r| alive[r])
                        .map(|r| ((set[r] ^ q).count_ones(), r as u32))
                        .filter(|&(d, _)| d <= radius)
                        .collect();
                    want.sort();
                    assert_eq!(found, want, "query {qi} radius {radius}");
                }
            }
        }
    }
}
