//! The SimHash kernels over slices: the batch vote over feature hashes, and the fused
//! word-shingle SimHash-64 with its tokenizer (the text family's word tokenizer, lowercasing).

use xxhash_rust::xxh3::{xxh3_128_with_seed, xxh3_64_with_seed};

#[cfg(target_arch = "x86_64")]
use super::x86;
use crate::utf8::decode;

/// `SPREAD[b]`: byte `i` is bit `i` of `b`, so that adding `SPREAD[h >> 8j & 0xff]` to a
/// u64 of eight byte counters counts bits `8j .. 8j + 8` of `h` at once (a carry-free SWAR
/// count, flushed before a byte counter can reach 256).
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = 0u64;
        let mut i = 0;
        while i < 8 {
            v |= (((b >> i) & 1) as u64) << (8 * i);
            i += 1;
        }
        t[b] = v;
        b += 1;
    }
    t
};

/// Per-bit counts of the 1 bits of many 64-bit hashes (each hash counted once).
struct BitCounter {
    packed: [u64; 8],
    pending: u32,
    ones: [u64; 64],
    total: u64,
}

impl BitCounter {
    fn new() -> Self {
        BitCounter {
            packed: [0; 8],
            pending: 0,
            ones: [0; 64],
            total: 0,
        }
    }

    fn clear(&mut self) {
        *self = BitCounter::new();
    }

    #[inline(always)]
    fn add(&mut self, h: u64) {
        for (j, acc) in self.packed.iter_mut().enumerate() {
            *acc += SPREAD[((h >> (8 * j)) & 0xff) as usize];
        }
        self.pending += 1;
        self.total += 1;
        if self.pending == 255 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for (j, acc) in self.packed.iter_mut().enumerate() {
            for i in 0..8 {
                self.ones[8 * j + i] += (*acc >> (8 * i)) & 0xff;
            }
            *acc = 0;
        }
        self.pending = 0;
    }

    /// Bit `b` set iff `2 * ones[b] > total` (more hashes have it than not).
    fn code(&mut self) -> u64 {
        self.flush();
        let mut code = 0u64;
        for (b, &ones) in self.ones.iter().enumerate() {
            if 2 * ones > self.total {
                code |= 1 << b;
            }
        }
        code
    }
}

/// The SimHash-64 of unit-weight feature hashes: bit `b` set iff more than half of `hashes`
/// have it. Counts eight bits per table add in byte counters held in locals (registers),
/// flushed every 255 hashes.
fn majority(hashes: &[u64]) -> u64 {
    let mut ones = [0u64; 64];
    for chunk in hashes.chunks(255) {
        let mut acc = [0u64; 8];
        for &h in chunk {
            for (j, a) in acc.iter_mut().enumerate() {
                *a += SPREAD[((h >> (8 * j)) & 0xff) as usize];
            }
        }
        for (j, a) in acc.iter().enumerate() {
            for i in 0..8 {
                ones[8 * j + i] += (a >> (8 * i)) & 0xff;
            }
        }
    }
    let total = hashes.len() as u64;
    let mut code = 0u64;
    for (b, &n) in ones.iter().enumerate() {
        if 2 * n > total {
            code |= 1 << b;
        }
    }
    code
}

