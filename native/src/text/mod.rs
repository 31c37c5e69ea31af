//! Word tokenizing over packed UTF-8 documents, and FNV-1a 64 over byte ranges.

pub mod core;
pub mod py;
