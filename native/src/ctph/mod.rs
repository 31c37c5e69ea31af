//! Context-triggered piecewise hashing, ssdeep-compatible (Kornblum 2006, after Tridgell's
//! spamsum): digests equal libfuzzy's `fuzzy_hash_buf`, scores its `fuzzy_compare` (or
//! ppdeep's variant), and `CTPHTable` finds every digest pair that scores.

pub mod core;
pub mod py;
