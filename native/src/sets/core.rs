//! The set kernels over slices. The bindings (`py.rs`) check every index and offset first
//! (`check_*` below), so the loops here index without further tests.

use crate::simd::multiversion;

/// Why an input cannot be used: the message the twins raise as `ConfigError`.
pub type Invalid = String;

/// `offsets` rise from 0 to `len` (CSR boundaries over `len` values), never decreasing.
pub fn check_offsets(offsets: &[i64], len: usize) -> Result<(), Invalid> {
    let ok = !offsets.is_empty()
        && offsets[0] == 0
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && offsets[offsets.len() - 1] as u64 == len as u64;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "offsets must start at 0, never decrease and end at {len} (the number of values); \
             pass CSR boundaries"
        ))
    }
}

/// Every `rows[k]` lies in `0 .. n`; `what` names the array in the message.
pub fn check_rows(rows: &[i64], n: usize, what: &str) -> Result<(), Invalid> {
    match rows.iter().find(|&&r| r < 0 || r as u64 >= n as u64) {
        None => Ok(()),
        Some(r) => Err(format!(
            "{what} holds {r}, outside 0..{n}; pass row numbers below {n}"
        )),
    }
}

/// Two arrays of one length.
pub fn check_same_length(a: usize, b: usize, names: &str) -> Result<(), Invalid> {
    if a == b {
        Ok(())
    } else {
        Err(format!(
            "{names} differ in length ({a} and {b}); pass one entry each"
        ))
    }
}

/// The number of common values of the sorted runs `x` and `y` (a merge: for runs with
/// repeats, the smaller count of each value).
#[inline]
fn merge_count<V: Copy + Ord>(x: &[V], y: &[V]) -> i64 {
    let (mut i, mut j, mut n) = (0usize, 0usize, 0i64);
    while i < x.len() && j < y.len() {
        let (p, q) = (x[i], y[j]);
        n += (p == q) as i64;
        i += (p <= q) as usize;
        j += (q <= p) as usize;
    }
    n
}

/// Common values of the sorted sets `a[k]` and `b[k]` (CSR `values`/`offsets`) for every k.
pub fn intersections<V: Copy + Ord>(
    values: &[V],
    offsets: &[i64],
    a: &[i64],
    b: &[i64],
) -> Vec<i64> {
    let run = |r: i64| &values[offsets[r as usize] as usize..offsets[r as usize + 1] as usize];
    a.iter()
        .zip(b)
        .map(|(&x, &y)| merge_count(run(x), run(y)))
        .collect()
}

/// Each document's values sorted and de-duplicated, as `(values, offsets)` (CSR).
fn unique_runs<T: Copy + Ord>(doc_offsets: &[i64], mut out: Vec<T>) -> (Vec<T>, Vec<i64>) {
    let n_docs = doc_offsets.len() - 1;
    let mut offsets = vec![0i64; n_docs + 1];
    let mut pos = 0usize;
    for d in 0..n_docs {
        let (lo, hi) = (doc_offsets[d] as usize, doc_offsets[d + 1] as usize);
        let run = &mut out[lo..hi];
        run.sort_unstable();
        // move the distinct values of this run down to `pos` (lo >= pos)
        let mut prev: Option<T> = None;
        for k in lo..hi {
            let v = out[k];
            if prev != Some(v) {
                out[pos] = v;
                pos += 1;
                prev = Some(v);
            }
        }
        offsets[d + 1] = pos as i64;
    }
    out.truncate(pos);
    (out, offsets)
}

/// Sort and de-duplicate each document's run of values (`doc_offsets` checked).
pub fn unique_per_doc(values: &[u64], doc_offsets: &[i64]) -> (Vec<u64>, Vec<i64>) {
    unique_runs(doc_offsets, values.to_vec())
}

/// The top 32 bits of each document's values, sorted and de-duplicated.
pub fn unique_per_doc32(values: &[u64], doc_offsets: &[i64]) -> (Vec<u32>, Vec<i64>) {
    unique_runs(
        doc_offsets,
        values.iter().map(|&v| (v >> 32) as u32).collect(),
    )
}

/// Union-find over `n` elements and the edges `(a[k], b[k])` (in `0 .. n`): every element's
/// root, the smallest member of its component.
pub fn components(n: usize, a: &[i64], b: &[i64]) -> Vec<i64> {
    let mut parent: Vec<i64> = (0..n as i64).collect();
    for (&x, &y) in a.iter().zip(b) {
        let x = find(&mut parent, x);
        let y = find(&mut parent, y);
        // the smaller root stays: parents always point to smaller elements
        if x < y {
            parent[y as usize] = x;
        } else if y < x {
            parent[x as usize] = y;
        }
    }
    // in ascending order each parent is already final (it is smaller)
    for i in 0..n {
        let p = parent[i] as usize;
        parent[i] = parent[p];
    }
    parent
}

/// The root of `x`, halving the path on the way.
#[inline]
pub fn find(parent: &mut [i64], mut x: i64) -> i64 {
    loop {
        let p = parent[x as usize];
        if p == x {
            return x;
        }
        let g = parent[p as usize];
        parent[x as usize] = g;
        x = g;
    }
}

