//! CTPH over slices: the digest (libfuzzy 2.14.1's one-pass multi-block-size engine), digest
//! parsing, the 0..100 score, and [`Table`], the 7-gram index of many digests.
//!
//! Written here rather than taken from a crate: the `ssdeep` crates bind the C library
//! (a C toolchain at build time), and the score must also follow ppdeep's variant.

use hashbrown::HashMap;

/// The base64 alphabet of ssdeep digests.
pub const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const NUM_BLOCKHASHES: usize = 31;
const SPAMSUM_LENGTH: usize = 64;
const HALF: usize = SPAMSUM_LENGTH / 2;
const MIN_BLOCKSIZE: u64 = 3;
const HASH_INIT: u8 = 0x27;
const ROLLING_WINDOW: usize = 7;

/// ssdeep's rolling hash `h1 + h2 + h3 (mod 2**32)` after every byte of `data`.
pub fn rolling_sums(data: &[u8]) -> Vec<u32> {
    let (mut h1, mut h2, mut h3) = (0u32, 0u32, 0u32);
    let mut window = [0u32; ROLLING_WINDOW];
    let mut n = 0;
    data.iter()
        .map(|&b| {
            let c = b as u32;
            h2 = h2.wrapping_sub(h1).wrapping_add(7 * c);
            h1 = h1.wrapping_add(c).wrapping_sub(window[n]);
            window[n] = c;
            n = (n + 1) % ROLLING_WINDOW;
            h3 = (h3 << 5) ^ c;
            h1.wrapping_add(h2).wrapping_add(h3)
        })
        .collect()
}

/// One digest: block size `3 << bi` and the two parts (base64 ASCII).
pub struct Digest {
    pub bi: usize,
    pub p1: [u8; SPAMSUM_LENGTH],
    pub l1: usize,
    pub p2: [u8; HALF],
    pub l2: usize,
}

impl Digest {
    /// `blocksize:part1:part2`, as ssdeep prints it.
    pub fn to_text(&self) -> String {
        let mut s = format!("{}:", MIN_BLOCKSIZE << self.bi);
        s.push_str(std::str::from_utf8(&self.p1[..self.l1]).expect("base64"));
        s.push(':');
        s.push_str(std::str::from_utf8(&self.p2[..self.l2]).expect("base64"));
        s
    }
}

