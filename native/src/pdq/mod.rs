//! Meta's PDQ image hash steps on float32 luma: the Jarosz box-filter downsample to 64x64,
//! the quality metric and the 16x16 DCT, the same float32 operations in the C++ order.

pub mod core;
pub mod py;