/// SimHash codes of weighted feature hashes grouped per document.
///
/// `hashes` holds `n` rows of `words` u64 (bit `i` of word `k` is code bit `64k + i`),
/// `weights` one i64 per row, document `d` owns rows `doc_offsets[d] .. doc_offsets[d + 1]`
/// (checked by the caller: non-decreasing, within `0 ..= n`). Bit `b` of a code is set iff
/// `2 * ones[b] > total`, with `ones[b]` the weight sum of rows that have bit `b` and `total`
/// the weight sum of all rows, in wrapping i64 arithmetic (as numpy's). Returns `n_docs * words`
/// u64, row-major.
pub fn simhash_accumulate(
    hashes: &[u64],
    words: usize,
    weights: &[i64],
    doc_offsets: &[i64],
) -> Vec<u64> {
    let n_docs = doc_offsets.len().saturating_sub(1);
    let mut out = vec![0u64; n_docs * words];
    let mut ones = vec![0i64; 64 * words];
    let unit = weights.iter().all(|&w| w == 1);
    let mut counter = BitCounter::new();
    for d in 0..n_docs {
        let (a, b) = (doc_offsets[d] as usize, doc_offsets[d + 1] as usize);
        for k in 0..words {
            let code = if unit {
                // unit weights: a plain bit count (the common case, no weights given)
                counter.clear();
                for f in a..b {
                    counter.add(hashes[f * words + k]);
                }
                counter.code()
            } else {
                let ones = &mut ones[..64];
                ones.fill(0);
                let mut total = 0i64;
                for f in a..b {
                    let w = weights[f];
                    let h = hashes[f * words + k];
                    total = total.wrapping_add(w);
                    for (i, one) in ones.iter_mut().enumerate() {
                        *one = one.wrapping_add(w.wrapping_mul(((h >> i) & 1) as i64));
                    }
                }
                let mut code = 0u64;
                for (i, &one) in ones.iter().enumerate() {
                    if one.wrapping_mul(2) > total {
                        code |= 1 << i;
                    }
                }
                code
            };
            out[d * words + k] = code;
        }
    }
    out
}

const MARK: u8 = 8; // tables.MARK
const IDEOGRAPH: u8 = 32; // tables.IDEOGRAPH
pub(crate) const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
pub(crate) const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

/// Write `cp` as UTF-8 at `out[pos..]` (the bytes the numba kernel writes, for any int32
/// table value); returns the position after it.
#[inline]
fn encode(out: &mut [u8], pos: usize, cp: i32) -> usize {
    let c = cp as i64;
    if c < 0x80 {
        out[pos] = c as u8;
        pos + 1
    } else if c < 0x800 {
        out[pos..pos + 2].copy_from_slice(&[(0xC0 | (c >> 6)) as u8, (0x80 | (c & 0x3F)) as u8]);
        pos + 2
    } else if c < 0x10000 {
        out[pos..pos + 3].copy_from_slice(&[
            (0xE0 | (c >> 12)) as u8,
            (0x80 | ((c >> 6) & 0x3F)) as u8,
            (0x80 | (c & 0x3F)) as u8,
        ]);
        pos + 3
    } else {
        out[pos..pos + 4].copy_from_slice(&[
            (0xF0 | (c >> 18)) as u8,
            (0x80 | ((c >> 12) & 0x3F)) as u8,
            (0x80 | ((c >> 6) & 0x3F)) as u8,
            (0x80 | (c & 0x3F)) as u8,
        ]);
        pos + 4
    }
}

/// The word tokenizer's tables: `classes` and `lower` of 0x110000 entries (checked by the
/// caller), with their ASCII rows condensed into two 256-byte tables for the hot loops.
pub struct Tokenizer<'a> {
    classes: &'a [u8],
    lower: &'a [i32],
    mask: u8,
    min_bytes: i64,
    /// by byte: the lowercase byte of an ASCII word character that is neither a mark nor an
    /// ideograph and lowers to ASCII, else 0 (the general path: decode, the big tables)
    word_low: [u8; 256],
    /// by byte: an ASCII character that is not a word character
    ascii_sep: [bool; 256],
    /// `word_low` of the 128 ASCII bytes when every one of them is either a separator or a
    /// plain word character (and NUL a separator): then a pure-ASCII document's tokens are
    /// the runs of bytes whose entry is not 0 (the path of [`Tokenizer::tokenize_runs`])
    ascii_table: Option<[u8; 128]>,
}

impl<'a> Tokenizer<'a> {
    pub fn new(classes: &'a [u8], lower: &'a [i32], mask: u8, min_bytes: i64) -> Self {
        let mut word_low = [0u8; 256];
        let mut ascii_sep = [false; 256];
        for b in 0..128 {
            let cls = classes[b] & mask;
            let low = lower[b];
            ascii_sep[b] = cls == 0;
            if cls != 0 && cls & (MARK | IDEOGRAPH) == 0 && (1..0x80).contains(&low) {
                word_low[b] = low as u8;
            }
        }
        let plain = (0..128).all(|b| word_low[b] != 0 || ascii_sep[b]) && word_low[0] == 0;
        let ascii_table = plain.then(|| std::array::from_fn(|b| word_low[b]));
        Tokenizer {
            classes,
            lower,
            mask,
            min_bytes,
            word_low,
            ascii_sep,
            ascii_table,
        }
    }

