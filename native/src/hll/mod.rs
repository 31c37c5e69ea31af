//! HyperLogLog register updates (Flajolet et al. 2007; Heule, Nunkesser and Hall 2013).

pub mod core;
pub mod py;
