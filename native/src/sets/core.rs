//! The set kernels over slices. The bindings (`py.rs`) check every index and offset first
//! (`check_*` below), so the loops here index without further tests.

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

/// The deltas of a document's distinct values cut to their top bits (`v >> shift`), the
/// first one absolute.
fn each_delta<V: Copy>(run: &[V], shift: u32, wide: impl Fn(V) -> u64, mut f: impl FnMut(u64)) {
    let mut prev = 0u64;
    let mut first = true;
    for &v in run {
        let c = wide(v) >> shift;
        if first || c != prev {
            f(if first { c } else { c - prev });
            prev = c;
            first = false;
        }
    }
}

/// Format-2 set blobs (`neardup.sketch.setcodec`) of every document, in one buffer, with the
/// blob boundaries. Each document's values are cut to their top `w` bits (`w` from its size),
/// delta-coded, and Rice-coded with the cheapest of three parameters around log2 of the
/// mean delta.
pub fn rice_sets(
    values: &[u64],
    offsets: &[i64],
    margin: i64,
    max_width: i64,
) -> (Vec<u8>, Vec<i64>) {
    rice_sets_by(values, offsets, margin, max_width, |v| v)
}

/// [`rice_sets`] of 32-bit values taken as the top halves of 64-bit ones (`v << 32`): the
/// sketcher's 32-bit sets as they are, with no widened copy (`max_width` is at most 32, so
/// the cut keeps only bits the halves hold).
pub fn rice_sets32(
    values: &[u32],
    offsets: &[i64],
    margin: i64,
    max_width: i64,
) -> (Vec<u8>, Vec<i64>) {
    rice_sets_by(values, offsets, margin, max_width, |v| u64::from(v) << 32)
}

fn rice_sets_by<V: Copy>(
    values: &[V],
    offsets: &[i64],
    margin: i64,
    max_width: i64,
    wide: impl Fn(V) -> u64 + Copy,
) -> (Vec<u8>, Vec<i64>) {
    let n_docs = offsets.len() - 1;
    let mut widths = vec![0i64; n_docs];
    let mut ks = vec![0i64; n_docs];
    let mut counts = vec![0i64; n_docs];
    let mut starts = vec![0i64; n_docs + 1];
    // every document's deltas, made once: the costs and both writing passes read them
    let mut deltas: Vec<u64> = Vec::with_capacity(values.len());
    let mut from = vec![0usize; n_docs + 1];
    for i in 0..n_docs {
        let run = &values[offsets[i] as usize..offsets[i + 1] as usize];
        let w = if run.len() > 1 {
            max_width.min(bit_length(run.len() as u64 - 1) + margin)
        } else {
            margin
        };
        let shift = (64 - w) as u32;
        each_delta(run, shift, wide, |d| deltas.push(d));
        from[i + 1] = deltas.len();
        let ds = &deltas[from[i]..];
        let n = ds.len() as i64;
        let last = ds.iter().fold(0u64, |acc, &d| acc.wrapping_add(d));
        // the deltas sum to the last value (below 2**32)
        let mean = if n > 0 { (last / n as u64) as i64 } else { 0 };
        let base = if mean > 0 {
            bit_length(mean as u64) - 1
        } else {
            0
        };
        let ks3 = [-1i64, 0, 1].map(|step| (base + step).max(0).min(max_width - 1));
        let mut costs = ks3.map(|kk| n * (kk + 1));
        for &d in ds {
            for (c, &kk) in costs.iter_mut().zip(&ks3) {
                *c += (d >> kk as u32) as i64;
            }
        }
        let (mut best_k, mut best) = (ks3[0], costs[0]); // the first of the smallest
        for t in 1..3 {
            if costs[t] < best {
                best_k = ks3[t];
                best = costs[t];
            }
        }
        widths[i] = w;
        ks[i] = best_k;
        counts[i] = n;
        let head = 4 + 1.max((bit_length(n as u64) + 6) / 7);
        starts[i + 1] = starts[i] + head + if n > 0 { (best + 7) / 8 } else { 0 };
    }
    let mut out = vec![0u8; starts[n_docs] as usize];
    for i in 0..n_docs {
        let mut at = starts[i] as usize;
        out[at..at + 4].copy_from_slice(&[0x53, 0x02, widths[i] as u8, ks[i] as u8]);
        at += 4;
        let mut n = counts[i] as u64;
        loop {
            let byte = (n & 0x7F) as u8;
            n >>= 7;
            out[at] = byte | if n > 0 { 0x80 } else { 0 };
            at += 1;
            if n == 0 {
                break;
            }
        }
        let ds = &deltas[from[i]..from[i + 1]];
        let kk = ks[i] as u32;
        let mut bits = Bits::new(&mut out, at);
        for &d in ds {
            bits.push(d, kk);
        }
        for &d in ds {
            bits.unary(d >> kk);
        }
        bits.finish();
    }
    (out, starts)
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
        let (buf, starts) = rice_sets(&[1 << 63], &[0, 1], 10, 32);
        assert_eq!(buf, b"S\x02\n\x08\x01\x00 ".to_vec());
        assert_eq!(starts, vec![0, 7]);
    }
}
