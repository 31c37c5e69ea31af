//! The JSONL field scanner: one text field and one id field out of each JSON line.
//!
//! A line is taken (`OK`) only when this scanner reads it exactly as Python's `json.loads`
//! would: UTF-8 as Python decodes it, the JSON grammar, no raw control characters in strings.
//! Everything else (lone surrogate escapes, a repeated target key, ids that are not integers,
//! NaN and Infinity, nesting deeper than `MAX_DEPTH`) is `SLOW`, left to `json.loads` by the
//! caller, so that no line is ever read differently. Hand-written (as `_kernels/jsonl/fast.py`
//! was) because no JSON crate reports that boundary: serde_json, for one, accepts what Python
//! refuses and the other way around in places. Plain string bytes are copied eight at a time.

/// The line was read here.
pub const OK: u8 = 0;
/// Left to `json.loads`.
pub const SLOW: u8 = 1;
/// Only ASCII whitespace (`bytes.strip` strips it all).
pub const BLANK: u8 = 2;
/// A JSON object without the text field.
pub const NO_TEXT: u8 = 3;

pub const ID_MISSING: u8 = 0;
pub const ID_STRING: u8 = 1;
pub const ID_INT: u8 = 2;

/// Deeper nesting goes to `json.loads`.
pub const MAX_DEPTH: usize = 256;

#[inline(always)]
fn ws(c: u8) -> bool {
    c == b' ' || c == b'\t' || c == b'\n' || c == b'\r'
}

#[inline(always)]
fn skip_ws(data: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && ws(data[i]) {
        i += 1;
    }
    i
}

/// The length of the valid UTF-8 sequence at `i` (strict, as Python decodes), or 0.
#[inline]
fn utf8_len(data: &[u8], i: usize, end: usize) -> usize {
    let b0 = data[i];
    if b0 < 0x80 {
        return 1;
    }
    let cont = |k: usize| data[i + k] & 0xC0 == 0x80;
    if b0 < 0xC2 {
        0
    } else if b0 < 0xE0 {
        if i + 1 < end && cont(1) {
            2
        } else {
            0
        }
    } else if b0 < 0xF0 {
        if i + 2 >= end || !cont(1) || !cont(2) {
            return 0;
        }
        let b1 = data[i + 1];
        if (b0 == 0xE0 && b1 < 0xA0) || (b0 == 0xED && b1 >= 0xA0) {
            return 0; // overlong, or a surrogate
        }
        3
    } else if b0 < 0xF5 {
        if i + 3 >= end || !cont(1) || !cont(2) || !cont(3) {
            return 0;
        }
        let b1 = data[i + 1];
        if (b0 == 0xF0 && b1 < 0x90) || (b0 == 0xF4 && b1 >= 0x90) {
            return 0;
        }
        4
    } else {
        0
    }
}

/// The four hex digits at `i` as a number, or `None`.
#[inline]
fn hex4(data: &[u8], i: usize, end: usize) -> Option<u32> {
    if i + 4 > end {
        return None;
    }
    let mut v = 0u32;
    for &c in &data[i..i + 4] {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'A'..=b'F' => c - b'A' + 10,
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        v = v * 16 + d as u32;
    }
    Some(v)
}

/// Write `cp` as UTF-8 at `out[o..]`; return the position after it.
#[inline]
fn put(out: &mut [u8], o: usize, cp: u32) -> usize {
    if cp < 0x80 {
        out[o] = cp as u8;
        o + 1
    } else if cp < 0x800 {
        out[o..o + 2].copy_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
        o + 2
    } else if cp < 0x10000 {
        out[o..o + 3].copy_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
        o + 3
    } else {
        out[o..o + 4].copy_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
        o + 4
    }
}

/// 1 for the bytes that end a run of plain string bytes: '"', '\\', controls, non-ASCII.
static STOP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c < 0x20 || c == 0x22 || c == 0x5C || c >= 0x80) as u8;
        c += 1;
    }
    t
};

