"""The text methods: MinHash with banded LSH and exact verification, and SimHash with an exact
Hamming index (including the Go ``fingerprint`` package's SimHash)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt

from neardup.canonicalize import PRESETS as CANONICAL_PRESETS
from neardup.canonicalize import Canonicalizer
from neardup.config import check_choice
from neardup.errors import ConfigError, FormatError
from neardup.io import Document
from neardup.methods.base import Collector, Method, MethodConfig, PairArrays, texts_of
from neardup.tokenize import ShingleTokenizer, WordTokenizer

__all__ = [
    "MinHashConfig",
    "MinHashMethod",
    "SimHashConfig",
    "SimHashGoConfig",
    "SimHashGoMethod",
    "SimHashMethod",
]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
MinHashPayload = tuple[U64, tuple[U64, I64] | None]


@dataclass(frozen=True, slots=True)
class MinHashConfig(MethodConfig):
    """MinHash over word ``k``-shingles with a recall-tuned banded LSH index.

    Attributes:
        threshold: Jaccard similarity of the shingle sets.
        num_perm: Slots per sketch.
        verify: Verify candidates by the exact Jaccard of the shingle-hash sets (else the
            sketch estimate decides).
        canonicalize: Canonicalizer preset applied before tokenizing.
        k: Words per shingle.
    """

    KIND: ClassVar[str] = "minhash"
    threshold: float = 0.8
    num_perm: int = 128
    verify: bool = True
    canonicalize: str = "txtfp"
    k: int = 5

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        if isinstance(self.num_perm, bool) or not isinstance(self.num_perm, int):
            raise ConfigError(f"num_perm must be an integer, got {self.num_perm!r}")
        if not 1 <= self.num_perm <= 8192:
            raise ConfigError(f"num_perm must be between 1 and 8192, got {self.num_perm}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= 64:
            raise ConfigError(f"k must be an integer between 1 and 64, got {self.k!r}")
        if not isinstance(self.verify, bool):
            raise ConfigError(f"verify must be true or false, got {self.verify!r}")
        check_choice("canonicalize", self.canonicalize, tuple(CANONICAL_PRESETS))
        if self.threshold >= 1.0:
            raise ConfigError(
                "threshold must be below 1.0 for minhash (the LSH banding is planned for it); "
                "for exact copies use 0.99 or --method exact"
            )


class MinHashCollector(Collector):
    """Band keys and (when verifying) the shingle-hash sets of every document of a run."""

    def __init__(self, method: MinHashMethod) -> None:
        self._method = method
        self._keys: list[U64] = []
        self._values: list[U64] = []
        self._sizes: list[I64] = []
        self._sigs: list[npt.NDArray[np.uint32]] = []

    def add(self, positions: I64, payload: MinHashPayload) -> None:
        from neardup.index.lsh import _fold

        sigs, sets = payload
        self._keys.append(self._method.lookup_keys(payload))
        if sets is not None:
            values, offsets = sets
            self._values.append(values)
            self._sizes.append(np.diff(offsets))
        else:
            self._sigs.append(_fold(sigs))

    def _run(self, join: bool, jobs: int) -> tuple[I64, I64, npt.NDArray[np.float64], I64]:
        from neardup._kernels.buckets import bucket_pairs_verified

        m = self._method
        if not self._keys:
            z = np.empty(0, np.int64)
            return z, z, np.empty(0, np.float64), z
        keys = np.concatenate(self._keys)
        if m.config.verify:
            sizes = np.concatenate(self._sizes)
            offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
            np.cumsum(sizes, out=offsets[1:])
            values = np.concatenate(self._values)
            a, b, sim, roots, _ = bucket_pairs_verified(
                keys, threshold=m.threshold, values=values, offsets=offsets, join=join, jobs=jobs
            )
        else:
            a, b, sim, roots, _ = bucket_pairs_verified(
                keys,
                threshold=m.threshold,
                sigs=np.concatenate(self._sigs),
                join=join,
                jobs=jobs,
            )
        return a, b, sim, roots

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        a, b, sim, _ = self._run(join=False, jobs=jobs)
        return PairArrays.of(a, b, sim)

    def components(self, n: int, *, jobs: int = 1) -> I64:
        roots = self._run(join=True, jobs=jobs)[3]
        if len(roots) < n:
            roots = np.concatenate((roots, np.arange(len(roots), n, dtype=np.int64)))
        return roots


class MinHashMethod(Method):
    """MinHash over word 5-shingles with a recall-tuned banded LSH index."""

    name: ClassVar[str] = "minhash"
    config: MinHashConfig

    def __init__(self, config: MinHashConfig) -> None:
        super().__init__(config)
        from neardup.index.lsh import LSHIndex
        from neardup.sketch.minhash import MinHasher

        c = config
        self._tokenizer = ShingleTokenizer(c.k, WordTokenizer())
        self._hasher = MinHasher(
            c.num_perm, tokenizer=self._tokenizer, canonicalizer=Canonicalizer(c.canonicalize)
        )
        # key-only: it plans the banding and computes band keys, and never holds documents
        self._keyer = LSHIndex(threshold=c.threshold, num_perm=c.num_perm)
        self.bands, self.rows = self._keyer.bands, self._keyer.rows

    @property
    def params(self) -> str:
        return self._hasher.config.fingerprint()

    @property
    def index_params(self) -> str:
        return f"lsh-{self.bands}x{self.rows}-verify={int(self.config.verify)}"

    def sketch(self, docs: Sequence[Document]) -> MinHashPayload:
        from neardup._kernels.sets import unique_per_doc
        from neardup.packed import PackedDocs

        if isinstance(docs, PackedDocs) and self.config.verify:
            sigs, feats, offsets = self._hasher.sketch_packed_with_features(docs.buf, docs.offsets)
            return sigs, unique_per_doc(feats, offsets)
        texts = texts_of(docs)
        if not self.config.verify:
            return self._hasher.sketch_many(texts), None
        # one pass gives the sketches and the shingle hashes that exact verification needs
        sigs, feats, offsets = self._hasher.sketch_many_with_features(texts)
        return sigs, unique_per_doc(feats, offsets)

    def collector(self) -> MinHashCollector:
        return MinHashCollector(self)

    def lookup_keys(self, payload: MinHashPayload) -> U64:
        """The LSH band keys of each sketch: ``(n, bands)``."""
        keys: U64 = self._keyer.band_keys(payload[0])
        return keys

    def blobs(self, payload: MinHashPayload) -> list[bytes]:
        """Compact blobs (:mod:`neardup.sketch.setcodec`): with verification, the shingle-hash
        set (cut to ``log2(n) + 10`` bits, delta-coded, Golomb-Rice); without, the sketch row
        folded to 32-bit slots."""
        from neardup.sketch.setcodec import encode_rows, encode_sets

        sigs, sets = payload
        if sets is None:
            return encode_rows(sigs)
        return encode_sets(*sets)

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        from neardup.sketch.setcodec import decode_row, decode_set, row_similarity, set_similarity

        if not self.config.verify:
            n = self._hasher.num_perm
            return row_similarity(decode_row(a, n), decode_row(b, n)), None
        return set_similarity(decode_set(a), decode_set(b)), None

    def blob_similarities(
        self, a: Sequence[bytes], b: Sequence[bytes]
    ) -> list[tuple[float, int | None]]:
        """Each distinct blob is decoded once (a stored document is often many queries'
        candidate)."""
        from neardup.sketch.setcodec import (
            decode_row,
            decode_sets,
            row_similarity,
            set_similarities,
        )

        if not self.config.verify:
            n = self._hasher.num_perm
            rows: dict[bytes, npt.NDArray[np.uint32]] = {}
            for blob in (*a, *b):
                if blob not in rows:
                    rows[blob] = decode_row(blob, n)
            return [(row_similarity(rows[x], rows[y]), None) for x, y in zip(a, b, strict=True)]
        slot: dict[bytes, int] = {}
        for blob in (*a, *b):
            slot.setdefault(blob, len(slot))
        sets = decode_sets(list(slot))  # one kernel call for the batch
        ia = np.array([slot[x] for x in a], dtype=np.int64)
        ib = np.array([slot[y] for y in b], dtype=np.int64)
        return [(sim, None) for sim in set_similarities(sets, ia, ib).tolist()]

    def fingerprint(self, doc: Document) -> str:
        return self._hasher.sketch(texts_of([doc])[0]).to_hex()

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        from neardup._kernels.sets import jaccard_pairs, unique_per_doc

        _, feats, doc_offsets = self._hasher.sketch_many_with_features(texts_of([a, b]))
        values, offsets = unique_per_doc(feats, doc_offsets)
        one, two = np.array([0]), np.array([1])
        return float(jaccard_pairs(values, offsets, one, two)[0]), None


@dataclass(frozen=True, slots=True)
class SimHashConfig(MethodConfig):
    """SimHash codes with an exact Hamming-radius index.

    Attributes:
        threshold: ``1 - d / bits``; the radius is ``floor((1 - threshold) * bits)``.
        bits: 64, 128 or 256.
        canonicalize: Canonicalizer preset applied before tokenizing.
    """

    KIND: ClassVar[str] = "simhash"
    threshold: float = 0.9
    bits: int = 64
    canonicalize: str = "txtfp"

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        if self.bits not in (64, 128, 256) or isinstance(self.bits, bool):
            raise ConfigError(f"bits must be 64, 128 or 256, got {self.bits!r}")
        check_choice("canonicalize", self.canonicalize, tuple(CANONICAL_PRESETS))


@dataclass(frozen=True, slots=True)
class SimHashGoConfig(MethodConfig):
    """The Go ``fingerprint`` package's 64-bit SimHash (bit for bit): no options.

    Attributes:
        threshold: ``1 - d / 64``.
    """

    KIND: ClassVar[str] = "simhash-go"
    threshold: float = 0.85


class HammingCollector(Collector):
    """Codes in an exact Hamming-radius index; pairs within the radius."""

    def __init__(self, bits: int, radius: int) -> None:
        from neardup.index.hamming import HammingIndex

        self._bits = bits
        self._index = HammingIndex(bits, radius=min(radius, bits - 1))
        self._radius = radius

    def add(self, positions: I64, payload: U64) -> None:
        codes = np.asarray(payload, dtype=np.uint64)
        if len(codes):
            self._index.add_many(positions.tolist(), codes)

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        if len(self._index) == 0:
            return PairArrays.empty()
        a, b, d = self._index.pair_rows()
        # keys are the positions, added in order: key row == position
        keys = np.asarray(self._index.keys(), dtype=np.int64)
        return PairArrays.of(keys[a], keys[b], 1.0 - d / self._bits, d).sorted()


class SimHashMethod(Method):
    """SimHash codes with an exact Hamming-radius index."""

    name: ClassVar[str] = "simhash"
    config: SimHashConfig

    def __init__(self, config: SimHashConfig) -> None:
        super().__init__(config)
        self._init_hasher()

    def _init_hasher(self) -> None:
        from neardup.sketch.simhash import SimHasher

        self.bits = self._bits()
        self._hasher = SimHasher(
            self.bits, preset=self._preset(), canonicalizer=self._canonicalizer()
        )
        self.radius = int(np.floor((1.0 - self.config.threshold) * self.bits + 1e-9))

    def _bits(self) -> int:
        return self.config.bits

    def _preset(self) -> Literal["go", "txtfp"] | None:
        return None

    def _canonicalizer(self) -> Canonicalizer | None:
        return Canonicalizer(self.config.canonicalize)

    @property
    def params(self) -> str:
        return self._hasher.params

    @property
    def index_params(self) -> str:
        return f"radius={self.radius}"

    def sketch(self, docs: Sequence[Document]) -> U64:
        return self._hasher.sketch_many(texts_of(docs))

    def collector(self) -> HammingCollector:
        return HammingCollector(self.bits, self.radius)

    def lookup_keys(self, payload: U64) -> U64:
        """Pigeonhole block keys (see :func:`neardup.index.hamming.hamming_block_keys`)."""
        from neardup.index.hamming import hamming_block_keys

        return hamming_block_keys(payload, self.bits, self.radius)

    def blobs(self, payload: U64) -> list[bytes]:
        """Each code's 64-bit words, least significant first, little-endian."""
        rows = np.ascontiguousarray(payload, dtype="<u8").reshape(len(payload), -1)
        return [row.tobytes() for row in rows]

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        if len(a) != self.bits // 8 or len(b) != self.bits // 8:
            raise FormatError(f"a stored SimHash blob is not {self.bits // 8} bytes")
        d = (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).bit_count()
        return 1.0 - d / self.bits, d

    def fingerprint(self, doc: Document) -> str:
        return self._hasher.sketch(texts_of([doc])[0]).to_hex()

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        ha, hb = (self._hasher.sketch(t) for t in texts_of([a, b]))
        return ha.similarity(hb), ha.distance(hb)


class SimHashGoMethod(SimHashMethod):
    """The Go ``fingerprint`` package's SimHash (bit for bit)."""

    name: ClassVar[str] = "simhash-go"

    config: SimHashGoConfig  # type: ignore[assignment]

    def __init__(self, config: SimHashGoConfig) -> None:
        Method.__init__(self, config)
        self._init_hasher()

    def _bits(self) -> int:
        return 64

    def _preset(self) -> Literal["go", "txtfp"] | None:
        return "go"

    def _canonicalizer(self) -> Canonicalizer | None:
        return None
