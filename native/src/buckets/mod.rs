//! The bucket walk with exact verification (`neardup._kernels.buckets`): set profiles and the
//! walk over the buckets of band keys, with union-find.

pub mod core;
pub mod py;
