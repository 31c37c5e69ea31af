//! A set of document ids kept as their 64-bit XXH3 hashes (`neardup._kernels.idset`): the
//! duplicate-id check of a run, without a Python set of every id string.

pub mod core;
pub mod py;
