//! The lines kernels over packed documents: `buf[offsets[d]..offsets[d + 1]]` is document `d`.
//!
//! Lines end at `\n` and at each document's end (a document of `k` newlines has `k + 1`
//! lines, an empty one one empty line). Trimming strips ASCII whitespace (tab, newline,
//! vertical tab, form feed, carriage return, space) from both ends.

use hashbrown::HashMap;
use memchr::{memchr, memchr_iter};

#[inline]
fn space(c: u8) -> bool {
    c == b' ' || (9..=13).contains(&c)
}

/// Every line's `(starts, ends, trimmed starts, trimmed ends, document)`, in document order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LineSpans {
    pub starts: Vec<i64>,
    pub ends: Vec<i64>,
    pub trimmed_starts: Vec<i64>,
    pub trimmed_ends: Vec<i64>,
    pub doc: Vec<i64>,
}

/// The lines of every document; a blank line's trimmed span is empty at the line's end.
/// `offsets` must be non-decreasing and inside `buf`.
pub fn line_spans(buf: &[u8], offsets: &[i64]) -> LineSpans {
    let n_docs = offsets.len().saturating_sub(1);
    let (lo, hi) = match (offsets.first(), offsets.last()) {
        (Some(&a), Some(&b)) => (a as usize, b as usize),
        _ => (0, 0),
    };
    let n_lines = memchr_iter(b'\n', &buf[lo..hi]).count() + n_docs;
    let mut out = LineSpans {
        starts: Vec::with_capacity(n_lines),
        ends: Vec::with_capacity(n_lines),
        trimmed_starts: Vec::with_capacity(n_lines),
        trimmed_ends: Vec::with_capacity(n_lines),
        doc: Vec::with_capacity(n_lines),
    };
    for d in 0..n_docs {
        let (s, e_doc) = (offsets[d] as usize, offsets[d + 1] as usize);
        let mut i = s;
        loop {
            let e = memchr(b'\n', &buf[i..e_doc]).map_or(e_doc, |k| i + k);
            let mut a = i;
            while a < e && space(buf[a]) {
                a += 1;
            }
            let mut b = e;
            while b > a && space(buf[b - 1]) {
                b -= 1;
            }
            if a == e {
                b = e; // blank: the trimmed span is empty at the line's end
            }
            out.starts.push(i as i64);
            out.ends.push(e as i64);
            out.trimmed_starts.push(a as i64);
            out.trimmed_ends.push(b as i64);
            out.doc.push(d as i64);
            if e >= e_doc {
                break;
            }
            i = e + 1;
        }
    }
    out
}

/// Each document's kept lines joined by `\n`, packed again: `(buffer, offsets)`. The lines
/// are those of [`line_spans`] (in document order, ranges inside `buf`).
pub fn kept_text(
    buf: &[u8],
    n_docs: usize,
    line_starts: &[i64],
    line_ends: &[i64],
    line_doc: &[i64],
    keep_line: &[bool],
) -> (Vec<u8>, Vec<i64>) {
    let mut out = Vec::with_capacity(buf.len());
    let mut out_offsets = vec![0i64; n_docs + 1];
    let n_lines = line_doc.len();
    let mut t = 0;
    for d in 0..n_docs {
        let mut first = true;
        while t < n_lines && line_doc[t] == d as i64 {
            if keep_line[t] {
                if !first {
                    out.push(b'\n');
                }
                out.extend_from_slice(&buf[line_starts[t] as usize..line_ends[t] as usize]);
                first = false;
            }
            t += 1;
        }
        out_offsets[d + 1] = out.len() as i64;
    }
    (out, out_offsets)
}

/// The JSON escape of each byte below 0x20, `"` and `\` (as `json.dumps` writes it; 0: the
/// `\u00XX` form), and which bytes need one.
const ESCAPE: [u8; 128] = {
    let mut t = [0u8; 128];
    t[0x22] = b'"';
    t[0x5C] = b'\\';
    t[8] = b'b';
    t[9] = b't';
    t[10] = b'n';
    t[12] = b'f';
    t[13] = b'r';
    t
};
const NEEDS: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[0x22] = true;
    t[0x5C] = true;
    t
};
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append the JSON escape of byte `c` (a quote, a backslash or a control character).
#[inline]
fn put_escape(out: &mut Vec<u8>, c: u8) {
    let e = ESCAPE[c as usize];
    if e != 0 {
        out.extend_from_slice(&[b'\\', e]);
    } else {
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(c >> 4) as usize],
            HEX[(c & 15) as usize],
        ]);
    }
}

