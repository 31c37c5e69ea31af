//! `neardup._native`: the compiled kernels of neardup, one submodule per kernel family.
//!
//! Each family keeps its algorithm (`core`: plain Rust over slices, with its own tests) apart
//! from its Python bindings (`py`: argument conversion, errors, the GIL released around the
//! work). `neardup._kernels.engine.kernels(family)` hands out a submodule of this module, or
//! the numpy twin `neardup._kernels.<family>.reference`, which has the same names, bits and
//! errors (tests/kernels/test_parity.py).

use pyo3::prelude::*;

mod arrays;
pub mod datasketch;
mod errors;
pub mod lsh;
pub mod xxh3;

/// The module object: registers every family as a submodule.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    family(m, "datasketch", datasketch::py::register)?;
    family(m, "lsh", lsh::py::register)?;
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
