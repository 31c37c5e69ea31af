//! The packing of one segment: `(folded key, document)` entries sorted by key then document,
//! repeats dropped, cut into buckets by the key's top bits, each entry packed into `width`
//! little-endian bytes, one block per non-empty bucket with the XXH3-64 of its row id and
//! data (the store's `id_checksum`).

use xxhash_rust::xxh3::xxh3_64;

/// A check that failed, as the message of the twin's `ConfigError`.
pub type Invalid = String;

/// The packed segment: its fields, the entries laid end to end, and its blocks.
#[derive(Debug, PartialEq, Eq)]
pub struct Packed {
    /// Key bits kept per entry; the bucket is `key >> shift`.
    pub shift: u32,
    /// Smallest and largest key (unsigned 32-bit).
    pub kmin: u32,
    pub kmax: u32,
    /// Distinct entries.
    pub entries: usize,
    /// Every entry's `width` bytes, in order.
    pub raw: Vec<u8>,
    /// Each block's row id `seg << 32 | bucket`, where its bytes end in `raw`, its checksum.
    pub ids: Vec<i64>,
    pub ends: Vec<i64>,
    pub checks: Vec<i64>,
}

/// Entries per bucket of the first sorting pass (a counting pass on the top key bits).
const SORT_BUCKET: usize = 16;

/// Most key bits of `encode_band_segment`'s first counting pass (the rest of the
/// `sort_top` bits go to a second pass within each bucket of the first).
const FIRST_BITS: u32 = 8;

/// Check the arguments as the twin does.
pub fn check(
    keys: &[i64],
    docs: &[i64],
    doc_lo: i64,
    doc_bits: i64,
    seg: i64,
    bucket_entries: i64,
) -> Result<(), Invalid> {
    if keys.len() != docs.len() {
        return Err(format!(
            "keys and docs differ in length ({} and {})",
            keys.len(),
            docs.len()
        ));
    }
    check_params(keys.len(), doc_bits, seg, bucket_entries)?;
    let span = 1i128 << doc_bits;
    let outside = |d: i64| {
        let off = d as i128 - doc_lo as i128;
        off < 0 || off >= span
    };
    // the smallest and the largest first (a vector loop); the first outside only if one is
    let (lo, hi) = docs
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &d| (lo.min(d), hi.max(d)));
    if outside(lo) || outside(hi) {
        if let Some(d) = docs.iter().find(|&&d| outside(d)) {
            return Err(outside_error(d, doc_lo, doc_bits));
        }
    }
    Ok(())
}

fn outside_error(d: impl std::fmt::Display, doc_lo: i64, doc_bits: i64) -> Invalid {
    format!("document {d} is outside doc_lo {doc_lo} + {doc_bits} bits")
}

/// The checks of `check` that do not read the entries.
fn check_params(
    entries: usize,
    doc_bits: i64,
    seg: i64,
    bucket_entries: i64,
) -> Result<(), Invalid> {
    if entries == 0 {
        return Err("a segment needs at least one entry, got none".into());
    }
    if !(1..=32).contains(&doc_bits) {
        return Err(format!("doc_bits must be in 1..32, got {doc_bits}"));
    }
    if !(1..(1 << 31)).contains(&seg) {
        return Err(format!("seg must be in 1..2**31, got {seg}"));
    }
    if bucket_entries < 1 {
        return Err(format!(
            "bucket_entries must be at least 1, got {bucket_entries}"
        ));
    }
    Ok(())
}

/// `key << 32 | doc - doc_lo` of every entry (the key's low 32 bits), sorted, repeats dropped:
/// a counting pass on the top bits, then each small bucket sorted.
pub fn sorted_entries(keys: &[i64], docs: &[i64], doc_lo: i64) -> Vec<u64> {
    let entry = |k: i64, d: i64| ((k as u64) << 32) | (d.wrapping_sub(doc_lo) as u64 & 0xFFFF_FFFF);
    sorted_by(keys.len(), |i| entry(keys[i], docs[i]))
}