/// A bit per byte of `bytes[i..i + 16]` that needs a JSON escape (below 0x20, `"` or `\\`),
/// by SSE2 (part of every x86-64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_needs(bytes: &[u8], i: usize) -> u32 {
    use std::arch::x86_64::*;
    let block = &bytes[i..i + 16];
    // SAFETY: SSE2 is in the x86-64 baseline; the load reads the 16 bytes of `block`.
    unsafe {
        let x = _mm_loadu_si128(block.as_ptr().cast());
        let low = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x22));
        let slash = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x5C));
        _mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(quote, slash))) as u32
    }
}

/// Append `bytes` JSON-escaped (without quotes): runs without a byte to escape go whole. On
/// x86-64, sixteen bytes are tested at a time ([`block_needs`]) and only the bytes to escape
/// are visited.
#[inline]
fn put_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut run = 0;
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    while i + 16 <= bytes.len() {
        let mut m = block_needs(bytes, i);
        while m != 0 {
            let at = i + m.trailing_zeros() as usize;
            out.extend_from_slice(&bytes[run..at]);
            put_escape(out, bytes[at]);
            run = at + 1;
            m &= m - 1;
        }
        i += 16;
    }
    for (j, &c) in bytes[i..].iter().enumerate() {
        if NEEDS[c as usize] {
            out.extend_from_slice(&bytes[run..i + j]);
            put_escape(out, c);
            run = i + j + 1;
        }
    }
    out.extend_from_slice(&bytes[run..]);
}

/// Each of `docs`' texts as a JSON string, quotes included, as `json.dumps(text,
/// ensure_ascii=False)` writes it: `(buffer, offsets)`. `docs` must index `offsets`.
pub fn json_strings(buf: &[u8], offsets: &[i64], docs: &[i64]) -> (Vec<u8>, Vec<i64>) {
    let mut room = 0usize;
    for &d in docs {
        room += (offsets[d as usize + 1] - offsets[d as usize]) as usize + 2;
    }
    let mut out = Vec::with_capacity(room + room / 8);
    let mut out_off = Vec::with_capacity(docs.len() + 1);
    for &d in docs {
        out_off.push(out.len() as i64);
        out.push(b'"');
        put_escaped(
            &mut out,
            &buf[offsets[d as usize] as usize..offsets[d as usize + 1] as usize],
        );
        out.push(b'"');
    }
    out_off.push(out.len() as i64);
    (out, out_off)
}

/// `line` (a JSONL record) with its text value's JSON string, `line[a..b]` (quotes
/// included), replaced by `text`'s as `json.dumps(text, ensure_ascii=False)` writes it, the
/// blanks (space, tab, `\r`) at both ends trimmed and `\n` added: into `out`, cleared first.
/// The trim is that of the whole new line (the string's quotes stop it).
pub fn splice_line(out: &mut Vec<u8>, line: &[u8], a: usize, b: usize, text: &[u8]) {
    let blank = |c: &&u8| matches!(**c, b' ' | b'\t' | b'\r');
    let (head, tail) = (&line[..a], &line[b..]);
    let lead = head.iter().take_while(blank).count();
    let trail = tail.iter().rev().take_while(blank).count();
    out.clear();
    out.reserve(head.len() + text.len() + text.len() / 8 + tail.len() + 3);
    out.extend_from_slice(&head[lead..]);
    out.push(b'"');
    put_escaped(out, text);
    out.push(b'"');
    out.extend_from_slice(&tail[..tail.len() - trail]);
    out.push(b'\n');
}

/// What [`kept_json`] gives: the documents that lose a unit, their kept text as JSON strings
/// (`out[out_offsets[j]..out_offsets[j + 1]]`), the kept text's UTF-8 length, and `bad`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeptJson {
    pub changed: Vec<i64>,
    pub out: Vec<u8>,
    pub out_offsets: Vec<i64>,
    pub kept_lengths: Vec<i64>,
    /// -1, or the first changed document whose units do not number as `unit_off` says (then
    /// every array is empty and `out_offsets` is `[0]`, as the numpy twin returns).
    pub bad: i64,
}

