//! Mean pooling of static token vectors over documents given as one flat id array and
//! offsets, and the expansion of texts given as cached words into token ids.

pub mod core;
pub mod py;