/// The digest of `data`: libfuzzy's `fuzzy_engine_step` state machine, the Adler-like
/// rolling hash over 7 bytes triggering piece boundaries for every block size `3 * 2**i` at
/// once, each block size keeping a 6-bit FNV piece hash (and its "half" twin for the
/// truncated second part), block sizes that can no longer be chosen dropped.
pub fn digest(data: &[u8]) -> Digest {
    let total = data.len() as u64;
    let mut digest = [[0u8; SPAMSUM_LENGTH]; NUM_BLOCKHASHES];
    let mut dindex = [0usize; NUM_BLOCKHASHES];
    let mut bh_h = [0u8; NUM_BLOCKHASHES];
    let mut bh_half = [0u8; NUM_BLOCKHASHES];
    let mut halfdigest = [0u8; NUM_BLOCKHASHES];
    // fuzzy_set_total_input_length: cap the number of block hashes
    let mut guess = 0usize;
    while (MIN_BLOCKSIZE << guess) * (SPAMSUM_LENGTH as u64) < total {
        guess += 1;
        if guess == NUM_BLOCKHASHES - 2 {
            break;
        }
    }
    let bhendlimit = guess + 1;
    let (mut bhstart, mut bhend) = (0usize, 1usize);
    let mut rollmask = 0u32;
    let mut reduce_border = MIN_BLOCKSIZE * SPAMSUM_LENGTH as u64;
    bh_h[0] = HASH_INIT;
    bh_half[0] = HASH_INIT;
    let (mut h1, mut h2, mut h3) = (0u32, 0u32, 0u32);
    let mut window = [0u32; ROLLING_WINDOW];
    let mut wn = 0;
    for &b in data {
        let c = b as u32;
        h2 = h2.wrapping_sub(h1).wrapping_add(7 * c);
        h1 = h1.wrapping_add(c).wrapping_sub(window[wn]);
        window[wn] = c;
        wn += 1;
        if wn == ROLLING_WINDOW {
            wn = 0;
        }
        h3 = (h3 << 5) ^ c;
        let horg = h1.wrapping_add(h2).wrapping_add(h3).wrapping_add(1);
        let c6 = b & 63;
        for (h, half) in bh_h[bhstart..bhend]
            .iter_mut()
            .zip(&mut bh_half[bhstart..bhend])
        {
            *h = (h.wrapping_mul(19) ^ c6) & 63;
            *half = (half.wrapping_mul(19) ^ c6) & 63;
        }
        if horg == 0 {
            continue;
        }
        let mut hq = horg / 3;
        if hq & rollmask != 0 || horg % 3 != 0 {
            continue;
        }
        hq >>= bhstart;
        let mut i = bhstart;
        loop {
            if dindex[i] == 0 && bhend <= bhendlimit {
                // fuzzy_try_fork_blockhash (the last-hash case needs > 100 GB of input)
                bh_h[bhend] = bh_h[bhend - 1];
                bh_half[bhend] = bh_half[bhend - 1];
                digest[bhend][0] = 0;
                halfdigest[bhend] = 0;
                dindex[bhend] = 0;
                bhend += 1;
            }
            digest[i][dindex[i]] = B64[bh_h[i] as usize];
            halfdigest[i] = B64[bh_half[i] as usize];
            if dindex[i] < SPAMSUM_LENGTH - 1 {
                dindex[i] += 1;
                digest[i][dindex[i]] = 0;
                bh_h[i] = HASH_INIT;
                if dindex[i] < HALF {
                    bh_half[i] = HASH_INIT;
                    halfdigest[i] = 0;
                }
            } else if bhend - bhstart >= 2 && reduce_border < total && dindex[bhstart + 1] >= HALF {
                // fuzzy_try_reduce_blockhash
                bhstart += 1;
                reduce_border *= 2;
                rollmask = rollmask * 2 + 1;
            }
            if hq & 1 != 0 {
                break;
            }
            hq >>= 1;
            i += 1;
            if i >= bhend {
                break;
            }
        }
    }
    // fuzzy_digest
    let hroll = h1.wrapping_add(h2).wrapping_add(h3);
    let mut bi = bhstart;
    while (MIN_BLOCKSIZE << bi) * (SPAMSUM_LENGTH as u64) < total {
        bi += 1;
    }
    if bi >= bhend {
        bi = bhend - 1;
    }
    while bi > bhstart && dindex[bi] < HALF {
        bi -= 1;
    }
    let mut out = Digest {
        bi,
        p1: [0; SPAMSUM_LENGTH],
        l1: 0,
        p2: [0; HALF],
        l2: 0,
    };
    let mut n1 = dindex[bi];
    out.p1[..n1].copy_from_slice(&digest[bi][..n1]);
    if hroll != 0 {
        out.p1[n1] = B64[bh_h[bi] as usize];
        n1 += 1;
    } else if digest[bi][n1] != 0 {
        out.p1[n1] = digest[bi][n1];
        n1 += 1;
    }
    out.l1 = n1;
    let mut n2 = 0;
    if bi < bhend - 1 {
        let nb = bi + 1;
        n2 = dindex[nb].min(HALF - 1);
        out.p2[..n2].copy_from_slice(&digest[nb][..n2]);
        if hroll != 0 {
            out.p2[n2] = B64[bh_half[nb] as usize];
            n2 += 1;
        } else if halfdigest[nb] != 0 {
            out.p2[n2] = halfdigest[nb];
            n2 += 1;
        }
    } else if hroll != 0 {
        out.p2[0] = B64[bh_h[bi] as usize];
        n2 = 1;
    }
    out.l2 = n2;
    out
}

// ------------------------------------------------------------------------- parsing

/// A parsed digest: block size and both parts with runs of more than 3 equal characters cut.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Parsed {
    pub block_size: u64,
    pub part1: Vec<u8>,
    pub part2: Vec<u8>,
}

impl Parsed {
    pub fn to_text(&self) -> String {
        format!(
            "{}:{}:{}",
            self.block_size,
            std::str::from_utf8(&self.part1).expect("base64"),
            std::str::from_utf8(&self.part2).expect("base64")
        )
    }
}

