//! Repeated-span marks over a text of documents joined by `0xFF` separators.
//!
//! A `min_length`-byte window (no `0xFF` inside) is marked when an equal window starts
//! earlier (with `prefix > 0`: before `prefix`, and only windows at or after it are marked);
//! a UTF-8 continuation byte takes the mark of its character's lead byte. [`repeat_mask`]
//! finds them in a suffix array, [`window_mask`] without one: winnowing anchors (Schleimer,
//! Wilkerson and Aiken 2003) and a table of windows, bytes compared. [`anchors`],
//! [`regions`], [`gather`] and [`scatter_counts`] are the prefilter that shrinks a suffix
//! array to the regions around repeated anchors; [`cut`] cuts each document's kept bytes
//! straight from a join's marks, [`cut_spans`] from the runs of [`window_spans`].

use hashbrown::HashSet;

pub const SEP: u8 = 0xFF;
/// The rolling hash's base (odd).
const B: u64 = 0x0100_0000_01B3;
const LO: u64 = 0xFFFF_FFFF;
const HI: u64 = 0xFFFF_FFFF_0000_0000;
/// Windows per chunk of the anchor pass (rounded down to a multiple of `w`): its k-grams'
/// hashes, 128 KiB, stay in the L2 cache between the passes over them.
const CHUNK: usize = 1 << 14;

#[inline]
fn continuation(c: u8) -> bool {
    c & 0xC0 == 0x80
}

#[inline(always)]
fn mix(mut h: u64) -> u64 {
    h ^= h >> 31;
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

/// `base ** e` mod `2**64`.
fn power(base: u64, e: usize) -> u64 {
    (0..e).fold(1u64, |acc, _| acc.wrapping_mul(base))
}

/// The rolling polynomial hash of `bytes`.
fn hash(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0u64, |h, &c| h.wrapping_mul(B).wrapping_add(c as u64))
}

/// A suffix array's entries (divsufsort gives int32 or int64).
pub trait Rank: Copy + Send + Sync {
    fn at(self) -> usize;
}
impl Rank for i32 {
    #[inline(always)]
    fn at(self) -> usize {
        self as usize
    }
}
impl Rank for i64 {
    #[inline(always)]
    fn at(self) -> usize {
        self as usize
    }
}

/// `link[p]`: the suffix at `p` and its successor in suffix order share `min_length` bytes
/// before any separator. Kasai's `h(i + 1) >= h(i) - 1` over the permuted successor array
/// `phi` (Karkkainen, Manzini and Puglisi 2009), compared only up to `min_length` bytes.
fn links<S: Rank>(text: &[u8], sa: &[S], min_length: usize) -> Vec<bool> {
    let n = text.len();
    let mut phi = vec![usize::MAX; n];
    for r in 0..n - 1 {
        phi[sa[r].at()] = sa[r + 1].at();
    }
    let mut link = vec![false; n];
    let mut h = 0usize;
    for i in 0..n {
        let j = phi[i];
        if j == usize::MAX {
            h = 0;
            continue;
        }
        while h < min_length && i + h < n && j + h < n {
            let c = text[i + h];
            if c != text[j + h] || c == SEP {
                break;
            }
            h += 1;
        }
        if h >= min_length {
            link[i] = true;
        }
        h = h.saturating_sub(1);
    }
    link
}

/// Mark the run `sa[lo..=hi]`: every member but the earliest, or with `prefix > 0` every
/// member at or after it when the run has one before it.
fn close<S: Rank>(sa: &[S], lo: usize, hi: usize, prefix: usize, starts: &mut [bool]) {
    let run = &sa[lo..=hi];
    if prefix > 0 {
        if run.iter().any(|s| s.at() < prefix) {
            for s in run.iter().filter(|s| s.at() >= prefix) {
                starts[s.at()] = true;
            }
        }
        return;
    }
    let first = run.iter().map(|s| s.at()).min().unwrap_or(0);
    for s in run.iter().filter(|s| s.at() != first) {
        starts[s.at()] = true;
    }
}

/// The byte mask of the marked windows, from the suffix array `sa` of `text` (a permutation
/// of `0..text.len()`); false within `text[..prefix]`. `min_length >= 1`.
pub fn repeat_mask<S: Rank>(text: &[u8], sa: &[S], min_length: usize, prefix: usize) -> Vec<bool> {
    let n = text.len();
    let mut mask = vec![false; n];
    if n < 2 {
        return mask;
    }
    let link = links(text, sa, min_length);
    let mut starts = vec![false; n];
    let mut start = None;
    for i in 0..n - 1 {
        if link[sa[i].at()] {
            start.get_or_insert(i);
        } else if let Some(lo) = start.take() {
            close(sa, lo, i, prefix, &mut starts);
        }
    }
    if let Some(lo) = start {
        close(sa, lo, n - 1, prefix, &mut starts);
    }
    let mut last: i64 = -(min_length as i64) - 1;
    for i in 0..n {
        if starts[i] {
            last = i as i64;
        }
        mask[i] = if i > 0 && continuation(text[i]) {
            mask[i - 1] // a continuation byte follows its character's lead byte
        } else {
            (i as i64) - last < min_length as i64 && i >= prefix
        };
    }
    mask
}

// --- winnowing: the anchors of chunks of windows ----------------------------------------------

/// The buffers of the chunked anchor pass: a chunk is `nw` windows (a multiple of `w`), its
/// k-grams' mixed hashes (a k-gram's key: the high 32 bits of its hash | its position), and
/// the chunk's distinct anchors (`found[j]` is the anchor of the chunk's windows from `since[j]`
/// on).
struct Chunks {
    k: usize,
    w: usize,
    nw: usize,
    /// `out[c]`: byte `c` times its weight as it leaves a k-gram (`B ** (k - 1)`)
    out: [u64; 256],
    vals: Vec<u64>,
    /// the position of the k-gram of `vals[0]`
    first: usize,
    found: Vec<usize>,
    since: Vec<usize>,
}

/// Where the chunked pass over one segment stands: the rolling hash `h` of the `k - 1` bytes
/// before `g + k - 1`, the next k-gram to hash `g`, and the k-grams held in `vals[..have]`.
struct Roll {
    h: u64,
    g: usize,
    have: usize,
}

impl Chunks {
    fn new(k: usize, w: usize) -> Self {
        let nw = w.max((CHUNK / w) * w);
        let size = nw + w - 1; // k-grams per chunk
        let top = power(B, k - 1); // the weight of the byte leaving a k-gram
        Chunks {
            k,
            w,
            nw,
            out: std::array::from_fn(|c| (c as u64).wrapping_mul(top)),
            vals: vec![0; size],
            first: 0,
            found: vec![0; nw],
            since: vec![0; nw],
        }
    }

