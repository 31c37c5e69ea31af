"""neardup: find near-duplicate text and images.

Fingerprints (SimHash, MinHash, fuzzy checksums, perceptual image hashes, embeddings),
exact and LSH indexes that search them fast, and a dedup pipeline that turns a corpus into
clusters, a clean copy and a report. Extras are imported by module path
(``neardup.image``, ``neardup.fuzzy``, ``neardup.markup``, ...), never from here.
"""

from neardup.canonicalize import Canonicalizer
from neardup.config import CanonicalConfig
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
    SchemaVersionError,
    StoreError,
)
from neardup.index.hamming import HammingIndex
from neardup.index.lsh import LSHIndex, LSHPlan, plan_lsh
from neardup.io import Document, read_inputs
from neardup.pipeline import dedup
from neardup.report import Cluster, DedupResult, Pair
from neardup.sketch.minhash import MinHash, MinHasher
from neardup.sketch.simhash import SimHash, SimHasher
from neardup.tokenize import GraphemeTokenizer, NgramTokenizer, ShingleTokenizer, WordTokenizer
from neardup.types import CanonicalizerLike, Tokenizer

__version__ = "0.1.0.dev0"

__all__ = [
    "CanonicalConfig",
    "Canonicalizer",
    "CanonicalizerLike",
    "Cluster",
    "ConfigError",
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
    "plan_lsh",
    "read_inputs",
]
