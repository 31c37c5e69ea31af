//! The band-key table over slices: layout in `neardup._kernels.lsh` (Python docstring).
//!
//! `tab` is one `i64` array. Header `tab[0..8]`: slots used, entries used, query stamp, slots,
//! entry capacity, bands, rows, base (the offset of the slots). Then `slots` slots of two
//! words `(key, head)` (head -1: empty slot; open addressing, linear probing over a power of
//! two), then `capacity` entries of two words `(row, previous entry of the same key or -1)`:
//! each key's rows form a chain, newest first. `mark` (one `i64` per row) de-duplicates a
//! query's candidates against the stamp `tab[2]` without clearing anything between queries.

/// Header words of [`neardup.index.lsh.LSHIndex`]'s table (the Hamming index's is longer).
pub const HEADER: usize = 8;
const USED: usize = 0;
const ENTRIES: usize = 1;
pub const STAMP: usize = 2;
const SLOTS: usize = 3;
const CAPACITY: usize = 4;
pub const BANDS: usize = 5;
pub const ROWS: usize = 6;
const BASE: usize = 7;

pub const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
const C1: u64 = 0xFF51_AFD7_ED55_8CCD;
const C2: u64 = 0xC4CE_B9FE_1A85_EC53;
const MAX64: u64 = u64::MAX;
const LOW32: u64 = 0xFFFF_FFFF;

/// MurmurHash3's 64-bit finalizer.
#[inline(always)]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(C1);
    x ^= x >> 33;
    x = x.wrapping_mul(C2);
    x ^ (x >> 33)
}

/// The 64-bit key of band `j` (slots `j*rows .. (j+1)*rows` of `row`): `h = (j+1) * M`, per
/// slot `h = (rotl(h, 27) ^ v) * M`, key `fmix64(h)` (as `minhash.reference.band_keys`).
#[inline(always)]
pub fn band_key<T: Copy + Into<u64>>(row: &[T], j: usize, rows: usize) -> i64 {
    let mut h = ((j + 1) as u64).wrapping_mul(MIX);
    for &v in &row[j * rows..(j + 1) * rows] {
        h = (h.rotate_left(27) ^ v.into()).wrapping_mul(MIX);
    }
    fmix64(h) as i64
}

/// [`band_key`] of every band of `row` into `out` (one key per band), the bands' hash
/// chains advanced side by side (independent multiplies: the processor overlaps them).
#[inline]
pub fn band_keys_into<T: Copy + Into<u64>>(row: &[T], rows: usize, out: &mut [i64]) {
    #[cfg(target_arch = "x86_64")]
    {
        // 64-bit multiplies side by side need AVX-512DQ (the baseline multiplies one at a time)
        #[target_feature(enable = "avx512f,avx512dq,avx512vl")]
        fn wide<T: Copy + Into<u64>>(row: &[T], rows: usize, out: &mut [i64]) {
            band_keys_body(row, rows, out)
        }
        if out.len() >= 8 && std::is_x86_feature_detected!("avx512dq") {
            // SAFETY: the CPU has AVX-512DQ (and F and VL with it, as every such CPU)
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl")
            {
                return unsafe { wide(row, rows, out) };
            }
        }
    }
    band_keys_body(row, rows, out)
}

#[inline(always)]
fn band_keys_body<T: Copy + Into<u64>>(row: &[T], rows: usize, out: &mut [i64]) {
    for (j, h) in out.iter_mut().enumerate() {
        *h = ((j + 1) as u64).wrapping_mul(MIX) as i64;
    }
    let row = &row[..out.len() * rows];
    for c in 0..rows {
        for (j, h) in out.iter_mut().enumerate() {
            let v: u64 = row[j * rows + c].into();
            *h = ((*h as u64).rotate_left(27) ^ v).wrapping_mul(MIX) as i64;
        }
    }
    for h in out.iter_mut() {
        *h = fmix64(*h as u64) as i64;
    }
}

/// Ask for the cache line of `key`'s home slot (a hint: probes of many keys then overlap
/// their cache misses).
#[inline(always)]
pub fn prefetch(tab: &[i64], key: i64) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let at = tab[BASE] as usize + 2 * (key & (tab[SLOTS] - 1)) as usize;
        // SAFETY: a prefetch never faults; the address is inside `tab` for a valid table
        unsafe { _mm_prefetch::<_MM_HINT_T0>(tab.as_ptr().wrapping_add(at) as *const i8) };
    }
}

/// The 32-bit fingerprint of a slot: `(v ^ (v >> 32)) & 0xFFFFFFFF`.
#[inline(always)]
pub fn fold(v: u64) -> u32 {
    (v ^ (v >> 32)) as u32
}