    /// The rolling state at the start of the segment at `s`.
    fn start(&self, text: &[u8], s: usize) -> Roll {
        Roll {
            h: hash(&text[s..s + self.k - 1]),
            g: s,
            have: 0,
        }
    }

    /// The mixed hashes of the k-grams of a chunk of `m` windows into `vals[..m + w - 1]`
    /// (the previous chunk's last `w - 1` first).
    fn keys(&mut self, text: &[u8], m: usize, r: &mut Roll) {
        let (k, w) = (self.k, self.w);
        let need = m + w - 1;
        if r.have > 0 {
            let from = r.have - (w - 1);
            self.vals.copy_within(from..r.have, 0);
            r.have = w - 1;
        }
        let (mut h, mut g) = (r.h, r.g);
        let out = &self.out;
        let vals = &mut self.vals[..need];
        let mut t0 = r.have;
        // The rolling hash is one chain of a multiply and two adds per byte: four chains
        // over four quarters of the chunk keep four in flight (the same values; each chain
        // but the first starts from the hash of its first k - 1 bytes).
        let q = (need - t0) / 4;
        if q >= 2 * k {
            let mut hs = [h; 4];
            for (l, hl) in hs.iter_mut().enumerate().skip(1) {
                *hl = hash(&text[g + l * q..g + l * q + k - 1]);
            }
            // per quarter: the bytes coming in, the bytes going out and the hashes (each q
            // long, so the loop has no bounds checks)
            let bytes = |l: usize| {
                let a = g + l * q;
                (&text[a + k - 1..a + k - 1 + q], &text[a..a + q])
            };
            let (v0, rest) = vals[t0..].split_at_mut(q);
            let (v1, rest) = rest.split_at_mut(q);
            let (v2, rest) = rest.split_at_mut(q);
            let v3 = &mut rest[..q];
            let ((i0, o0), (i1, o1), (i2, o2), (i3, o3)) = (bytes(0), bytes(1), bytes(2), bytes(3));
            let step = |hl: &mut u64, c_in: u8, c_out: u8| {
                let hh = hl.wrapping_mul(B).wrapping_add(c_in as u64);
                *hl = hh.wrapping_sub(out[c_out as usize]);
                mix(hh)
            };
            for i in 0..q {
                v0[i] = step(&mut hs[0], i0[i], o0[i]);
                v1[i] = step(&mut hs[1], i1[i], o1[i]);
                v2[i] = step(&mut hs[2], i2[i], o2[i]);
                v3[i] = step(&mut hs[3], i3[i], o3[i]);
            }
            h = hs[3];
            g += 4 * q;
            t0 += 4 * q;
        }
        for v in &mut vals[t0..] {
            h = h.wrapping_mul(B).wrapping_add(text[g + k - 1] as u64);
            *v = mix(h);
            h = h.wrapping_sub(out[text[g] as usize]);
            g += 1;
        }
        r.h = h;
        r.g = g;
        r.have = need;
        self.first = g - need;
    }

    /// The distinct anchors of the chunk's `m` windows into `found` / `since`, in text
    /// order; returns how many.
    fn anchors(&mut self, m: usize) -> usize {
        let (w, first) = (self.w, self.first);
        let vals = &self.vals[..m + w - 1];
        // the least key of the window at t, kept as the window slides: it stays until a new
        // key below it comes in or it leaves the window, which is then searched again. A
        // key is the high half of a k-gram's hash and then its position: a new k-gram's key
        // is below the least exactly when the high half of its hash is.
        let least = |t: usize| least_key(&vals[t..t + w], first + t);
        let mut key = least(0);
        self.found[0] = (key & LO) as usize;
        self.since[0] = 0;
        let mut nf = 1;
        let mut t = 1;
        while t < m {
            // the first window without the least key's k-gram, and the first before it whose
            // new k-gram has a lesser key
            let leave = ((key & LO) as usize + 1 - first).min(m);
            match first_below(&vals[t + w - 1..leave + w - 1], key & HI) {
                Some(d) => {
                    t += d;
                    key = (vals[t + w - 1] & HI) | (first + t + w - 1) as u64;
                }
                None if leave < m => {
                    t = leave;
                    key = least(t);
                }
                None => break,
            }
            self.found[nf] = (key & LO) as usize;
            self.since[nf] = t;
            nf += 1;
            t += 1;
        }
        nf
    }
}

/// The index of the first of `vals` below `bound`, eight at a time.
#[inline]
fn first_below(vals: &[u64], bound: u64) -> Option<usize> {
    let mut eights = vals.chunks_exact(8);
    let mut at = 0;
    for e in &mut eights {
        if e.iter().fold(u64::MAX, |m, &x| m.min(x)) < bound {
            return e.iter().position(|&x| x < bound).map(|d| at + d);
        }
        at += 8;
    }
    eights
        .remainder()
        .iter()
        .position(|&x| x < bound)
        .map(|d| at + d)
}

/// The least key (high half of the hash, then position) of the k-grams of hashes `vals`
/// (not empty) from position `pos` on, four running minima side by side.
#[inline]
fn least_key(vals: &[u64], pos: usize) -> u64 {
    let key = |i: usize, v: u64| (v & HI) | (pos + i) as u64;
    let mut c = [u64::MAX; 4];
    let mut quads = vals.chunks_exact(4);
    let mut i = 0;
    for q in &mut quads {
        for (l, (cl, &v)) in c.iter_mut().zip(q).enumerate() {
            *cl = (*cl).min(key(i + l, v));
        }
        i += 4;
    }
    let mut m = c[0].min(c[1]).min(c[2].min(c[3]));
    for (l, &v) in quads.remainder().iter().enumerate() {
        m = m.min(key(i + l, v));
    }
    m
}

/// The segments of `text` (maximal runs without a separator) of at least `min_length` bytes.
fn segments(text: &[u8], min_length: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let n = text.len();
    let mut s = 0;
    std::iter::from_fn(move || {
        while s < n {
            let e = memchr::memchr(SEP, &text[s..]).map_or(n, |k| s + k);
            let seg = (s, e);
            s = e + 1;
            while s < n && text[s] == SEP {
                s += 1; // (a run of separators: a document overwritten to be skipped)
            }
            if e - seg.0 >= min_length {
                return Some(seg);
            }
        }
        None
    })
}

