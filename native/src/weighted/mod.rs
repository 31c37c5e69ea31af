//! Improved consistent weighted sampling (Ioffe 2010), float32 throughout, as datasketch's.

pub mod core;
pub mod py;