/// Fold `src` into `dst`; false when the row is empty (every slot at `2**64 - 1`, or every
/// slot at `2**32 - 1`: never a hit).
#[inline]
pub fn fold_row(src: &[u64], dst: &mut [u32]) -> bool {
    for (d, &v) in dst.iter_mut().zip(src) {
        *d = fold(v);
    }
    !is_empty(src)
}

/// Whether `src` is empty in the sense of [`fold_row`].
#[inline]
pub fn is_empty(src: &[u64]) -> bool {
    is_empty_by(src)
}

/// [`is_empty`] of slots of any unsigned width (read as `u64`).
#[inline]
pub fn is_empty_by<T: Copy + Into<u64>>(src: &[T]) -> bool {
    src.iter().all(|&v| v.into() == MAX64) || src.iter().all(|&v| v.into() == LOW32)
}

/// Number of equal slots of two rows.
#[inline]
pub fn same(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x == y).count()
}

/// Index in `tab` of `key`'s slot (its key word; the head follows): where it is, or the empty
/// slot where it would go.
#[inline(always)]
pub fn slot(tab: &[i64], key: i64) -> usize {
    let base = tab[BASE] as usize;
    let mask = tab[SLOTS] - 1;
    let mut s = key & mask;
    loop {
        let at = base + 2 * s as usize;
        if tab[at + 1] < 0 || tab[at] == key {
            return at;
        }
        s = (s + 1) & mask;
    }
}

/// The first entry word of the table.
#[inline(always)]
pub fn entries_at(tab: &[i64]) -> usize {
    tab[BASE] as usize + 2 * tab[SLOTS] as usize
}

/// File `row` under `key`; returns the key's previous head (-1: a new key).
#[inline(always)]
pub fn file(tab: &mut [i64], key: i64, row: i64) -> i64 {
    let ents = entries_at(tab);
    let at = slot(tab, key);
    let head = tab[at + 1];
    if head < 0 {
        tab[at] = key;
        tab[USED] += 1;
    }
    let e = tab[ENTRIES];
    let w = ents + 2 * e as usize;
    tab[w] = row;
    tab[w + 1] = head;
    tab[at + 1] = e;
    tab[ENTRIES] = e + 1;
    head
}

/// Whether `keys` more entries fit (and the slots stay at most 3/4 full).
#[inline]
pub fn room(tab: &[i64], keys: i64) -> bool {
    tab[ENTRIES] + keys <= tab[CAPACITY] && 4 * (tab[USED] + keys) <= 3 * tab[SLOTS]
}

/// Length of a table of `slots` slots, `capacity` entries and a header of `base` words.
pub fn table_len(slots: usize, capacity: usize, base: usize) -> usize {
    base + 2 * slots + 2 * capacity
}

/// Fill a zeroed `tab` of [`table_len`] words as an empty table.
pub fn init_table(tab: &mut [i64], slots: i64, capacity: i64, bands: i64, rows: i64, base: i64) {
    tab[SLOTS] = slots;
    tab[CAPACITY] = capacity;
    tab[BANDS] = bands;
    tab[ROWS] = rows;
    tab[BASE] = base;
    let b = base as usize;
    for s in 0..slots as usize {
        tab[b + 2 * s + 1] = -1;
    }
}

/// `old` rehashed into the zeroed `out` of `slots` slots and room for `capacity` entries.
pub fn grow_into(old: &[i64], out: &mut [i64], slots: i64, capacity: i64) {
    let base = old[BASE] as usize;
    init_table(out, slots, capacity, old[BANDS], old[ROWS], base as i64);
    out[..3].copy_from_slice(&old[..3]);
    out[HEADER..base].copy_from_slice(&old[HEADER..base]);
    for s in 0..old[SLOTS] as usize {
        let (key, head) = (old[base + 2 * s], old[base + 2 * s + 1]);
        if head >= 0 {
            let at = slot(out, key);
            out[at] = key;
            out[at + 1] = head;
        }
    }
    let used = 2 * old[ENTRIES] as usize;
    let (from, to) = (entries_at(old), entries_at(out));
    out[to..to + used].copy_from_slice(&old[from..from + used]);
}

/// `(slots, capacity)` with room for `more` entries (`neardup._kernels.lsh.plan_growth`).
pub fn plan_growth(
    used_slots: i64,
    used_entries: i64,
    mut slots: i64,
    mut capacity: i64,
    more: i64,
) -> (i64, i64) {
    let need = used_entries + more;
    if need > capacity {
        capacity = need.max(2 * capacity);
    }
    while 4 * (used_slots + more) > 3 * slots {
        slots *= 2;
    }
    (slots, capacity)
}

/// Header fields the growth plan reads: `(used slots, used entries, slots, capacity, base)`.
pub fn sizes(tab: &[i64]) -> (i64, i64, i64, i64, i64) {
    (
        tab[USED],
        tab[ENTRIES],
        tab[SLOTS],
        tab[CAPACITY],
        tab[BASE],
    )
}

