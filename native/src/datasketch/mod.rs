//! datasketch's default MinHash (SHA-1 token hashes, its permutation schemes) over Python
//! lists of `bytes` and `str`, read in place: `neardup._kernels.datasketch`.

pub mod core;
pub mod py;