impl KeptJson {
    fn failed(d: usize) -> Self {
        KeptJson {
            out_offsets: vec![0],
            bad: d as i64,
            ..Default::default()
        }
    }
}

/// The JSON strings of the documents that lose a unit, their units' drop flags given.
///
/// Document `d`'s units (its solid lines, or with `paragraph` its runs of solid lines) are
/// `drop[unit_off[d]..unit_off[d + 1]]`, in order. One walk over each changed document: a
/// line's first non-blank byte tells whether it is a unit (and so whether it goes), then a
/// kept line is escaped as it is copied up to its newline, a dropped one skipped.
/// `unit_off` must be non-decreasing and inside `drop`.
pub fn kept_json(
    buf: &[u8],
    offsets: &[i64],
    drop: &[bool],
    unit_off: &[i64],
    paragraph: bool,
) -> KeptJson {
    let n_docs = offsets.len().saturating_sub(1);
    let hit = |d: usize| drop[unit_off[d] as usize..unit_off[d + 1] as usize].contains(&true);
    let mut res = KeptJson {
        out_offsets: vec![0],
        bad: -1,
        ..Default::default()
    };
    let mut room = 0usize;
    for d in (0..n_docs).filter(|&d| hit(d)) {
        room += (offsets[d + 1] - offsets[d]) as usize + 2;
    }
    res.out.reserve(room + room / 8);
    for d in 0..n_docs {
        if !hit(d) {
            continue;
        }
        let (mut u, u_end) = (unit_off[d] as usize, unit_off[d + 1] as usize);
        let e_doc = offsets[d + 1] as usize;
        let mut i = offsets[d] as usize;
        let out = &mut res.out;
        out.push(b'"');
        let mut n_kept = 0usize;
        let mut cur = usize::MAX;
        let mut prev_solid = false;
        let mut first = true;
        loop {
            let line_end = memchr(b'\n', &buf[i..e_doc]).map_or(e_doc, |k| i + k);
            let mut a = i;
            while a < line_end && space(buf[a]) {
                a += 1;
            }
            let solid = a < line_end;
            let mut dropped = false;
            if solid {
                if !paragraph || !prev_solid {
                    cur = u;
                    u += 1;
                }
                if cur >= u_end {
                    return KeptJson::failed(d);
                }
                dropped = drop[cur];
            }
            prev_solid = solid;
            if !dropped {
                if !first {
                    out.extend_from_slice(b"\\n"); // the separator: the newline's escape
                    n_kept += 1;
                }
                first = false;
                put_escaped(out, &buf[i..line_end]);
                n_kept += line_end - i;
            }
            if line_end >= e_doc {
                break;
            }
            i = line_end + 1; // past the newline
        }
        if u != u_end {
            return KeptJson::failed(d);
        }
        out.push(b'"');
        res.changed.push(d as i64);
        res.kept_lengths.push(n_kept as i64);
        res.out_offsets.push(out.len() as i64);
    }
    res
}

/// Document frequencies of unit hashes: each hash's count of documents and the document that
/// counted it last, in a hash map (hashbrown: the keys are already hashes, spread by its own
/// hasher once more).
#[derive(Debug, Default)]
pub struct UnitTable {
    map: HashMap<u64, (i64, i64)>,
}

impl UnitTable {
    /// Count each `(doc, hash)` pair once; a document's pairs come in one call, documents in
    /// non-decreasing order (a number is never reused for another document).
    pub fn add(&mut self, hashes: &[u64], docs: &[i64]) {
        for (&h, &d) in hashes.iter().zip(docs) {
            let slot = self.map.entry(h).or_insert((0, d));
            if slot.0 == 0 || slot.1 != d {
                slot.0 += 1;
                slot.1 = d;
            }
        }
    }

    /// The document count of each hash (0 for unseen).
    pub fn lookup(&self, hashes: &[u64]) -> Vec<i64> {
        hashes
            .iter()
            .map(|h| self.map.get(h).map_or(0, |c| c.0))
            .collect()
    }

    /// How many hashes occur in at least `n` documents.
    pub fn at_least(&self, n: i64) -> usize {
        self.map.values().filter(|c| c.0 >= n).count()
    }