/// Pairs of items sharing a key, from `keys` sorted ascending: in a run of `m` items
/// (sorted by item, stably, with their `codes` rows of `words` words) each pairs with the
/// next `min(m, cap) - 1` other items; with `radius >= 0` only pairs whose codes are within
/// that Hamming distance. Returns `(a, b, runs larger than cap, largest run)`.
pub fn bucket_pairs(
    keys: &[u64],
    items: &[i64],
    codes: &[u64],
    words: usize,
    cap: i64,
    radius: i64,
) -> (Vec<i64>, Vec<i64>, i64, i64) {
    let n = keys.len();
    let check = radius >= 0;
    let (mut left, mut right) = (Vec::new(), Vec::new());
    let (mut over, mut largest) = (0i64, 0i64);
    let mut run_items: Vec<i64> = Vec::new();
    let mut run_codes: Vec<u64> = Vec::new();
    let mut perm: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && keys[j] == keys[i] {
            j += 1;
        }
        let m = j - i;
        largest = largest.max(m as i64);
        over += (m as i64 > cap) as i64;
        let w = (m as i64).min(cap) - 1;
        if m > 1 && w > 0 {
            perm.clear();
            perm.extend(0..m);
            perm.sort_by_key(|&p| items[i + p]); // stable: equal items keep their order
            run_items.clear();
            run_items.extend(perm.iter().map(|&p| items[i + p]));
            if check {
                run_codes.clear();
                for &p in &perm {
                    run_codes.extend_from_slice(&codes[(i + p) * words..(i + p + 1) * words]);
                }
            }
            for u in 0..m {
                let end = m.min(u + 1 + w as usize);
                for v in u + 1..end {
                    if run_items[u] == run_items[v] {
                        continue;
                    }
                    if check {
                        let cu = &run_codes[u * words..(u + 1) * words];
                        let cv = &run_codes[v * words..(v + 1) * words];
                        let d: i64 = cu
                            .iter()
                            .zip(cv)
                            .map(|(p, q)| (p ^ q).count_ones() as i64)
                            .sum();
                        if d > radius {
                            continue;
                        }
                    }
                    left.push(run_items[u]);
                    right.push(run_items[v]);
                }
            }
        }
        i = j;
    }
    (left, right, over, largest)
}

/// The distinct `(a[k], b[k])` pairs sorted by `a` then `b` (`a` in `0 .. n`): a counting
/// sort by `a`, then a sort of each group's `b`.
pub fn unique_pairs(a: &[i64], b: &[i64], n: usize) -> (Vec<i64>, Vec<i64>) {
    let mut starts = vec![0usize; n + 1];
    for &x in a {
        starts[x as usize + 1] += 1;
    }
    for i in 0..n {
        starts[i + 1] += starts[i];
    }
    let mut grouped = vec![0i64; b.len()];
    let mut pos = starts[..n].to_vec();
    for (&x, &y) in a.iter().zip(b) {
        grouped[pos[x as usize]] = y;
        pos[x as usize] += 1;
    }
    let (mut out_a, mut out_b) = (Vec::with_capacity(a.len()), Vec::with_capacity(a.len()));
    for i in 0..n {
        let run = &mut grouped[starts[i]..starts[i + 1]];
        run.sort_unstable();
        let mut prev: Option<i64> = None;
        for &y in run.iter() {
            if prev != Some(y) {
                out_a.push(i as i64);
                out_b.push(y);
                prev = Some(y);
            }
        }
    }
    (out_a, out_b)
}

/// CSR `(indptr, neighbor, edge)` of the undirected pairs `(i[k], j[k])` (in `0 .. n`), by a
/// counting sort: each row's neighbors in the order of the pairs.
pub fn center_adjacency(n: usize, i: &[i64], j: &[i64]) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let mut indptr = vec![0i64; n + 1];
    for (&a, &b) in i.iter().zip(j) {
        indptr[a as usize + 1] += 1;
        indptr[b as usize + 1] += 1;
    }
    for u in 0..n {
        indptr[u + 1] += indptr[u];
    }
    let mut fill: Vec<usize> = indptr[..n].iter().map(|&p| p as usize).collect();
    let mut nbr = vec![0i64; 2 * i.len()];
    let mut edge = vec![0i64; 2 * i.len()];
    for (k, (&a, &b)) in i.iter().zip(j).enumerate() {
        let (a, b) = (a as usize, b as usize);
        nbr[fill[a]] = b as i64;
        edge[fill[a]] = k as i64;
        fill[a] += 1;
        nbr[fill[b]] = a as i64;
        edge[fill[b]] = k as i64;
        fill[b] += 1;
    }
    (indptr, nbr, edge)
}

