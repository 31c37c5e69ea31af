//! The Unicode tables of the text kernels, embedded: generated from Python 3.11's
//! `unicodedata` (Unicode 14.0) by `scripts/unicode_tables.py`, so that no process builds
//! them or writes a cache, and results equal that Python's bit for bit.

pub mod core;
pub mod py;
