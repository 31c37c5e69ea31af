//! MinHash: feature hashes of k-shingles, slot rows of every preset (double hashing,
//! datasketch's permutations, one-permutation hashing), LSH band keys, slot-agreement
//! estimates, and the fused tokenize-hash-shingle-sketch pass of the default path.

pub mod ascii;
pub mod core;
pub mod py;
pub mod slots;
pub mod words;
