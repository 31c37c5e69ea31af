//! The exact Hamming index (Manku, Jain and Das Sarma 2007): codes cut into blocks, a pair
//! within radius `r < blocks` agrees on some block (pigeonhole). Block sorting, the all-pairs
//! scan, and the per-call table `HammingTable` behind `neardup.index.hamming.HammingIndex`.

pub mod core;
pub mod py;