/// Set the entry capacity word (after the caller extended the entries in place).
pub fn set_capacity(tab: &mut [i64], capacity: i64) {
    tab[CAPACITY] = capacity;
}

/// File the band keys of stored rows `rows_in` (rows of `sig32`, `num_perm` wide).
/// Returns 0, or -1 (nothing filed) when the table lacks room for them.
pub fn insert_rows(rows_in: &[i64], sig32: &[u32], num_perm: usize, tab: &mut [i64]) -> i64 {
    let (bands, rows) = (tab[BANDS] as usize, tab[ROWS] as usize);
    if !room(tab, rows_in.len() as i64 * bands as i64) {
        return -1;
    }
    let mut keys = vec![0i64; bands];
    for &r in rows_in {
        let row = &sig32[r as usize * num_perm..(r as usize + 1) * num_perm];
        band_keys_into(row, rows, &mut keys);
        file_keys(tab, &mut keys, r);
    }
    0
}

/// Fold `src` (one row) into row `r` of `sig32`, set `state[r]` (1 live, 2 live but empty)
/// and file its band keys; `heads[j]` gets band `j`'s previous chain head.
pub fn store(
    src: &[u64],
    r: usize,
    sig32: &mut [u32],
    num_perm: usize,
    state: &mut [u8],
    tab: &mut [i64],
    heads: &mut [i64],
) {
    let row = &mut sig32[r * num_perm..(r + 1) * num_perm];
    state[r] = if fold_row(src, row) { 1 } else { 2 };
    // every key first, then the probes: independent loads, so their cache misses overlap
    band_keys_into(row, tab[ROWS] as usize, heads);
    file_keys(tab, heads, r as i64);
}

/// File `row` under each key of `keys`, which become the previous heads of their chains.
#[inline]
pub fn file_keys(tab: &mut [i64], keys: &mut [i64], row: i64) {
    for &k in keys.iter() {
        prefetch(tab, k);
    }
    for h in keys.iter_mut() {
        *h = file(tab, *h, row);
    }
}

/// Whether rows `first .. first + k` fit in `nrows` rows and their band keys in the table.
pub fn fits(first: i64, k: i64, nrows: usize, tab: &[i64]) -> bool {
    first >= 0 && first + k <= nrows as i64 && room(tab, k * tab[BANDS])
}

/// Store the rows of `src` (`k * num_perm` slots) as rows `first..first+k`: 0, or -1 (nothing
/// stored) when the rows or the table lack room.
pub fn add_rows(
    src: &[u64],
    first: i64,
    sig32: &mut [u32],
    num_perm: usize,
    state: &mut [u8],
    tab: &mut [i64],
) -> i64 {
    let k = src.len().checked_div(num_perm).unwrap_or(0);
    let nrows = (sig32.len() / num_perm.max(1)).min(state.len());
    if !fits(first, k as i64, nrows, tab) {
        return -1;
    }
    let mut heads = vec![0i64; tab[BANDS] as usize];
    for i in 0..k {
        let row = &src[i * num_perm..(i + 1) * num_perm];
        store(
            row,
            first as usize + i,
            sig32,
            num_perm,
            state,
            tab,
            &mut heads,
        );
    }
    0
}

/// The chain head of each band key of the folded query `q` into `heads` (-1: not filed).
#[inline]
pub fn probe<T: Copy + Into<u64>>(q: &[T], tab: &[i64], heads: &mut [i64]) {
    band_keys_into(q, tab[ROWS] as usize, heads);
    heads_of(tab, heads);
}

/// Replace each key of `keys` by the head of its chain (-1: the key is not filed).
#[inline]
pub fn heads_of(tab: &[i64], keys: &mut [i64]) {
    for &k in keys.iter() {
        prefetch(tab, k);
    }
    for h in keys.iter_mut() {
        *h = tab[slot(tab, *h) + 1];
    }
}

/// What a ranked walk reads: the rows' folded slots and states, and the query stamps.
pub struct Rows<'a> {
    pub sig32: &'a [u32],
    pub num_perm: usize,
    pub state: &'a [u8],
    pub mark: &'a mut [i64],
}

/// Append `(num_perm - equal slots, row)` of each live row of the chains from `heads` not
/// yet met by this query (stamp `tab[2]`, already advanced) whose estimate is `>= min_est`.
pub fn walk(
    heads: &[i64],
    q: &[u32],
    tab: &[i64],
    rows: &mut Rows<'_>,
    min_est: f64,
    hits: &mut Vec<(usize, usize)>,
) {
    let ents = entries_at(tab);
    let stamp = tab[STAMP];
    let p = rows.num_perm;
    for &h in heads {
        let mut e = h;
        while e >= 0 {
            let w = ents + 2 * e as usize;
            let r = tab[w] as usize;
            e = tab[w + 1];
            if rows.mark[r] == stamp || rows.state[r] != 1 {
                continue;
            }
            rows.mark[r] = stamp;
            let eq = same(&rows.sig32[r * p..(r + 1) * p], q);
            if (eq as f64) / (p as f64) < min_est {
                continue;
            }
            hits.push((p - eq, r));
        }
    }
}

