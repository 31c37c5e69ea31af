"""A drop-in for datasketch 2.0.0: ``import neardup.compat.datasketch as datasketch``.

Mirrors datasketch's module layout (``minhash``, ``lean_minhash``, ``b_bit_minhash``,
``lsh``, ``lshforest``, ``lshensemble``, ``weighted_minhash``, ``hyperloglog``,
``hashfunc``, ``storage``) with the same classes, signatures, behaviour and ``hashvalues``
(in-memory storage only). The heavy work runs in neardup's kernels; see
``docs/datasketch.md``.
"""

from __future__ import annotations

from neardup.compat.datasketch.b_bit_minhash import bBitMinHash
from neardup.compat.datasketch.hashfunc import sha1_hash32, sha1_hash64
from neardup.compat.datasketch.hyperloglog import HyperLogLog, HyperLogLogPlusPlus
from neardup.compat.datasketch.lean_minhash import LeanMinHash
from neardup.compat.datasketch.lsh import MinHashLSH
from neardup.compat.datasketch.lshensemble import MinHashLSHEnsemble
from neardup.compat.datasketch.lshforest import MinHashLSHForest
from neardup.compat.datasketch.minhash import MinHash
from neardup.compat.datasketch.weighted_minhash import WeightedMinHash, WeightedMinHashGenerator

#: The datasketch release this package mirrors.
__version__ = "2.0.0"

WeightedMinHashLSH = MinHashLSH
WeightedMinHashLSHForest = MinHashLSHForest

__all__ = [
    "HyperLogLog",
    "HyperLogLogPlusPlus",
    "LeanMinHash",
    "MinHash",
    "MinHashLSH",
    "MinHashLSHEnsemble",
    "MinHashLSHForest",
    "WeightedMinHash",
    "WeightedMinHashGenerator",
    "WeightedMinHashLSH",
    "WeightedMinHashLSHForest",
    "bBitMinHash",
    "sha1_hash32",
    "sha1_hash64",
]
