//! The text of cluster lines, byte for byte what `json.JSONEncoder(ensure_ascii=False)` writes.

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` as a JSON string: `"` and `\` escaped, and the control characters below 0x20
/// (`\b \t \n \f \r` by name, the others as `\u00xx`); everything else as it is.
pub fn push_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (k, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        out.extend_from_slice(&bytes[start..k]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
        }
        start = k + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Append the line of one cluster (with its newline).
pub fn push_line<'a>(
    out: &mut Vec<u8>,
    id: i64,
    representative: &str,
    members: impl ExactSizeIterator<Item = &'a str>,
) {
    out.extend_from_slice(b"{\"cluster\": ");
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b", \"size\": ");
    out.extend_from_slice(members.len().to_string().as_bytes());
    out.extend_from_slice(b", \"representative\": ");
    push_string(out, representative);
    out.extend_from_slice(b", \"members\": [");
    for (k, m) in members.enumerate() {
        if k > 0 {
            out.extend_from_slice(b", ");
        }
        push_string(out, m);
    }
    out.extend_from_slice(b"]}\n");
}

/// The clusters of `roots` (row `i` belongs to the group of `roots[i]`) as flat arrays:
/// `order` holds every row whose root is another row, and every row some other row names as
/// its root, grouped by their own root (roots ascending) and ascending inside each group;
/// group `g` starts at `starts[g]` of `order`. Two counting passes, no sort. `Err(i)` for the
/// first row whose root is not a row (outside `0..roots.len()`).
pub fn groups(roots: &[i64]) -> Result<(Vec<i64>, Vec<i64>), usize> {
    let n = roots.len();
    let mut member = vec![false; n];
    for (i, &r) in roots.iter().enumerate() {
        if r < 0 || r as u64 >= n as u64 {
            return Err(i);
        }
        let r = r as usize;
        if r != i {
            member[i] = true;
            member[r] = true;
        }
    }
    // the size of each group, then where its next member goes
    let mut at = vec![0usize; n];
    for (i, &r) in roots.iter().enumerate() {
        if member[i] {
            at[r as usize] += 1;
        }
    }
    let mut starts = Vec::new();
    let mut total = 0usize;
    for slot in at.iter_mut() {
        if *slot > 0 {
            starts.push(total as i64);
            let size = *slot;
            *slot = total;
            total += size;
        }
    }
    let mut order = vec![0i64; total];
    for (i, &r) in roots.iter().enumerate() {
        if member[i] {
            let slot = &mut at[r as usize];
            order[*slot] = i as i64;
            *slot += 1;
        }
    }
    Ok((order, starts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_root() {
        assert_eq!(
            groups(&[0, 1, 0, 3, 3]).unwrap(),
            (vec![0, 2, 3, 4], vec![0, 2])
        );
        assert_eq!(groups(&[0, 1]).unwrap(), (vec![], vec![]));
        assert_eq!(groups(&[]).unwrap(), (vec![], vec![]));
        // a row named as a root whose own root is elsewhere goes to that group
        assert_eq!(groups(&[1, 2, 2]).unwrap(), (vec![0, 1, 2], vec![0, 1]));
        assert_eq!(groups(&[0, 3]), Err(1));
        assert_eq!(groups(&[-1]), Err(0));
    }

    fn line(id: i64, rep: &str, members: &[&str]) -> String {
        let mut out = Vec::new();
        push_line(&mut out, id, rep, members.iter().copied());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn plain_ids() {
        assert_eq!(
            line(3, "a", &["a", "b"]),
            "{\"cluster\": 3, \"size\": 2, \"representative\": \"a\", \"members\": [\"a\", \"b\"]}\n"
        );
    }

    #[test]
    fn escapes() {
        let mut out = Vec::new();
        push_string(&mut out, "q\"b\\n\nt\tc\u{1}d\u{7f}é\u{8}\u{c}\r");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"q\\\"b\\\\n\\nt\\tc\\u0001d\u{7f}é\\b\\f\\r\""
        );
    }

    #[test]
    fn empty_and_negative() {
        assert_eq!(
            line(-1, "", &[]),
            "{\"cluster\": -1, \"size\": 0, \"representative\": \"\", \"members\": []}\n"
        );
    }
}