#[inline]
fn is_b64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'+' || c == b'/'
}

/// Drop every character equal to the three kept before it (ssdeep keeps runs of at most 3).
fn eliminate_sequences(part: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(part.len().min(SPAMSUM_LENGTH + 1));
    for &c in part {
        let n = out.len();
        if n >= 3 && out[n - 1] == c && out[n - 2] == c && out[n - 3] == c {
            continue;
        }
        out.push(c);
    }
    out
}

/// Parse `blocksize:part1:part2` (an ssdeep `,"filename"` suffix ignored), as
/// `neardup.fuzzy.parse_ctph` does: 1 to 12 digits, parts in the base64 alphabet, a block
/// size `3 * 2**k` with `k <= 30`, parts of at most 64 characters after the runs are cut.
/// `None` for anything else.
pub fn parse(text: &[u8]) -> Option<Parsed> {
    let digits = text.iter().take_while(|c| c.is_ascii_digit()).count();
    if !(1..=12).contains(&digits) || text.get(digits) != Some(&b':') {
        return None;
    }
    let rest = &text[digits + 1..];
    let n1 = rest.iter().take_while(|&&c| is_b64(c)).count();
    if rest.get(n1) != Some(&b':') {
        return None;
    }
    let tail = &rest[n1 + 1..];
    let n2 = tail.iter().take_while(|&&c| is_b64(c)).count();
    if n2 < tail.len() && tail[n2] != b',' {
        return None;
    }
    let block_size: u64 = std::str::from_utf8(&text[..digits]).ok()?.parse().ok()?;
    let q = block_size / MIN_BLOCKSIZE;
    if !block_size.is_multiple_of(MIN_BLOCKSIZE)
        || q == 0
        || !q.is_power_of_two()
        || q.trailing_zeros() > 30
    {
        return None;
    }
    let part1 = eliminate_sequences(&rest[..n1]);
    let part2 = eliminate_sequences(&tail[..n2]);
    if part1.len() > SPAMSUM_LENGTH || part2.len() > SPAMSUM_LENGTH {
        return None;
    }
    Some(Parsed {
        block_size,
        part1,
        part2,
    })
}

// ------------------------------------------------------------------------- scoring

/// Bit masks of the positions of each byte in `s` (at most 64 bytes).
#[inline]
fn position_masks(s: &[u8]) -> [u64; 128] {
    let mut masks = [0u64; 128];
    for (i, &c) in s.iter().enumerate() {
        masks[(c & 127) as usize] |= 1 << i;
    }
    masks
}