/// An adjacency of `center_adjacency`'s form that the pass can walk: `indptr` rises from 0
/// to `len(nbr)`, neighbors are rows, edges index `sim`.
pub fn check_adjacency(
    indptr: &[i64],
    nbr: &[i64],
    edge: &[i64],
    sims: usize,
) -> Result<(), Invalid> {
    if nbr.len() != edge.len() {
        return check_same_length(nbr.len(), edge.len(), "nbr and edge");
    }
    if indptr.is_empty()
        || indptr[0] != 0
        || indptr.windows(2).any(|w| w[0] > w[1])
        || indptr[indptr.len() - 1] as u64 != nbr.len() as u64
    {
        return Err(format!(
            "indptr must start at 0, never decrease and end at {} (the number of neighbors); \
             pass center_adjacency's arrays",
            nbr.len()
        ));
    }
    check_rows(nbr, indptr.len() - 1, "nbr")?;
    check_rows(edge, sims, "edge")
}

/// CENTER clustering in row order: a free row becomes a center and takes its free
/// neighbors; a pair given twice counts with its highest similarity.
pub fn center_pass(indptr: &[i64], nbr: &[i64], edge: &[i64], sim: &[f64]) -> (Vec<i64>, Vec<f64>) {
    let n = indptr.len() - 1;
    let mut root = vec![-1i64; n];
    let mut to_root = vec![1.0f64; n];
    for u in 0..n {
        if root[u] != -1 {
            continue;
        }
        root[u] = u as i64;
        for k in indptr[u] as usize..indptr[u + 1] as usize {
            let v = nbr[k] as usize;
            if v == u {
                continue;
            }
            let s = sim[edge[k] as usize];
            if root[v] == -1 {
                root[v] = u as i64;
                to_root[v] = s;
            } else if root[v] == u as i64 && s > to_root[v] {
                to_root[v] = s;
            }
        }
    }
    (root, to_root)
}

/// A bit string written most significant bit first into a zeroed buffer.
struct Bits<'a> {
    out: &'a mut [u8],
    at: usize,
    acc: u64,
    held: u32,
}

impl<'a> Bits<'a> {
    fn new(out: &'a mut [u8], at: usize) -> Self {
        Bits {
            out,
            at,
            acc: 0,
            held: 0,
        }
    }

    /// The low `nbits` (at most 32) bits of `value`.
    #[inline]
    fn push(&mut self, value: u64, nbits: u32) {
        debug_assert!(nbits <= 32);
        if nbits == 0 {
            return;
        }
        // fewer than 32 bits are held before, at most 63 after: whole 32-bit words go out
        self.acc = (self.acc << nbits) | (value & ((1u64 << nbits) - 1));
        self.held += nbits;
        if self.held >= 32 {
            self.held -= 32;
            let word = (self.acc >> self.held) as u32;
            self.out[self.at..self.at + 4].copy_from_slice(&word.to_be_bytes());
            self.at += 4;
        }
    }

    /// The low `nbits` (at most 64) bits of `value`.
    #[inline]
    fn push_wide(&mut self, value: u64, nbits: u32) {
        if nbits > 32 {
            self.push(value >> 32, nbits - 32);
            self.push(value, 32);
        } else {
            self.push(value, nbits);
        }
    }

    /// `q` zeros, then a one.
    #[inline]
    fn unary(&mut self, mut q: u64) {
        while q >= 32 {
            self.push(0, 32);
            q -= 32;
        }
        self.push(1, q as u32 + 1);
    }

    /// Write the bits held (zero-padded to a byte); the position after them.
    fn finish(self) -> usize {
        if self.held == 0 {
            return self.at;
        }
        let bytes = self.held.div_ceil(8) as usize;
        let top = (self.acc << (64 - self.held)).to_be_bytes();
        self.out[self.at..self.at + bytes].copy_from_slice(&top[..bytes]);
        self.at + bytes
    }
}

/// The bits of one document of `rice_encode`: `n (k + 1) + sum(d >> k)`.
fn rice_bits(deltas: &[u64], k: u32) -> u128 {
    deltas.len() as u128 * (k as u128 + 1) + deltas.iter().map(|&d| (d >> k) as u128).sum::<u128>()
}

/// The arrays of `rice_encode` fit each other: lengths, ranges and each document's bits.
pub fn check_rice_encode(
    deltas: &[u64],
    counts: &[i64],
    k: &[i64],
    nbytes: &[i64],
) -> Result<(), Invalid> {
    if counts.len() != k.len() || counts.len() != nbytes.len() {
        return Err(format!(
            "counts, k and nbytes differ in length ({}, {} and {}); pass one entry per document",
            counts.len(),
            k.len(),
            nbytes.len()
        ));
    }
    check_rice_params(counts, k)?;
    if let Some(b) = nbytes.iter().find(|&&b| b < 0) {
        return Err(format!("nbytes holds {b}; pass byte counts of 0 or more"));
    }
    let total: i128 = counts.iter().map(|&c| c as i128).sum();
    if total != deltas.len() as i128 {
        return Err(format!(
            "counts sum to {total}, but there are {} deltas; pass one count per document",
            deltas.len()
        ));
    }
    let mut j = 0usize;
    for (i, (&c, (&kk, &size))) in counts.iter().zip(k.iter().zip(nbytes)).enumerate() {
        let bits = rice_bits(&deltas[j..j + c as usize], kk as u32);
        if bits > 8 * size as u128 {
            return Err(format!(
                "document {i} needs {bits} bits, more than its {size} bytes hold; pass larger nbytes"
            ));
        }
        j += c as usize;
    }
    Ok(())
}