/// The byte a two-byte escape `\x` stands for, by `x`; 0 for the others (`\u` included).
static ESCAPED: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0C;
    t[b'n' as usize] = 0x0A;
    t[b'r' as usize] = 0x0D;
    t[b't' as usize] = 0x09;
    t
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const SPACES: u64 = 0x2020_2020_2020_2020;
const QUOTES: u64 = 0x2222_2222_2222_2222;
const SLASHES: u64 = 0x5C5C_5C5C_5C5C_5C5C;

/// Not 0 exactly when one of the 8 bytes of `w` (little-endian) is a `STOP` byte: non-ASCII
/// (its top bit), a control (below 0x20), a quote or a backslash (a zero byte of `w` xor that
/// byte repeated). Without such a byte no subtraction borrows across bytes, so no other byte
/// can set a top bit; with one, the lowest such byte sets its own (so the lowest set bit is
/// exact; higher ones may not be).
#[inline(always)]
fn stops(w: u64) -> u64 {
    let q = w ^ QUOTES;
    let b = w ^ SLASHES;
    (w | (w.wrapping_sub(SPACES) & !w) | (q.wrapping_sub(ONES) & !q) | (b.wrapping_sub(ONES) & !b))
        & HIGHS
}

/// [`stops`] for 16 bytes at once (SSE2, which every x86-64 has): copy 16 bytes from `src`
/// to `dst` and return a bit per `STOP` byte of them (bit k: byte k). A signed compare below
/// 0x20 finds the controls and the non-ASCII bytes (negative) at once. Hand-written: memchr
/// looks for up to three given bytes, not for a class like this one.
///
/// # Safety
/// `src` must be readable and `dst` writable for 16 bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn stops16_at(src: *const u8, dst: *mut u8) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract; the loads and stores are unaligned
    unsafe {
        let x = _mm_loadu_si128(src as *const __m128i);
        _mm_storeu_si128(dst as *mut __m128i, x);
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
        let slash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
        let low = _mm_cmplt_epi8(x, _mm_set1_epi8(0x20));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), low)) as u32
    }
}

/// The plain bytes and two-byte escapes of a string 32 bytes at a time (AVX2): from `i` in
/// `data` to `o` in `out` while 32 bytes are left before `end`. Returns the new `i` and `o`,
/// and whether it stopped at a byte the caller handles (a quote, another escape, a control
/// or a non-ASCII byte), at `i`.
///
/// # Safety
/// The CPU must have AVX2; `end <= data.len()` and `out.len() - o >= end - i` (every byte in
/// gives at most one byte out).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1")]
unsafe fn plain32(
    data: &[u8],
    mut i: usize,
    end: usize,
    out: &mut [u8],
    mut o: usize,
) -> (usize, usize, bool) {
    use std::arch::x86_64::*;
    let (quote, slash, space) = (
        _mm256_set1_epi8(b'"' as i8),
        _mm256_set1_epi8(b'\\' as i8),
        _mm256_set1_epi8(0x20),
    );
    while i + 32 <= end {
        // SAFETY: i + 32 <= end <= data.len(), and o + 32 <= out.len() (the contract)
        let m = unsafe {
            let x = _mm256_loadu_si256(data.as_ptr().add(i) as *const __m256i);
            _mm256_storeu_si256(out.as_mut_ptr().add(o) as *mut __m256i, x);
            let stop = _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpeq_epi8(x, quote), _mm256_cmpeq_epi8(x, slash)),
                _mm256_cmpgt_epi8(space, x),
            );
            _mm256_movemask_epi8(stop) as u32
        };
        if m == 0 {
            i += 32;
            o += 32;
            continue;
        }
        let k = m.trailing_zeros() as usize;
        i += k;
        o += k;
        // SAFETY: i < end <= data.len(); o < out.len() (the contract)
        unsafe {
            if *data.get_unchecked(i) == b'\\' && i + 1 < end {
                let c = *data.get_unchecked(i + 1);
                let e = ESCAPED[c as usize];
                if e != 0 {
                    *out.get_unchecked_mut(o) = e;
                    o += 1;
                    i += 2;
                    continue;
                }
                // `\uXXXX` outside the surrogates: at most 3 bytes out for 6 in (surrogates
                // and bad digits go to the caller)
                if c == b'u' {
                    if let Some(cp) = hex4(data, i + 2, end) {
                        if !(0xD800..0xE000).contains(&cp) {
                            o = put(out, o, cp);
                            i += 6;
                            continue;
                        }
                    }
                }
            }
        }
        return (i, o, true);
    }
    (i, o, false)
}

