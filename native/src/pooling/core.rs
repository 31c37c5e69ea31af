//! Mean pooling over documents as CSR (one flat id array and offsets), and the expansion of
//! texts given as sequences of cached words into token ids.

use rayon::prelude::*;

/// For document `d`, the mean of the `dim`-wide rows `table[ids[k]]` over `offsets[d] <= k <
/// offsets[d + 1]` (ids equal to `skip` left out; a negative id counts from the end, as
/// numpy's indexing does), scaled to unit length when `normalize`; a document with no id left
/// gives a zero row. Sums and the squared norm are float64 in token order, one document per
/// task; the result is cast to float32 once. Ids must lie in `-vocab..vocab`.
pub fn mean_pool(
    table: &[f32],
    dim: usize,
    ids: &[i64],
    offsets: &[i64],
    skip: i64,
    normalize: bool,
) -> Vec<f32> {
    let n = offsets.len().saturating_sub(1);
    let mut out = vec![0f32; n * dim];
    if dim == 0 {
        return out;
    }
    let p = Pool {
        table,
        dim,
        vocab: (table.len() / dim) as i64,
        skip,
        normalize,
    };
    let wide = wide_vectors();
    out.par_chunks_mut(dim).enumerate().for_each_init(
        || vec![0f64; dim],
        |acc, (d, row)| {
            let doc = &ids[offsets[d] as usize..offsets[d + 1] as usize];
            if wide {
                // SAFETY: the processor has AVX2 (checked by wide_vectors)
                unsafe { p.doc_avx2(doc, acc, row) }
            } else {
                p.doc(doc, acc, row)
            }
        },
    );
    out
}

/// Whether the processor runs [`Pool::doc_avx2`].
fn wide_vectors() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One document's pooling: the table and the options.
struct Pool<'a> {
    table: &'a [f32],
    dim: usize,
    vocab: i64,
    skip: i64,
    normalize: bool,
}

impl Pool<'_> {
    /// The mean of the document's rows into `row` (`acc`: a `dim`-wide scratch row).
    #[inline(always)]
    fn doc(&self, doc: &[i64], acc: &mut [f64], row: &mut [f32]) {
        let dim = self.dim;
        acc.fill(0.0);
        let mut count = 0usize;
        for &t in doc {
            if t == self.skip {
                continue;
            }
            count += 1;
            let t = if t < 0 { t + self.vocab } else { t } as usize;
            for (a, &x) in acc.iter_mut().zip(&self.table[t * dim..(t + 1) * dim]) {
                *a += x as f64;
            }
        }
        if count == 0 {
            return;
        }
        for a in acc.iter_mut() {
            *a /= count as f64;
        }
        if self.normalize {
            let mut sq = 0f64;
            for &a in acc.iter() {
                sq += a * a;
            }
            if sq > 0.0 {
                let norm = sq.sqrt();
                for a in acc.iter_mut() {
                    *a /= norm;
                }
            }
        }
        for (o, &a) in row.iter_mut().zip(acc.iter()) {
            *o = a as f32;
        }
    }

    /// [`Pool::doc`] compiled for AVX2 (4 doubles a vector; the same operations in the same
    /// order, never fused, so the same bits): the wheel's baseline is SSE2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn doc_avx2(&self, doc: &[i64], acc: &mut [f64], row: &mut [f32]) {
        self.doc(doc, acc, row)
    }

    #[cfg(not(target_arch = "x86_64"))]
    unsafe fn doc_avx2(&self, doc: &[i64], acc: &mut [f64], row: &mut [f32]) {
        self.doc(doc, acc, row)
    }
}

/// Token ids of texts given as sequences of cached words: text `t` is the words
/// `word_index[text_words[t]..text_words[t + 1]]`, word `w` the tokens
/// `word_ids[word_offsets[w]..word_offsets[w + 1]]`. Each text's words' tokens concatenated,
/// at most `max_length` per text (negative: all). Returns `(ids, offsets)`.
pub fn expand_words(
    word_index: &[i64],
    text_words: &[i64],
    word_ids: &[i64],
    word_offsets: &[i64],
    max_length: i64,
) -> (Vec<i64>, Vec<i64>) {
    let n = text_words.len().saturating_sub(1);
    let words = |t: usize| &word_index[text_words[t] as usize..text_words[t + 1] as usize];
    let tokens = |w: i64| {
        &word_ids[word_offsets[w as usize] as usize..word_offsets[w as usize + 1] as usize]
    };
    let mut offsets = vec![0i64; n + 1];
    for t in 0..n {
        let mut count: i64 = words(t).iter().map(|&w| tokens(w).len() as i64).sum();
        if max_length >= 0 && count > max_length {
            count = max_length;
        }
        offsets[t + 1] = offsets[t] + count;
    }
    let mut ids = Vec::with_capacity(offsets[n] as usize);
    for t in 0..n {
        let end = offsets[t + 1] as usize;
        for &w in words(t) {
            let room = end - ids.len();
            if room == 0 {
                break;
            }
            let tok = tokens(w);
            ids.extend_from_slice(&tok[..tok.len().min(room)]);
        }
    }
    (ids, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_means_and_expanded_words() {
        let t = [1.0f32, 0.0, 0.0, 1.0, 3.0, 3.0];
        let out = mean_pool(&t, 2, &[0, 1, 2, 0], &[0, 2, 2, 4], 2, true);
        let h = 0.707_106_77f32;
        assert_eq!(out, vec![h, h, 0.0, 0.0, 1.0, 0.0]);
        let (ids, off) = expand_words(&[1, 0, 1], &[0, 2, 3], &[7, 8, 9], &[0, 1, 3], 2);
        assert_eq!((ids, off), (vec![8, 9, 8, 9], vec![0, 2, 4]));
    }
}
