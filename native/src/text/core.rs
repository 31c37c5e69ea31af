//! The word tokenizer and FNV-1a 64, over packed UTF-8 documents.
//!
//! Decoding (`crate::utf8`) accepts exactly what Python's `bytes.decode("utf-8",
//! "surrogatepass")` accepts; anything else is an error the bindings turn into that codec's
//! own `UnicodeDecodeError`.

use crate::utf8::{decode, encode};

/// `tables.MARK`: combining marks (they stay with the ideograph before them).
pub const MARK: u8 = 8;
/// `tables.IDEOGRAPH`: Han and kana letters and numbers (each a word of its own).
pub const IDEOGRAPH: u8 = 32;
/// FNV-1a 64 (Fowler, Noll, Vo): the offset basis (`neardup._kernels.text.FNV64_OFFSET`).
pub const FNV64_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
/// FNV-1a 64: the prime (`neardup._kernels.text.FNV64_PRIME`).
pub const FNV64_PRIME: u64 = 0x0100_0000_01B3;

/// Tokens as `Spans` holds them: the token buffer, each token's byte range in it, and each
/// document's first token (`n_docs + 1` values).
pub struct Tokens {
    pub out: Vec<u8>,
    pub starts: Vec<i64>,
    pub ends: Vec<i64>,
    pub doc_offsets: Vec<i64>,
}

/// The word tokenizer state of one document: the token being written, if any.
struct Words<'a> {
    tokens: &'a mut Tokens,
    min_bytes: usize,
    first_tok: usize,
    in_tok: bool,
    tok_ideo: bool,
    tok_begin: usize,
    rollback: usize,
}

impl Words<'_> {
    /// End the open token: keep it when long enough, else take it (and its space) back.
    #[inline(always)]
    fn close(&mut self) {
        self.in_tok = false;
        let pos = self.tokens.out.len();
        if pos - self.tok_begin >= self.min_bytes {
            self.tokens.starts.push(self.tok_begin as i64);
            self.tokens.ends.push(pos as i64);
        } else {
            self.tokens.out.truncate(self.rollback);
        }
    }

    /// Open a token (after a space when the document has one already).
    #[inline(always)]
    fn open(&mut self, ideo: bool) {
        self.in_tok = true;
        self.tok_ideo = ideo;
        self.rollback = self.tokens.out.len();
        if self.tokens.starts.len() > self.first_tok {
            self.tokens.out.push(b' ');
        }
        self.tok_begin = self.tokens.out.len();
    }
}

/// Split documents `buf[offsets[d]..offsets[d + 1]]` into word tokens: maximal runs of code
/// points whose `classes` entry meets `mask`, lowercased with `lower` when `do_lower`, each
/// ideograph (with its marks) a word of its own when `mask` holds `IDEOGRAPH`, tokens under
/// `min_bytes` dropped, a document's tokens written to one buffer separated by one space.
///
/// The offsets must rise within `buf`, and `classes` and `lower` cover every code point
/// (0x110000 entries). `Err(d)`: document `d` is not UTF-8 as `surrogatepass` decodes it.
pub fn tokenize_words(
    buf: &[u8],
    offsets: &[i64],
    classes: &[u8],
    lower: &[i32],
    mask: u8,
    min_bytes: usize,
    do_lower: bool,
) -> Result<Tokens, usize> {
    let n_docs = offsets.len().saturating_sub(1);
    let mut tokens = Tokens {
        out: Vec::with_capacity(buf.len() + buf.len() / 2 + n_docs + 16),
        starts: Vec::with_capacity(buf.len() / 4 + 16),
        ends: Vec::with_capacity(buf.len() / 4 + 16),
        doc_offsets: Vec::with_capacity(n_docs + 1),
    };
    tokens.doc_offsets.push(0);
    // ASCII, the common case, from small tables: the class under the mask, the lowercase
    // (when every ASCII letter lowercases to ASCII, as in Unicode), and whether the byte goes
    // on a word as it is ("plain": a word character, not an ideograph)
    let mut ascii_cls = [0u8; 128];
    let mut ascii_low = [0u8; 128];
    let mut plain = [false; 256];
    let mut quick = true;
    for b in 0..128 {
        ascii_cls[b] = classes[b] & mask;
        let low = if do_lower { lower[b] } else { b as i32 };
        quick &= (0..0x80).contains(&low);
        ascii_low[b] = low as u8;
        plain[b] = ascii_cls[b] != 0 && ascii_cls[b] & IDEOGRAPH == 0;
    }
    for d in 0..n_docs {
        let (mut i, end) = (offsets[d] as usize, offsets[d + 1] as usize);
        let first_tok = tokens.starts.len();
        let mut w = Words {
            tokens: &mut tokens,
            min_bytes,
            first_tok,
            in_tok: false,
            tok_ideo: false,
            tok_begin: 0,
            rollback: 0,
        };
        while i < end {
            let b = buf[i];
            if b < 0x80 && quick {
                if ascii_cls[b as usize] == 0 {
                    // a run of ASCII between words
                    if w.in_tok {
                        w.close();
                    }
                    i += 1;
                    while i < end && buf[i] < 0x80 && ascii_cls[buf[i] as usize] == 0 {
                        i += 1;
                    }
                    continue;
                }
                if plain[b as usize] && !(w.in_tok && w.tok_ideo) {
                    // a run of ASCII word characters, onto the open word or a new one
                    if !w.in_tok {
                        w.open(false);
                    }
                    let mut j = i + 1;
                    while j < end && plain[buf[j] as usize] {
                        j += 1;
                    }
                    let low = &ascii_low;
                    w.tokens
                        .out
                        .extend(buf[i..j].iter().map(|&c| low[c as usize]));
                    i = j;
                    continue;
                }
            }
            let (cp, step) = if b < 0x80 {
                (b as u32, 1)
            } else {
                decode(buf, i, end).ok_or(d)?
            };
            let cls = classes[cp as usize] & mask;
            if cls != 0 {
                let ideo = cls & IDEOGRAPH != 0;
                if w.in_tok && (ideo || (w.tok_ideo && cls & MARK == 0)) {
                    w.close(); // an ideograph is a word of its own (with the marks after it)
                }
                if !w.in_tok {
                    w.open(ideo);
                }
                let c = if do_lower {
                    lower[cp as usize] as u32
                } else {
                    cp
                };
                if c < 0x80 {
                    w.tokens.out.push(c as u8);
                } else {
                    encode(&mut w.tokens.out, c);
                }
            } else if w.in_tok {
                w.close();
            }
            i += step;
        }
        if w.in_tok {
            w.close();
        }
        tokens.doc_offsets.push(tokens.starts.len() as i64);
    }
    Ok(tokens)
}

