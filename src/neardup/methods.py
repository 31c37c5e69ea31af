"""The dedup methods: how each kind of fingerprint is sketched, indexed and turned into pairs.

Every method follows one protocol (:class:`Method`): ``add(positions, docs)`` sketches a batch
of documents and indexes them; ``pairs()`` yields ``(i, j, similarity, distance)`` for every
pair at or above the threshold (``i < j`` are input positions); ``fingerprint(doc)`` and
``compare(a, b)`` serve ``neardup hash`` and ``neardup compare``. ``threshold`` is always a
similarity in [0, 1]; each method documents how it maps to its own measure.

=============  =========================================================================
method         similarity, index, verification
=============  =========================================================================
``minhash``    Jaccard of word 5-shingles; banded LSH tuned for recall; candidates verified
               by the exact Jaccard of the shingle-hash sets (``verify=True``, default)
``simhash``    ``1 - d/bits`` of 64-bit SimHash over word 3-shingles; exact HammingIndex
``simhash-go`` the Go ``fingerprint`` package's SimHash (``neardup hash`` only)
``ctph``       ssdeep score / 100; 7-gram index then exact ssdeep comparison
``tlsh``       ``max(0, 1 - d/300)`` of the TLSH distance ``d`` (0.85 = distance 45)
``phash``      ``1 - d/64`` of imagehash's 64-bit pHash (images); exact HammingIndex
``embedding``  cosine of text embeddings, the static model by default (extra ``embeddings``)
=============  =========================================================================
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any, SupportsInt, cast

import numpy as np
import numpy.typing as npt

from neardup.canonicalize import Canonicalizer
from neardup.errors import ConfigError, FormatError, InputError
from neardup.io import Document
from neardup.tokenize import ShingleTokenizer, WordTokenizer

__all__ = ["DEFAULT_THRESHOLDS", "METHODS", "Method", "hamming_block_keys", "make_method"]

log = logging.getLogger(__name__)

#: The threshold each method uses when none is given.
DEFAULT_THRESHOLDS: dict[str, float] = {
    "minhash": 0.8,
    "simhash": 0.9,
    "simhash-go": 0.85,
    "ctph": 0.5,
    "tlsh": 0.85,
    "phash": 0.84,
    "embedding": 0.9,
}
TLSH_SCALE = 300.0

PairRow = tuple[int, int, float, int | None]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class Method:
    """Base of the dedup methods (see the module docstring for the protocol)."""

    name = "method"
    #: Read file documents as bytes (images, binary fuzzy hashing) instead of text.
    binary = False
    #: Whether batches may be sketched in worker processes (``jobs > 1``).
    parallel = True

    def __init__(self, threshold: float) -> None:
        if not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"threshold must be a similarity in [0, 1], got {threshold!r}")
        self.threshold = float(threshold)

    @property
    def params(self) -> str:
        """Fingerprint of the sketch parameters, recorded in results and stores."""
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        """Worker processes only sketch: the index and what it collected stay here."""
        state = dict(self.__dict__)
        for key in ("_index", "_keyer", "_set_values", "_set_sizes", "_positions", "_vectors"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def sketch(self, docs: Sequence[Document]) -> Any:
        """Sketch a batch (pure: runs in worker processes with ``jobs > 1``).

        Raises:
            NeardupError: a document cannot be sketched (the pipeline then skips or stops).
        """
        raise NotImplementedError

    def index(self, positions: npt.NDArray[np.int64], payload: Any) -> None:
        """Index what :meth:`sketch` returned for the documents at ``positions``."""
        raise NotImplementedError

    def add(self, positions: npt.NDArray[np.int64], docs: Sequence[Document]) -> None:
        """Sketch and index a batch of documents at the given input positions."""
        self.index(positions, self.sketch(docs))

    def lookup_keys(self, payload: Any) -> npt.NDArray[np.uint64]:
        """``(n, bands)`` bucket keys of a sketched batch: two documents can be a pair only if
        they share a key in some column (LSH bands, Hamming blocks). For engines that group
        by key themselves (Spark, the SQLite store).

        Raises:
            ConfigError: the method has no bucket keys.
        """
        raise ConfigError(f"method {self.name!r} has no bucket keys")

    @property
    def index_params(self) -> str:
        """What else, besides :attr:`params`, decides the bucket keys (a persistent store
        records ``params|index_params`` and refuses to mix)."""
        return f"t={self.threshold:g}"

    def blobs(self, payload: Any) -> list[bytes]:
        """One self-contained byte string per document of a sketched batch (for stores)."""
        raise ConfigError(
            f"method {self.name!r} cannot be stored; use minhash, simhash or phash with --index"
        )

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        """Similarity (and distance) of two documents from their :meth:`blobs`."""
        raise ConfigError(f"method {self.name!r} cannot be stored")

    def pairs(self) -> Iterator[PairRow]:
        """Yield ``(i, j, similarity, distance)`` for every accepted pair, ``i < j``."""
        raise NotImplementedError

    def fingerprint(self, doc: Document) -> str:
        """The fingerprint of one document as a string (for ``neardup hash``)."""
        raise NotImplementedError

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        """Similarity (and distance, where the measure is a count) of two documents."""
        raise NotImplementedError


def _ordered(a: object, b: object) -> tuple[int, int]:
    """Two index keys (our positions) as ints, smaller first."""
    i, j = int(cast(SupportsInt, a)), int(cast(SupportsInt, b))
    return (i, j) if i < j else (j, i)


def _texts(docs: Sequence[Document]) -> list[str]:
    out = []
    for d in docs:
        if d.text is None:
            raise InputError(f"document {d.id!r} has no text; this method needs text")
        out.append(d.text)
    return out


class MinHashMethod(Method):
    """MinHash over word 5-shingles with a recall-tuned banded LSH index."""

    name = "minhash"

    def __init__(
        self,
        threshold: float,
        *,
        num_perm: int = 128,
        verify: bool = True,
        canonicalizer: Canonicalizer | None = None,
        k: int = 5,
    ) -> None:
        super().__init__(threshold)
        from neardup.index.lsh import LSHIndex
        from neardup.sketch.minhash import MinHasher

        self._canon = canonicalizer or Canonicalizer("txtfp")
        self._tokenizer = ShingleTokenizer(k, WordTokenizer())
        self._hasher = MinHasher(num_perm, tokenizer=self._tokenizer, canonicalizer=self._canon)
        self._index = LSHIndex(threshold=threshold, num_perm=num_perm)
        self._num_perm = num_perm
        self._bands, self._rows = self._index.bands, self._index.rows
        self._verify = verify
        self._set_values: list[U64] = []
        self._set_sizes: list[I64] = []

    @property
    def params(self) -> str:
        return self._hasher.config.fingerprint()

    def sketch(self, docs: Sequence[Document]) -> tuple[U64, tuple[U64, I64] | None]:
        from neardup._kernels.sets import unique_per_doc

        texts = _texts(docs)
        if not self._verify:
            return self._hasher.sketch_many(texts), None
        # one pass gives the sketches and the shingle hashes that exact verification needs
        sigs, feats, offsets = self._hasher.sketch_many_with_features(texts)
        return sigs, unique_per_doc(feats, offsets)

    def index(
        self, positions: npt.NDArray[np.int64], payload: tuple[U64, tuple[U64, I64] | None]
    ) -> None:
        sigs, sets = payload
        self._index.add_many([int(p) for p in positions], sigs)
        if sets is not None:
            values, offsets = sets
            self._set_values.append(values)
            self._set_sizes.append(np.diff(offsets))

    def lookup_keys(self, payload: tuple[U64, tuple[U64, I64] | None]) -> U64:
        """The LSH index's 64-bit band keys of each sketch: ``(n, bands)``."""
        index = self.__dict__.get("_index")
        if index is None:  # an unpickled worker copy (Spark executors): a key-only index
            index = self.__dict__.get("_keyer")
            if index is None:
                from neardup.index.lsh import LSHIndex

                index = LSHIndex(self.threshold, self._num_perm, bands=self._bands, rows=self._rows)
                self.__dict__["_keyer"] = index
        keys: U64 = index.band_keys(payload[0])
        return keys

    @property
    def index_params(self) -> str:
        return f"lsh-{self._index.bands}x{self._index.rows}-verify={int(self._verify)}"

    def blobs(self, payload: tuple[U64, tuple[U64, I64] | None]) -> list[bytes]:
        """The sketch row, then (when verifying) the sorted shingle-hash set, little-endian."""
        sigs, sets = payload
        rows = np.ascontiguousarray(sigs, dtype="<u8")
        if sets is None:
            return [row.tobytes() for row in rows]
        values, offsets = sets
        vals = np.ascontiguousarray(values, dtype="<u8")
        return [
            rows[i].tobytes() + vals[offsets[i] : offsets[i + 1]].tobytes()
            for i in range(len(rows))
        ]

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        n = self._hasher.num_perm * 8
        if len(a) < n or len(b) < n or len(a) % 8 or len(b) % 8:
            raise FormatError("a stored MinHash blob is truncated; rebuild the store")
        if not self._verify:
            x, y = np.frombuffer(a[:n], "<u8"), np.frombuffer(b[:n], "<u8")
            return float(np.count_nonzero(x == y)) / len(x), None
        x, y = np.frombuffer(a[n:], "<u8"), np.frombuffer(b[n:], "<u8")
        inter = len(np.intersect1d(x, y, assume_unique=True))
        union = len(x) + len(y) - inter
        return (inter / union if union else 0.0), None

    def pairs(self) -> Iterator[PairRow]:
        from neardup._kernels.sets import jaccard_pairs

        floor = None if self._verify else self.threshold
        a, b, est = self._index.pair_rows(min_similarity=floor)
        # Keys are the input positions, added in order and never removed, so slot == key.
        last = len(self._index) - 1
        if last >= 0 and self._index.key_of(last) != last:
            raise AssertionError("MinHash index slots no longer match input positions")
        if self._verify and len(a):
            values = np.concatenate(self._set_values)
            sizes = np.concatenate(self._set_sizes)
            offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
            np.cumsum(sizes, out=offsets[1:])
            est = jaccard_pairs(values, offsets, a, b)
            keep = est >= self.threshold
            a, b, est = a[keep], b[keep], est[keep]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        yield from zip(lo.tolist(), hi.tolist(), est.tolist(), [None] * len(lo), strict=True)

    def fingerprint(self, doc: Document) -> str:
        return self._hasher.sketch(_texts([doc])[0]).to_hex()

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        from neardup._kernels.sets import jaccard_pairs, unique_per_doc

        _, feats, doc_offsets = self._hasher.sketch_many_with_features(_texts([a, b]))
        values, offsets = unique_per_doc(feats, doc_offsets)
        one, two = np.array([0]), np.array([1])
        return float(jaccard_pairs(values, offsets, one, two)[0]), None


