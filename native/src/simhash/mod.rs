//! SimHash (Charikar 2002): per-bit weighted votes of feature hashes, and the fused one-pass
//! word-shingle SimHash-64 (tokenize, shingle, hash, vote).

pub mod core;
pub mod py;
#[cfg(target_arch = "x86_64")]
pub mod x86;
