"""Fuzzy checksums: ssdeep-compatible CTPH, TLSH (py-tlsh), FuzzySum, and indexes over them.

* :func:`ctph` / :func:`ctph_compare`: context-triggered piecewise hashing, digests and scores
  identical to ssdeep (libfuzzy); a native batch kernel, :func:`ctph_many`, hashes many
  inputs from one packed buffer.
* :func:`tlsh` / :func:`tlsh_distance`: TLSH through py-tlsh (extra ``fuzzy``); distances are
  computed in numpy, bit-identical to ``tlsh.diff``.
* :class:`CTPHIndex` / :class:`TLSHIndex`: candidate search and all-pairs over many digests.
* :func:`legacy_fuzzysum` (Java-exact, see :mod:`neardup.compat.fuzzysum`) and the repaired
  :func:`fuzzysum`, both compared with :func:`fuzzysum_similar`.

Importing this package loads no py-tlsh and compiles nothing; the CTPH kernel
compiles (or loads from its cache) on first use. See ``docs/fuzzy.md``.
"""

from __future__ import annotations

from neardup._kernels.engine import backend_name
from neardup.fuzzy.ctph import (
    CTPHDigest,
    CTPHParams,
    ctph,
    ctph_compare,
    ctph_many,
    parse_ctph,
)
from neardup.fuzzy.fuzzysum import (
    FuzzySumParams,
    fuzzysum,
    fuzzysum_similar,
    legacy_fuzzysum,
)
from neardup.fuzzy.index import CTPHIndex, TLSHIndex
from neardup.fuzzy.tlsh import (
    TLSHError,
    TLSHParams,
    pack_tlsh,
    tlsh,
    tlsh_distance,
    tlsh_distance_matrix,
    tlsh_distances,
    tlsh_many,
)

__all__ = [
    "CTPHDigest",
    "CTPHIndex",
    "CTPHParams",
    "FuzzySumParams",
    "TLSHError",
    "TLSHIndex",
    "TLSHParams",
    "backend_name",
    "ctph",
    "ctph_compare",
    "ctph_many",
    "fuzzysum",
    "fuzzysum_similar",
    "legacy_fuzzysum",
    "pack_tlsh",
    "parse_ctph",
    "tlsh",
    "tlsh_distance",
    "tlsh_distance_matrix",
    "tlsh_distances",
    "tlsh_many",
]
