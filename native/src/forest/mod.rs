//! LSH Forest prefix search (Bawa, Condie and Ganesan 2005) over sorted prefix trees.

pub mod core;
pub mod py;