/// Winnowing anchors: `(positions, hashes, segment starts, segment ends)` of the distinct
/// anchors in text order. In every `min_length`-byte window without a separator, the anchor
/// is the `k`-gram of least key (high 32 bits of its mixed hash, then position: the leftmost
/// least) among the window's `w = min_length - k + 1` k-grams. `1 <= k <= min_length`,
/// `text.len() < 2**32`.
pub fn anchors(
    text: &[u8],
    min_length: usize,
    k: usize,
) -> (Vec<i64>, Vec<u64>, Vec<i64>, Vec<i64>) {
    let w = min_length - k + 1;
    let cap = text.len() / (w / 2 + 1) + 16;
    let (mut pos, mut hs) = (Vec::with_capacity(cap), Vec::with_capacity(cap));
    let (mut seg_lo, mut seg_hi) = (Vec::with_capacity(cap), Vec::with_capacity(cap));
    let mut c = Chunks::new(k, w);
    for (s, e) in segments(text, min_length) {
        let wins = e - s - min_length + 1;
        let mut r = c.start(text, s);
        let mut done = 0;
        let seg_first = pos.len();
        while done < wins {
            let m = c.nw.min(wins - done);
            c.keys(text, m, &mut r);
            let first = r.g - r.have; // the position of vals[0]
            let nf = c.anchors(m);
            // the last chunk's last anchor may go on into this one
            let j0 = usize::from(pos.len() > seg_first && pos.last() == Some(&(c.found[0] as i64)));
            for &a in &c.found[j0..nf] {
                pos.push(a as i64);
                hs.push(c.vals[a - first]);
                seg_lo.push(s as i64);
                seg_hi.push(e as i64);
            }
            done += m;
        }
    }
    (pos, hs, seg_lo, seg_hi)
}

/// `(starts, ends)` of the candidate regions: the union of `[a - (min_length - k), a +
/// min_length)` over every anchor `a` whose hash is some other anchor's too, cut to its
/// segment and widened to whole UTF-8 characters; disjoint, in text order. The anchors are
/// those of [`anchors`] (in text order, inside their segments, which lie in `text`).
pub fn regions(
    text: &[u8],
    pos: &[i64],
    hs: &[u64],
    seg_lo: &[i64],
    seg_hi: &[i64],
    min_length: usize,
    k: usize,
) -> (Vec<i64>, Vec<i64>) {
    let m = pos.len();
    let mut rep = vec![false; m];
    if m >= u32::MAX as usize {
        // more anchors than the u32 table holds: sort
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by_key(|&j| hs[j]);
        for j in 1..m {
            if hs[order[j]] == hs[order[j - 1]] {
                rep[order[j]] = true;
                rep[order[j - 1]] = true;
            }
        }
    } else if m > 1 {
        // an open-addressing table of the first anchor of each hash (index + 1)
        let size = (2 * m).next_power_of_two();
        let smask = (size - 1) as u64;
        let mut table = vec![0u32; size];
        for j in 0..m {
            let mut slot = (hs[j] & smask) as usize;
            loop {
                let i = table[slot] as usize;
                if i == 0 {
                    table[slot] = j as u32 + 1;
                    break;
                }
                if hs[i - 1] == hs[j] {
                    rep[i - 1] = true;
                    rep[j] = true;
                    break;
                }
                slot = (slot + 1) & (size - 1);
            }
        }
    }
    let back = (min_length - k) as i64;
    let mut out = Regions::default();
    for j in (0..m).filter(|&j| rep[j]) {
        let (a, s, e) = (pos[j], seg_lo[j], seg_hi[j]);
        let mut lo = s.max(a - back);
        let mut hi = e.min(a + min_length as i64);
        while lo > s && continuation(text[lo as usize]) {
            lo -= 1;
        }
        while hi < e && continuation(text[hi as usize]) {
            hi += 1;
        }
        out.push(lo, hi);
    }
    (out.starts, out.ends)
}

/// Disjoint regions in text order, an interval that reaches the last one merged into it.
#[derive(Default)]
struct Regions {
    starts: Vec<i64>,
    ends: Vec<i64>,
}

impl Regions {
    fn push(&mut self, lo: i64, hi: i64) {
        match self.ends.last_mut() {
            Some(end) if lo <= *end => *end = (*end).max(hi),
            _ => {
                self.starts.push(lo);
                self.ends.push(hi);
            }
        }
    }
}

/// The regions of [`regions`] around the anchors (of [`anchors`]: in text order, inside
/// their segments) whose hash is among `other` (another text's anchors): every window with
/// an equal window in that text lies in them. The segment of an anchor is found in `text`
/// (the bytes up to the next separator around it).
pub fn shared_regions(
    text: &[u8],
    pos: &[i64],
    hs: &[u64],
    other: &[u64],
    min_length: usize,
    k: usize,
) -> (Vec<i64>, Vec<i64>) {
    let n = text.len();
    let mut wanted: HashSet<u64> = HashSet::with_capacity(other.len());
    wanted.extend(other.iter().copied());
    let back = min_length - k;
    let mut out = Regions::default();
    for (&a, h) in pos.iter().zip(hs) {
        if !wanted.contains(h) {
            continue;
        }
        let a = a as usize;
        // the segment's bounds matter only within [a - back, a + min_length)
        let from = a.saturating_sub(back);
        let mut lo = memchr::memrchr(SEP, &text[from..a]).map_or(from, |i| from + i + 1);
        let to = (a + min_length).min(n);
        let mut hi = memchr::memchr(SEP, &text[a..to]).map_or(to, |i| a + i);
        // whole characters, never past the segment (a separator is no continuation byte)
        while lo > 0 && text[lo - 1] != SEP && continuation(text[lo]) {
            lo -= 1;
        }
        while hi < n && continuation(text[hi]) {
            hi += 1;
        }
        out.push(lo as i64, hi as i64);
    }
    (out.starts, out.ends)
}

/// The regions `text[starts[j]..ends[j]]` joined, each after a separator, and where each
/// starts in the join.
pub fn gather(text: &[u8], starts: &[i64], ends: &[i64]) -> (Vec<u8>, Vec<i64>) {
    let total: i64 = starts.iter().zip(ends).map(|(a, b)| b - a + 1).sum();
    let mut sub = Vec::with_capacity(total as usize);
    let mut at = Vec::with_capacity(starts.len());
    for (&a, &b) in starts.iter().zip(ends) {
        sub.push(SEP);
        at.push(sub.len() as i64);
        sub.extend_from_slice(&text[a as usize..b as usize]);
    }
    (sub, at)
}

