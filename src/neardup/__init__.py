"""neardup: find near-duplicate text and images.

Fingerprints (SimHash, MinHash, fuzzy checksums, perceptual image hashes, embeddings),
exact and LSH indexes that search them fast, and a dedup pipeline that turns a corpus into
clusters, a clean copy and a report. Extras are imported by module path
(``neardup.image``, ``neardup.fuzzy``, ``neardup.markup``, ...), never from here.

The names below are imported on first use (PEP 562 ``__getattr__``), so that ``import
neardup`` costs almost nothing and the command line imports only what a command needs;
``from neardup import X`` and ``neardup.X`` work as with eager imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neardup.canonicalize import Canonicalizer
    from neardup.config import CanonicalConfig
    from neardup.corpus.dedup import CorpusResult, dedup_corpus
    from neardup.corpus.reading import Corpus, read_corpus
    from neardup.errors import (
        ConfigError,
        DecodeError,
        EmptyInputError,
        FormatError,
        IncompatibleSketchError,
        InputError,
        InputTooLargeError,
        MissingExtraError,
        NeardupError,
        OutputError,
        SchemaVersionError,
        StoreError,
    )
    from neardup.index.hamming import HammingIndex
    from neardup.index.lsh import LSHIndex, LSHPlan, plan_lsh
    from neardup.io import Document, read_inputs
    from neardup.pipeline import dedup
    from neardup.report import Cluster, DedupResult, Pair
    from neardup.serve.client import Client
    from neardup.sketch.minhash import MinHash, MinHasher
    from neardup.sketch.simhash import SimHash, SimHasher
    from neardup.tokenize import GraphemeTokenizer, NgramTokenizer, ShingleTokenizer, WordTokenizer
    from neardup.types import CanonicalizerLike, Tokenizer

__version__ = "0.1.0.dev0"

#: Each public name and the module that defines it.
_LAZY = {
    "CanonicalConfig": "neardup.config",
    "Canonicalizer": "neardup.canonicalize",
    "CanonicalizerLike": "neardup.types",
    "Client": "neardup.serve.client",
    "Cluster": "neardup.report",
    "ConfigError": "neardup.errors",
    "Corpus": "neardup.corpus.reading",
    "CorpusResult": "neardup.corpus.dedup",
    "DecodeError": "neardup.errors",
    "DedupResult": "neardup.report",
    "Document": "neardup.io",
    "EmptyInputError": "neardup.errors",
    "FormatError": "neardup.errors",
    "GraphemeTokenizer": "neardup.tokenize",
    "HammingIndex": "neardup.index.hamming",
    "IncompatibleSketchError": "neardup.errors",
    "InputError": "neardup.errors",
    "InputTooLargeError": "neardup.errors",
    "LSHIndex": "neardup.index.lsh",
    "LSHPlan": "neardup.index.lsh",
    "MinHash": "neardup.sketch.minhash",
    "MinHasher": "neardup.sketch.minhash",
    "MissingExtraError": "neardup.errors",
    "NeardupError": "neardup.errors",
    "NgramTokenizer": "neardup.tokenize",
    "OutputError": "neardup.errors",
    "Pair": "neardup.report",
    "SchemaVersionError": "neardup.errors",
    "ShingleTokenizer": "neardup.tokenize",
    "SimHash": "neardup.sketch.simhash",
    "SimHasher": "neardup.sketch.simhash",
    "StoreError": "neardup.errors",
    "Tokenizer": "neardup.types",
    "WordTokenizer": "neardup.tokenize",
    "dedup": "neardup.pipeline",
    "dedup_corpus": "neardup.corpus.dedup",
    "plan_lsh": "neardup.index.lsh",
    "read_corpus": "neardup.corpus.reading",
    "read_inputs": "neardup.io",
}


__all__ = [
    "CanonicalConfig",
    "Canonicalizer",
    "CanonicalizerLike",
    "Client",
    "Cluster",
    "ConfigError",
    "Corpus",
    "CorpusResult",
    "DecodeError",
    "DedupResult",
    "Document",
    "EmptyInputError",
    "FormatError",
    "GraphemeTokenizer",
    "HammingIndex",
    "IncompatibleSketchError",
    "InputError",
    "InputTooLargeError",
    "LSHIndex",
    "LSHPlan",
    "MinHash",
    "MinHasher",
    "MissingExtraError",
    "NeardupError",
    "NgramTokenizer",
    "OutputError",
    "Pair",
    "SchemaVersionError",
    "ShingleTokenizer",
    "SimHash",
    "SimHasher",
    "StoreError",
    "Tokenizer",
    "WordTokenizer",
    "__version__",
    "dedup",
    "dedup_corpus",
    "plan_lsh",
    "read_corpus",
    "read_inputs",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'neardup' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