    /// The table of [`Tokenizer::tokenize_runs`], when this tokenizer's ASCII characters are
    /// all plain (separators, or word characters that lowercase to ASCII).
    pub fn ascii_table(&self) -> Option<&[u8; 128]> {
        self.ascii_table.as_ref()
    }

    /// [`Tokenizer::tokenize`] of a pure-ASCII document given as its table bytes `lows`
    /// (`ascii_table()[b]` of each byte `b`, 0 for a separator; at least `n + 16` bytes,
    /// zeros past `n`) and their word masks (bit `i % 64` of `masks[i / 64]` set iff
    /// `lows[i] != 0`): tokens are the runs of set bits, found from the mask's transitions.
    pub fn tokenize_runs(
        &self,
        lows: &[u8],
        masks: &[u64],
        n: usize,
        scratch: &mut Vec<u8>,
        starts: &mut Vec<usize>,
        ends: &mut Vec<usize>,
    ) -> usize {
        // tokens and their spaces take at most n bytes; each copy writes 16 at a time
        let need = n + 48;
        if scratch.len() < need {
            scratch.resize(need, 0);
        }
        assert!(lows.len() >= n + 16, "lows padded by 16 bytes");
        let out = &mut scratch[..];
        starts.clear();
        ends.clear();
        let min_bytes = self.min_bytes;
        let mut pos = 0usize;
        let mut emit = |s: usize, e: usize, pos: &mut usize| {
            if (e - s) as i64 >= min_bytes {
                if !starts.is_empty() {
                    out[*pos] = b' ';
                    *pos += 1;
                }
                starts.push(*pos);
                let mut k = 0;
                while k < e - s {
                    out[*pos + k..*pos + k + 16].copy_from_slice(&lows[s + k..s + k + 16]);
                    k += 16;
                }
                *pos += e - s;
                ends.push(*pos);
            }
        };
        let (mut carry, mut in_tok, mut start) = (0u64, false, 0usize);
        for (bi, &m) in masks.iter().enumerate() {
            // bit i set where bit i differs from bit i - 1: a token starts or ends there
            let mut t = m ^ ((m << 1) | carry);
            carry = m >> 63;
            while t != 0 {
                let p = 64 * bi + t.trailing_zeros() as usize;
                t &= t - 1;
                if in_tok {
                    emit(start, p, &mut pos);
                } else {
                    start = p;
                }
                in_tok = !in_tok;
            }
        }
        if in_tok {
            emit(start, n, &mut pos);
        }
        pos
    }