/// FNV-1a 64 of every byte range `buf[starts[i]..ends[i]]` (the ranges lie in `buf`).
pub fn fnv1a_ranges(buf: &[u8], starts: &[i64], ends: &[i64]) -> Vec<u64> {
    starts
        .iter()
        .zip(ends)
        .map(|(&a, &b)| {
            buf[a as usize..b as usize]
                .iter()
                .fold(FNV64_OFFSET, |h, &c| {
                    (h ^ c as u64).wrapping_mul(FNV64_PRIME)
                })
        })
        .collect()
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
        classes[0x65E5] = 1 | IDEOGRAPH; // 日
        classes[0x672C] = 1 | IDEOGRAPH; // 本
        classes[0x301] = MARK; // combining acute
        (classes, lower)
    }

    fn words(text: &str, mask: u8, min_bytes: usize) -> Vec<String> {
        let (classes, lower) = tables();
        let t = tokenize_words(
            text.as_bytes(),
            &[0, text.len() as i64],
            &classes,
            &lower,
            mask,
            min_bytes,
            true,
        )
        .unwrap();
        t.starts
            .iter()
            .zip(&t.ends)
            .map(|(&a, &b)| String::from_utf8(t.out[a as usize..b as usize].to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn words_lowercased_and_short_ones_dropped() {
        assert_eq!(words("Hi, a Café!", 1, 1), ["hi", "a", "café"]);
        assert_eq!(words("Hi, a Café!", 1, 2), ["hi", "café"]);
        assert_eq!(words("日本x", 1 | IDEOGRAPH | MARK, 1), ["日", "本", "x"]);
        assert_eq!(words("日本x", 1 | MARK, 1), ["日本x"]);
        assert_eq!(
            words("日\u{301}x", 1 | IDEOGRAPH | MARK, 1),
            ["日\u{301}", "x"]
        );
    }

    #[test]
    fn ascii_lowercased_outside_ascii() {
        let (classes, mut lower) = tables();
        lower[b'A' as usize] = 0xE9;
        let t = tokenize_words(b"Ab A", &[0, 4], &classes, &lower, 1, 1, true).unwrap();
        assert_eq!(t.out, "\u{e9}b \u{e9}".as_bytes());
        assert_eq!((t.starts, t.ends), (vec![0, 4], vec![3, 6]));
    }

    #[test]
    fn documents_that_are_not_utf8_are_named() {
        let (classes, lower) = tables();
        let bad = tokenize_words(b"ok\xff", &[0, 2, 3], &classes, &lower, 1, 1, true);
        assert_eq!(bad.err(), Some(1));
    }

    #[test]
    fn fnv_known_values() {
        // FNV-1a 64 of "" and "a" (the FNV test vectors)
        assert_eq!(
            fnv1a_ranges(b"a", &[0, 0], &[0, 1]),
            [0xCBF2_9CE4_8422_2325, 0xAF63_DC4C_8601_EC8C]
        );
    }
}
