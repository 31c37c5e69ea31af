//! Set kernels: sorted unique sets (CSR), intersections, union-find components, bucket pairs,
//! CENTER clustering and the Golomb-Rice set codec of `neardup.sketch.setcodec`.

pub mod core;
pub mod py;