    /// How many distinct hashes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no hash was counted.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack(texts: &[&str]) -> (Vec<u8>, Vec<i64>) {
        let mut buf = Vec::new();
        let mut off = vec![0i64];
        for t in texts {
            buf.extend_from_slice(t.as_bytes());
            off.push(buf.len() as i64);
        }
        (buf, off)
    }

    #[test]
    fn spans_of_lines_and_blank_lines() {
        let (buf, off) = pack(&["a\n  b \n", "x"]);
        let s = line_spans(&buf, &off);
        assert_eq!(s.starts, vec![0, 2, 7, 7]);
        assert_eq!(s.ends, vec![1, 6, 7, 8]);
        assert_eq!(s.trimmed_starts, vec![0, 4, 7, 7]);
        assert_eq!(s.trimmed_ends, vec![1, 5, 7, 8]);
        assert_eq!(s.doc, vec![0, 0, 0, 1]);
        let empty = line_spans(b"", &[0, 0]);
        assert_eq!(empty.starts, vec![0]);
        assert_eq!(empty.doc, vec![0]);
    }

    #[test]
    fn kept_lines_are_joined() {
        let (buf, off) = pack(&["a\nb\nc", "x\ny"]);
        let s = line_spans(&buf, &off);
        let keep = [true, false, true, false, true];
        let (out, o) = kept_text(&buf, 2, &s.starts, &s.ends, &s.doc, &keep);
        assert_eq!(out, b"a\ncy");
        assert_eq!(o, vec![0, 3, 4]);
    }

    #[test]
    fn json_strings_escape_as_json_dumps() {
        let (buf, off) = pack(&["a\"b\\", "x\n\u{1}é"]);
        let (out, o) = json_strings(&buf, &off, &[1, 0]);
        assert_eq!(out, "\"x\\n\\u0001é\"\"a\\\"b\\\\\"".as_bytes());
        assert_eq!(o, vec![0, 13, 21]);
    }

    #[test]
    fn splice_line_replaces_the_value_and_trims_the_line() {
        let mut out = b"stale".to_vec();
        let line = b" \t{\"id\": 1, \"text\": \"old\", \"n\": 2}\r ";
        let (a, b) = (20, 25);
        assert_eq!(&line[a..b], b"\"old\"");
        splice_line(&mut out, line, a, b, "n\"é\n".as_bytes());
        assert_eq!(
            out,
            "{\"id\": 1, \"text\": \"n\\\"é\\n\", \"n\": 2}\n".as_bytes()
        );
        splice_line(&mut out, b"  \"x\"\t", 2, 5, b"");
        assert_eq!(out, b"\"\"\n");
    }

    #[test]
    fn put_escaped_as_byte_by_byte() {
        // every byte value at every place of a word, among bytes that need no escape
        let naive = |bytes: &[u8]| {
            let mut out = Vec::new();
            for &c in bytes {
                if NEEDS[c as usize] {
                    put_escape(&mut out, c);
                } else {
                    out.push(c);
                }
            }
            out
        };
        for c in 0..=255u8 {
            for len in 1..40 {
                for at in 0..len {
                    let mut bytes: Vec<u8> =
                        (0..len).map(|i| b"a\x7f\xc3\xa9 !#[]~"[i % 8]).collect();
                    bytes[at] = c;
                    let mut out = Vec::new();
                    put_escaped(&mut out, &bytes);
                    assert_eq!(out, naive(&bytes), "byte {c} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn kept_json_and_bad_counts() {
        let (buf, off) = pack(&["menu\nbody\n\nmenu", "x \"y\""]);
        let drop = [true, false, true, false];
        let r = kept_json(&buf, &off, &drop, &[0, 3, 4], false);
        assert_eq!(r.changed, vec![0]);
        assert_eq!(r.out, b"\"body\\n\"");
        assert_eq!(r.out_offsets, vec![0, 8]);
        assert_eq!(r.kept_lengths, vec![5]);
        assert_eq!(r.bad, -1);
        let r = kept_json(&buf, &off, &drop, &[0, 2, 4], false);
        assert_eq!(r, KeptJson::failed(0));
    }

    #[test]
    fn unit_table_counts_documents() {
        let mut t = UnitTable::default();
        t.add(&[7, 7, 9], &[0, 0, 0]);
        t.add(&[7], &[1]);
        assert_eq!(t.lookup(&[7, 9, 8]), vec![2, 1, 0]);
        assert_eq!((t.len(), t.at_least(2)), (2, 1));
    }
}
