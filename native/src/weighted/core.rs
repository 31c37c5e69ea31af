//! ICWS samples of CSR rows. For sample `i` and a feature `j` of weight `v_j` (`lv_j` its log
//! in float32): `t = floor(lv_j / r_ij + beta_ij)`; the dense form ranks
//! `ln_a = (ln_c_ij - (t - beta_ij) * r_ij) - r_ij`, the sparse form
//! `ln_a = ln_c_ij - ((t - beta_ij) + 1) * r_ij`; the sample is `(k, t_k)` of the first
//! feature with the smallest `ln_a` (a NaN counts as smallest, as numpy's `argmin`). Each
//! operation rounds to float32 in this order (Rust does not contract them into FMAs).

use crate::simd::multiversion;

/// The `(sample_size, dim)` parameter matrices, row-major.
pub struct Params<'a> {
    pub rs: &'a [f32],
    pub ln_cs: &'a [f32],
    pub betas: &'a [f32],
    pub size: usize,
    pub dim: usize,
}

/// numpy's float32 -> int64 cast on x86: NaN and values out of range give `i64::MIN`.
#[inline]
fn to_i64(t: f32) -> i64 {
    if t.is_nan() || !(-9.223_372e18..9.223_372e18).contains(&t) {
        i64::MIN
    } else {
        t as i64
    }
}

/// `(n_docs * size * 2)` samples `(k, t)` of the CSR rows `indptr` over the features
/// (`cidx` as given, `cols` the same columns resolved into `[0, dim)`); empty rows give -1.
pub fn icws(
    cidx: &[i64],
    cols: &[usize],
    logv: &[f32],
    indptr: &[i64],
    p: &Params<'_>,
    sparse_form: bool,
) -> Vec<i64> {
    icws_mv(cidx, cols, logv, indptr, p, sparse_form)
}

// (the baseline target has no rounding instruction: `floor` would be a libm call)
multiversion! {
    fn icws_mv(
        cidx: &[i64], cols: &[usize], logv: &[f32], indptr: &[i64], p: &Params<'_>,
        sparse_form: bool
    ) -> Vec<i64> = icws_body;
}

#[inline(always)]
fn icws_body(
    cidx: &[i64],
    cols: &[usize],
    logv: &[f32],
    indptr: &[i64],
    p: &Params<'_>,
    sparse_form: bool,
) -> Vec<i64> {
    let n_docs = indptr.len() - 1;
    let mut out = vec![-1i64; n_docs * p.size * 2];
    for (d, w) in indptr.windows(2).enumerate() {
        let (lo, hi) = (w[0] as usize, w[1] as usize);
        if lo == hi {
            continue;
        }
        for i in 0..p.size {
            let row = i * p.dim;
            let mut best = f32::INFINITY;
            let mut best_j = lo;
            let mut best_t = 0f32;
            for j in lo..hi {
                let c = row + cols[j];
                let (r, b) = (p.rs[c], p.betas[c]);
                let t = (logv[j] / r + b).floor();
                let ln_a = if sparse_form {
                    p.ln_cs[c] - ((t - b) + 1.0) * r
                } else {
                    (p.ln_cs[c] - (t - b) * r) - r
                };
                if ln_a.is_nan() {
                    best_j = j;
                    best_t = t;
                    break;
                }
                if j == lo || ln_a < best {
                    best = ln_a;
                    best_j = j;
                    best_t = t;
                }
            }
            let at = (d * p.size + i) * 2;
            out[at] = cidx[best_j];
            out[at + 1] = to_i64(best_t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_smallest_feature_wins() {
        let p = Params {
            rs: &[1.0, 1.0],
            ln_cs: &[0.0, 0.0],
            betas: &[0.5, 0.5],
            size: 1,
            dim: 2,
        };
        // equal weights: equal ln_a, the first feature is the sample
        let out = icws(&[1, 0], &[1, 0], &[0.0, 0.0], &[0, 2, 2], &p, true);
        assert_eq!(out, vec![1, 0, -1, -1]);
        assert_eq!(to_i64(f32::NAN), i64::MIN);
        assert_eq!(to_i64(-3.0), -3);
    }
}
