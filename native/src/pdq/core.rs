//! Meta's PDQ hashing steps (`pdqhashing.cpp` and `downscaling.cpp` of
//! facebook/ThreatExchange, as vendored by the `pdqhash` 0.2.8 bindings), float32 for float32.
//!
//! Every float operation of the C++ is replayed in the same order on `f32` values (Rust
//! never fuses a multiply and an add), so the outputs are the same bits as the numpy twin's.
//! The order of work differs where it changes no value: the column pass walks rows (a running
//! sum per column, so memory is read in order), and the second pass computes only what
//! decimation keeps (every running sum still runs the whole row or column).

use std::sync::OnceLock;

/// Images with fewer rows or columns than this hash to all zeros with quality 0.
pub const MIN_HASHABLE_DIM: usize = 5;

/// The 16x64 DCT-II matrix of `pdqhashing.cpp` (rows 1..16), row-major, computed as the C++
/// does: `float(float(sqrt(2/64)) * cos(pi/2/64 * (i+1) * (2j+1)))` with the C library's cos.
pub fn dct_matrix() -> &'static [f32; 16 * 64] {
    static DCT: OnceLock<[f32; 16 * 64]> = OnceLock::new();
    DCT.get_or_init(|| {
        let scale = (2.0f64 / 64.0).sqrt() as f32 as f64;
        let mut out = [0f32; 16 * 64];
        for i in 0..16 {
            for j in 0..64 {
                let x = std::f64::consts::PI / 2.0 / 64.0 * (i + 1) as f64 * (2 * j + 1) as f64;
                out[i * 64 + j] = (scale * x.cos()) as f32;
            }
        }
        out
    })
}