/// Parse the string whose opening quote is at `i - 1`, unescaped into `out[o..]`; returns
/// (the index after the closing quote, the new `o`), or `None` for `SLOW`.
///
/// Plain bytes go 32 at a time with AVX2 ([`plain32`]), 16 at a time ([`stops16_at`], on
/// x86-64), then 8 at a time: a block is stored whole, and when a stop byte is found in it
/// only the bytes before the first one count.
/// Near the end of the line or of `out` the bytes go one by one.
fn string(
    data: &[u8],
    mut i: usize,
    end: usize,
    out: &mut [u8],
    mut o: usize,
) -> Option<(usize, usize)> {
    let room = out.len();
    // every byte in gives at most one byte out (an escape shrinks, UTF-8 is copied): when
    // `out` has room for the rest of the line now, it has it to the end, which is the bound
    // the 32-byte loop relies on
    #[cfg(target_arch = "x86_64")]
    let wide = end <= data.len()
        && o <= room
        && room - o >= end - i
        && end - i >= 32
        && crate::simd::level() != crate::simd::Level::Base;
    while i < end {
        'plain: {
            #[cfg(target_arch = "x86_64")]
            if wide {
                // SAFETY: the CPU has AVX2, and `out` has room to the end of the line
                let stopped;
                (i, o, stopped) = unsafe { plain32(data, i, end, out, o) };
                if stopped {
                    break 'plain;
                }
            }
            #[cfg(target_arch = "x86_64")]
            while i + 16 <= end && o + 16 <= room && end <= data.len() {
                // SAFETY: i + 16 <= end <= data.len(), and o + 16 <= room
                let m = unsafe { stops16_at(data.as_ptr().add(i), out.as_mut_ptr().add(o)) };
                if m != 0 {
                    let k = m.trailing_zeros() as usize;
                    i += k;
                    o += k;
                    // a two-byte escape (`\\`, `\"`, `\n`...) is written here: go on
                    if data[i] == b'\\' && i + 1 < end {
                        let e = ESCAPED[data[i + 1] as usize];
                        if e != 0 {
                            out[o] = e;
                            o += 1;
                            i += 2;
                            continue;
                        }
                    }
                    break 'plain;
                }
                i += 16;
                o += 16;
            }
            while i + 8 <= end && o + 8 <= room {
                let w = u64::from_le_bytes(data[i..i + 8].try_into().unwrap());
                out[o..o + 8].copy_from_slice(&w.to_le_bytes());
                let m = stops(w);
                if m != 0 {
                    let k = (m.trailing_zeros() >> 3) as usize;
                    i += k;
                    o += k;
                    break 'plain;
                }
                i += 8;
                o += 8;
            }
        }
        while i < end && STOP[data[i] as usize] == 0 {
            out[o] = data[i];
            i += 1;
            o += 1;
        }
        if i >= end {
            return None;
        }
        let c = data[i];
        if c == b'"' {
            return Some((i + 1, o));
        }
        if c == b'\\' {
            if i + 1 >= end {
                return None;
            }
            let e = data[i + 1];
            if e == b'u' {
                let mut cp = hex4(data, i + 2, end)?;
                i += 6;
                if (0xD800..0xDC00).contains(&cp) {
                    if i + 6 <= end && data[i] == b'\\' && data[i + 1] == b'u' {
                        match hex4(data, i + 2, end) {
                            Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                i += 6;
                            }
                            _ => return None,
                        }
                    } else {
                        return None; // a lone surrogate: json.loads keeps it, UTF-8 cannot
                    }
                } else if (0xDC00..0xE000).contains(&cp) {
                    return None;
                }
                o = put(out, o, cp);
                continue;
            }
            out[o] = match ESCAPED[e as usize] {
                0 => return None,
                x => x,
            };
            o += 1;
            i += 2;
            continue;
        }
        if c < 0x20 {
            return None;
        }
        let n = utf8_len(data, i, end);
        if n == 0 {
            return None;
        }
        out[o..o + n].copy_from_slice(&data[i..i + n]);
        o += n;
        i += n;
    }
    None
}

