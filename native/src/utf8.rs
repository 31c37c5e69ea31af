//! UTF-8 as Python's `bytes.decode("utf-8", "surrogatepass")` reads and writes it: the one
//! decoder (and encoder) of the text, canonicalize and minhash kernels.
//!
//! Decoding accepts UTF-8 plus the three-byte forms of lone surrogates, and nothing else.
//! Written by hand rather than with `std::str` because std refuses the surrogates that
//! `surrogatepass` lets through.

/// The code point at `buf[i]` (`i < end <= buf.len()`) and its length in bytes, or `None`
/// where `surrogatepass` decoding fails (a bad or truncated sequence).
#[inline(always)]
pub fn decode(buf: &[u8], i: usize, end: usize) -> Option<(u32, usize)> {
    let b0 = buf[i] as u32;
    if b0 < 0x80 {
        return Some((b0, 1));
    }
    if (0xC2..0xE0).contains(&b0) {
        if i + 1 < end {
            let b1 = buf[i + 1] as u32;
            if b1 & 0xC0 == 0x80 {
                return Some((((b0 & 0x1F) << 6) | (b1 & 0x3F), 2));
            }
        }
    } else if (0xE0..0xF0).contains(&b0) {
        if i + 2 < end {
            let (b1, b2) = (buf[i + 1] as u32, buf[i + 2] as u32);
            if b1 & 0xC0 == 0x80 && b2 & 0xC0 == 0x80 {
                let cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F);
                if cp >= 0x800 {
                    return Some((cp, 3));
                }
            }
        }
    } else if (0xF0..0xF5).contains(&b0) && i + 3 < end {
        let (b1, b2, b3) = (buf[i + 1] as u32, buf[i + 2] as u32, buf[i + 3] as u32);
        if b1 & 0xC0 == 0x80 && b2 & 0xC0 == 0x80 && b3 & 0xC0 == 0x80 {
            let cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F);
            if (0x10000..=0x10FFFF).contains(&cp) {
                return Some((cp, 4));
            }
        }
    }
    None
}

/// Append `cp` as UTF-8 (surrogates as `surrogatepass` writes them).
#[inline(always)]
pub fn encode(out: &mut Vec<u8>, cp: u32) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
    } else if cp < 0x10000 {
        out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | ((cp >> 18) & 0x07) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_follows_surrogatepass() {
        assert_eq!(decode(b"\xed\xa0\x80", 0, 3), Some((0xD800, 3)));
        assert_eq!(decode(b"\xf0\x9f\x98\x80", 0, 4), Some((0x1F600, 4)));
        for bad in [
            &b"\xff"[..],
            b"\xc0\xaf",
            b"\xe0\x80\x80",
            b"\xf4\x90\x80\x80",
            b"\xc3",
        ] {
            assert_eq!(decode(bad, 0, bad.len()), None, "{bad:?}");
        }
    }

    #[test]
    fn encoding_inverts_decoding() {
        for cp in [0x41, 0xE9, 0x800, 0xD800, 0xFFFD, 0x1F600, 0x10FFFF] {
            let mut out = Vec::new();
            encode(&mut out, cp);
            assert_eq!(decode(&out, 0, out.len()), Some((cp, out.len())));
        }
    }
}