    /// The word tokens of one document, lowercased and joined by one space at the start of
    /// `scratch` (grown as needed, never shrunk); returns how many bytes they take, or `None`
    /// for a document that is not UTF-8 (as `surrogatepass` decodes it). Tokens are
    /// byte ranges `starts[t] .. ends[t]` of it (both cleared first): maximal runs of code
    /// points whose class meets `mask`, every Han or kana character a word of its own (with
    /// the marks that follow it) when `mask` has IDEOGRAPH, tokens shorter than `min_bytes`
    /// dropped. The same tokens as the text family's `tokenize_words` with lowercasing.
    pub fn tokenize(
        &self,
        doc: &[u8],
        scratch: &mut Vec<u8>,
        starts: &mut Vec<usize>,
        ends: &mut Vec<usize>,
    ) -> Option<usize> {
        // room for the ASCII path: a byte (and a space before a token) per byte of the
        // document; the general path makes room for its up to 5 bytes, and keeps that room
        let need = 2 * doc.len() + 16;
        if scratch.len() < need {
            scratch.resize(need, 0);
        }
        // the buffer and the write position are locals: a byte store through a Vec would
        // make the compiler reload its length after every byte
        let mut out = &mut scratch[..];
        starts.clear();
        ends.clear();
        let end = doc.len();
        let mut i = 0usize;
        let mut pos = 0usize;
        let mut in_tok = false;
        let mut tok_ideo = false;
        let mut tok_begin = 0usize;
        let mut rollback = 0usize;
        let min_bytes = self.min_bytes;
        // end the token at `pos`: keep it, or drop it with its separator
        let close = |pos: usize,
                     starts: &mut Vec<usize>,
                     ends: &mut Vec<usize>,
                     tok_begin: usize,
                     rollback: usize| {
            if (pos - tok_begin) as i64 >= min_bytes {
                starts.push(tok_begin);
                ends.push(pos);
                pos
            } else {
                rollback
            }
        };
        while i < end {
            let b = doc[i];
            let low = self.word_low[b as usize];
            if low != 0 {
                // an ASCII word character: the rest of its run without state changes
                if in_tok && tok_ideo {
                    in_tok = false;
                    pos = close(pos, starts, ends, tok_begin, rollback);
                }
                if !in_tok {
                    in_tok = true;
                    tok_ideo = false;
                    rollback = pos;
                    if !starts.is_empty() {
                        out[pos] = b' ';
                        pos += 1;
                    }
                    tok_begin = pos;
                }
                out[pos] = low;
                pos += 1;
                i += 1;
                // eight bytes at a time: look all eight up, write them, and advance to the
                // first that ends the word (one predictable branch per word, not per byte)
                while i + 8 <= end && pos + 8 <= out.len() {
                    let chunk: [u8; 8] = doc[i..i + 8].try_into().expect("eight bytes");
                    let lows = chunk.map(|c| self.word_low[c as usize]);
                    out[pos..pos + 8].copy_from_slice(&lows);
                    let v = u64::from_le_bytes(lows);
                    // the lowest byte flagged is the first zero byte (bytes are below 0x80)
                    let zeros = v.wrapping_sub(0x0101_0101_0101_0101) & !v & 0x8080_8080_8080_8080;
                    let run = if zeros == 0 {
                        8
                    } else {
                        (zeros.trailing_zeros() / 8) as usize
                    };
                    pos += run;
                    i += run;
                    if run < 8 {
                        break;
                    }
                }
                while i < end {
                    let low = self.word_low[doc[i] as usize];
                    if low == 0 {
                        break;
                    }
                    out[pos] = low;
                    pos += 1;
                    i += 1;
                }
                continue;
            }
            if self.ascii_sep[b as usize] {
                // an ASCII separator: the rest of their run
                if in_tok {
                    in_tok = false;
                    pos = close(pos, starts, ends, tok_begin, rollback);
                }
                i += 1;
                while i < end && self.ascii_sep[doc[i] as usize] {
                    i += 1;
                }
                continue;
            }
            let (cp, step) = if b < 0x80 {
                (b as u32, 1)
            } else {
                decode(doc, i, end)?
            };
            let cls = self.classes[cp as usize] & self.mask;
            if cls != 0 {
                let room = pos + 5 + 2 * (end - i) + 16;
                if room > out.len() {
                    // lowercase characters longer than the document's (the ASCII path keeps
                    // its room: two bytes per byte of the rest of the document)
                    let grown = room.max(2 * out.len());
                    scratch.resize(grown, 0);
                    out = &mut scratch[..];
                }
                let ideo = cls & IDEOGRAPH != 0;
                if in_tok && (ideo || (tok_ideo && cls & MARK == 0)) {
                    // an ideograph is a word of its own (with the marks that follow it)
                    in_tok = false;
                    pos = close(pos, starts, ends, tok_begin, rollback);
                }
                if !in_tok {
                    in_tok = true;
                    tok_ideo = ideo;
                    rollback = pos;
                    if !starts.is_empty() {
                        out[pos] = b' ';
                        pos += 1;
                    }
                    tok_begin = pos;
                }
                pos = encode(out, pos, self.lower[cp as usize]);
            } else if in_tok {
                in_tok = false;
                pos = close(pos, starts, ends, tok_begin, rollback);
            }
            i += step;
        }
        if in_tok {
            pos = close(pos, starts, ends, tok_begin, rollback);
        }
        Some(pos)
    }
}

/// FNV-1a 64 of `bytes`.
#[inline]
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(FNV_OFFSET, |h, &b| (h ^ b as u64).wrapping_mul(FNV_PRIME))
}

