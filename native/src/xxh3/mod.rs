//! XXH3-64 and XXH3-128 (seeded) over byte ranges of one buffer, by xxhash-rust.

pub mod core;
pub mod py;
