//! `neardup._native`: the compiled kernels of neardup, one submodule per kernel family.
//!
//! Each family keeps its algorithm (`core`: plain Rust over slices, with its own tests) apart
//! from its Python bindings (`py`: argument conversion, errors, the GIL released around the
//! work). `neardup._kernels.engine.kernels(family)` hands out a submodule of this module, or
//! the numpy twin `neardup._kernels.<family>`, which has the same names, bits and
//! errors (tests/kernels/test_parity.py).

use pyo3::prelude::*;

mod arrays;
mod errors;
mod simd;
mod utf8;

pub mod affine;
pub mod buckets;
pub mod canonicalize;
pub mod clusterjson;
pub mod ctph;
pub mod datasketch;
pub mod forest;
pub mod hamming;
pub mod hll;
pub mod idset;
pub mod jsonl;
pub mod lines;
pub mod lsh;
pub mod minhash;
pub mod pdq;
pub mod pooling;
pub mod repeats;
pub mod segments;
pub mod sets;
pub mod sha1;
pub mod simhash;
pub mod text;
pub mod unicode;
pub mod weighted;
pub mod xxh3;

/// The module object: registers every family as a submodule.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    family(m, "affine", affine::py::register)?;
    family(m, "buckets", buckets::py::register)?;
    family(m, "canonicalize", canonicalize::py::register)?;
    family(m, "clusterjson", clusterjson::py::register)?;
    family(m, "ctph", ctph::py::register)?;
    family(m, "datasketch", datasketch::py::register)?;
    family(m, "forest", forest::py::register)?;
    family(m, "hamming", hamming::py::register)?;
    family(m, "hll", hll::py::register)?;
    family(m, "idset", idset::py::register)?;
    family(m, "jsonl", jsonl::py::register)?;
    family(m, "lsh", lsh::py::register)?;
    family(m, "lines", lines::py::register)?;
    family(m, "minhash", minhash::py::register)?;
    family(m, "pdq", pdq::py::register)?;
    family(m, "pooling", pooling::py::register)?;
    family(m, "repeats", repeats::py::register)?;
    family(m, "segments", segments::py::register)?;
    family(m, "sets", sets::py::register)?;
    family(m, "sha1", sha1::py::register)?;
    family(m, "simhash", simhash::py::register)?;
    family(m, "text", text::py::register)?;
    family(m, "unicode", unicode::py::register)?;
    family(m, "weighted", weighted::py::register)?;
    family(m, "xxh3", xxh3::py::register)?;
    Ok(())
}

/// Add the submodule `name`, filled by `fill`, to `parent` (reachable as an attribute).
fn family(
    parent: &Bound<'_, PyModule>,
    name: &str,
    fill: fn(&Bound<'_, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let module = PyModule::new(parent.py(), name)?;
    fill(&module)?;
    parent.add_submodule(&module)
}