/// `computeJaroszFilterWindowSize`: the per-pass box width, `ceil(old / (2 new))`, as
/// Python's `(old + 2 * new - 1) // (2 * new)` (floor division; `new != 0`).
pub fn jarosz_window(old: i64, new: i64) -> i64 {
    let (a, b) = (old + 2 * new - 1, 2 * new);
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// `decimateFloat`'s source index of each of `new` output samples (centres, not corners).
pub fn decimation_indices(old: i64, new: i64) -> Vec<i64> {
    (0..new.max(0))
        .map(|i| (((i as f64 + 0.5) * old as f64) / new as f64) as i64)
        .collect()
}

/// The luma of one pixel as the `pdqhash` bindings compute it: `float32(R * 0.299 + G *
/// 0.587 + B * 0.114)` evaluated in float64.
#[inline]
pub fn luma(r: u8, g: u8, b: u8) -> f32 {
    (r as f64 * 0.299 + g as f64 * 0.587 + b as f64 * 0.114) as f32
}

/// The four phases of `box1DFloat` over `n` samples with a window of `window`.
struct Phases {
    p1: usize,
    p2: usize,
    p3: usize,
    p4: usize,
}

impl Phases {
    fn new(n: usize, window: usize) -> Self {
        let half = (window + 2) / 2;
        Phases {
            p1: half - 1,
            p2: window - half + 1,
            p3: n - window,
            p4: half - 1,
        }
    }
}

/// `box1DFloat` along every row of `src` (`rows x cols`, row-major), storing only the
/// columns `keep` (sorted, maybe repeated) into `dst` (`rows x keep.len()`).
fn rows_pass(src: &[f32], cols: usize, dst: &mut [f32], window: usize, keep: &[usize]) {
    let ph = Phases::new(cols, window);
    let m = keep.len();
    for (x, out) in src.chunks_exact(cols).zip(dst.chunks_exact_mut(m)) {
        let mut s = 0f32;
        let mut size = 0usize;
        let (mut ri, mut li, mut oi, mut k) = (0usize, 0usize, 0usize, 0usize);
        for _ in 0..ph.p1 {
            s += x[ri];
            size += 1;
            ri += 1;
        }
        for _ in 0..ph.p2 {
            s += x[ri];
            size += 1;
            while k < m && keep[k] == oi {
                out[k] = s / size as f32;
                k += 1;
            }
            ri += 1;
            oi += 1;
        }
        for _ in 0..ph.p3 {
            s += x[ri];
            s -= x[li];
            while k < m && keep[k] == oi {
                out[k] = s / size as f32;
                k += 1;
            }
            li += 1;
            ri += 1;
            oi += 1;
        }
        for _ in 0..ph.p4 {
            s -= x[li];
            size -= 1;
            while k < m && keep[k] == oi {
                out[k] = s / size as f32;
                k += 1;
            }
            li += 1;
            oi += 1;
        }
    }
}

/// `box1DFloat` down every column of `src` (`rows x cols`, row-major) into `dst`, walking
/// rows in order with one running sum per column.
fn cols_pass(src: &[f32], cols: usize, dst: &mut [f32], window: usize) {
    let rows = src.len() / cols;
    let ph = Phases::new(rows, window);
    let mut s = vec![0f32; cols];
    let row = |i: usize| &src[i * cols..(i + 1) * cols];
    let (mut ri, mut li, mut oi) = (0usize, 0usize, 0usize);
    let mut size = 0usize;
    for _ in 0..ph.p1 {
        for (sc, &x) in s.iter_mut().zip(row(ri)) {
            *sc += x;
        }
        size += 1;
        ri += 1;
    }
    for _ in 0..ph.p2 {
        size += 1;
        let d = size as f32;
        let out = &mut dst[oi * cols..(oi + 1) * cols];
        for ((sc, &x), o) in s.iter_mut().zip(row(ri)).zip(out) {
            *sc += x;
            *o = *sc / d;
        }
        ri += 1;
        oi += 1;
    }
    let d = size as f32;
    for _ in 0..ph.p3 {
        let out = &mut dst[oi * cols..(oi + 1) * cols];
        for (((sc, &x), &y), o) in s.iter_mut().zip(row(ri)).zip(row(li)).zip(out) {
            *sc = (*sc + x) - y;
            *o = *sc / d;
        }
        li += 1;
        ri += 1;
        oi += 1;
    }
    for _ in 0..ph.p4 {
        size -= 1;
        let d = size as f32;
        let out = &mut dst[oi * cols..(oi + 1) * cols];
        for ((sc, &y), o) in s.iter_mut().zip(row(li)).zip(out) {
            *sc -= y;
            *o = *sc / d;
        }
        li += 1;
        oi += 1;
    }
}

/// `pdqImageDomainQualityMetric` of the 64x64 image: quantized gradient sum / 90, at most 100.
fn quality(a: &[f32]) -> i64 {
    let q = |x: f32, y: f32| (((x - y) * 100f32 / 255f32) as i64).abs();
    let mut total = 0i64;
    for i in 0..63 {
        for j in 0..64 {
            total += q(a[i * 64 + j], a[(i + 1) * 64 + j]);
        }
    }
    for i in 0..64 {
        for j in 0..63 {
            total += q(a[i * 64 + j], a[i * 64 + j + 1]);
        }
    }
    (total / 90).min(100)
}

/// `dct64To16`: `D A D^T` with float32 sums accumulated in the C++ order.
fn dct16(a: &[f32]) -> Vec<f32> {
    let d = dct_matrix();
    let mut t = vec![0f32; 16 * 64];
    for i in 0..16 {
        let ti = &mut t[i * 64..(i + 1) * 64];
        for k in 0..64 {
            let dk = d[i * 64 + k];
            for (tij, &akj) in ti.iter_mut().zip(&a[k * 64..(k + 1) * 64]) {
                *tij += dk * akj;
            }
        }
    }
    let mut b = vec![0f32; 16 * 16];
    for i in 0..16 {
        for j in 0..16 {
            let mut s = 0f32;
            for k in 0..64 {
                s += t[i * 64 + k] * d[j * 64 + k];
            }
            b[i * 16 + j] = s;
        }
    }
    b
}

/// `pdqFloat256FromFloatLuma` of one luma image (`rows x cols`, row-major): the 16x16 DCT
/// (row-major) and the quality. Images with fewer than [`MIN_HASHABLE_DIM`] rows or columns
/// give zeros and quality 0.
pub fn pdq_float(luma: &[f32], rows: usize, cols: usize) -> (Vec<f32>, i64) {
    if rows < MIN_HASHABLE_DIM || cols < MIN_HASHABLE_DIM {
        return (vec![0f32; 256], 0);
    }
    let a = if rows == 64 && cols == 64 {
        luma.to_vec()
    } else {
        let wr = jarosz_window(cols as i64, 64) as usize; // the window along each row
        let wc = jarosz_window(rows as i64, 64) as usize; // the window down each column
        let ri = decimation_indices(rows as i64, 64);
        let ci: Vec<usize> = decimation_indices(cols as i64, 64)
            .into_iter()
            .map(|c| c as usize)
            .collect();
        let every: Vec<usize> = (0..cols).collect();
        // pass 1: rows then columns, in full
        let mut buf2 = vec![0f32; rows * cols];
        rows_pass(luma, cols, &mut buf2, wr, &every);
        let mut buf1 = vec![0f32; rows * cols];
        cols_pass(&buf2, cols, &mut buf1, wc);
        drop(buf2);
        // pass 2: rows (kept columns only), then the kept columns down every row
        let mut narrow = vec![0f32; rows * 64];
        rows_pass(&buf1, cols, &mut narrow, wr, &ci);
        drop(buf1);
        let mut down = vec![0f32; rows * 64];
        cols_pass(&narrow, 64, &mut down, wc);
        let mut a = vec![0f32; 64 * 64];
        for (i, &r) in ri.iter().enumerate() {
            let r = r as usize;
            a[i * 64..(i + 1) * 64].copy_from_slice(&down[r * 64..(r + 1) * 64]);
        }
        a
    };
    (dct16(&a), quality(&a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry() {
        assert_eq!(jarosz_window(1000, 64), 8);
        assert_eq!(jarosz_window(64, 64), 1);
        assert_eq!(jarosz_window(7, -2), -1); // (7 - 4 - 1) // -4 in Python
        let idx = decimation_indices(128, 64);
        assert_eq!((idx[0], idx[63]), (1, 127));
    }

    #[test]
    fn half_black_half_white() {
        // the doctest image of neardup.image.pdq: 48x64, right half white; quality 71
        let mut luma = vec![0f32; 48 * 64];
        for row in luma.chunks_exact_mut(64) {
            row[32..].fill(luma_white());
        }
        let (dct, q) = pdq_float(&luma, 48, 64);
        assert_eq!(q, 71);
        assert!(dct.iter().any(|&x| x != 0.0));
        assert_eq!(pdq_float(&luma[..4 * 64], 4, 64), (vec![0f32; 256], 0));
    }

    fn luma_white() -> f32 {
        luma(255, 255, 255)
    }
}
