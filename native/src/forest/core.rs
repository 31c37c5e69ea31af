//! The LSH Forest query over slices: each of `l` trees holds every row's `k` slot values,
//! rows sorted lexicographically; a query walks the prefix length from `k` down to 1 and
//! takes, tree by tree, every live row whose prefix equals the query's, until it has `topk`
//! distinct rows (datasketch's `MinHashLSHForest.query`).

/// The trees: `vals[t][pos][c]` (`l * n * k` u32, row-major), `order[t][pos]` the row at
/// sorted position `pos` of tree `t` (`l * n`), `live[row]` nonzero for live rows.
pub struct Forest<'a> {
    pub vals: &'a [u32],
    pub order: &'a [i64],
    pub live: &'a [u8],
    pub trees: usize,
    pub n: usize,
    pub k: usize,
}

/// First position in `lo .. hi` of tree `t` whose column `c` is `>= x` (or `> x`, `right`).
#[inline]
fn bound(
    f: &Forest<'_>,
    t: usize,
    mut lo: usize,
    mut hi: usize,
    c: usize,
    x: u32,
    right: bool,
) -> usize {
    let base = t * f.n * f.k;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let v = f.vals[base + mid * f.k + c];
        if v < x || (right && v == x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Candidates of the `nq` queries `q` (`nq * l * k` u32): flat row ids (each query's in discovery
/// order) and per-query offsets (`nq + 1`). Rows in `order` must be below `live.len()`
/// (checked by the caller).
pub fn query(f: &Forest<'_>, q: &[u32], nq: usize, topk: i64) -> (Vec<i64>, Vec<i64>) {
    let mut stamp = vec![0usize; f.live.len()];
    let mut rows = Vec::new();
    let mut offsets = Vec::with_capacity(nq + 1);
    offsets.push(0i64);
    for qi in 0..nq {
        let mut found = 0i64;
        for r in (1..=f.k).rev() {
            for t in 0..f.trees {
                let (mut lo, mut hi) = (0, f.n);
                for c in 0..r {
                    let x = q[(qi * f.trees + t) * f.k + c];
                    let a = bound(f, t, lo, hi, c, x, false);
                    let b = bound(f, t, a, hi, c, x, true);
                    (lo, hi) = (a, b);
                    if lo >= hi {
                        break;
                    }
                }
                for pos in lo..hi {
                    let row = f.order[t * f.n + pos] as usize;
                    if f.live[row] != 0 && stamp[row] != qi + 1 {
                        stamp[row] = qi + 1;
                        rows.push(row as i64);
                        found += 1;
                    }
                }
                if found >= topk {
                    break;
                }
            }
            if found >= topk {
                break;
            }
        }
        offsets.push(rows.len() as i64);
    }
    (rows, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_shrink_until_enough_rows() {
        // one tree, k = 2, rows sorted: [1,1] row 2, [1,2] row 0, [3,1] row 1
        let vals = [1, 1, 1, 2, 3, 1];
        let order = [2, 0, 1];
        let live = [1, 1, 1];
        let f = Forest {
            vals: &vals,
            order: &order,
            live: &live,
            trees: 1,
            n: 3,
            k: 2,
        };
        let (rows, offsets) = query(&f, &[1, 2, 3, 1], 2, 2);
        assert_eq!(offsets, vec![0, 2, 3]);
        // [1, 2]: row 0, then prefix [1] adds row 2; [3, 1]: row 1, and prefix [3] no other
        assert_eq!(rows, vec![0, 2, 1]);
    }
}
