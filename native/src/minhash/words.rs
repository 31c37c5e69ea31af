//! The fused sketch of the default path: tokenize -> xxh3_64 per token -> k-shingle features
//! -> 32-bit double hashing, one document at a time over one UTF-8 buffer plus offsets.
//!
//! The tokens are those of `neardup._kernels.text.tokenize_words(..., do_lower=True)`:
//! maximal runs of code points whose class (`classes[cp] & mask`) is not 0, lowercased with
//! `lower`, each ideograph a word of its own with the marks that follow it, kept when their
//! UTF-8 length is at least `min_bytes`. Invalid UTF-8 decodes as U+FFFD of one byte (a
//! separator). An all-ASCII document, when the tables allow it, takes a byte table instead.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::ascii::{self, AsciiScratch, Pass};
use super::core::{doc_shingles32, sorted_unique32};
use super::slots;
use crate::simd::{self, multiversion};
use crate::utf8::decode;

/// `tables.MARK` and `tables.IDEOGRAPH`.
const MARK: u8 = 8;
const IDEOGRAPH: u8 = 32;

/// The tokenizer's parameters and tables (`classes` and `lower` of 0x110000 entries).
pub struct Words<'a> {
    pub classes: &'a [u8],
    pub lower: &'a [i32],
    pub mask: u8,
    pub min_bytes: i64,
    pub k: usize,
    pub joined: bool,
    pub seed: u64,
    pub num_perm: usize,
}

/// What a fused pass returns besides the slot rows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// The rows alone.
    Rows,
    /// Every feature's `lo` hash and the per-document feature offsets.
    Features,
    /// Each document's sorted set of its features' top 32 bits, and the set offsets; the
    /// slot rows as `u32` (`rows32`, `rows` empty).
    Sets32,
}

/// The result of a fused pass: the slot rows (`n_docs * num_perm`: `rows`, or `rows32` for
/// `Sets32`, half the bytes written and read again), then per `Extra` the features (`feats`)
/// or the sets (`values`), and their offsets (`n_docs + 1`, all 0 for `Rows`).
#[derive(Default)]
pub struct Sketched {
    pub rows: Vec<u64>,
    pub rows32: Vec<u32>,
    pub feats: Vec<u64>,
    pub values: Vec<u32>,
    pub offsets: Vec<i64>,
}

/// `table[b]`: the lowercased byte of the ASCII word byte `b`, 0 for the others; `None` when
/// the tables make an ASCII word character an ideograph or a mark, or lowercase it to 0 or
/// beyond ASCII (then a byte table would not give the tokens of the class and case tables).
fn ascii_table(w: &Words<'_>) -> Option<[u8; 256]> {
    let mut table = [0u8; 256];
    for (b, entry) in table.iter_mut().enumerate().take(128) {
        let cls = w.classes[b] & w.mask;
        if cls != 0 {
            let low = w.lower[b];
            if cls & (IDEOGRAPH | MARK) != 0 || low <= 0 || low >= 0x80 {
                return None;
            }
            *entry = low as u8;
        }
    }
    Some(table)
}

