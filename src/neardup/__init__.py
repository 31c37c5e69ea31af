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
from neardup.tokenize import GraphemeTokenizer, NgramTokenizer, ShingleTokenizer, WordTokenizer
from neardup.types import CanonicalizerLike, Tokenizer

__version__ = "0.1.0.dev0"

__all__ = [
    "CanonicalConfig",
    "Canonicalizer",
    "CanonicalizerLike",
    "ConfigError",
    "DecodeError",
    "EmptyInputError",
    "FormatError",
    "GraphemeTokenizer",
    "IncompatibleSketchError",
    "InputError",
    "InputTooLargeError",
    "MissingExtraError",
    "NeardupError",
    "NgramTokenizer",
    "SchemaVersionError",
    "ShingleTokenizer",
    "StoreError",
    "Tokenizer",
    "WordTokenizer",
    "__version__",
]