/// The index after the JSON number at `i`, and whether it is a plain integer; `None` for
/// `SLOW` (not a number, or `-0`, whose text is not `str(int(...))`).
fn number(data: &[u8], mut i: usize, end: usize) -> Option<(usize, bool)> {
    let start = i;
    let digit = |i: usize| i < end && data[i].is_ascii_digit();
    if i < end && data[i] == b'-' {
        i += 1;
    }
    if i >= end {
        return None;
    }
    if data[i] == b'0' {
        i += 1;
    } else if (b'1'..=b'9').contains(&data[i]) {
        while digit(i) {
            i += 1;
        }
    } else {
        return None;
    }
    let mut plain = true;
    if i < end && data[i] == b'.' {
        plain = false;
        i += 1;
        if !digit(i) {
            return None;
        }
        while digit(i) {
            i += 1;
        }
    }
    if i < end && (data[i] == b'e' || data[i] == b'E') {
        plain = false;
        i += 1;
        if i < end && (data[i] == b'+' || data[i] == b'-') {
            i += 1;
        }
        if !digit(i) {
            return None;
        }
        while digit(i) {
            i += 1;
        }
    }
    if plain && i - start == 2 && data[start] == b'-' && data[start + 1] == b'0' {
        return None;
    }
    Some((i, plain))
}

#[inline]
fn literal(data: &[u8], i: usize, end: usize, word: &[u8]) -> Option<usize> {
    (i + word.len() <= end && &data[i..i + word.len()] == word).then_some(i + word.len())
}

/// The index after the JSON value at `i` (validated), or `None` for `SLOW`; its strings are
/// unescaped into `scratch` (and forgotten).
fn skip_value(data: &[u8], mut i: usize, end: usize, scratch: &mut [u8]) -> Option<usize> {
    let mut stack = [0u8; MAX_DEPTH];
    let mut depth = 0usize;
    // state: 0 expect a value, 1 after a value (',' or a close), 2 expect a key (or '}'
    // right after '{')
    let mut state = 0u8;
    let mut first = false;
    loop {
        i = skip_ws(data, i, end);
        if i >= end {
            return None;
        }
        let c = data[i];
        if state == 2 {
            if c == b'}' && first {
                depth -= 1;
                i += 1;
                state = 1;
            } else if c == b'"' {
                i = string(data, i + 1, end, scratch, 0)?.0;
                i = skip_ws(data, i, end);
                if i >= end || data[i] != b':' {
                    return None;
                }
                i += 1;
                state = 0;
                first = false;
                continue;
            } else {
                return None;
            }
        } else if state == 0 {
            if c == b'{' || c == b'[' {
                if depth >= MAX_DEPTH {
                    return None;
                }
                stack[depth] = c + 2; // '}' or ']'
                depth += 1;
                i += 1;
                if c == b'{' {
                    state = 2;
                    first = true;
                } else {
                    let j = skip_ws(data, i, end);
                    if j < end && data[j] == b']' {
                        depth -= 1;
                        i = j + 1;
                        state = 1;
                    } else {
                        state = 0;
                    }
                }
                continue;
            }
            i = match c {
                b'"' => string(data, i + 1, end, scratch, 0)?.0,
                b't' => literal(data, i, end, b"true")?,
                b'f' => literal(data, i, end, b"false")?,
                b'n' => literal(data, i, end, b"null")?,
                b'-' | b'0'..=b'9' => number(data, i, end)?.0,
                _ => return None,
            };
            state = 1;
        }
        if state == 1 {
            if depth == 0 {
                return Some(i);
            }
            i = skip_ws(data, i, end);
            if i >= end {
                return None;
            }
            let c = data[i];
            if c == b',' {
                i += 1;
                state = if stack[depth - 1] == b'}' { 2 } else { 0 };
                first = false;
            } else if c == stack[depth - 1] {
                depth -= 1;
                i += 1;
                state = 1;
                if depth == 0 {
                    return Some(i);
                }
            } else {
                return None;
            }
        }
    }
}