#[inline]
fn full_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Edit distance with insert/delete 1 and replace 2 (libfuzzy's `edit_distn`):
/// `m + n - 2 * LCS`, the LCS by the bit-parallel algorithm of Allison and Dix.
pub fn indel_distance(s1: &[u8], s2: &[u8]) -> u32 {
    if s1.is_empty() || s2.is_empty() {
        return (s1.len() + s2.len()) as u32;
    }
    let masks = position_masks(s1);
    let full = full_mask(s1.len());
    let mut v = full;
    for &c in s2 {
        let u = v & masks[(c & 127) as usize];
        v = (v.wrapping_add(u) | (v - u)) & full;
    }
    let lcs = s1.len() as u32 - v.count_ones();
    (s1.len() + s2.len()) as u32 - 2 * lcs
}

/// Unit-cost Levenshtein distance (Myers / Hyyrö bit-parallel); ppdeep's measure.
pub fn levenshtein(s1: &[u8], s2: &[u8]) -> u32 {
    if s1.is_empty() || s2.is_empty() {
        return (s1.len() + s2.len()) as u32;
    }
    let masks = position_masks(s1);
    let full = full_mask(s1.len());
    let top = 1u64 << (s1.len() - 1);
    let (mut pv, mut mv, mut score) = (full, 0u64, s1.len() as i64);
    for &c in s2 {
        let eq = masks[(c & 127) as usize];
        let xv = eq | mv;
        let xh = (((eq & pv).wrapping_add(pv) & full) ^ pv) | eq;
        let mut ph = (mv | !(xh | pv)) & full;
        let mut mh = pv & xh;
        if ph & top != 0 {
            score += 1;
        } else if mh & top != 0 {
            score -= 1;
        }
        ph = ((ph << 1) | 1) & full;
        mh = (mh << 1) & full;
        pv = (mh | !(xv | ph)) & full;
        mv = ph & xv;
    }
    score as u32
}

/// Whether `s1` and `s2` share a substring of 7 characters.
fn common_gram(s1: &[u8], s2: &[u8]) -> bool {
    let pack = |w: &[u8]| w.iter().fold(0u64, |h, &c| (h << 8) | c as u64);
    let mut grams: Vec<u64> = s1.windows(ROLLING_WINDOW).map(pack).collect();
    grams.sort_unstable();
    s2.windows(ROLLING_WINDOW)
        .any(|w| grams.binary_search(&pack(w)).is_ok())
}

fn score_strings(s1: &[u8], s2: &[u8], block_size: u64, ppdeep: bool) -> u32 {
    if s1.len() < ROLLING_WINDOW || s2.len() < ROLLING_WINDOW || !common_gram(s1, s2) {
        return 0;
    }
    let dist = if ppdeep {
        levenshtein(s1, s2)
    } else {
        indel_distance(s1, s2)
    } as u64;
    let mut score = dist * SPAMSUM_LENGTH as u64 / (s1.len() + s2.len()) as u64;
    score = 100 * score / SPAMSUM_LENGTH as u64;
    if score >= 100 {
        return 0;
    }
    let cap = block_size / MIN_BLOCKSIZE * s1.len().min(s2.len()) as u64;
    (100 - score).min(cap) as u32
}

/// ssdeep's match score of two parsed digests, 0 (no match) to 100 (identical): libfuzzy's
/// `fuzzy_compare`, or ppdeep's `compare` (unit-cost Levenshtein; 100 as soon as the first
/// parts are identical) with `ppdeep`.
pub fn compare(a: &Parsed, b: &Parsed, ppdeep: bool) -> u32 {
    let (bs1, bs2) = (a.block_size, b.block_size);
    if bs1 != bs2 && bs1 != 2 * bs2 && bs2 != 2 * bs1 {
        return 0;
    }
    if bs1 == bs2 && a.part1 == b.part1 && (ppdeep || a.part2 == b.part2) {
        return 100;
    }
    if bs1 == bs2 {
        score_strings(&a.part1, &b.part1, bs1, ppdeep).max(score_strings(
            &a.part2,
            &b.part2,
            2 * bs1,
            ppdeep,
        ))
    } else if bs2 == 2 * bs1 {
        score_strings(&b.part1, &a.part2, bs2, ppdeep)
    } else {
        score_strings(&a.part1, &b.part2, bs1, ppdeep)
    }
}

// ------------------------------------------------------------------------- the index

/// The keys two digests must share to score: `(block size, 7-gram)` of part 1 at the
/// digest's block size and of part 2 at twice it, packed as `log2(block size / 3) << 56 |
/// the gram's 7 bytes`.
fn gram_keys(d: &Parsed, out: &mut Vec<u64>) {
    out.clear();
    let k = (d.block_size / MIN_BLOCKSIZE).trailing_zeros() as u64;
    for (part, level) in [(&d.part1, k), (&d.part2, k + 1)] {
        for w in part.windows(ROLLING_WINDOW) {
            out.push(w.iter().fold(level, |h, &c| (h << 8) | c as u64));
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// The 7-gram index of many digests, numbered in insertion order: candidates of a digest are
/// the digests sharing a gram key with it (or identical to it), scored exactly.
pub struct Table {
    ppdeep: bool,
    digests: Vec<Parsed>,
    grams: HashMap<u64, Vec<u32>>,
    exact: HashMap<(u64, Vec<u8>, Vec<u8>), Vec<u32>>,
    mark: Vec<u32>,
    stamp: u32,
    keys: Vec<u64>,
}

/// The most digests a [`Table`] holds.
pub const MAX_DIGESTS: usize = u32::MAX as usize;

impl Table {
    pub fn new(ppdeep: bool) -> Self {
        Table {
            ppdeep,
            digests: Vec::new(),
            grams: HashMap::new(),
            exact: HashMap::new(),
            mark: Vec::new(),
            stamp: 0,
            keys: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.digests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    pub fn digests(&self) -> &[Parsed] {
        &self.digests
    }

    fn exact_key(&self, d: &Parsed) -> (u64, Vec<u8>, Vec<u8>) {
        // ppdeep calls digests identical when block size and part 1 agree
        let part2 = if self.ppdeep {
            Vec::new()
        } else {
            d.part2.clone()
        };
        (d.block_size, d.part1.clone(), part2)
    }

    /// Add a digest; returns its id.
    pub fn add(&mut self, d: Parsed) -> u32 {
        let id = self.digests.len() as u32;
        let mut keys = std::mem::take(&mut self.keys);
        gram_keys(&d, &mut keys);
        for &key in &keys {
            self.grams.entry(key).or_default().push(id);
        }
        self.keys = keys;
        let exact = self.exact_key(&d);
        self.exact.entry(exact).or_default().push(id);
        self.digests.push(d);
        self.mark.push(0);
        id
    }

    /// The ids of the candidates of `d` (each once, unordered) into `out`.
    fn candidates(&mut self, d: &Parsed, out: &mut Vec<u32>) {
        out.clear();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        let mut keys = std::mem::take(&mut self.keys);
        gram_keys(d, &mut keys);
        let exact = self.exact.get(&self.exact_key(d));
        let lists = exact
            .into_iter()
            .chain(keys.iter().filter_map(|k| self.grams.get(k)));
        for list in lists {
            for &id in list {
                if self.mark[id as usize] != stamp {
                    self.mark[id as usize] = stamp;
                    out.push(id);
                }
            }
        }
        self.keys = keys;
    }

    /// `(id, score)` of every digest scoring at least `min_score` against `d`, by score
    /// (highest first), then id.
    pub fn query(&mut self, d: &Parsed, min_score: u32) -> Vec<(u32, u32)> {
        let mut ids = Vec::new();
        self.candidates(d, &mut ids);
        let mut hits: Vec<(u32, u32)> = ids
            .into_iter()
            .filter_map(|id| {
                let s = compare(d, &self.digests[id as usize], self.ppdeep);
                (s >= min_score).then_some((id, s))
            })
            .collect();
        hits.sort_unstable_by_key(|&(id, s)| (std::cmp::Reverse(s), id));
        hits
    }

    /// `(i, j, score)` with `i < j` of every pair scoring at least `min_score`, by `i`, then `j`.
    pub fn pairs(&mut self, min_score: u32) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        let mut ids = Vec::new();
        for i in 0..self.digests.len() {
            let d = self.digests[i].clone();
            self.candidates(&d, &mut ids);
            ids.retain(|&j| j as usize > i);
            ids.sort_unstable();
            for &j in &ids {
                let s = compare(&d, &self.digests[j as usize], self.ppdeep);
                if s >= min_score {
                    out.push((i as u32, j, s));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(digest(b"").to_text(), "3::");
        assert_eq!(digest(b"hello").to_text(), "3:iKn:p");
        let text = b"Also called fuzzy hashes, Ctph can match inputs that have homologies.";
        assert_eq!(
            digest(text).to_text(),
            "3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C"
        );
        assert_eq!(rolling_sums(b"ab"), vec![873, 4601]);
    }

    #[test]
    fn parse_and_compare() {
        let a = parse(b"3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C").unwrap();
        let b = parse(b"3:AXGBicFlIHBGcL6wCrFQEv:AXGH6xLsr2C,\"file name\"").unwrap();
        assert_eq!(compare(&a, &b, false), 22);
        assert_eq!(compare(&a, &a, false), 100);
        let p = parse(b"3:AAAAAAbc:AXY").unwrap();
        assert_eq!(
            (p.part1.as_slice(), p.part2.as_slice()),
            (&b"AAAbc"[..], &b"AXY"[..])
        );
        for bad in [
            &b"3:ab$c:def"[..],
            b"5:a:b",
            b"3:abc:de:f",
            b"6442450944:abc:def",
            b":a:b",
            b"3:a",
        ] {
            assert!(parse(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(indel_distance(b"kitten", b"sitting"), 5);
        assert_eq!(levenshtein(b"kitten", b"sitting"), 3);
    }
}
