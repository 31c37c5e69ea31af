//! NFKC o full case folding o NFKC over packed documents, with the tables Python builds.
//!
//! The tables (`neardup._unicode.canonical`) come from the running Python's own
//! `unicodedata` and `str.casefold`, so the results equal that Python's bit for bit (a
//! Unicode crate would bring its own, newer Unicode version). The algorithm is the one of
//! UAX #15 (the Unicode Standard, chapter 3, section 3.11): NFKD per code point, the
//! canonical ordering algorithm, canonical composition.
//!
//! Per document: pure ASCII is copied (A-Z lowercased with `lower_ascii`); text that passes
//! the quick check (no flagged code point, combining classes in canonical order) likewise;
//! anything else is rewritten segment by segment (see [`canonicalize`]).

use crate::utf8::{decode, encode};

/// `tables.CHANGES`: a code point a canonicalization may change.
const CHANGES: u8 = 4;
/// `tables.OUTSIDE`: a code point the dense tables do not cover (left to the caller).
const OUTSIDE: u8 = 8;
/// `tables.SECOND`: the second code point of a composition pair.
const SECOND: u8 = 16;

/// The tables of `neardup._unicode.canonical`, borrowed.
pub struct Tables<'a> {
    /// One per code point (0x110000).
    pub flags: &'a [u8],
    pub ccc: &'a [u8],
    pub dec_off: &'a [i32],
    pub dec_data: &'a [i32],
    pub cf_off: &'a [i32],
    pub cf_data: &'a [i32],
    pub one_off: &'a [i32],
    pub one_data: &'a [i32],
    pub pair_keys: &'a [i64],
    pub pair_vals: &'a [i32],
}

impl Tables<'_> {
    #[inline(always)]
    fn ccc(&self, cp: u32) -> u8 {
        self.ccc.get(cp as usize).copied().unwrap_or(0)
    }

    /// The primary composite of `(first, second)`, if any.
    #[inline]
    fn pair(&self, first: u32, second: u32) -> Option<u32> {
        let key = ((first as i64) << 21) | second as i64;
        let at = self.pair_keys.partition_point(|&k| k < key);
        (self.pair_keys.get(at) == Some(&key)).then(|| self.pair_vals[at] as u32)
    }
}

/// A CSR row of `off`/`data` (empty: the code point maps to itself).
#[inline(always)]
fn row<'a>(off: &[i32], data: &'a [i32], cp: u32) -> &'a [i32] {
    let cp = cp as usize;
    if cp + 1 < off.len() {
        let (a, b) = (off[cp] as usize, off[cp + 1] as usize);
        if b > a {
            return &data[a..b];
        }
    }
    &[]
}

/// Map every code point of `src` through a CSR table (an empty row: itself) into `dst`.
fn expand(src: &[u32], dst: &mut Vec<u32>, off: &[i32], data: &[i32]) {
    dst.clear();
    for &cp in src {
        let r = row(off, data, cp);
        if r.is_empty() {
            dst.push(cp);
        } else {
            dst.extend(r.iter().map(|&x| x as u32));
        }
    }
}