/// The join's mask put back at the regions' places in a text of `n` bytes (false outside
/// them), and the marked bytes of each region. `sub_mask[at[j]..][..ends[j] - starts[j]]`
/// and the regions must lie in their arrays.
pub fn scatter_counts(
    sub_mask: &[bool],
    at: &[i64],
    starts: &[i64],
    ends: &[i64],
    n: usize,
) -> (Vec<bool>, Vec<i64>) {
    let mut mask = vec![false; n];
    let mut counts = Vec::with_capacity(starts.len());
    for ((&o, &a), &b) in at.iter().zip(starts).zip(ends) {
        let (a, b, o) = (a as usize, b as usize, o as usize);
        let src = &sub_mask[o..o + (b - a)];
        mask[a..b].copy_from_slice(src);
        counts.push(src.iter().filter(|&&x| x).count() as i64);
    }
    (mask, counts)
}

/// `cut`'s `at[j]` for a document that keeps all its bytes.
pub const KEEP: i64 = -1;
/// `cut`'s `at[j]` for a document that goes whole.
pub const DROP: i64 = -2;

/// A mask as its bytes (0 or 1), for `memchr`.
fn mask_bytes(mask: &[bool]) -> &[u8] {
    // SAFETY: `bool` has the size and alignment of `u8`, and every `bool` is 0 or 1.
    unsafe { std::slice::from_raw_parts(mask.as_ptr().cast::<u8>(), mask.len()) }
}

/// Each document's kept bytes, packed again, in one pass over the join's marks (no mask of
/// the text's size): document `j` (`text[offsets[j]..offsets[j + 1]]`) keeps every byte with
/// `at[j] == KEEP`, none with `at[j] == DROP`, and otherwise the bytes whose mark in
/// `sub_mask[at[j]..][..its length]` is false. Returns `(kept, kept_offsets, removed)`:
/// document `j`'s kept bytes are `kept[kept_offsets[j]..kept_offsets[j + 1]]` and it lost
/// `removed[j]` bytes. The documents and their marks must lie in their arrays.
pub fn cut(
    text: &[u8],
    offsets: &[i64],
    sub_mask: &[bool],
    at: &[i64],
) -> (Vec<u8>, Vec<i64>, Vec<i64>) {
    let marks = |j: usize| {
        let (a, b) = (offsets[j] as usize, offsets[j + 1] as usize);
        let o = at[j] as usize;
        mask_bytes(&sub_mask[o..o + (b - a)])
    };
    let removed: Vec<i64> = (0..at.len())
        .map(|j| match at[j] {
            KEEP => 0,
            DROP => offsets[j + 1] - offsets[j],
            _ => marks(j).iter().map(|&x| i64::from(x)).sum(),
        })
        .collect();
    let lost: i64 = removed.iter().sum();
    let total = offsets.last().map_or(0, |&e| e - offsets[0]) - lost;
    let mut kept = Vec::with_capacity(total as usize);
    let mut kept_offsets = Vec::with_capacity(at.len() + 1);
    kept_offsets.push(0);
    for j in 0..at.len() {
        let (a, b) = (offsets[j] as usize, offsets[j + 1] as usize);
        match at[j] {
            KEEP => kept.extend_from_slice(&text[a..b]),
            DROP => {}
            _ if removed[j] == 0 => kept.extend_from_slice(&text[a..b]),
            _ => {
                let (m, doc) = (marks(j), &text[a..b]);
                let mut i = 0;
                while i < m.len() {
                    let stop = memchr::memchr(1, &m[i..]).map_or(m.len(), |d| i + d);
                    kept.extend_from_slice(&doc[i..stop]);
                    i = memchr::memchr(0, &m[stop..]).map_or(m.len(), |d| stop + d);
                }
            }
        }
        kept_offsets.push(kept.len() as i64);
    }
    (kept, kept_offsets, removed)
}

/// [`cut`] with the join's marks as runs (`spans`: disjoint `[start, end)` in join order,
/// as [`window_spans`] gives them) instead of a mask: the same `(kept, kept_offsets,
/// removed)`. The documents and their places in the join must lie in their arrays.
pub fn cut_spans(
    text: &[u8],
    offsets: &[i64],
    spans: &[(usize, usize)],
    at: &[i64],
) -> (Vec<u8>, Vec<i64>, Vec<i64>) {
    // the runs over document j's place in the join, cut to it, relative to its start
    let runs = |j: usize| {
        let (o, len) = (at[j] as usize, (offsets[j + 1] - offsets[j]) as usize);
        let first = spans.partition_point(|&(_, e)| e <= o);
        spans[first..]
            .iter()
            .take_while(move |&&(s, _)| s < o + len)
            .map(move |&(s, e)| (s.max(o) - o, e.min(o + len) - o))
    };
    let removed: Vec<i64> = (0..at.len())
        .map(|j| match at[j] {
            KEEP => 0,
            DROP => offsets[j + 1] - offsets[j],
            _ => runs(j).map(|(s, e)| (e - s) as i64).sum(),
        })
        .collect();
    let lost: i64 = removed.iter().sum();
    let total = offsets.last().map_or(0, |&e| e - offsets[0]) - lost;
    let mut kept = Vec::with_capacity(total.max(0) as usize);
    let mut kept_offsets = Vec::with_capacity(at.len() + 1);
    kept_offsets.push(0);
    for j in 0..at.len() {
        let doc = &text[offsets[j] as usize..offsets[j + 1] as usize];
        match at[j] {
            DROP => {}
            _ if removed[j] == 0 => kept.extend_from_slice(doc),
            _ => {
                let mut i = 0;
                for (s, e) in runs(j) {
                    kept.extend_from_slice(&doc[i..s]);
                    i = e;
                }
                kept.extend_from_slice(&doc[i..]);
            }
        }
        kept_offsets.push(kept.len() as i64);
    }
    (kept, kept_offsets, removed)
}