/// Whether the string starting at `i` unescapes within `cap` bytes (a bound).
fn key_fits(data: &[u8], mut i: usize, end: usize, cap: usize) -> bool {
    let mut n = 0usize;
    while i < end && data[i] != b'"' {
        if data[i] == b'\\' {
            i += 1;
        }
        i += 1;
        n += 4;
        if n + 8 > cap {
            return false;
        }
    }
    true
}

/// What [`scan_lines`] finds: per line a status, the text and id fields' places in the two
/// output buffers, the id's kind, and (when asked for) the text value's JSON string in `data`.
pub struct Scan {
    pub status: Vec<u8>,
    pub text_offsets: Vec<i64>,
    pub id_offsets: Vec<i64>,
    pub id_kind: Vec<u8>,
    /// `[start, end]` per line, flattened; empty unless spans were asked for.
    pub spans: Vec<i64>,
}

/// The record of one line: its text written at `texts[*to..]`, its id at `ids[*io..]`.
struct Line<'a> {
    data: &'a [u8],
    end: usize,
    id_key: &'a [u8],
    text_key: &'a [u8],
}

impl Line<'_> {
    /// Read the object at `i`: `None` for `SLOW`, else (whether it has the text, the id's
    /// kind); `span`: where the text's JSON string lies.
    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        mut i: usize,
        keybuf: &mut [u8],
        texts: &mut [u8],
        ids: &mut [u8],
        to: &mut usize,
        io: &mut usize,
        span: &mut (i64, i64),
    ) -> Option<(bool, u8)> {
        let (data, end) = (self.data, self.end);
        let (t0, i0) = (*to, *io);
        let mut got_text = false;
        let mut id_kind = ID_MISSING;
        i = skip_ws(data, i, end);
        if i >= end || data[i] != b'{' {
            return None;
        }
        i = skip_ws(data, i + 1, end);
        if i < end && data[i] == b'}' {
            i += 1;
        } else {
            loop {
                if i >= end || data[i] != b'"' {
                    return None;
                }
                // keys longer than the buffer cannot be a target key: skip them
                let key = if key_fits(data, i + 1, end, keybuf.len()) {
                    let (j, klen) = string(data, i + 1, end, keybuf, 0)?;
                    i = j;
                    Some(&keybuf[..klen])
                } else {
                    i = string(data, i + 1, end, texts, *to)?.0;
                    None
                };
                i = skip_ws(data, i, end);
                if i >= end || data[i] != b':' {
                    return None;
                }
                i = skip_ws(data, i + 1, end);
                if i >= end {
                    return None;
                }
                if key == Some(self.text_key) {
                    if got_text || data[i] != b'"' {
                        return None; // a second text key, or a text that is not a string
                    }
                    let q0 = i;
                    (i, *to) = string(data, i + 1, end, texts, t0)?;
                    got_text = true;
                    *span = (q0 as i64, i as i64);
                    if self.id_key == self.text_key {
                        // one field for both: the id is the text (as json.loads reads it;
                        // the numba scanner left such an id missing)
                        ids[i0..i0 + (*to - t0)].copy_from_slice(&texts[t0..*to]);
                        *io = i0 + (*to - t0);
                        id_kind = ID_STRING;
                    }
                } else if key == Some(self.id_key) {
                    if id_kind != ID_MISSING {
                        return None;
                    }
                    if data[i] == b'"' {
                        (i, *io) = string(data, i + 1, end, ids, i0)?;
                        id_kind = ID_STRING;
                    } else {
                        let s = i;
                        let (j, plain) = number(data, i, end)?;
                        if !plain {
                            return None;
                        }
                        i = j;
                        ids[*io..*io + (i - s)].copy_from_slice(&data[s..i]);
                        *io += i - s;
                        id_kind = ID_INT;
                    }
                } else {
                    i = skip_value(data, i, end, &mut ids[*io..])?;
                }
                i = skip_ws(data, i, end);
                if i >= end {
                    return None;
                }
                if data[i] == b',' {
                    i = skip_ws(data, i + 1, end);
                    continue;
                }
                if data[i] == b'}' {
                    i += 1;
                    break;
                }
                return None;
            }
        }
        if skip_ws(data, i, end) != end {
            return None;
        }
        Some((got_text, id_kind))
    }
}

