//! The kernels of `neardup lines`: line spans, kept text, JSON strings and the table of
//! unit document frequencies, over packed documents (one UTF-8 buffer and offsets).

pub mod core;
pub mod py;