class SimHashMethod(Method):
    """SimHash codes with an exact Hamming-radius index."""

    name = "simhash"

    def __init__(
        self,
        threshold: float,
        *,
        bits: int = 64,
        preset: str | None = None,
        canonicalizer: Canonicalizer | None = None,
    ) -> None:
        super().__init__(threshold)
        from neardup.index.hamming import HammingIndex
        from neardup.sketch.simhash import SimHasher

        self._hasher = SimHasher(bits, preset=preset, canonicalizer=canonicalizer)  # type: ignore[arg-type]
        self.bits = bits
        self.radius = int(np.floor((1.0 - self.threshold) * bits + 1e-9))
        self._index = HammingIndex(bits, radius=min(self.radius, bits - 1))

    @property
    def params(self) -> str:
        return self._hasher.params

    def sketch(self, docs: Sequence[Document]) -> U64:
        return self._hasher.sketch_many(_texts(docs))

    def index(self, positions: npt.NDArray[np.int64], payload: U64) -> None:
        self._index.add_many([int(p) for p in positions], payload)

    def lookup_keys(self, payload: U64) -> U64:
        """Pigeonhole block keys: ``radius + 1`` contiguous bit blocks of each code, each
        tagged with its block number, so codes within the radius share at least one."""
        return hamming_block_keys(payload, self.bits, self.radius)

    @property
    def index_params(self) -> str:
        return f"radius={self.radius}"

    def blobs(self, payload: U64) -> list[bytes]:
        """Each code's 64-bit words, least significant first, little-endian."""
        rows = np.ascontiguousarray(payload, dtype="<u8").reshape(len(payload), -1)
        return [row.tobytes() for row in rows]

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        if len(a) != self.bits // 8 or len(b) != self.bits // 8:
            raise FormatError(f"a stored SimHash blob is not {self.bits // 8} bytes")
        d = (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).bit_count()
        return 1.0 - d / self.bits, d

    def pairs(self) -> Iterator[PairRow]:
        for a, b, d in self._index.pairs():
            i, j = _ordered(a, b)
            yield i, j, 1.0 - d / self.bits, int(d)

    def fingerprint(self, doc: Document) -> str:
        return self._hasher.sketch(_texts([doc])[0]).to_hex()

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        ha, hb = (self._hasher.sketch(t) for t in _texts([a, b]))
        return ha.similarity(hb), ha.distance(hb)


