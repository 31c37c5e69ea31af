//! Exact repeated substrings (Lee et al.'s ExactSubstr marks): from a suffix array, or from
//! winnowing anchors and a table of windows, with the winnowing prefilter's kernels.

pub mod core;
pub mod py;
