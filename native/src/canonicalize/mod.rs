//! The canonicalizer: NFKC o full case folding o NFKC over packed documents.

pub mod core;
pub mod py;