/// The entries `entry(0) .. entry(n - 1)` sorted, repeats dropped (see `sorted_entries`).
#[inline(always)]
fn sorted_by(n: usize, entry: impl Fn(usize) -> u64) -> Vec<u64> {
    let top = sort_top(n);
    let mut out: Vec<u64>;
    if top == 0 {
        out = (0..n).map(&entry).collect();
        out.sort_unstable();
    } else {
        let down = 64 - top;
        let mut starts = vec![0usize; (1 << top) + 1];
        for i in 0..n {
            starts[(entry(i) >> down) as usize + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        out = vec![0u64; n];
        let mut at = starts.clone();
        for i in 0..n {
            let v = entry(i);
            let b = (v >> down) as usize;
            out[at[b]] = v;
            at[b] += 1;
        }
        for w in starts.windows(2) {
            out[w[0]..w[1]].sort_unstable();
        }
    }
    out.dedup();
    out
}

/// Top key bits of the counting pass over `n` entries (0: one plain sort).
fn sort_top(n: usize) -> u32 {
    if n >= SORT_BUCKET * 64 {
        ((n / SORT_BUCKET).ilog2()).min(20)
    } else {
        0
    }
}

/// A segment's `shift` and entry `width` (bytes) for `n` entries.
fn layout(n: usize, doc_bits: u32, bucket_entries: usize) -> (u32, usize) {
    let ratio = (n as f64 / bucket_entries as f64).max(1.0);
    let bucket_bits = ratio.log2().round_ties_even().clamp(0.0, 32.0) as u32;
    let shift = 32 - bucket_bits;
    (shift, (shift + doc_bits).div_ceil(8) as usize)
}

/// Each block's XXH3-64 of its row id (little-endian) and its bytes.
fn checksums(raw: &[u8], ids: &[i64], ends: &[i64]) -> Vec<i64> {
    let mut checks = Vec::with_capacity(ids.len());
    let mut scratch = Vec::new();
    let mut start = 0usize;
    for (&id, &end) in ids.iter().zip(ends) {
        scratch.clear();
        scratch.extend_from_slice(&id.to_le_bytes());
        scratch.extend_from_slice(&raw[start..end as usize]);
        checks.push(xxh3_64(&scratch) as i64);
        start = end as usize;
    }
    checks
}

/// Pack sorted distinct entries (`sorted_entries`) of segment `seg` into blocks.
pub fn pack(both: &[u64], seg: i64, doc_bits: u32, bucket_entries: usize) -> Packed {
    let mut buf = Vec::with_capacity(8 * both.len());
    for v in both {
        buf.extend_from_slice(&v.to_ne_bytes());
    }
    pack_in_place(buf, 0, both.len(), seg, doc_bits, bucket_entries)
}

/// Check, sort and pack (see the module docs).
pub fn encode_segment(
    keys: &[i64],
    docs: &[i64],
    doc_lo: i64,
    doc_bits: i64,
    seg: i64,
    bucket_entries: i64,
) -> Result<Packed, Invalid> {
    check(keys, docs, doc_lo, doc_bits, seg, bucket_entries)?;
    let both = sorted_entries(keys, docs, doc_lo);
    Ok(pack(&both, seg, doc_bits as u32, bucket_entries as usize))
}

/// The store's fold of a `(band, value)` pair into a 32-bit signed lookup key
/// (`neardup.store._lookup.fold`): a splitmix64-style finalizer of `value * M1 + band * M2`.
#[inline(always)]
pub fn fold(band: u64, value: u64) -> i64 {
    fold_mixed(band.wrapping_mul(M2), value)
}

const M1: u64 = 0x9E37_79B9_7F4A_7C15;
const M2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const M3: u64 = 0xBF58_476D_1CE4_E5B9;

/// [`fold`] of a band already multiplied by `M2`.
#[inline(always)]
fn fold_mixed(band_m2: u64, value: u64) -> i64 {
    let mut h = value.wrapping_mul(M1).wrapping_add(band_m2);
    h ^= h >> 29;
    h = h.wrapping_mul(M3);
    h ^= h >> 32;
    i64::from(h as u32 as i32)
}

/// [`encode_segment`] of the lookup entries of `values.len() / bands` documents with
/// `bands` band values each (row-major): row `i`, column `j` is the entry
/// `(fold(j, values[i][j]), doc_base + i)` (the same checks and errors).
#[allow(clippy::too_many_arguments)]
pub fn encode_band_segment(
    values: &[i64],
    bands: usize,
    doc_base: i64,
    doc_lo: i64,
    doc_bits: i64,
    seg: i64,
    bucket_entries: i64,
) -> Result<Packed, Invalid> {
    let rows = values.len().checked_div(bands).unwrap_or(0);
    check_params(rows * bands, doc_bits, seg, bucket_entries)?;
    // the documents rise from doc_base: the first outside is the first or the first past
    let (first, last) = (doc_base as i128, doc_base as i128 + rows as i128 - 1);
    let (lo, end) = (doc_lo as i128, doc_lo as i128 + (1i128 << doc_bits));
    if first < lo || first >= end {
        return Err(outside_error(first, doc_lo, doc_bits));
    }
    if last >= end {
        return Err(outside_error(end, doc_lo, doc_bits));
    }
    let n = rows * bands;
    let mixed: Vec<u64> = (0..bands as u64).map(|j| j.wrapping_mul(M2)).collect();
    let offset = (doc_base - doc_lo) as u64;
    // the folded keys alone (4 bytes an entry; an entry's document is its row)
    let mut keys = vec![0u32; n];
    for (row, out) in values.chunks_exact(bands).zip(keys.chunks_exact_mut(bands)) {
        for ((k, &v), &m) in out.iter_mut().zip(row).zip(&mixed) {
            *k = fold_mixed(m, v as u64) as u32;
        }
    }
    let entry = |i: usize| ((keys[i] as u64) << 32) | (offset + (i / bands) as u64);
    // the entries are sorted in the buffer that then holds the packed bytes (each entry's
    // bytes are written at or before where the entry was read): one buffer of 8 bytes an
    // entry, not the entries, their sorted copy and the packed bytes
    let mut buf = vec![0u8; n * 8 + 16];
    // SAFETY: every bit pattern of 8 bytes is a valid u64
    let (head, words, _) = unsafe { buf.align_to_mut::<u64>() };
    let at = head.len();
    let words = &mut words[..n];
    let top = sort_top(n);
    if top == 0 {
        for (i, w) in words.iter_mut().enumerate() {
            *w = entry(i);
        }
        words.sort_unstable();
    } else {
        // two counting passes on the top key bits, then each small bucket sorted: the first
        // on at most FIRST_BITS bits (few buckets: their write positions stay in cache,
        // where one pass into 2^16 buckets missed the cache at nearly every entry), the
        // second within each first bucket, through a scratch copy of it (a few KB); 3 bits
        // more than sort_top, for buckets of ~2 entries (an insertion sort of 16 random
        // entries took ~64 steps, most of them mispredicted branches): 1M entries 21.7 ->
        // 18.3 ms, the same bytes
        let top = (top + 3).min(30);
        let first = top.min(FIRST_BITS);
        let down = 32 - first;
        let mut starts = vec![0usize; (1 << first) + 1];
        for &k in &keys {
            starts[(k >> down) as usize + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        let mut next = starts.clone();
        for (r, row) in keys.chunks_exact(bands).enumerate() {
            let doc = offset + r as u64;
            for &k in row {
                let b = (k >> down) as usize;
                words[next[b]] = ((k as u64) << 32) | doc;
                next[b] += 1;
            }
        }
        let second = top - first;
        let mut scratch: Vec<u64> = Vec::new();
        let mut inner = vec![0usize; (1 << second) + 1];
        let mut at = vec![0usize; 1 << second];
        let (shift2, mask2) = (32 + 32 - top, (1u64 << second) - 1);
        for w in starts.windows(2) {
            let part = &mut words[w[0]..w[1]];
            if second > 0 && part.len() > SORT_BUCKET {
                scratch.clear();
                scratch.extend_from_slice(part);
                inner.fill(0);
                for &v in &scratch {
                    inner[((v >> shift2) & mask2) as usize + 1] += 1;
                }
                for b in 1..inner.len() {
                    inner[b] += inner[b - 1];
                }
                at.copy_from_slice(&inner[..1 << second]);
                for &v in &scratch {
                    let b = ((v >> shift2) & mask2) as usize;
                    part[at[b]] = v;
                    at[b] += 1;
                }
                for w2 in inner.windows(2) {
                    part[w2[0]..w2[1]].sort_unstable();
                }
            } else {
                part.sort_unstable();
            }
        }
    }
    let m = dedup_sorted(words);
    drop(keys);
    Ok(pack_in_place(
        buf,
        at,
        m,
        seg,
        doc_bits as u32,
        bucket_entries as usize,
    ))
}

/// Keep the first of each run of equal values of a sorted slice; the distinct count.
fn dedup_sorted(words: &mut [u64]) -> usize {
    if words.is_empty() {
        return 0;
    }
    let mut m = 1;
    for i in 1..words.len() {
        if words[i] != words[m - 1] {
            words[m] = words[i];
            m += 1;
        }
    }
    m
}

/// `pack` of the `m` sorted distinct entries held as native-endian u64 at `buf[at..]`,
/// written over them: entry `i` goes to `buf[i * width..]`, at or before where it and
/// every later entry are (`width <= 8`, `at >= 0`).
fn pack_in_place(
    mut buf: Vec<u8>,
    at: usize,
    m: usize,
    seg: i64,
    doc_bits: u32,
    bucket_entries: usize,
) -> Packed {
    let read = |buf: &[u8], i: usize| {
        u64::from_ne_bytes(buf[at + 8 * i..at + 8 * i + 8].try_into().unwrap())
    };
    let (kmin, kmax) = if m > 0 {
        (
            (read(&buf, 0) >> 32) as u32,
            (read(&buf, m - 1) >> 32) as u32,
        )
    } else {
        (0, 0)
    };
    let (shift, width) = layout(m, doc_bits, bucket_entries);
    let low: u64 = if shift == 0 { 0 } else { (1u64 << shift) - 1 };
    let (mut ids, mut ends) = (Vec::new(), Vec::new());
    let mut current = u64::MAX;
    for i in 0..m {
        let v = read(&buf, i);
        let key = v >> 32;
        let bucket = if shift == 32 { 0 } else { key >> shift };
        if bucket != current {
            if current != u64::MAX {
                ends.push((i * width) as i64);
            }
            ids.push((seg << 32) | bucket as i64);
            current = bucket;
        }
        let packed = (v & 0xFFFF_FFFF) | ((key & low) << doc_bits);
        buf[i * width..i * width + 8].copy_from_slice(&packed.to_le_bytes());
    }
    buf.truncate(m * width);
    buf.shrink_to_fit();
    if m > 0 {
        ends.push(buf.len() as i64);
    }
    let checks = checksums(&buf, &ids, &ends);
    Packed {
        shift,
        kmin,
        kmax,
        entries: m,
        raw: buf,
        ids,
        ends,
        checks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_drops_repeats_and_packs() {
        // the docstring example of encode_segment: keys 5, -1, 5 of documents 3, 4, 3
        let p = encode_segment(&[5, -1, 5], &[3, 4, 3], 3, 1, 1, 64).unwrap();
        assert_eq!((p.entries, p.shift, p.kmin, p.kmax), (2, 32, 5, u32::MAX));
        assert_eq!(p.ids, vec![1 << 32]);
        // width (32 + 1 + 7) / 8 = 5 bytes an entry: doc offset in bit 0, the key above it
        assert_eq!(p.raw.len(), 10);
        assert_eq!(p.ends, vec![10]);
        let mut row = (1i64 << 32).to_le_bytes().to_vec();
        row.extend_from_slice(&p.raw);
        assert_eq!(p.checks, vec![xxh3_64(&row) as i64]);
    }

    #[test]
    fn the_counting_pass_sorts_like_a_plain_sort() {
        let n = 5000usize;
        let keys: Vec<i64> = (0..n as i64)
            .map(|i| (i * 2_654_435_761) % 1_000_003 - 500_000)
            .collect();
        let docs: Vec<i64> = (0..n as i64).map(|i| 100 + i / 16).collect();
        let got = sorted_entries(&keys, &docs, 100);
        let mut want: Vec<u64> = keys
            .iter()
            .zip(&docs)
            .map(|(&k, &d)| ((k as u64) << 32) | (d - 100) as u64)
            .collect();
        want.sort_unstable();
        want.dedup();
        assert_eq!(got, want);
    }

    #[test]
    fn band_segments_fold_each_column_with_its_band() {
        // the docstring example of the store's fold: bands 0 and 1 of the value 7
        assert_eq!((fold(0, 7), fold(1, 7)), (-1_478_730_901, 835_073_148));
        let values = [7i64, 7, -3, 1 << 40];
        let keys = [
            fold(0, 7),
            fold(1, 7),
            fold(0, (-3i64) as u64),
            fold(1, 1 << 40),
        ];
        assert_eq!(
            encode_band_segment(&values, 2, 10, 10, 1, 5, 64),
            encode_segment(&keys, &[10, 10, 11, 11], 10, 1, 5, 64)
        );
        assert!(encode_band_segment(&[], 2, 0, 0, 1, 1, 64).is_err());
    }

    #[test]
    fn band_segments_in_place_match_the_plain_encoder() {
        // small (one sort) and large (the counting pass) batches, with repeated rows (the
        // same entries twice are impossible across documents, so a row's bands repeat) and
        // segment widths from 3 to 8 bytes
        for (rows, bands, bucket) in [(7usize, 3usize, 1i64), (3000, 9, 16), (20000, 16, 64)] {
            let values: Vec<i64> = (0..rows * bands)
                .map(|i| ((i as i64 % 5000) * 7_919) ^ ((i % bands) as i64) << 40)
                .collect();
            let mut keys = Vec::new();
            let mut docs = Vec::new();
            for (r, row) in values.chunks_exact(bands).enumerate() {
                for (j, &v) in row.iter().enumerate() {
                    keys.push(fold(j as u64, v as u64));
                    docs.push(50 + r as i64);
                }
            }
            let bits = (rows as u64).next_power_of_two().trailing_zeros().max(1) as i64;
            for doc_bits in [bits, 32] {
                assert_eq!(
                    encode_band_segment(&values, bands, 50, 50, doc_bits, 9, bucket),
                    encode_segment(&keys, &docs, 50, doc_bits, 9, bucket)
                );
            }
        }
    }

    #[test]
    fn refuses_what_does_not_fit() {
        assert!(encode_segment(&[1], &[1, 2], 0, 1, 1, 64).is_err());
        assert!(encode_segment(&[], &[], 0, 1, 1, 64).is_err());
        assert!(encode_segment(&[1], &[9], 0, 2, 1, 64).is_err());
        assert!(encode_segment(&[1], &[0], 0, 0, 1, 64).is_err());
        assert!(encode_segment(&[1], &[0], 0, 1, 0, 64).is_err());
    }
}