/// The explicit SIMD paths of [`simhash_words`] this CPU and tokenizer allow (chosen once
/// per batch), with the scalar code as the fallback of each.
struct Simd<'t> {
    /// the table of the 64-byte tokenizer (AVX-512 VBMI and a plain ASCII table)
    table: Option<&'t [u8; 128]>,
    /// the vote by mask-to-bytes (AVX-512 BW)
    votes: bool,
    /// FNV-1a of eight shingles at a time (AVX-512 DQ)
    fnv: bool,
}

impl<'t> Simd<'t> {
    fn detect(tokenizer: &'t Tokenizer<'_>) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            Simd {
                table: tokenizer.ascii_table().filter(|_| x86::has_vbmi()),
                votes: x86::has_bw(),
                fnv: x86::has_dq(),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = tokenizer;
            Simd {
                table: None,
                votes: false,
                fnv: false,
            }
        }
    }

    /// The table bytes and word masks of `doc` into `lows` and `masks`, when the 64-byte
    /// tokenizer takes it (a pure-ASCII document); false: use [`Tokenizer::tokenize`].
    #[inline]
    fn runs(&self, doc: &[u8], lows: &mut Vec<u8>, masks: &mut Vec<u64>) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(table) = self.table {
            let need = doc.len().div_ceil(64) * 64 + 16;
            if lows.len() < need {
                lows.resize(need, 0);
            }
            // the 16 bytes past the blocks stay zero (only classify writes here, by blocks)
            let room = doc.len().div_ceil(64) * 64;
            lows[room..room + 16].fill(0);
            // SAFETY: `table` is only set when has_vbmi() found the features classify uses.
            return unsafe { x86::classify(doc, table, lows, masks) };
        }
        let _ = (doc, lows, masks);
        false
    }

    /// FNV-1a 64 of `buf[s..e]` for each range, into `out`.
    #[inline]
    fn fnv1a(&self, buf: &[u8], ranges: &[(usize, usize)], out: &mut Vec<u64>) {
        #[cfg(target_arch = "x86_64")]
        if self.fnv {
            // SAFETY: `fnv` is only set when has_dq() found the features it uses.
            return unsafe { x86::fnv1a_ranges(buf, ranges, out) };
        }
        out.extend(ranges.iter().map(|&(s, e)| fnv1a(&buf[s..e])));
    }

    #[inline]
    fn majority(&self, hashes: &[u64]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.votes {
            // SAFETY: `votes` is only set when has_bw() found the features majority uses.
            return unsafe { x86::majority(hashes) };
        }
        majority(hashes)
    }
}

/// The parameters of [`simhash_words`].
#[derive(Clone, Copy)]
pub struct WordParams {
    /// shingle size (at least 1)
    pub k: usize,
    /// a document with fewer than `k` tokens gives one shingle of all of them (else each
    /// token is a feature of its own)
    pub joined: bool,
    /// feature hash: 0 FNV-1a 64, 1 XXH3-64, 2 low word of XXH3-128
    pub kind: u8,
    pub seed: u64,
}