/// Counts of 0 or more and Rice parameters in `0 .. 64`.
pub fn check_rice_params(counts: &[i64], k: &[i64]) -> Result<(), Invalid> {
    if let Some(c) = counts.iter().find(|&&c| c < 0) {
        return Err(format!("counts holds {c}; pass counts of 0 or more"));
    }
    if let Some(kk) = k.iter().find(|&&kk| !(0..64).contains(&kk)) {
        return Err(format!("k holds {kk}; pass Rice parameters in 0..63"));
    }
    Ok(())
}

/// Golomb-Rice bit strings, one per document, each padded to `nbytes[i]` bytes: the low
/// `k` bits of every delta (most significant first), then every `delta >> k` in unary.
pub fn rice_encode(deltas: &[u64], counts: &[i64], k: &[i64], nbytes: &[i64]) -> Vec<u8> {
    let total: usize = nbytes.iter().map(|&b| b as usize).sum();
    let mut out = vec![0u8; total];
    let (mut j, mut at) = (0usize, 0usize);
    for ((&c, &kk), &size) in counts.iter().zip(k).zip(nbytes) {
        let run = &deltas[j..j + c as usize];
        let kk = kk as u32;
        let mut bits = Bits::new(&mut out, at);
        for &d in run {
            bits.push_wide(d, kk);
        }
        for &d in run {
            bits.unary(d >> kk);
        }
        bits.finish();
        j += c as usize;
        at += size as usize;
    }
    out
}

/// The arrays of `rice_decode` fit each other: one more start than counts, starts rising
/// within the body.
pub fn check_rice_decode(
    body: usize,
    starts: &[i64],
    counts: &[i64],
    k: &[i64],
) -> Result<(), Invalid> {
    if starts.len() != counts.len() + 1 || k.len() != counts.len() {
        return Err(format!(
            "starts, counts and k have {}, {} and {} entries; pass one count and k per blob \
             and one start more",
            starts.len(),
            counts.len(),
            k.len()
        ));
    }
    if starts[0] < 0
        || starts.windows(2).any(|w| w[0] > w[1])
        || starts[starts.len() - 1] as u64 > body as u64
    {
        return Err(format!(
            "starts must rise from 0 or more to at most {body} (the body's bytes); pass blob \
             boundaries"
        ));
    }
    check_rice_params(counts, k)
}

/// Deltas of every blob's bit string, and 1 per blob that decodes cleanly (0: too short, a
/// missing unary one, a high part of 2**32 or more, or more than padding left over). A
/// damaged blob keeps the low parts it read.
pub fn rice_decode(body: &[u8], starts: &[i64], counts: &[i64], k: &[i64]) -> (Vec<u64>, Vec<u8>) {
    let total: usize = counts.iter().map(|&c| c as usize).sum();
    let mut deltas = vec![0u64; total];
    let mut ok = vec![1u8; counts.len()];
    let bit_at = |bit: u64| (body[(bit >> 3) as usize] >> (7 - (bit & 7))) & 1;
    let mut j = 0usize;
    for i in 0..counts.len() {
        let kk = k[i] as u64;
        let mut bit = starts[i] as u64 * 8;
        let end = starts[i + 1] as u64 * 8;
        let n = counts[i] as u64;
        let out = &mut deltas[j..j + n as usize];
        j += n as usize;
        if (bit as u128) + (n as u128) * (kk as u128) > end as u128 {
            ok[i] = 0;
            continue;
        }
        for d in out.iter_mut() {
            let mut v = 0u64;
            for _ in 0..kk {
                v = (v << 1) | bit_at(bit) as u64;
                bit += 1;
            }
            *d = v;
        }
        for d in out.iter_mut() {
            // count the zeros up to the next one, a byte at a time where it can
            let mut q = 0u64;
            while bit < end {
                let shift = bit & 7;
                let byte = (body[(bit >> 3) as usize] << shift) as u32;
                if byte != 0 {
                    let zeros = (byte as u8).leading_zeros() as u64;
                    q += zeros;
                    bit += zeros;
                    break;
                }
                let step = (8 - shift).min(end - bit);
                q += step;
                bit += step;
            }
            if bit >= end || q >= 1 << 32 {
                ok[i] = 0;
                break;
            }
            bit += 1;
            *d |= q << kk;
        }
        if ok[i] == 1 && end - bit >= 8 {
            ok[i] = 0; // more than padding after the last value
        }
    }
    (deltas, ok)
}

fn bit_length(x: u64) -> i64 {
    (64 - x.leading_zeros()) as i64
}

/// `rice_sets`' parameters: `1 <= margin <= max_width <= 32`.
pub fn check_rice_widths(margin: i64, max_width: i64) -> Result<(), Invalid> {
    if 1 <= margin && margin <= max_width && max_width <= 32 {
        Ok(())
    } else {
        Err(format!(
            "margin {margin} and max_width {max_width} must satisfy \
             1 <= margin <= max_width <= 32"
        ))
    }
}