/// The canonical ordering algorithm: a stable sort by combining class of every run of
/// non-starters (insertion sort; runs are short).
fn reorder(seq: &mut [u32], t: &Tables) {
    for i in 1..seq.len() {
        let c = t.ccc(seq[i]);
        if c == 0 {
            continue;
        }
        let mut j = i;
        while j > 0 && t.ccc(seq[j - 1]) > c {
            seq.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Canonical composition of `seq` (decomposed, canonically ordered) in place. Only code
/// points flagged `SECOND` can join a starter.
fn compose(seq: &mut Vec<u32>, t: &Tables) {
    let mut m = 0usize;
    let mut starter: Option<usize> = None;
    let mut last = 0u8;
    for i in 0..seq.len() {
        let cp = seq[i];
        let c = t.ccc(cp);
        if let Some(s) = starter {
            if t.flags[cp as usize] & SECOND != 0 && (m - 1 == s || (last != 0 && last < c)) {
                if let Some(p) = t.pair(seq[s], cp) {
                    seq[s] = p;
                    continue;
                }
            }
        }
        if c == 0 {
            starter = Some(m);
        }
        last = c;
        seq[m] = cp;
        m += 1;
    }
    seq.truncate(m);
}

/// NFKC of `a` into `b`.
fn nfkc(a: &[u32], b: &mut Vec<u32>, t: &Tables) {
    expand(a, b, t.dec_off, t.dec_data);
    reorder(b, t);
    compose(b, t);
}

/// Append `buf` with ASCII A-Z lowercased.
#[inline]
fn copy_lower(buf: &[u8], out: &mut Vec<u8>) {
    out.extend(
        buf.iter()
            .map(|&c| c | (((c.wrapping_sub(b'A') < 26) as u8) << 5)),
    );
}

/// The work vectors of the rewrite, reused from segment to segment.
struct Work {
    a: Vec<u32>,
    b: Vec<u32>,
}

/// Canonicalize the bytes `seg` (valid UTF-8, surrogates allowed) onto `out`: decode
/// dropping the code points whose flags meet `strip_mask`, NFKC, full case folding, NFKC.
fn segment(seg: &[u8], out: &mut Vec<u8>, w: &mut Work, t: &Tables, strip_mask: u8) {
    w.a.clear();
    let mut i = 0;
    while i < seg.len() {
        let (cp, step) = decode(seg, i, seg.len()).unwrap_or((0xFFFD, 1)); // (checked already)
        i += step;
        if t.flags[cp as usize] & strip_mask == 0 {
            w.a.push(cp);
        }
    }
    if w.a.len() == 1 && (w.a[0] as usize) + 1 < t.one_off.len() {
        // one code point alone: its canonical form is in a table
        let cp = w.a[0];
        let r = row(t.one_off, t.one_data, cp);
        if r.is_empty() {
            encode(out, cp);
        } else {
            r.iter().for_each(|&x| encode(out, x as u32));
        }
        return;
    }
    nfkc(&w.a, &mut w.b, t);
    expand(&w.b, &mut w.a, t.cf_off, t.cf_data);
    nfkc(&w.a, &mut w.b, t);
    w.b.iter().for_each(|&cp| encode(out, cp));
}

/// The canonical documents, packed, and per document 0 (copied unchanged), 1 (rewritten) or
/// 2 (left to the caller, copied unchanged).
pub struct Canonical {
    pub buf: Vec<u8>,
    pub offsets: Vec<i64>,
    pub status: Vec<u8>,
}

/// Whether `doc` is UTF-8 as `surrogatepass` decodes it.
fn valid(doc: &[u8]) -> bool {
    let mut i = 0;
    while i < doc.len() {
        match decode(doc, i, doc.len()) {
            Some((_, step)) => i += step,
            None => return false,
        }
    }
    true
}

/// NFKC o casefold o NFKC of every document `buf[offsets[d]..offsets[d + 1]]` (the offsets
/// rise within `buf`), after dropping the code points whose flags meet `strip_mask`.
///
/// `lower_ascii`: lowercase the ASCII letters of the documents copied without a rewrite
/// (part of their canonical form; off for a tokenizer that lowercases ASCII itself).
/// Documents of at least `fallback_from` bytes that need a rewrite are left to the caller,
/// as are those holding a code point flagged `OUTSIDE`. `Err(d)`: document `d` is not UTF-8
/// as `surrogatepass` decodes it.
///
/// A rewrite goes segment by segment. A segment starts at a "boundary" code point: ASCII, or
/// one that no step changes, strips or joins to what precedes it (no flag of
/// `strip_mask | CHANGES`, combining class 0). Nothing crosses a boundary in any of the three
/// steps, so each segment is canonicalized on its own, and a segment of one boundary code
/// point is copied (ASCII lowercased).
pub fn canonicalize(
    buf: &[u8],
    offsets: &[i64],
    t: &Tables,
    strip_mask: u8,
    lower_ascii: bool,
    fallback_from: i64,
) -> Result<Canonical, usize> {
    let n_docs = offsets.len().saturating_sub(1);
    let mut out = Vec::with_capacity(buf.len() + buf.len() / 8 + 16);
    let mut out_offsets = vec![0i64; n_docs + 1];
    let mut status = vec![0u8; n_docs];
    let slow_mask = strip_mask | CHANGES;
    let mut w = Work {
        a: Vec::with_capacity(256),
        b: Vec::with_capacity(256),
    };
    let mut segs: Vec<(usize, usize)> = Vec::new();
    for d in 0..n_docs {
        let (start, end) = (offsets[d] as usize, offsets[d + 1] as usize);
        let doc = &buf[start..end];
        // ---- classify: ASCII, quick-check stable, or needs work
        let ascii_only = doc.is_ascii();
        let mut stable = true;
        if !ascii_only {
            let mut last = 0u8;
            let mut i = 0;
            while i < doc.len() {
                if doc[i] < 0x80 {
                    last = 0;
                    i += 1;
                    continue;
                }
                let (cp, step) = decode(doc, i, doc.len()).ok_or(d)?;
                let c = t.ccc(cp);
                if t.flags[cp as usize] & slow_mask != 0 || (c != 0 && last > c) {
                    stable = false;
                    break;
                }
                last = c;
                i += step;
            }
        }
        if ascii_only || stable || (end - start) as i64 >= fallback_from {
            if lower_ascii && (ascii_only || stable) {
                if doc.iter().any(|c| c.is_ascii_uppercase()) {
                    status[d] = 1;
                }
                copy_lower(doc, &mut out);
            } else {
                if !(ascii_only || stable) {
                    if !valid(doc) {
                        return Err(d);
                    }
                    status[d] = 2;
                }
                out.extend_from_slice(doc);
            }
            out_offsets[d + 1] = out.len() as i64;
            continue;
        }
        // ---- rewrite segment by segment: find the dirty segments, then copy and rewrite
        let doc_pos = out.len();
        segs.clear();
        let (mut seg, mut dirty, mut outside) = (0usize, false, false);
        let mut i = 0;
        while i < doc.len() {
            let (boundary, step) = if doc[i] < 0x80 {
                (true, 1)
            } else {
                let (cp, step) = decode(doc, i, doc.len()).ok_or(d)?;
                let f = t.flags[cp as usize];
                outside |= f & OUTSIDE != 0;
                (f & slow_mask == 0 && t.ccc(cp) == 0, step)
            };
            if boundary {
                if dirty {
                    segs.push((seg, i));
                    dirty = false;
                }
                seg = i;
            } else {
                dirty = true;
            }
            i += step;
        }
        if dirty {
            segs.push((seg, doc.len()));
        }
        if outside {
            // a code point the tables do not cover: left to the caller
            out.extend_from_slice(doc);
            status[d] = 2;
        } else {
            let mut clean_from = 0;
            for &(lo, hi) in &segs {
                copy_lower(&doc[clean_from..lo], &mut out);
                segment(&doc[lo..hi], &mut out, &mut w, t, strip_mask);
                clean_from = hi;
            }
            copy_lower(&doc[clean_from..], &mut out);
            status[d] = 1;
        }
        debug_assert!(out.len() >= doc_pos);
        out_offsets[d + 1] = out.len() as i64;
    }
    Ok(Canonical {
        buf: out,
        offsets: out_offsets,
        status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables for a few code points: É (U+00C9 = E + U+0301), ﬁ (U+FB01 -> fi).
    fn with_tables<R>(f: impl FnOnce(&Tables) -> R) -> R {
        let mut flags = vec![0u8; 0x110000];
        let mut ccc = vec![0u8; 0x40000];
        ccc[0x301] = 230;
        flags[0xC9] = CHANGES;
        flags[0x301] = CHANGES | SECOND;
        flags[0xFB01] = CHANGES;
        flags[0x200B] = 2;
        let csr = |rows: &[(usize, &[i32])]| {
            let mut off = vec![0i32; 0x40001];
            let mut data = vec![];
            for cp in 0..0x40000 {
                if let Some((_, r)) = rows.iter().find(|(c, _)| *c == cp) {
                    data.extend_from_slice(r);
                }
                off[cp + 1] = data.len() as i32;
            }
            (off, data)
        };
        let (dec_off, dec_data) = csr(&[(0xC9, &[0x45, 0x301]), (0xFB01, &[0x66, 0x69])]);
        let mut folds: Vec<(usize, Vec<i32>)> =
            (0x41..=0x5A).map(|c| (c, vec![c as i32 + 32])).collect();
        folds.push((0xC9, vec![0xE9]));
        let fold_rows: Vec<(usize, &[i32])> =
            folds.iter().map(|(c, r)| (*c, r.as_slice())).collect();
        let (cf_off, cf_data) = csr(&fold_rows);
        let (one_off, one_data) = csr(&[(0xC9, &[0xE9]), (0xFB01, &[0x66, 0x69])]);
        let keys = [(0x45i64 << 21) | 0x301, (0x65i64 << 21) | 0x301];
        let vals = [0xC9, 0xE9];
        f(&Tables {
            flags: &flags,
            ccc: &ccc,
            dec_off: &dec_off,
            dec_data: &dec_data,
            cf_off: &cf_off,
            cf_data: &cf_data,
            one_off: &one_off,
            one_data: &one_data,
            pair_keys: &keys,
            pair_vals: &vals,
        })
    }

    fn canon(docs: &[&str], strip: u8) -> (Vec<String>, Vec<u8>) {
        let buf: Vec<u8> = docs.concat().into_bytes();
        let mut offsets = vec![0i64];
        for d in docs {
            offsets.push(offsets.last().unwrap() + d.len() as i64);
        }
        let c = with_tables(|t| canonicalize(&buf, &offsets, t, strip, true, 1 << 20).unwrap());
        let texts = c
            .offsets
            .windows(2)
            .map(|w| String::from_utf8(c.buf[w[0] as usize..w[1] as usize].to_vec()).unwrap())
            .collect();
        (texts, c.status)
    }

    #[test]
    fn rewrites_compose_fold_and_strip() {
        let (texts, status) = canon(&["ABC", "abc", "Éx", "E\u{301}X", "ﬁ\u{200b}É"], 2);
        assert_eq!(texts, ["abc", "abc", "éx", "éx", "fié"]);
        assert_eq!(status, [1, 0, 1, 1, 1]);
    }

    #[test]
    fn bad_utf8_names_the_document() {
        with_tables(|t| {
            let r = canonicalize(b"ok\xc3(", &[0, 2, 4], t, 0, true, 100);
            assert_eq!(r.err(), Some(1));
        });
    }
}