/// Scan lines `data[starts[k]..ends[k]]` (no newline) of one top-level JSON object each.
///
/// `texts` and `ids` must each hold at least as many bytes as the lines together (the
/// caller checks). Per line: a status (`OK`, `SLOW`, `BLANK` or `NO_TEXT`), the unescaped
/// text field in `texts[text_offsets[k]..text_offsets[k + 1]]` and the id field (an unescaped
/// string, or an integer's digits) in `ids[..]`; with `want_spans`, for each `OK` line where
/// its text value's JSON string lies in `data` (quotes included), else `-1`.
#[allow(clippy::too_many_arguments)]
pub fn scan_lines(
    data: &[u8],
    starts: &[i64],
    ends: &[i64],
    id_key: &[u8],
    text_key: &[u8],
    texts: &mut [u8],
    ids: &mut [u8],
    want_spans: bool,
) -> Scan {
    let n = starts.len();
    let mut scan = Scan {
        status: vec![OK; n],
        text_offsets: vec![0; n + 1],
        id_offsets: vec![0; n + 1],
        id_kind: vec![ID_MISSING; n],
        spans: vec![-1; if want_spans { 2 * n } else { 0 }],
    };
    let mut keybuf = vec![0u8; 64.max(id_key.len()).max(text_key.len()) * 4 + 8];
    let (mut to, mut io) = (0usize, 0usize);
    for k in 0..n {
        let (i, end) = (starts[k] as usize, ends[k] as usize);
        let blank = data[i..end]
            .iter()
            .all(|&c| c == b' ' || (0x09..=0x0D).contains(&c));
        if blank {
            scan.status[k] = BLANK;
        } else {
            let line = Line {
                data,
                end,
                id_key,
                text_key,
            };
            let (t0, i0) = (to, io);
            let mut span = (-1, -1);
            match line.read(i, &mut keybuf, texts, ids, &mut to, &mut io, &mut span) {
                Some((true, kind)) => {
                    scan.id_kind[k] = kind;
                    if want_spans {
                        scan.spans[2 * k] = span.0;
                        scan.spans[2 * k + 1] = span.1;
                    }
                }
                found => {
                    scan.status[k] = if found.is_some() { NO_TEXT } else { SLOW };
                    to = t0;
                    io = i0;
                }
            }
        }
        scan.text_offsets[k + 1] = to as i64;
        scan.id_offsets[k + 1] = io as i64;
    }
    scan
}

