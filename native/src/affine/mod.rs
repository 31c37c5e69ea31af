//! datasketch 2.0.0's `affine32` permutations in uint32 lanes:
//! `a * fmix32(h) + b mod 2**32`, min per slot.

pub mod core;
pub mod py;