/// [`cut_spans`] writing the kept bytes into `text` itself, from its start (no buffer of
/// their size): returns `(kept_offsets, removed)`, document `j`'s kept bytes then being
/// `text[kept_offsets[j]..kept_offsets[j + 1]]`. Safe in place because the documents follow
/// each other (`offsets` never decreases) and each keeps at most its own bytes, so every
/// write lands at or before the bytes still to be read. `spans` must be computed before
/// (they are of the text as it was); the documents and their places must lie in `text`.
pub fn cut_spans_in_place(
    text: &mut [u8],
    offsets: &[i64],
    spans: &[(usize, usize)],
    at: &[i64],
) -> (Vec<i64>, Vec<i64>) {
    let mut kept_offsets = Vec::with_capacity(at.len() + 1);
    let mut removed = Vec::with_capacity(at.len());
    kept_offsets.push(0);
    let mut w = 0usize;
    for j in 0..at.len() {
        let (a, b) = (offsets[j] as usize, offsets[j + 1] as usize);
        let mut keep = |text: &mut [u8], s: usize, e: usize| {
            text.copy_within(s..e, w);
            w += e - s;
        };
        match at[j] {
            DROP => {}
            KEEP => keep(text, a, b),
            _ => {
                let (o, len) = (at[j] as usize, b - a);
                let first = spans.partition_point(|&(_, e)| e <= o);
                let mut i = a;
                for &(s, e) in spans[first..].iter().take_while(|&&(s, _)| s < o + len) {
                    let (s, e) = (s.max(o) - o + a, e.min(o + len) - o + a);
                    keep(text, i, s);
                    i = e;
                }
                keep(text, i, b);
            }
        }
        let kept = w as i64 - kept_offsets[j];
        removed.push(offsets[j + 1] - offsets[j] - kept);
        kept_offsets.push(w as i64);
    }
    (kept_offsets, removed)
}

// --- the marks from a table of windows (no suffix array) ------------------------------------

/// An open-addressing table of `(32-bit tag << 32) | (position + 1)` entries (0: empty),
/// an entry's home slot its tag's low bits, at most half full. Written here because the
/// walk needs the probe sequence itself: an entry found equal in tag is compared in bytes
/// and the probe goes on past it.
struct Table {
    slots: Vec<u64>,
    used: usize,
}

/// The slot count (a power of two when `len` is) that holds `entries` at most half full,
/// or `None` when `len` slots already do: the growth rule of the open-addressing tables.
fn half_full_size(len: usize, entries: usize) -> Option<usize> {
    if 2 * entries <= len {
        return None;
    }
    let mut size = len.max(1);
    while 2 * entries > size {
        size *= 2;
    }
    Some(size)
}

impl Table {
    fn new(size: usize) -> Self {
        Table {
            slots: vec![0u64; size],
            used: 0,
        }
    }

    #[inline(always)]
    fn mask(&self) -> u64 {
        self.slots.len() as u64 - 1
    }