def hamming_block_keys(codes: U64, bits: int, radius: int) -> U64:
    """``(n, radius + 1)`` keys: block ``k`` of each code (contiguous bits; the first
    ``bits % (radius + 1)`` blocks one bit longer) in the low bits, ``k`` in the top 8 bits
    (blocks of 56 bits or more are hashed down first). Two codes within ``radius`` bits agree
    on at least one block (pigeonhole), so they share a key.

    Examples:
        >>> hamming_block_keys(np.array([0, 1], np.uint64), 64, 3)[:, 1].tolist()
        [72057594037927936, 72057594037927936]
    """
    m = radius + 1
    words = np.asarray(codes, dtype=np.uint64).reshape(len(codes), -1)
    sizes = [bits // m + (1 if k < bits % m else 0) for k in range(m)]
    out = np.empty((len(words), m), dtype=np.uint64)
    start = 0
    for k, size in enumerate(sizes):
        value = np.zeros(len(words), dtype=np.uint64)
        for b in range(size):  # bit-by-bit: simple, and blocks may straddle 64-bit words
            pos = start + b
            bit = (words[:, pos // 64] >> np.uint64(pos % 64)) & np.uint64(1)
            if size <= 56:
                value |= bit << np.uint64(b)
            else:
                value = (value * np.uint64(0x100000001B3)) ^ bit
        out[:, k] = (value & np.uint64((1 << 56) - 1)) | (np.uint64(k) << np.uint64(56))
        start += size
    return out


class CTPHMethod(Method):
    """ssdeep-compatible context-triggered piecewise hashes of the raw bytes."""

    name = "ctph"

    def __init__(self, threshold: float) -> None:
        super().__init__(threshold)
        from neardup.fuzzy import CTPHIndex

        self._index = CTPHIndex()
        self._positions: list[int] = []

    @property
    def params(self) -> str:
        from neardup.fuzzy import CTPHParams

        return CTPHParams().fingerprint()

    def sketch(self, docs: Sequence[Document]) -> list[str]:
        from neardup.fuzzy import ctph_many

        return ctph_many([d.read_bytes() for d in docs])

    def index(self, positions: npt.NDArray[np.int64], payload: list[str]) -> None:
        self._index.add_many(payload)
        self._positions.extend(positions.tolist())

    def pairs(self) -> Iterator[PairRow]:
        floor = max(1, int(np.ceil(self.threshold * 100 - 1e-9)))
        for a, b, score in self._index.pairs(min_score=floor):
            i, j = sorted((self._positions[a], self._positions[b]))
            yield i, j, score / 100.0, None

    def fingerprint(self, doc: Document) -> str:
        from neardup.fuzzy import ctph

        return ctph(doc.read_bytes())

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        from neardup.fuzzy import ctph_compare

        return ctph_compare(self.fingerprint(a), self.fingerprint(b)) / 100.0, None


class TLSHMethod(Method):
    """TLSH digests (py-tlsh) with a vectorized distance search."""

    name = "tlsh"

    def __init__(self, threshold: float) -> None:
        super().__init__(threshold)
        from neardup.fuzzy import TLSHIndex

        self._index = TLSHIndex()
        self._positions: list[int] = []
        self.max_distance = int(np.floor((1.0 - self.threshold) * TLSH_SCALE + 1e-9))

    @property
    def params(self) -> str:
        from neardup.fuzzy import TLSHParams

        return TLSHParams().fingerprint()

    def sketch(self, docs: Sequence[Document]) -> list[str | None]:
        from neardup.fuzzy import TLSHError, tlsh

        out: list[str | None] = []
        for d in docs:
            try:
                out.append(tlsh(d.read_bytes()))
            except TLSHError as exc:  # too short or too uniform: no digest exists
                log.warning("%s: no TLSH digest (%s); left out of the comparison", d.id, exc)
                out.append(None)
        return out

    def index(self, positions: npt.NDArray[np.int64], payload: list[str | None]) -> None:
        for p, digest in zip(positions.tolist(), payload, strict=True):
            if digest is not None:
                self._index.add(digest)
                self._positions.append(p)

    def pairs(self) -> Iterator[PairRow]:
        for a, b, dist in self._index.pairs(max_distance=self.max_distance):
            i, j = sorted((self._positions[a], self._positions[b]))
            yield i, j, max(0.0, 1.0 - dist / TLSH_SCALE), int(dist)

    def fingerprint(self, doc: Document) -> str:
        from neardup.fuzzy import tlsh

        return tlsh(doc.read_bytes())

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        from neardup.fuzzy import tlsh_distance

        d = tlsh_distance(self.fingerprint(a), self.fingerprint(b))
        return max(0.0, 1.0 - d / TLSH_SCALE), d


class PHashMethod(Method):
    """imagehash-compatible 64-bit pHash of images with an exact Hamming-radius index."""

    name = "phash"
    binary = True

    def __init__(self, threshold: float, *, preset: str = "imagehash") -> None:
        super().__init__(threshold)
        from neardup.index.hamming import HammingIndex

        self._preset = preset
        self.radius = int(np.floor((1.0 - self.threshold) * 64 + 1e-9))
        self._index = HammingIndex(64, radius=min(self.radius, 63))

    @property
    def params(self) -> str:
        from neardup.image.value import ImageHashParams

        return ImageHashParams(method="phash", preset=self._preset).fingerprint()

    def _hash(self, doc: Document) -> Any:
        from neardup.image import phash

        return phash(doc.path if doc.path is not None else doc.read_bytes(), preset=self._preset)

    def sketch(self, docs: Sequence[Document]) -> list[int]:
        return [int(self._hash(d)) for d in docs]

    def index(self, positions: npt.NDArray[np.int64], payload: list[int]) -> None:
        if payload:
            self._index.add_many([int(p) for p in positions], payload)

    def lookup_keys(self, payload: list[int]) -> U64:
        """Pigeonhole block keys of the 64-bit hashes (see :func:`hamming_block_keys`)."""
        return hamming_block_keys(np.array(payload, dtype=np.uint64), 64, self.radius)

    @property
    def index_params(self) -> str:
        return f"radius={self.radius}"

    def blobs(self, payload: list[int]) -> list[bytes]:
        """Each 64-bit hash, little-endian."""
        return [int(h).to_bytes(8, "little") for h in payload]

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        if len(a) != 8 or len(b) != 8:
            raise FormatError("a stored pHash blob is not 8 bytes")
        d = (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).bit_count()
        return 1.0 - d / 64.0, d

    def pairs(self) -> Iterator[PairRow]:
        for a, b, d in self._index.pairs():
            i, j = _ordered(a, b)
            yield i, j, 1.0 - d / 64.0, int(d)

    def fingerprint(self, doc: Document) -> str:
        return str(self._hash(doc))

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        ha, hb = self._hash(a), self._hash(b)
        return float(ha.similarity(hb)), int(ha.distance(hb))


class SimHashGoMethod(SimHashMethod):
    """The Go ``fingerprint`` package's SimHash (bit for bit)."""

    name = "simhash-go"

    def __init__(self, threshold: float) -> None:
        super().__init__(threshold, bits=64, preset="go")


class EmbeddingMethod(Method):
    """Cosine similarity of text embeddings (extra ``embeddings``).

    ``model`` is what :func:`neardup.embeddings.provider_for` takes: ``"static"`` (default,
    the bundled static model), ``"minilm"``, a model folder or ``"openai:MODEL"`` and the
    like; ``provider`` passes a ready provider instead (for example one behind a
    :class:`neardup.store.embcache.CachedProvider`). Texts that embed to a zero vector (empty,
    or no known token) pair with nothing.
    """

    name = "embedding"
    parallel = False  # the model uses all cores itself; copying it into workers gains nothing

    def __init__(self, threshold: float, *, model: str | None = None, provider: Any = None) -> None:
        super().__init__(threshold)
        from neardup.embeddings import provider_for

        if provider is not None and model is not None:
            raise ConfigError("pass model= or provider=, not both")
        self._provider = provider_for(model) if provider is None else provider
        self._vectors: list[npt.NDArray[np.float32]] = []
        self._positions: list[int] = []

    @property
    def params(self) -> str:
        return f"embedding-{self._provider.model_id}"

    def sketch(self, docs: Sequence[Document]) -> npt.NDArray[np.float32]:
        return np.asarray(self._provider.embed(_texts(docs)), dtype=np.float32)

    def index(self, positions: npt.NDArray[np.int64], payload: npt.NDArray[np.float32]) -> None:
        self._vectors.append(payload)
        self._positions.extend(positions.tolist())

    def pairs(self) -> Iterator[PairRow]:
        from neardup.index.vectors import VectorIndex

        if not self._vectors:
            return
        matrix = np.concatenate(self._vectors)
        live = np.flatnonzero(np.any(matrix != 0, axis=1))  # zero rows have no direction
        index = VectorIndex(matrix.shape[1])
        index.add_many([self._positions[k] for k in live.tolist()], matrix[live])
        for a, b, sim in index.pairs(self.threshold):
            i, j = _ordered(a, b)
            yield i, j, float(sim), None

    def fingerprint(self, doc: Document) -> str:
        vec = self._provider.embed(_texts([doc]))[0]
        return " ".join(f"{x:.6f}" for x in vec)

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        va, vb = self._provider.embed(_texts([a, b]))
        denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
        return (float(np.dot(va, vb)) / denom if denom else 0.0), None


METHODS: dict[str, type[Method]] = {
    "minhash": MinHashMethod,
    "simhash": SimHashMethod,
    "simhash-go": SimHashGoMethod,
    "ctph": CTPHMethod,
    "tlsh": TLSHMethod,
    "phash": PHashMethod,
    "embedding": EmbeddingMethod,
}


def make_method(name: str, threshold: float | None = None, **options: Any) -> Method:
    """Build a method by name with its default threshold unless one is given.

    Raises:
        ConfigError: Unknown method or bad option.
        MissingExtraError: The method's extra is not installed.

    Examples:
        >>> make_method("simhash").radius
        6
    """
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; use one of {', '.join(METHODS)}")
    t = DEFAULT_THRESHOLDS[name] if threshold is None else threshold
    try:
        return METHODS[name](t, **options)
    except TypeError as exc:
        raise ConfigError(f"method {name!r} does not take these options: {exc}") from None
