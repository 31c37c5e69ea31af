//! A store segment's lookup entries packed into bit-packed, checksummed blocks
//! (`neardup.store._segments`): the sort, the packing and the block checksums in one pass.

pub mod core;
pub mod py;