    /// From `slot` on, the first slot that holds `tag` or is empty.
    #[inline(always)]
    fn probe(&self, tag: u64, mut slot: u64) -> u64 {
        let mask = self.mask();
        loop {
            let e = self.slots[slot as usize];
            if e == 0 || e >> 32 == tag {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Room for `more` entries at most half full: rehashed into more slots if needed.
    fn grow(&mut self, more: usize) {
        let Some(size) = half_full_size(self.slots.len(), self.used + more) else {
            return;
        };
        let mut out = vec![0u64; size];
        let mask = size as u64 - 1;
        for &e in self.slots.iter().filter(|&&e| e != 0) {
            let mut slot = (e >> 32) & mask;
            while out[slot as usize] != 0 {
                slot = (slot + 1) & mask;
            }
            out[slot as usize] = e;
        }
        self.slots = out;
    }
}

/// `v` with its pages faulted in by one `madvise(MADV_POPULATE_WRITE)` (Linux 5.14+;
/// nothing elsewhere, or where the kernel refuses it) when it takes 4 MiB or more: for the
/// table of anchors, whose lookups (one per anchor, anywhere in it) touch every page of it,
/// at about a third less system time than a fault per page. Not on transparent huge pages
/// (`MADV_HUGEPAGE`, which saved ~0.02 s of TLB misses on 28 MB): a fresh huge page is a
/// free 2 MiB block, and in a virtual machine that reports its free memory to the host
/// (virtio-balloon free page reporting) such a block has often been handed back, so its
/// first write is faulted in by the host too: 0.1-0.5 s of system time more in a third of
/// the runs, at random (the shard's buffer and both tables on huge pages; with this table
/// alone, 2-4 runs in 10 when they came 3 s apart; none with no huge pages).
fn populated<T>(v: Vec<T>) -> Vec<T> {
    #[cfg(target_os = "linux")]
    {
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes >= 4 << 20 {
            extern "C" {
                fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
            }
            const MADV_POPULATE_WRITE: i32 = 23;
            const PAGE: usize = 4096;
            let start = v.as_ptr() as usize;
            let (lo, hi) = (start.next_multiple_of(PAGE), (start + bytes) / PAGE * PAGE);
            // SAFETY: the range lies inside the vector's allocation and is page aligned; the
            // advice faults its pages in writable without changing a byte (an error, from a
            // kernel without it, is harmless: the pages then fault as they are written).
            unsafe { madvise(lo as *mut std::ffi::c_void, hi - lo, MADV_POPULATE_WRITE) };
        }
    }
    v
}

/// How many of the first `most` bytes of `a` and `b` are equal, 8 at a time.
#[inline]
fn common_prefix(a: &[u8], b: &[u8], most: usize) -> usize {
    let most = most.min(a.len()).min(b.len());
    let (a, b) = (&a[..most], &b[..most]);
    let mut i = 0;
    while i + 8 <= most {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap_or([0; 8]))
            ^ u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < most && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many of the last `most` bytes of `a` and `b` are equal, 8 at a time.
#[inline]
fn common_suffix(a: &[u8], b: &[u8], most: usize) -> usize {
    let most = most.min(a.len()).min(b.len());
    let (a, b) = (&a[a.len() - most..], &b[b.len() - most..]);
    let mut i = 0; // bytes equal from the end
    while i + 8 <= most {
        let (x, y) = (most - i - 8, most - i);
        let z = u64::from_le_bytes(a[x..y].try_into().unwrap_or([0; 8]))
            ^ u64::from_le_bytes(b[x..y].try_into().unwrap_or([0; 8]));
        if z != 0 {
            return i + (z.leading_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < most && a[most - 1 - i] == b[most - 1 - i] {
        i += 1;
    }
    i
}

/// The walk's state across chunks: bytes before `hi` are marked; window `mp` equals the
/// earlier window `mq`.
struct Walk {
    hi: usize,
    mp: i64,
    mq: i64,
}

/// The rolling hash of the last window hashed (`p`, `h`): a window is hashed only when it is
/// looked up in the table of windows, rolled on from the last one when that is near.
struct WindowHash {
    length: usize,
    out_w: u64, // the weight of the byte leaving a window
    p: usize,
    h: u64,
}

impl WindowHash {
    fn new(length: usize) -> Self {
        WindowHash {
            length,
            out_w: power(B, length),
            p: usize::MAX,
            h: 0,
        }
    }

    /// The rolling polynomial hash of `text[p..p + length]`.
    #[inline]
    fn at(&mut self, text: &[u8], p: usize) -> u64 {
        if self.p != usize::MAX && p >= self.p && p - self.p <= self.length / 2 {
            let mut h = self.h;
            for i in self.p..p {
                h = h
                    .wrapping_mul(B)
                    .wrapping_add(text[i + self.length] as u64)
                    .wrapping_sub((text[i] as u64).wrapping_mul(self.out_w));
            }
            self.h = h;
        } else {
            self.h = hash(&text[p..p + self.length]);
        }
        self.p = p;
        self.h
    }
}

/// The marks of [`repeat_mask`] without a suffix array: one walk over the windows in text
/// order (`text.len() < 2**32 - 1`, `min_length >= 1`), finding for each window an earlier
/// equal one.
///
/// Each window has a winnowing anchor (the `k`-gram of least key among its `w =
/// max(1, min_length / 3)`, `k = min_length - w + 1`); equal windows have equal anchors at
/// the same offset. A table of anchors lists the first [`LISTED`] anchors seen of each hash
/// (32 bits of it): the windows of the first anchor of a hash have no earlier copy (an equal
/// earlier window would hold an earlier anchor of that hash), and are skipped whole. A window
/// of a later anchor compares with the windows at the same offset from the anchors listed
/// before it, through the bytes equal left and right of the two anchors (compared once per
/// pair of anchors); when all the earlier anchors of its hash are listed, a window not found
/// that way has no earlier copy. Otherwise it is looked up in a table of windows (32 bits of
/// its rolling hash and its position, bytes compared), and goes in it: that table holds only
/// windows of anchors past the listed ones, whose copies the listed anchors do not settle.
/// Inside a repeat no lookup is needed: when window `p - 1` equals the earlier window `q`,
/// window `p` equals window `q + 1` exactly when their last bytes are equal. With
/// `prefix > 0` only windows starting before it are copies and only windows at or after it
/// are marked. The walk goes in chunks of [`CHUNK`] windows, the tables grown before each;
/// it keeps its marks as runs ([`window_spans`]).
pub fn window_mask(text: &[u8], min_length: usize, prefix: usize) -> Vec<bool> {
    let mut mask = vec![false; text.len()];
    for (a, b) in window_spans(text, min_length, prefix) {
        mask[a..b].fill(true);
    }
    mask
}

/// The marks of [`window_mask`] as disjoint runs `[start, end)` in text order, not touching
/// (no mask of the text's size: [`cut_spans`] cuts documents straight from them).
pub fn window_spans(text: &[u8], min_length: usize, prefix: usize) -> Vec<(usize, usize)> {
    let n = text.len();
    let length = min_length;
    let mut spans = Vec::new();
    let limit = if prefix == 0 { n } else { prefix.min(n) }; // an earlier copy starts before it
    let w = (length / 3).max(1);
    let k = length - w + 1;
    let mut asize = 1024;
    while asize < 4 * (n / (w + 1)) {
        asize *= 2; // half full at the anchors of a text without repeats
    }
    let mut atable = AnchorTable::new(asize / 2);
    // the windows of recurring anchors: a quarter of the anchors' slots, grown (half full at
    // most) as windows come, so a text with many repeats rehashes it once or twice (28 MB of
    // web text, a 52% repeat: 387k windows for 845k anchors at min_length 100; 674k for
    // 2.35M at 20) and a text with few touches few of its pages
    let mut wtable = Table::new(asize / 4);
    let mut walk = Walk {
        hi: 0,
        mp: -2,
        mq: -2,
    };
    let mut c = Chunks::new(k, w);
    let mut seen = vec![[0u32; 4]; c.nw];
    let mut wh = WindowHash::new(length);
    for (s, e) in segments(text, length) {
        let wins = e - s - length + 1;
        let mut r = c.start(text, s); // the k-gram at s, but its last byte
        let mut done = 0;
        while done < wins {
            let m = c.nw.min(wins - done); // windows of this chunk
            c.keys(text, m, &mut r);
            atable.grow(m);
            wtable.grow(m);
            let nf = c.anchors(m);
            earlier_anchors(&c, nf, r.g - r.have, &mut atable, &mut seen);
            let chunk = ChunkWalk {
                text,
                length,
                w,
                limit,
                prefix,
                p0: s + done,
                m,
            };
            chunk.run(&c, nf, &seen, &mut wh, &mut wtable, &mut spans, &mut walk);
            done += m;
        }
    }
    whole_chars(text, spans)
}

/// The runs `raw` (disjoint, in text order) with each continuation byte given the mark of
/// the byte before it, as [`repeat_mask`]'s last pass gives it (so characters go whole): a
/// run's end goes on over the continuation bytes after it, a run's start (but at 0) moves
/// past those at it, which follow an unmarked byte; runs that come to touch are merged.
fn whole_chars(text: &[u8], raw: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let n = text.len();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(raw.len());
    for (mut s, mut e) in raw {
        match out.last() {
            Some(&(ls, le)) if s <= le => {
                out.pop();
                (s, e) = (ls, e.max(le));
            }
            _ => {
                while s > 0 && s < e && continuation(text[s]) {
                    s += 1;
                }
                if s == e {
                    continue; // (a run of continuation bytes alone)
                }
            }
        }
        while e < n && continuation(text[e]) {
            e += 1;
        }
        out.push((s, e));
    }
    out
}

/// How many anchors, or windows, ahead the table lookups prefetch their home slots (a miss
/// costs hundreds of cycles; a lookup that hits the cache, tens).
const AHEAD: usize = 12;

/// Ask for the cache line of `slots[at]` (a hint: it never faults, and does nothing on
/// targets without the instruction).
#[inline(always)]
fn prefetch(slots: &[u64], at: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults, whatever the address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(slots.as_ptr().wrapping_add(at as usize) as *const i8)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slots, at);
}

/// How many earlier anchors of a hash the table of anchors lists (the first ones): the
/// windows of the first `LISTED` anchors of a hash are compared only with the anchors
/// listed before them and never go in the table of windows; later anchors' windows are
/// compared with all `LISTED`, then looked up in the table of windows.
const LISTED: usize = 3;

/// An open-addressing table of anchors by the 32-bit tag of their hash: `[tag, first + 1,
/// second + 1, third + 1]` (0: none yet; an entry with no first is an empty slot), the home
/// slot the tag's low bits, at most half full.
struct AnchorTable {
    slots: Vec<[u32; 4]>,
    used: usize,
}

impl AnchorTable {
    fn new(size: usize) -> Self {
        AnchorTable {
            slots: populated(vec![[0u32; 4]; size.max(1024)]),
            used: 0,
        }
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot that holds `tag`, or the empty slot where it goes.
    #[inline(always)]
    fn probe(&self, tag: u32) -> usize {
        let mask = self.mask();
        let mut slot = tag as usize & mask;
        loop {
            let e = &self.slots[slot];
            if e[1] == 0 || e[0] == tag {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Room for `more` entries at most half full: rehashed into more slots if needed.
    fn grow(&mut self, more: usize) {
        let Some(size) = half_full_size(self.slots.len(), self.used + more) else {
            return;
        };
        let old = std::mem::replace(&mut self.slots, populated(vec![[0u32; 4]; size]));
        for e in old.into_iter().filter(|e| e[1] != 0) {
            let slot = self.probe(e[0]);
            self.slots[slot] = e;
        }
    }
}

/// Ask for the cache line of `slots[at]` (a hint: it never faults, and does nothing on
/// targets without the instruction).
#[inline(always)]
fn prefetch_any<T>(slots: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(slots.as_ptr().wrapping_add(at) as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slots, at);
}

/// For each of a chunk's `nf` anchors (`found`; `vals[0]` is the hash of the k-gram at
/// `g0`), the earlier anchors of its hash (32 bits) that the table of anchors lists, into
/// `seen[j]`: `[first + 1, second + 1, third + 1, more]` (0: none), `more` 1 when the
/// anchor comes after all `LISTED` (its windows then need the table of windows too). The
/// anchor is listed when fewer than `LISTED` are. An anchor that is itself the first of its
/// hash gets `[0, 0, 0, 0]`. The lookups go in one loop of their own: each is a cache miss,
/// and here the processor overlaps them.
fn earlier_anchors(
    c: &Chunks,
    nf: usize,
    g0: usize,
    atable: &mut AnchorTable,
    seen: &mut [[u32; 4]],
) {
    let amask = atable.mask();
    for (j, (&a, out)) in c.found[..nf].iter().zip(seen.iter_mut()).enumerate() {
        if let Some(&ahead) = c.found.get(j + AHEAD).filter(|_| j + AHEAD < nf) {
            prefetch_any(&atable.slots, (c.vals[ahead - g0] & LO) as usize & amask);
        }
        let tag = (c.vals[a - g0] & LO) as u32;
        let slot = atable.probe(tag);
        let me = a as u32 + 1;
        let e = &mut atable.slots[slot];
        *out = [0; 4];
        if e[1] == 0 {
            *e = [tag, me, 0, 0];
            atable.used += 1;
            continue;
        }
        // the anchors listed before this one (an anchor over two chunks comes twice)
        let mut i = 1;
        while i <= LISTED && e[i] != 0 && e[i] != me {
            out[i - 1] = e[i];
            i += 1;
        }
        if i <= LISTED {
            e[i] = me; // listed (again, when it was already)
        } else {
            out[3] = 1;
        }
    }
}

/// The windows `p0 .. p0 + m` of one chunk.
struct ChunkWalk<'a> {
    text: &'a [u8],
    length: usize,
    w: usize,
    limit: usize,
    prefix: usize,
    p0: usize,
    m: usize,
}

impl ChunkWalk<'_> {
    /// Walk the chunk's windows, anchor by anchor (anchors and their hashes' first
    /// occurrences from [`first_anchors`]). The table of windows has room for `m` more
    /// entries.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        c: &Chunks,
        nf: usize,
        seen: &[[u32; 4]],
        wh: &mut WindowHash,
        wtable: &mut Table,
        spans: &mut Vec<(usize, usize)>,
        st: &mut Walk,
    ) {
        let text = self.text;
        let length = self.length;
        let wmask = wtable.mask();
        let (mut hi, mut mp, mut mq) = (st.hi, st.mp, st.mq);
        let mut t_next = 0; // the windows before it are walked (a repeat goes on past its anchor)
        let mut ph = WindowHash::new(length); // the hashes of the windows prefetched
        for (j, (&a, listed)) in c.found[..nf].iter().zip(seen).enumerate() {
            if listed[0] == 0 {
                continue; // the first anchor of its hash: no window of it has an earlier copy
            }
            let more = listed[3] != 0; // windows not found by the listed ones: the table
            let t_end = if j + 1 < nf { c.since[j + 1] } else { self.m };
            // per listed anchor o: the bytes equal left of a and o (lext, at most w - 1) and
            // from them on (rext, at most length); lext MAX: not yet compared
            let mut olds = [0usize; LISTED];
            let mut lext = [usize::MAX; LISTED];
            let mut rext = [0usize; LISTED];
            let mut nl = 0;
            while nl < LISTED && listed[nl] != 0 {
                olds[nl] = listed[nl] as usize - 1;
                nl += 1;
            }
            let mut t = c.since[j].max(t_next);
            let mut ahead = 0usize; // the windows before it had their slots prefetched
            while t < t_end {
                let p = self.p0 + t;
                let mut q: i64 = -1;
                if p as i64 == mp + 1
                    && ((mq + 1) as usize) < self.limit
                    && text[mq as usize + length] == text[p + length - 1]
                {
                    q = mq + 1;
                } else {
                    if lext[0] == usize::MAX {
                        // the bytes equal around a and each listed anchor
                        for i in 0..nl {
                            let o = olds[i];
                            lext[i] = common_suffix(&text[..a], &text[..o], (self.w - 1).min(o));
                            rext[i] = common_prefix(&text[a..], &text[o..], length);
                        }
                    }
                    let d = a - p;
                    let settled = |d: usize| {
                        (0..nl).find(|&i| {
                            lext[i] >= d && rext[i] >= length - d && olds[i] - d < self.limit
                        })
                    };
                    if let Some(i) = settled(d) {
                        q = (olds[i] - d) as i64;
                    } else if more {
                        // the next windows of this anchor that it does not settle will most
                        // likely be looked up too (until one is found): their slots first
                        ahead = ahead.max(p + 1);
                        let stop = (self.p0 + t_end).min(p + 1 + AHEAD);
                        while ahead < stop {
                            if settled(a - ahead).is_none() {
                                let tag = mix(ph.at(text, ahead)) >> 32;
                                prefetch(&wtable.slots, tag & wmask);
                            }
                            ahead += 1;
                        }
                        let tag = mix(wh.at(text, p)) >> 32;
                        let mut slot = wtable.probe(tag, tag & wmask);
                        let window = &text[p..p + length];
                        while wtable.slots[slot as usize] != 0 {
                            let r = (wtable.slots[slot as usize] & LO) as usize - 1;
                            if &text[r..r + length] == window {
                                q = r as i64;
                                break;
                            }
                            slot = wtable.probe(tag, (slot + 1) & wmask);
                        }
                        if q < 0 && p < self.limit {
                            wtable.slots[slot as usize] = (tag << 32) | (p as u64 + 1);
                            wtable.used += 1;
                        }
                    }
                }
                if q < 0 {
                    t += 1;
                    continue;
                }
                // inside a repeat: window p + i equals window q + i while their last bytes
                // are equal (and q + i is a copy, and p + i a window of this chunk)
                let qu = q as usize;
                let most = (self.m - 1 - t).min(self.limit - 1 - qu);
                let ext = common_prefix(&text[qu + length..], &text[p + length..], most);
                let from = p.max(self.prefix);
                if from <= p + ext {
                    let (a, b) = (hi.max(from), p + ext + length);
                    match spans.last_mut() {
                        Some(last) if last.1 == a => last.1 = b,
                        _ => spans.push((a, b)),
                    }
                    hi = p + ext + length;
                }
                mp = (p + ext) as i64;
                mq = (qu + ext) as i64;
                t += ext + 1;
            }
            t_next = t;
        }
        st.hi = hi;
        st.mp = mp;
        st.mq = mq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suffix array by sorting (small texts only).
    fn naive_sa(text: &[u8]) -> Vec<i64> {
        let mut sa: Vec<i64> = (0..text.len() as i64).collect();
        sa.sort_by(|&a, &b| text[a as usize..].cmp(&text[b as usize..]));
        sa
    }

    #[test]
    fn marks_from_the_suffix_array_and_the_table_agree() {
        let t = b"abcab";
        let sa = naive_sa(t);
        assert_eq!(sa, vec![3, 0, 4, 1, 2]);
        let want = vec![false, false, false, true, true];
        assert_eq!(repeat_mask(t, &sa, 2, 0), want);
        assert_eq!(window_mask(t, 2, 0), want);
        let text = "xx the cat sat\u{ff}a dog; the cat sat, the cat sat ééé ééé".as_bytes();
        let sa = naive_sa(text);
        for (l, p) in [(3, 0), (5, 0), (8, 10), (4, 30)] {
            assert_eq!(
                window_mask(text, l, p),
                repeat_mask(text, &sa, l, p),
                "{l} {p}"
            );
        }
    }

    #[test]
    fn cut_keeps_the_unmarked_bytes() {
        let text = b"abcdefghij";
        let offsets = [0, 3, 3, 6, 10];
        let sub = [false, true, true, false, true, false, false, true, true];
        let at = [KEEP, 0, DROP, 5];
        let (kept, off, removed) = cut(text, &offsets, &sub, &at);
        assert_eq!(kept, b"abcgh");
        assert_eq!(off, vec![0, 3, 3, 3, 5]);
        assert_eq!(removed, vec![0, 0, 3, 2]);
        let (kept, off, removed) = cut(text, &offsets[..2], &sub, &[1]);
        assert_eq!((kept, off, removed), (b"c".to_vec(), vec![0, 1], vec![2]));
    }

    /// A mask as its runs `[start, end)`.
    fn runs(mask: &[bool]) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (i, &x) in mask.iter().enumerate() {
            match out.last_mut() {
                Some(last) if x && last.1 == i => last.1 = i + 1,
                _ if x => out.push((i, i + 1)),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn runs_take_whole_characters_and_cut_as_masks() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = mix(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
            seed
        };
        for _ in 0..300 {
            let n = (next() % 60) as usize;
            // lead bytes, continuation bytes and separators
            let text: Vec<u8> = (0..n)
                .map(|_| [b'a', 0x80, 0xBF, 0xC3, 0xFF][(next() % 5) as usize])
                .collect();
            let raw: Vec<bool> = (0..n).map(|_| next() % 3 == 0).collect();
            let mut want = raw.clone();
            for i in 1..n {
                if continuation(text[i]) {
                    want[i] = want[i - 1];
                }
            }
            let got = whole_chars(&text, runs(&raw));
            assert_eq!(got, runs(&want), "{text:?} {raw:?}");
            // cut_spans of the runs is cut of the mask
            let offsets = [0, n as i64 / 3, n as i64 / 2, n as i64];
            for at in [
                [0, KEEP, DROP],
                [KEEP, offsets[1], offsets[2]],
                [0, offsets[1], DROP],
            ] {
                let (kept, kept_offsets, removed) = cut(&text, &offsets, &want, &at);
                assert_eq!(
                    cut_spans(&text, &offsets, &got, &at),
                    (kept.clone(), kept_offsets.clone(), removed.clone())
                );
                // and in place: the same bytes at the text's start
                let mut buf = text.clone();
                let got_in_place = cut_spans_in_place(&mut buf, &offsets, &got, &at);
                assert_eq!(got_in_place, (kept_offsets, removed));
                assert_eq!(&buf[..kept.len()], &kept[..]);
            }
        }
    }

    #[test]
    fn candidate_regions_and_gather_scatter() {
        let t = b"xx the cat sat\xffa dog; the cat sat";
        let (pos, hs, lo, hi) = anchors(t, 8, 8 - 2 + 1);
        let (s, e) = regions(t, &pos, &hs, &lo, &hi, 8, 7);
        let got: Vec<&[u8]> = s
            .iter()
            .zip(&e)
            .map(|(&a, &b)| &t[a as usize..b as usize])
            .collect();
        assert_eq!(got, vec![&b"x the cat sat"[..], &b"; the cat sat"[..]]);
        let (sub, at) = gather(t, &s, &e);
        let sub_mask: Vec<bool> = sub.iter().map(|&c| c == b't').collect();
        let (mask, counts) = scatter_counts(&sub_mask, &at, &s, &e, t.len());
        assert_eq!(counts, vec![3, 3]);
        assert_eq!(mask.iter().filter(|&&x| x).count(), 6);
    }
}