/// Hits of one folded query `q`, unsorted, appended to `hits` (advances the stamp).
pub fn collect(
    q: &[u32],
    tab: &mut [i64],
    rows: &mut Rows<'_>,
    min_est: f64,
    heads: &mut [i64],
    hits: &mut Vec<(usize, usize)>,
) {
    probe(q, tab, heads);
    tab[STAMP] += 1;
    walk(heads, q, tab, rows, min_est, hits);
}

/// The estimate of a hit `(num_perm - equal slots, row)`.
#[inline]
pub fn estimate(distance: usize, num_perm: usize) -> f64 {
    (num_perm - distance) as f64 / num_perm as f64
}

/// Append the live rows of the chains from `heads` not yet met by this query (stamp
/// `tab[2]`, already advanced) to `out`, in chain order; no row's slots are read.
pub fn unranked(heads: &[i64], tab: &[i64], state: &[u8], mark: &mut [i64], out: &mut Vec<i64>) {
    let ents = entries_at(tab);
    let stamp = tab[STAMP];
    for &h in heads {
        let mut e = h;
        while e >= 0 {
            let w = ents + 2 * e as usize;
            let r = tab[w];
            e = tab[w + 1];
            let ru = r as usize;
            if mark[ru] == stamp || state[ru] != 1 {
                continue;
            }
            mark[ru] = stamp;
            out.push(r);
        }
    }
}

/// [`unranked`] keeping only the rows whose band `j` (of the chain of `heads[j]`) equals the
/// query's: exact buckets over raw slots (`raw`, `num_perm` per row) despite 64-bit keys.
#[allow(clippy::too_many_arguments)]
pub fn unranked_exact(
    heads: &[i64],
    q: &[u64],
    raw: &[u64],
    num_perm: usize,
    tab: &[i64],
    state: &[u8],
    mark: &mut [i64],
    out: &mut Vec<i64>,
) {
    let ents = entries_at(tab);
    let stamp = tab[STAMP];
    let rows = tab[ROWS] as usize;
    for (j, &h) in heads.iter().enumerate() {
        let band = &q[j * rows..(j + 1) * rows];
        let mut e = h;
        while e >= 0 {
            let w = ents + 2 * e as usize;
            let r = tab[w];
            e = tab[w + 1];
            let ru = r as usize;
            if mark[ru] == stamp || state[ru] == 0 {
                continue;
            }
            let at = ru * num_perm + j * rows;
            if &raw[at..at + rows] != band {
                continue; // another band under the same 64-bit key
            }
            mark[ru] = stamp;
            out.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(slots: usize, cap: usize, bands: i64, rows: i64) -> Vec<i64> {
        let mut tab = vec![0; table_len(slots, cap, HEADER)];
        init_table(
            &mut tab,
            slots as i64,
            cap as i64,
            bands,
            rows,
            HEADER as i64,
        );
        tab
    }

    #[test]
    fn filed_rows_chain_newest_first_and_survive_growth() {
        let mut tab = table(8, 4, 1, 1);
        assert_eq!(file(&mut tab, 5, 0), -1);
        assert_eq!(file(&mut tab, 5, 1), 0);
        assert_eq!(file(&mut tab, 13, 2), -1); // same slot modulo 8: probes on
        let mut out = vec![0; table_len(16, 8, HEADER)];
        grow_into(&tab, &mut out, 16, 8);
        for mut t in [tab, out] {
            let heads = [t[slot(&t, 5) + 1], t[slot(&t, 13) + 1]];
            t[STAMP] += 1;
            let (state, mut mark, mut got) = ([1u8; 3], [0i64; 3], vec![]);
            unranked(&heads, &t, &state, &mut mark, &mut got);
            assert_eq!(got, vec![1, 0, 2]);
        }
    }

    #[test]
    fn fold_and_empty() {
        let mut d = [0u32; 2];
        assert!(!fold_row(&[u64::MAX, u64::MAX], &mut d));
        assert!(!fold_row(&[LOW32, LOW32], &mut d));
        assert!(fold_row(&[1 << 32, 3], &mut d));
        assert_eq!(d, [1, 3]);
    }

    #[test]
    fn growth_plan_keeps_a_quarter_free() {
        assert_eq!(plan_growth(0, 0, 512, 256, 16), (512, 256));
        assert_eq!(plan_growth(380, 300, 512, 400, 10), (1024, 400));
        assert_eq!(plan_growth(0, 400, 512, 400, 10), (512, 800));
    }
}