/// Fused word-shingle SimHash-64 of documents `buf[offsets[d] .. offsets[d + 1]]` (offsets
/// checked by the caller): tokenize, shingle, hash and vote (+-1 per occurrence) in one pass.
/// Returns (codes, feature counts), or `Err(d)`: document `d` is not UTF-8.
pub fn simhash_words(
    buf: &[u8],
    offsets: &[i64],
    tokenizer: &Tokenizer<'_>,
    p: WordParams,
) -> Result<(Vec<u64>, Vec<i64>), usize> {
    let n_docs = offsets.len().saturating_sub(1);
    let mut codes = vec![0u64; n_docs];
    let mut counts = vec![0i64; n_docs];
    let mut scratch = Vec::new();
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut hashes: Vec<u64> = Vec::new();
    let simd = Simd::detect(tokenizer);
    let (mut lows, mut masks) = (Vec::new(), Vec::new());
    for d in 0..n_docs {
        let doc = &buf[offsets[d] as usize..offsets[d + 1] as usize];
        let used = match simd.runs(doc, &mut lows, &mut masks) {
            true => tokenizer.tokenize_runs(
                &lows,
                &masks,
                doc.len(),
                &mut scratch,
                &mut starts,
                &mut ends,
            ),
            false => tokenizer
                .tokenize(doc, &mut scratch, &mut starts, &mut ends)
                .ok_or(d)?,
        };
        let nt = starts.len();
        if nt == 0 {
            continue;
        }
        ranges.clear();
        if nt >= p.k {
            ranges.extend((0..nt - p.k + 1).map(|f| (starts[f], ends[f + p.k - 1])));
        } else if p.joined {
            ranges.push((starts[0], ends[nt - 1]));
        } else {
            ranges.extend(starts.iter().copied().zip(ends.iter().copied()));
        }
        let text = &scratch[..used];
        hashes.clear();
        match p.kind {
            // (independent chains: out-of-order execution overlaps consecutive ranges)
            // (the whole scratch buffer: the vector path reads a few bytes past a range)
            0 => simd.fnv1a(&scratch, &ranges, &mut hashes),
            1 => hashes.extend(
                ranges
                    .iter()
                    .map(|&(s, e)| xxh3_64_with_seed(&text[s..e], p.seed)),
            ),
            _ => hashes.extend(
                ranges
                    .iter()
                    .map(|&(s, e)| xxh3_128_with_seed(&text[s..e], p.seed) as u64),
            ),
        }
        counts[d] = hashes.len() as i64;
        codes[d] = simd.majority(&hashes);
    }
    Ok((codes, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(hashes: &[u64], weights: &[i64]) -> u64 {
        let total: i64 = weights.iter().sum();
        (0..64)
            .filter(|&b| {
                let ones: i64 = hashes
                    .iter()
                    .zip(weights)
                    .map(|(h, w)| w * ((h >> b) & 1) as i64)
                    .sum();
                2 * ones > total
            })
            .fold(0u64, |c, b| c | 1 << b)
    }

    #[test]
    fn accumulate_matches_the_definition() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let hashes: Vec<u64> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        let ones = vec![1i64; 1000];
        let mixed: Vec<i64> = (0..1000).map(|i| (i % 7) - 3).collect();
        let offsets = [0i64, 0, 1, 300, 1000];
        for weights in [&ones, &mixed] {
            let got = simhash_accumulate(&hashes, 1, weights, &offsets);
            for d in 0..4 {
                let (a, b) = (offsets[d] as usize, offsets[d + 1] as usize);
                assert_eq!(got[d], naive(&hashes[a..b], &weights[a..b]));
            }
        }
    }

    /// The 64-byte tokenizer gives the scalar one's tokens and bytes on pure-ASCII
    /// documents (runs across block edges, at the end, tokens shorter than `min_bytes`).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn runs_match_the_scalar_tokenizer() {
        if !x86::has_vbmi() {
            return;
        }
        let mut classes = vec![0u8; 0x110000];
        let mut lower: Vec<i32> = (0..0x110000).collect();
        for c in (b'a'..=b'z').chain(b'0'..=b'9').chain([b'_']) {
            classes[c as usize] = 1;
        }
        for c in b'A'..=b'Z' {
            classes[c as usize] = 1;
            lower[c as usize] = (c + 32) as i32;
        }
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet = b"aZ9_ .,\n-(xQ";
        for min_bytes in [1, 2, 3] {
            let tok = Tokenizer::new(&classes, &lower, 1, min_bytes);
            let table = tok.ascii_table().expect("a plain ASCII table");
            for len in (0..300usize).chain([511, 512, 513, 1000]) {
                let doc: Vec<u8> = (0..len)
                    .map(|_| {
                        let r = next();
                        // long runs of word characters sometimes (tokens over block edges)
                        if r % 3 == 0 {
                            b'w'
                        } else {
                            alphabet[(r >> 8) as usize % alphabet.len()]
                        }
                    })
                    .collect();
                let (mut s1, mut st1, mut en1) = (Vec::new(), Vec::new(), Vec::new());
                let want = tok.tokenize(&doc, &mut s1, &mut st1, &mut en1).unwrap();
                let mut lows = vec![0xAAu8; len.div_ceil(64) * 64 + 16];
                let room = len.div_ceil(64) * 64;
                lows[room..].fill(0);
                let mut masks = Vec::new();
                // SAFETY: has_vbmi() above.
                assert!(unsafe { x86::classify(&doc, table, &mut lows, &mut masks) });
                let (mut s2, mut st2, mut en2) = (Vec::new(), Vec::new(), Vec::new());
                let got = tok.tokenize_runs(&lows, &masks, len, &mut s2, &mut st2, &mut en2);
                assert_eq!(&s2[..got], &s1[..want], "len {len} min {min_bytes}");
                assert_eq!((st2, en2), (st1, en1));
            }
        }
        let mut masks = Vec::new();
        let mut lows = vec![0u8; 144];
        let table = [0u8; 128];
        // SAFETY: has_vbmi() above.
        assert!(!unsafe { x86::classify("naïve".as_bytes(), &table, &mut lows, &mut masks) });
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_fnv_matches_the_scalar_one() {
        if !x86::has_dq() {
            return;
        }
        let buf: Vec<u8> = (0..3000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut ranges = Vec::new();
        for _ in 0..403 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let s = (x % 2990) as usize;
            let len = ((x >> 20) % 40) as usize;
            ranges.push((s, (s + len).min(buf.len())));
        }
        ranges.push((buf.len() - 3, buf.len())); // near the end: the scalar loop
        ranges.extend([
            (0, 0),
            (5, 5),
            (7, 70),
            (1, 2),
            (0, 100),
            (9, 17),
            (2990, 3000),
        ]);
        let want: Vec<u64> = ranges.iter().map(|&(s, e)| fnv1a(&buf[s..e])).collect();
        let mut got = Vec::new();
        // SAFETY: has_dq() above.
        unsafe { x86::fnv1a_ranges(&buf, &ranges, &mut got) };
        assert_eq!(got, want);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn votes_match_the_scalar_count() {
        if !x86::has_bw() {
            return;
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let hashes: Vec<u64> = (0..2000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 5 == 0 {
                    x | 0x8000_0000_0000_0001
                } else {
                    x
                }
            })
            .collect();
        for n in [0, 1, 2, 3, 254, 255, 256, 511, 1000, 2000] {
            // SAFETY: has_bw() above.
            assert_eq!(
                unsafe { x86::majority(&hashes[..n]) },
                majority(&hashes[..n])
            );
        }
    }

    #[test]
    fn words_tokenize_and_shingle() {
        let mut classes = vec![0u8; 0x110000];
        let mut lower: Vec<i32> = (0..0x110000).collect();
        for c in b'a'..=b'z' {
            classes[c as usize] = 1;
            classes[(c - 32) as usize] = 1;
            lower[(c - 32) as usize] = c as i32;
        }
        let (mut s, mut st, mut en) = (Vec::new(), Vec::new(), Vec::new());
        let one = Tokenizer::new(&classes, &lower, 1, 1);
        let used = one
            .tokenize(b"Hi, a Bb  cC!", &mut s, &mut st, &mut en)
            .unwrap();
        assert_eq!(&s[..used], b"hi a bb cc");
        assert_eq!(
            (st.clone(), en.clone()),
            (vec![0, 3, 5, 8], vec![2, 4, 7, 10])
        );
        let used = Tokenizer::new(&classes, &lower, 1, 2).tokenize(
            b"Hi, a Bb  cC!",
            &mut s,
            &mut st,
            &mut en,
        );
        assert_eq!(&s[..used.unwrap()], b"hi bb cc");
        let p = WordParams {
            k: 3,
            joined: true,
            kind: 1,
            seed: 0,
        };
        let (codes, counts) = simhash_words(b"a b c dx y", &[0, 7, 10], &one, p).unwrap();
        assert_eq!(simhash_words(b"ok \xff", &[0, 3, 4], &one, p), Err(1));
        assert_eq!(counts, vec![2, 1]);
        let h = |s: &[u8]| xxh3_64_with_seed(s, 0);
        assert_eq!(codes[0], naive(&[h(b"a b c"), h(b"b c d")], &[1, 1]));
        assert_eq!(codes[1], h(b"x y"));
        assert_eq!(fnv1a(b"a"), 0xAF63_DC4C_8601_EC8C);
        assert_eq!(fnv1a(b""), FNV_OFFSET);
    }
}