/// Each document's values rise (sorted, repeats allowed).
pub fn check_sorted_runs<V: Copy + Ord>(values: &[V], offsets: &[i64]) -> Result<(), Invalid> {
    match first_unsorted(values, offsets, 0, offsets.len().saturating_sub(1)) {
        None => Ok(()),
        Some(d) => Err(unsorted(d)),
    }
}

/// [`check_sorted_runs`] with the documents shared by `threads` threads (offsets checked
/// already): the same answer, naming the first unsorted document.
pub fn check_sorted_runs_on<V: Copy + Ord + Sync>(
    values: &[V],
    offsets: &[i64],
    threads: usize,
) -> Result<(), Invalid> {
    let docs = offsets.len().saturating_sub(1);
    if threads <= 1 || docs < 1 << 16 {
        return check_sorted_runs(values, offsets);
    }
    let share = docs.div_ceil(threads);
    let first = std::thread::scope(|scope| {
        let rest: Vec<_> = (1..threads)
            .map(|t| {
                let (lo, hi) = ((t * share).min(docs), ((t + 1) * share).min(docs));
                scope.spawn(move || first_unsorted(values, offsets, lo, hi))
            })
            .collect();
        let mut found = first_unsorted(values, offsets, 0, share.min(docs));
        for handle in rest {
            let theirs = handle.join().expect("a check thread panicked");
            found = found.or(theirs);
        }
        found
    });
    match first {
        None => Ok(()),
        Some(d) => Err(unsorted(d)),
    }
}

/// The first document of `lo .. hi` whose values fall somewhere.
fn first_unsorted<V: Copy + Ord>(
    values: &[V],
    offsets: &[i64],
    lo: usize,
    hi: usize,
) -> Option<usize> {
    (lo..hi).find(|&d| {
        let run = &values[offsets[d] as usize..offsets[d + 1] as usize];
        run.windows(2).any(|p| p[0] > p[1])
    })
}

fn unsorted(d: usize) -> Invalid {
    format!(
        "the values of document {d} are not sorted; pass each document's values \
         sorted ascending (unique_per_doc)"
    )
}

/// Format-2 set blobs (`neardup.sketch.setcodec`) of every document, in one buffer, with the
/// blob boundaries. Each document's values are cut to their top `w` bits (`w` from its size),
/// delta-coded, and Rice-coded with the cheapest of three parameters around log2 of the
/// mean delta. The offsets must be checked ([`check_offsets`]); the values are checked
/// here, as they are read: each document's must rise (the error names the first that does
/// not, as [`check_sorted_runs`] does).
pub fn rice_sets(
    values: &[u64],
    offsets: &[i64],
    margin: i64,
    max_width: i64,
) -> Result<(Vec<u8>, Vec<i64>), Invalid> {
    rice_sets64_mv(values, offsets, margin, max_width)
}

/// [`rice_sets`] of 32-bit values taken as the top halves of 64-bit ones (`v << 32`): the
/// sketcher's 32-bit sets as they are, with no widened copy (`max_width` is at most 32, so
/// the cut keeps only bits the halves hold).
pub fn rice_sets32(
    values: &[u32],
    offsets: &[i64],
    margin: i64,
    max_width: i64,
) -> Result<(Vec<u8>, Vec<i64>), Invalid> {
    rice_sets32_mv(values, offsets, margin, max_width)
}

type Blobs = Result<(Vec<u8>, Vec<i64>), Invalid>;

multiversion! {
    fn rice_sets64_mv(values: &[u64], offsets: &[i64], margin: i64, max_width: i64) -> Blobs
        = rice_sets64_body;
}

multiversion! {
    fn rice_sets32_mv(values: &[u32], offsets: &[i64], margin: i64, max_width: i64) -> Blobs
        = rice_sets32_body;
}

#[inline(always)]
fn rice_sets64_body(values: &[u64], offsets: &[i64], margin: i64, max_width: i64) -> Blobs {
    rice_sets_by(values, offsets, margin, max_width, |v| v)
}

#[inline(always)]
fn rice_sets32_body(values: &[u32], offsets: &[i64], margin: i64, max_width: i64) -> Blobs {
    rice_sets_by(values, offsets, margin, max_width, |v| u64::from(v) << 32)
}