/// Starts and ends (newline excluded) of the complete lines of `data`, by memchr.
pub fn line_bounds(data: &[u8]) -> (Vec<i64>, Vec<i64>) {
    let ends: Vec<i64> = memchr::memchr_iter(b'\n', data).map(|i| i as i64).collect();
    let mut starts = Vec::with_capacity(ends.len());
    if !ends.is_empty() {
        starts.push(0);
        starts.extend(ends[..ends.len() - 1].iter().map(|&e| e + 1));
    }
    (starts, ends)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &[u8]) -> (u8, Vec<u8>, Vec<u8>, u8, Vec<i64>) {
        let mut texts = vec![0u8; line.len()];
        let mut ids = vec![0u8; line.len()];
        let s = scan_lines(
            line,
            &[0],
            &[line.len() as i64],
            b"id",
            b"text",
            &mut texts,
            &mut ids,
            true,
        );
        let t = texts[..s.text_offsets[1] as usize].to_vec();
        let i = ids[..s.id_offsets[1] as usize].to_vec();
        (s.status[0], t, i, s.id_kind[0], s.spans)
    }

    #[test]
    fn fields_are_unescaped() {
        let line = br#"{"id": "x\u00e9", "meta": {"a": [1, -2.5e3, true, null, {}], "b": []}, "text": "a\"b\\c\ud83d\ude00 long enough to copy by words"}"#;
        let (status, text, id, kind, spans) = one(line);
        assert_eq!(status, OK);
        assert_eq!(text, "a\"b\\c😀 long enough to copy by words".as_bytes());
        assert_eq!(id, "xé".as_bytes());
        assert_eq!(kind, ID_STRING);
        assert_eq!(&line[spans[0] as usize..spans[1] as usize][..3], br#""a\"#);
        let (status, _, id, kind, _) = one(br#"{"text": "t", "id": -12}"#);
        assert_eq!((status, id.as_slice(), kind), (OK, &b"-12"[..], ID_INT));
    }

    #[test]
    fn what_json_loads_must_decide_is_slow() {
        for line in [
            &br#"{"text": "a\ud800b"}"#[..],
            br#"{"text": "x", "text": "y"}"#,
            br#"{"id": -0, "text": "x"}"#,
            br#"{"id": 1.5, "text": "x"}"#,
            br#"{"n": NaN, "text": "x"}"#,
            b"{\"text\": \"tab\there\"}",
            b"{\"text\": \"\xff\"}",
            b"{\"text\": \"\xed\xa0\x80\"}",
            br#"{"text": "x"} trailing"#,
            br#"{"a": [1, 2,], "text": "x"}"#,
            br#"{"a": 01, "text": "x"}"#,
            br#"{"text": 5}"#,
        ] {
            assert_eq!(one(line).0, SLOW, "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(one(b"  \x0c ").0, BLANK);
        assert_eq!(one(br#"{"a": 1}"#).0, NO_TEXT);
        assert_eq!(one(br#"{"t\u0065xt": "k"}"#).1, b"k");
    }

    #[test]
    fn stop_bytes_in_words() {
        for k in 0..8 {
            let w = u64::from_le_bytes(*b"abcdefgh") & !(0xFF << (8 * k)) | (0x22 << (8 * k));
            assert_eq!(stops(w).trailing_zeros() >> 3, k);
        }
        assert_eq!(stops(u64::from_le_bytes(*b"abcdefgh")), 0);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sixteen_bytes_at_once_as_one_by_one() {
        for b in 0..=255u8 {
            for k in 0..16 {
                let mut src = *b"abcdefghijklmnop";
                src[k] = b;
                let mut dst = [0u8; 16];
                let want = if STOP[b as usize] == 1 { 1 << k } else { 0 };
                // SAFETY: both arrays hold 16 bytes
                let got = unsafe { stops16_at(src.as_ptr(), dst.as_mut_ptr()) };
                assert_eq!(got, want, "{b} at {k}");
                assert_eq!(dst, src);
            }
        }
    }

    #[test]
    fn bounds_of_lines() {
        assert_eq!(line_bounds(b"a\n\nbc\nd"), (vec![0, 2, 3], vec![1, 2, 5]));
        assert_eq!(line_bounds(b""), (vec![], vec![]));
    }
}
