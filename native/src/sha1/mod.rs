//! SHA-1 of byte ranges (datasketch's `sha1_hash32` / `sha1_hash64`), by RustCrypto's `sha1`
//! (SHA-NI when the CPU has it, chosen at run time).

pub mod core;
pub mod py;
