//! The band-key table of the LSH indexes (`neardup._kernels.lsh`): the kernels over numpy
//! arrays, and `BandIndex`, the per-call state of `LSHIndex` and of the datasketch drop-in.

pub mod class;
pub mod core;
mod input;
pub mod py;
pub mod store;