/// Append `cp` (a `lower` table value) as UTF-8 to `out` (bytes beyond a code point's range
/// truncate, as the numba twin wrote them; the real tables hold code points only).
#[inline(always)]
fn encode(out: &mut Vec<u8>, cp: i32) {
    let c = cp as i64;
    if c < 0x80 {
        out.push(c as u8);
    } else if c < 0x800 {
        out.extend_from_slice(&[0xC0 | (c >> 6) as u8, 0x80 | (c & 0x3F) as u8]);
    } else if c < 0x10000 {
        out.extend_from_slice(&[
            0xE0 | (c >> 12) as u8,
            0x80 | ((c >> 6) & 0x3F) as u8,
            0x80 | (c & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (c >> 18) as u8,
            0x80 | ((c >> 12) & 0x3F) as u8,
            0x80 | ((c >> 6) & 0x3F) as u8,
            0x80 | (c & 0x3F) as u8,
        ]);
    }
}

/// xxh3_64 of each kept token of `doc`, appended to `toks` (any UTF-8; ASCII bytes take
/// `table` when there is one: an ASCII word character is neither an ideograph nor a mark, it
/// only ends an ideograph's token).
#[inline(always)]
fn doc_tokens(
    doc: &[u8],
    w: &Words<'_>,
    table: Option<&[u8; 256]>,
    scratch: &mut Vec<u8>,
    toks: &mut Vec<u64>,
) {
    scratch.clear();
    let (min_bytes, seed) = (w.min_bytes, w.seed);
    let flush = |scratch: &mut Vec<u8>, toks: &mut Vec<u64>| {
        if scratch.len() as i64 >= min_bytes {
            toks.push(xxh3_64_with_seed(scratch, seed));
        }
        scratch.clear();
    };
    let mut in_tok = false;
    let mut tok_ideo = false;
    let mut i = 0;
    while i < doc.len() {
        let b0 = doc[i];
        if b0 < 0x80 {
            if let Some(table) = table {
                let t = table[b0 as usize];
                if t != 0 {
                    if in_tok && tok_ideo {
                        flush(scratch, toks);
                        in_tok = false;
                    }
                    if !in_tok {
                        in_tok = true;
                        tok_ideo = false;
                        scratch.clear();
                    }
                    scratch.push(t);
                } else if in_tok {
                    flush(scratch, toks);
                    in_tok = false;
                }
                i += 1;
                continue;
            }
        }
        // invalid or truncated sequences read as U+FFFD of one byte
        let (cp, step) = decode(doc, i, doc.len()).map_or((0xFFFD, 1), |(c, n)| (c as usize, n));
        let cls = w.classes[cp] & w.mask;
        if cls != 0 {
            let ideo = cls & IDEOGRAPH != 0;
            if in_tok && (ideo || (tok_ideo && cls & MARK == 0)) {
                // an ideograph is a word of its own (with the marks that follow it)
                flush(scratch, toks);
                in_tok = false;
            }
            if !in_tok {
                in_tok = true;
                tok_ideo = ideo;
                scratch.clear();
            }
            encode(scratch, w.lower[cp]);
        } else if in_tok {
            flush(scratch, toks);
            in_tok = false;
        }
        i += step;
    }
    if in_tok {
        flush(scratch, toks);
    }
}

/// Per-document scratch of a fused pass.
#[derive(Default)]
struct Scratch {
    ascii: AsciiScratch,
    bytes: Vec<u8>,
    toks: Vec<u64>,
    lo: Vec<u64>,
    fa: Vec<u32>,
    fb: Vec<u32>,
    set: Vec<u32>,
    counts: Vec<u32>,
}

/// The fused pass over every document of `buf` (`offsets`: `n_docs + 1` byte positions,
/// checked by the caller), with `k >= 1`.
pub fn sketch_words(buf: &[u8], offsets: &[i64], w: &Words<'_>, extra: Extra) -> Sketched {
    sketch_words_mv(buf, offsets, w, extra)
}

multiversion! {
    fn sketch_words_mv(buf: &[u8], offsets: &[i64], w: &Words<'_>, extra: Extra) -> Sketched
        = sketch_words_body;
}

#[inline(always)]
fn sketch_words_body(buf: &[u8], offsets: &[i64], w: &Words<'_>, extra: Extra) -> Sketched {
    let level = simd::level();
    let pass = Pass::detect();
    let n_docs = offsets.len() - 1;
    let num_perm = w.num_perm;
    let table = ascii_table(w);
    let mut out = Sketched {
        // each document's row is zeroed just before its slots are written (in cache), not
        // the whole batch's rows up front
        rows: Vec::with_capacity(if extra == Extra::Sets32 {
            0
        } else {
            n_docs * num_perm
        }),
        rows32: Vec::with_capacity(if extra == Extra::Sets32 {
            n_docs * num_perm
        } else {
            0
        }),
        offsets: vec![0i64; n_docs + 1],
        ..Sketched::default()
    };
    // room for the features of a batch (one per 4 bytes: more than words in most text), so
    // that the output grows without copies; what is left over is given back at the end
    let room = (offsets[n_docs] - offsets[0]).max(0) as usize / 4;
    match extra {
        Extra::Rows => {}
        Extra::Features => out.feats.reserve(room),
        Extra::Sets32 => out.values.reserve(room),
    }
    let mut s = Scratch::default();
    for d in 0..n_docs {
        let doc = &buf[offsets[d] as usize..offsets[d + 1] as usize];
        match &table {
            Some(t) => {
                let bytes = &mut s.bytes;
                let general = |region: &[u8], toks: &mut Vec<u64>| {
                    doc_tokens(region, w, Some(t), bytes, toks)
                };
                let (min, seed) = (w.min_bytes, w.seed);
                ascii::doc_tokens_ascii(doc, t, min, seed, pass, &mut s.ascii, &mut s.toks, general)
            }
            None => {
                s.toks.clear();
                doc_tokens(doc, w, None, &mut s.bytes, &mut s.toks)
            }
        }
        doc_shingles32(
            &s.toks, w.k, w.joined, w.seed, &mut s.lo, &mut s.fa, &mut s.fb,
        );
        if extra == Extra::Sets32 {
            // written in place in the reserved room, without zeroing it first
            let row = &mut out.rows32.spare_capacity_mut()[..num_perm];
            slots::double32(&s.fa, &s.fb, row, level);
            // SAFETY: `double32` wrote every one of the `num_perm` slots past the length
            // (within the capacity reserved for `n_docs * num_perm`).
            unsafe { out.rows32.set_len((d + 1) * num_perm) };
        } else {
            out.rows.resize((d + 1) * num_perm, 0);
            let row = &mut out.rows[d * num_perm..(d + 1) * num_perm];
            slots::double32(&s.fa, &s.fb, row, level);
        }
        match extra {
            Extra::Rows => {}
            Extra::Features => {
                out.feats.extend_from_slice(&s.lo);
                out.offsets[d + 1] = out.feats.len() as i64;
            }
            Extra::Sets32 => {
                sorted_unique32(&s.fa, &mut s.set, &mut s.counts);
                out.values.extend_from_slice(&s.set);
                out.offsets[d + 1] = out.values.len() as i64;
            }
        }
    }
    out.feats.shrink_to_fit();
    out.values.shrink_to_fit();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> (Vec<u8>, Vec<i32>) {
        let mut classes = vec![0u8; 0x110000];
        let mut lower: Vec<i32> = (0..0x110000).collect();
        for c in b'a'..=b'z' {
            classes[c as usize] = 1;
        }
        for c in b'A'..=b'Z' {
            classes[c as usize] = 1;
            lower[c as usize] = (c + 32) as i32;
        }
        classes[0xE9] = 1; // é
        classes[0x6F22] = 1 | IDEOGRAPH; // 漢
        classes[0x5B57] = 1 | IDEOGRAPH; // 字
        (classes, lower)
    }

    fn tokens(text: &str, mask: u8) -> Vec<u64> {
        let (classes, lower) = tables();
        let w = Words {
            classes: &classes,
            lower: &lower,
            mask,
            min_bytes: 1,
            k: 1,
            joined: true,
            seed: 5,
            num_perm: 4,
        };
        let (mut scratch, mut toks) = (Vec::new(), Vec::new());
        let table = ascii_table(&w);
        doc_tokens(text.as_bytes(), &w, table.as_ref(), &mut scratch, &mut toks);
        toks
    }

    #[test]
    fn words_are_lowercased_runs_and_ideographs_stand_alone() {
        let h = |s: &str| xxh3_64_with_seed(s.as_bytes(), 5);
        assert_eq!(tokens("Ab, cD", 0xFF), vec![h("ab"), h("cd")]);
        assert_eq!(
            tokens("x漢字é", 0xFF),
            vec![h("x"), h("漢"), h("字"), h("é")]
        );
        assert_eq!(tokens("x漢字é", 1), vec![h("x漢字é")]);
        // an invalid byte separates
        assert_eq!(tokens("ab\u{80}", 0xFF).len(), 1);
    }

    #[test]
    fn ascii_path_equals_the_general_path() {
        let (classes, lower) = tables();
        let w = Words {
            classes: &classes,
            lower: &lower,
            mask: 0xFF,
            min_bytes: 2,
            k: 2,
            joined: true,
            seed: 9,
            num_perm: 4,
        };
        let doc = b"The quick  brown fox, a b; JUMPS";
        let table = ascii_table(&w).unwrap();
        let mut s1 = AsciiScratch::default();
        let (mut t1, mut s2, mut t2) = (Vec::new(), Vec::new(), Vec::new());
        let pass = Pass::detect();
        ascii::doc_tokens_ascii(doc, &table, 2, 9, pass, &mut s1, &mut t1, |_, _| panic!());
        doc_tokens(doc, &w, None, &mut s2, &mut t2);
        assert_eq!(t1, t2);
        assert_eq!(t1.len(), 5);
    }
}