/// One document at a time: its deltas into a scratch buffer, the three costs (two passes
/// the compiler vectorizes), then the bits.
#[inline(always)]
fn rice_sets_by<V: Copy + Ord>(
    values: &[V],
    offsets: &[i64],
    margin: i64,
    max_width: i64,
    wide: impl Fn(V) -> u64 + Copy,
) -> Blobs {
    let n_docs = offsets.len() - 1;
    let longest = offsets.windows(2).map(|p| p[1] - p[0]).max().unwrap_or(0);
    let mut deltas = vec![0u64; longest as usize];
    let mut starts = Vec::with_capacity(n_docs + 1);
    starts.push(0i64);
    // ~1.5 bytes a value and a 6-byte head are usual; the buffer grows if that is short
    let mut out: Vec<u8> = Vec::with_capacity(values.len() * 2 + n_docs * 8);
    for i in 0..n_docs {
        let run = &values[offsets[i] as usize..offsets[i + 1] as usize];
        let w = if run.len() > 1 {
            max_width.min(bit_length(run.len() as u64 - 1) + margin)
        } else {
            margin
        };
        let (n, last) =
            cut_deltas(run, (64 - w) as u32, wide, &mut deltas).ok_or_else(|| unsorted(i))?;
        let ds = &deltas[..n];
        let (k, bits) = rice_parameter(ds, last, max_width);
        let at = out.len();
        let mut head = [0x53, 0x02, w as u8, k as u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut h = 4;
        let mut count = n as u64;
        loop {
            let byte = (count & 0x7F) as u8;
            count >>= 7;
            head[h] = byte | if count > 0 { 0x80 } else { 0 };
            h += 1;
            if count == 0 {
                break;
            }
        }
        let body = if n > 0 { (bits + 7) as usize / 8 } else { 0 };
        out.resize(at + h + body, 0);
        out[at..at + h].copy_from_slice(&head[..h]);
        write_rice(&mut out[at + h..], ds, k);
        starts.push(out.len() as i64);
    }
    Ok((out, starts))
}

/// The deltas of a run's distinct values cut to their top bits (`v >> shift`), the first
/// one absolute, into `out` (at least as long as the run): their count and the last cut
/// value (the deltas' sum); None if the run does not rise.
#[inline(always)]
fn cut_deltas<V: Copy + Ord>(
    run: &[V],
    shift: u32,
    wide: impl Fn(V) -> u64 + Copy,
    out: &mut [u64],
) -> Option<(usize, u64)> {
    let len = run.len();
    if len == 0 {
        return Some((0, 0));
    }
    let out = &mut out[..len];
    out[0] = wide(run[0]) >> shift;
    // every neighbour's delta (a vector loop), counting the repeats the cut made and the
    // falls (unsorted values)
    let (mut repeats, mut falls) = (0usize, 0usize);
    for ((o, &a), &b) in out[1..].iter_mut().zip(&run[..len - 1]).zip(&run[1..]) {
        let d = (wide(b) >> shift).wrapping_sub(wide(a) >> shift);
        *o = d;
        repeats += usize::from(d == 0);
        falls += usize::from(b < a);
    }
    if falls > 0 {
        return None;
    }
    let mut n = len;
    if repeats > 0 {
        // drop the repeats: a zero delta's neighbours' deltas add up already
        n = 1;
        for i in 1..len {
            let d = out[i];
            out[n] = d;
            n += usize::from(d != 0);
        }
    }
    Some((n, wide(run[len - 1]) >> shift))
}

/// The cheapest Rice parameter of `ds` (whose sum is `total`) of three around log2 of their
/// mean (the first of the cheapest), and the bits of the code with it.
#[inline(always)]
fn rice_parameter(ds: &[u64], total: u64, max_width: i64) -> (u32, i64) {
    let n = ds.len() as i64;
    let mean = if n > 0 { total / n as u64 } else { 0 };
    let base = if mean > 0 { bit_length(mean) - 1 } else { 0 };
    let ks3 = [-1i64, 0, 1].map(|step| (base + step).clamp(0, max_width - 1));
    let (s0, s1, s2) = (ks3[0] as u32, ks3[1] as u32, ks3[2] as u32);
    let (mut h0, mut h1, mut h2) = (0u64, 0u64, 0u64);
    for &d in ds {
        h0 += d >> s0;
        h1 += d >> s1;
        h2 += d >> s2;
    }
    let costs = [h0, h1, h2];
    let (mut best_k, mut best) = (ks3[0], n * (ks3[0] + 1) + costs[0] as i64);
    for t in 1..3 {
        let cost = n * (ks3[t] + 1) + costs[t] as i64;
        if cost < best {
            best_k = ks3[t];
            best = cost;
        }
    }
    (best_k as u32, best)
}

/// Bits written most significant first from a byte position: whole 32-bit words as they
/// fill, the rest by `finish`.
struct Words {
    acc: u64,
    held: u32,
    at: usize,
}

impl Words {
    /// Append the low `nbits` (at most 32) of `value`, whose other bits are zero.
    #[inline(always)]
    fn put(&mut self, out: &mut [u8], value: u64, nbits: u32) {
        // fewer than 32 bits are held before, at most 63 after
        self.acc = (self.acc << nbits) | value;
        self.held += nbits;
        if self.held >= 32 {
            self.held -= 32;
            let word = (self.acc >> self.held) as u32;
            out[self.at..self.at + 4].copy_from_slice(&word.to_be_bytes());
            self.at += 4;
        }
    }

    /// Append `q` zeros, then a one.
    #[inline(always)]
    fn unary(&mut self, out: &mut [u8], mut q: u64) {
        while q >= 32 {
            self.put(out, 0, 32);
            q -= 32;
        }
        self.put(out, 1, q as u32 + 1);
    }

    /// OR the bits held into `out` (zero-padded to a byte).
    #[inline(always)]
    fn finish(self, out: &mut [u8]) {
        if self.held == 0 {
            return;
        }
        let top = (self.acc << (64 - self.held)).to_be_bytes();
        let bytes = self.held.div_ceil(8) as usize;
        for (o, t) in out[self.at..self.at + bytes].iter_mut().zip(&top[..bytes]) {
            *o |= t;
        }
    }
}

/// The Rice code of `ds` with parameter `k` (below 32) into the zeroed `body`, exactly its
/// size: the low `k` bits of every delta, then every `d >> k` in unary (zeros, then a one).
/// The second stream starts at bit `n * k`: it writes the byte the two share first (zeros
/// for the first stream's bits), the first stream ORs its last bits in after. Both take
/// the deltas several at a time where their codes fit one 32-bit append (the usual case).
#[inline(always)]
fn write_rice(body: &mut [u8], ds: &[u64], k: u32) {
    let split = ds.len() * k as usize;
    let mut high = Words {
        acc: 0,
        held: (split % 8) as u32,
        at: split / 8,
    };
    let mut quads = ds.chunks_exact(4);
    for p in &mut quads {
        let q = [p[0] >> k, p[1] >> k, p[2] >> k, p[3] >> k];
        if (q[0] | q[1] | q[2] | q[3]) < 8 {
            // q0 zeros, a one, q1 zeros, a one, ...: the ones at these bits from the end
            let a = q[3] + 1;
            let b = a + q[2] + 1;
            let c = b + q[1] + 1;
            let code = 1 | (1 << a) | (1 << b) | (1 << c);
            high.put(body, code, (c + q[0]) as u32 + 1);
        } else {
            for q in q {
                high.unary(body, q);
            }
        }
    }
    for &d in quads.remainder() {
        high.unary(body, d >> k);
    }
    high.finish(body);
    let mask = (1u64 << k) - 1;
    let mut low = Words {
        acc: 0,
        held: 0,
        at: 0,
    };
    if k <= 10 {
        let mut triples = ds.chunks_exact(3);
        for p in &mut triples {
            let code = ((((p[0] & mask) << k) | (p[1] & mask)) << k) | (p[2] & mask);
            low.put(body, code, 3 * k);
        }
        for &d in triples.remainder() {
            low.put(body, d & mask, k);
        }
    } else if k <= 16 {
        let mut pairs = ds.chunks_exact(2);
        for p in &mut pairs {
            low.put(body, ((p[0] & mask) << k) | (p[1] & mask), 2 * k);
        }
        for &d in pairs.remainder() {
            low.put(body, d & mask, k);
        }
    } else {
        for &d in ds {
            low.put(body, d & mask, k);
        }
    }
    low.finish(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_runs_checked_on_threads_name_the_first_unsorted_document() {
        let docs = 100_000usize;
        let offsets: Vec<i64> = (0..=docs as i64).map(|d| 2 * d).collect();
        let mut values: Vec<u32> = (0..2 * docs as u32).collect();
        for threads in [1, 2, 3] {
            assert!(check_sorted_runs_on(&values, &offsets, threads).is_ok());
        }
        values.swap(2 * 90_000, 2 * 90_000 + 1);
        values.swap(2 * 70_001, 2 * 70_001 + 1);
        for threads in [1, 2, 3, 8] {
            let err = check_sorted_runs_on(&values, &offsets, threads).unwrap_err();
            assert_eq!(err, check_sorted_runs(&values, &offsets).unwrap_err());
            assert!(err.contains("document 70001 "), "{err}");
        }
    }

    /// The encoder as it was (three passes, the bits written stream by stream): the
    /// reference of the one-pass writer's bytes.
    fn rice_sets_before(values: &[u64], offsets: &[i64], margin: i64, max_width: i64) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..offsets.len() - 1 {
            let run = &values[offsets[i] as usize..offsets[i + 1] as usize];
            let w = if run.len() > 1 {
                max_width.min(bit_length(run.len() as u64 - 1) + margin)
            } else {
                margin
            };
            let mut ds = Vec::new();
            let mut prev = 0u64;
            for &v in run {
                let c = v >> (64 - w);
                if ds.is_empty() || c != prev {
                    ds.push(c - prev);
                    prev = c;
                }
            }
            let n = ds.len() as i64;
            let total: u64 = ds.iter().sum();
            let mean = if n > 0 { total / n as u64 } else { 0 };
            let base = if mean > 0 { bit_length(mean) - 1 } else { 0 };
            let ks3 = [-1i64, 0, 1].map(|step| (base + step).max(0).min(max_width - 1));
            let costs = ks3.map(|kk| rice_bits(&ds, kk as u32) as i64);
            let (mut k, mut best) = (ks3[0], costs[0]);
            for t in 1..3 {
                if costs[t] < best {
                    (k, best) = (ks3[t], costs[t]);
                }
            }
            out.extend_from_slice(&[0x53, 0x02, w as u8, k as u8]);
            let mut c = n as u64;
            loop {
                out.push((c & 0x7F) as u8 | if c >> 7 > 0 { 0x80 } else { 0 });
                c >>= 7;
                if c == 0 {
                    break;
                }
            }
            let size = if n > 0 { (best + 7) / 8 } else { 0 };
            out.extend(rice_encode(&ds, &[n], &[k], &[size]));
        }
        out
    }

    #[test]
    fn rice_sets_write_the_bytes_of_the_stream_by_stream_encoder() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..400 {
            let docs = 1 + (next() % 6) as usize;
            let mut values = Vec::new();
            let mut offsets = vec![0i64];
            for _ in 0..docs {
                let len = match next() % 4 {
                    0 => (next() % 3) as usize,
                    1 => (next() % 40) as usize,
                    _ => (next() % 700) as usize,
                };
                // narrow ranges make repeats after the cut and large first values
                let spread = [u64::MAX, u64::MAX >> 20, 1 << 40, u64::MAX >> 1][round % 4];
                let mut run: Vec<u64> = (0..len).map(|_| next() % spread).collect();
                if round % 3 == 0 && len > 2 {
                    run[0] = u64::MAX - next() % 1000; // one long gap: unary codes of 32+ bits
                }
                run.sort_unstable();
                values.extend(run);
                offsets.push(values.len() as i64);
            }
            for (margin, width) in [(10, 32), (1, 16), (3, 5), (16, 16), (1, 1), (32, 32)] {
                let (buf, starts) = rice_sets(&values, &offsets, margin, width).unwrap();
                assert_eq!(buf, rice_sets_before(&values, &offsets, margin, width));
                assert_eq!(starts.len(), docs + 1);
                assert_eq!(*starts.last().unwrap() as usize, buf.len());
            }
        }
    }

    #[test]
    fn rice_sets32_equals_rice_sets_of_the_widened_values() {
        let values: Vec<u32> = vec![3, 9, 9, 40, 1 << 31, 7, 8, 0xFFFF_FFFF];
        let offsets = [0i64, 5, 5, 8];
        let wide: Vec<u64> = values.iter().map(|&v| u64::from(v) << 32).collect();
        for (margin, width) in [(1, 16), (10, 32), (16, 16)] {
            assert_eq!(
                rice_sets32(&values, &offsets, margin, width),
                rice_sets(&wide, &offsets, margin, width)
            );
        }
    }

    #[test]
    fn rice_sets_name_the_first_unsorted_document_as_the_check_does() {
        let values: Vec<u32> = vec![1, 2, 3, 9, 8, 5, 4, 2, 1];
        let offsets = [0i64, 3, 5, 7, 9];
        let check = check_sorted_runs(&values, &offsets).unwrap_err();
        assert!(check.contains("document 1 "), "{check}");
        assert_eq!(rice_sets32(&values, &offsets, 10, 32), Err(check.clone()));
        let wide: Vec<u64> = values.iter().map(|&v| u64::from(v) << 32).collect();
        assert_eq!(rice_sets(&wide, &offsets, 10, 32), Err(check));
    }

    #[test]
    fn intersections_count_common_values() {
        let values = [1u64, 2, 3, 2, 3, 4];
        assert_eq!(
            intersections(&values, &[0, 3, 6], &[0, 0], &[1, 0]),
            vec![2, 3]
        );
    }

    #[test]
    fn unique_runs_sort_and_dedup() {
        let (v, o) = unique_per_doc(&[3, 1, 3, 2, 2], &[0, 3, 5]);
        assert_eq!((v, o), (vec![1, 3, 2], vec![0, 2, 3]));
        let (v, o) = unique_per_doc32(&[3 << 32, 1 << 32, (3 << 32) + 7, 2 << 32], &[0, 3, 4]);
        assert_eq!((v, o), (vec![1, 3, 2], vec![0, 2, 3]));
    }

    #[test]
    fn components_root_at_the_smallest_member() {
        assert_eq!(components(5, &[4, 2], &[2, 0]), vec![0, 1, 0, 3, 0]);
        assert_eq!(components(4, &[3], &[1]), vec![0, 1, 2, 1]);
    }

    #[test]
    fn bucket_pairs_window() {
        let (a, b, over, big) = bucket_pairs(&[7, 7, 7, 9], &[3, 1, 2, 4], &[], 0, 2, -1);
        assert_eq!((a, b, over, big), (vec![1, 2], vec![2, 3], 1, 3));
    }

    #[test]
    fn unique_pairs_sorted() {
        assert_eq!(
            unique_pairs(&[2, 1, 2], &[5, 9, 5], 3),
            (vec![1, 2], vec![9, 5])
        );
    }

    #[test]
    fn center_stars() {
        let (p, nb, e) = center_adjacency(4, &[0, 1, 2], &[1, 2, 3]);
        let (root, to_root) = center_pass(&p, &nb, &e, &[0.9, 0.8, 0.95]);
        assert_eq!(root, vec![0, 0, 2, 2]);
        assert_eq!(to_root, vec![1.0, 0.9, 1.0, 0.95]);
    }

    #[test]
    fn rice_round_trip() {
        // lows 1 1, highs 2 -> 001, 0 -> 1: 11001100
        assert_eq!(rice_encode(&[5, 1], &[2], &[1], &[1]), vec![204]);
        assert_eq!(
            rice_decode(&[204], &[0, 1], &[2], &[1]),
            (vec![5, 1], vec![1])
        );
        let (buf, starts) = rice_sets(&[1 << 63], &[0, 1], 10, 32).unwrap();
        assert_eq!(buf, b"S\x02\n\x08\x01\x00 ".to_vec());
        assert_eq!(starts, vec![0, 7]);
    }
}
