"""The text methods: MinHash with banded LSH and exact verification, and SimHash with an exact
Hamming index (including the Go ``fingerprint`` package's SimHash)."""

from __future__ import annotations

import mmap
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from neardup.canonicalize import PRESETS as CANONICAL_PRESETS
from neardup.canonicalize import Canonicalizer
from neardup.config import check_choice
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError
from neardup.io import Document
from neardup.methods.base import Collector, Method, MethodConfig, PairArrays, texts_of
from neardup.tokenize import ShingleTokenizer, WordTokenizer

if TYPE_CHECKING:
    from neardup.sketch.setcodec import PackedBlobs

__all__ = [
    "MinHashConfig",
    "MinHashMethod",
    "SimHashConfig",
    "SimHashGoConfig",
    "SimHashGoMethod",
    "SimHashMethod",
]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
#: ``(signatures, sets)``: the ``(n, num_perm)`` sketches (``uint64``, or their 32-bit slots as
#: ``uint32`` from the fused pass) and, when verifying, each document's sorted set of 32-bit
#: shingle hashes (:func:`~neardup.sketch.sets.unique_per_doc32`, CSR).
MinHashPayload = tuple[U64 | U32, tuple[U32, I64] | None]


#: ``(prof, big)``: the set profiles of a batch's rows (``buckets.set_profiles``).
Profiles = tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]


class MinHashSketch(tuple[U64 | U32, tuple[U32, I64] | None]):
    """A :data:`MinHashPayload` that also carries its LSH band keys, computed with the sketches
    (on the sketching thread, so the collector on the main thread only appends them), and in a
    run the set profiles of the bucket walk (:meth:`MinHashCollector.prepare`, also there)."""

    keys: U64
    profiles: Profiles | None

    def __new__(
        cls,
        sigs: U64 | U32,
        sets: tuple[U32, I64] | None,
        keys: U64,
        profiles: Profiles | None = None,
    ) -> MinHashSketch:
        self = super().__new__(cls, (sigs, sets))
        self.keys = keys
        self.profiles = profiles
        return self

    def __reduce__(self) -> tuple[type[MinHashSketch], tuple[Any, ...]]:
        return (MinHashSketch, (self[0], self[1], self.keys, self.profiles))


def _anonymous(nbytes: int) -> mmap.mmap:
    """Private anonymous memory: its pages take room only once written, and it grows in place
    (``mremap`` on Linux)."""
    private = getattr(mmap, "MAP_PRIVATE", None)
    anon = getattr(mmap, "MAP_ANONYMOUS", None)
    if private is None or anon is None:  # Windows: anonymous maps take no flags
        return mmap.mmap(-1, nbytes)
    return mmap.mmap(-1, nbytes, flags=private | anon)


class _Writers:
    """Threads writing into the columns' maps at once, and a map's growth alone: a map moves
    when it grows, so it grows only while nobody writes, and nobody writes meanwhile."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._growing = False

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            while self._growing:
                self._cond.wait()
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                if not self._active:
                    self._cond.notify_all()

    @contextmanager
    def growing(self) -> Iterator[None]:
        with self._cond:
            while self._active:
                self._cond.wait()
            self._growing = True
        try:
            yield
        finally:
            with self._cond:
                self._growing = False
                self._cond.notify_all()


class _Column:
    """A growing array that appends in place, so a run holds each document's sets once, never a
    list of parts plus their concatenation. It lives in anonymous memory that is remapped
    when it grows: the capacity doubles but only the rows written take memory (a numpy
    ``resize`` would zero-fill the whole new capacity). Rows are reserved in order
    (:meth:`reserve`) and written later, by any thread (:meth:`write`, under
    ``writers.writing()``)."""

    def __init__(
        self, dtype: type[np.generic], width: int | None = None, writers: _Writers | None = None
    ) -> None:
        self._dtype = np.dtype(dtype)
        self._map = _anonymous((1 << 16) * self._dtype.itemsize)
        self._width = width or 1
        self._rows = width is not None  # values() is 2-D, even one column wide
        self._n = 0
        self._writers = writers or _Writers()

    def _grow(self, need: int) -> None:
        size = self._dtype.itemsize
        cap = len(self._map) // size
        while cap < need:
            cap *= 2
        with self._writers.growing():
            try:
                self._map.resize(cap * size)
            except (BufferError, OSError, SystemError, ValueError):
                # a view of the rows is still held (values() was taken), or this platform
                # cannot remap: copy into a new map, and leave the old one to its views
                bigger = _anonymous(cap * size)
                bigger[: self._n * size] = self._map[: self._n * size]
                self._map = bigger

    def reserve(self, items: int) -> int:
        """Room for ``items`` more values (not rows); returns where they go."""
        at = self._n
        need = at + items
        if need * self._dtype.itemsize > len(self._map):
            self._grow(need)
        self._n = need
        return at

    def write(self, at: int, part: npt.NDArray[Any]) -> None:
        """Put ``part`` where :meth:`reserve` said (inside ``writers.writing()``)."""
        flat = part.reshape(-1)
        size = self._dtype.itemsize
        view = np.frombuffer(self._map, dtype=self._dtype, count=len(flat), offset=at * size)
        view[:] = flat
        del view  # no view may outlive the write: the map can then grow in place

    def truncate(self, items: int) -> None:
        """Keep the first ``items`` values; the pages past them go back to the system."""
        self._n = items
        page = mmap.PAGESIZE
        start = -(-items * self._dtype.itemsize // page) * page
        dontneed = getattr(mmap, "MADV_DONTNEED", None)
        if start < len(self._map) and dontneed is not None and hasattr(self._map, "madvise"):
            self._map.madvise(dontneed, start, len(self._map) - start)

    def append(self, part: npt.NDArray[Any]) -> None:
        at = self.reserve(part.size)
        with self._writers.writing():
            self.write(at, part)

    def __len__(self) -> int:
        return self._n // self._width

    def values(self) -> npt.NDArray[Any]:
        """The rows appended so far (a view)."""
        out = np.frombuffer(self._map, dtype=self._dtype, count=self._n)
        return out.reshape(-1, self._width) if self._rows else out


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
        seed: Seed of the hash permutations (``None``: the sketcher's default,
            ``0x00C0FFEE5EED``); sketches of different seeds never mix (it is in the params).
        bands: LSH bands (with ``rows``; ``None``: planned from the threshold for 0.99
            recall). ``bands * rows`` must not exceed ``num_perm``.
        rows: Slots per LSH band (with ``bands``).
    """

    KIND: ClassVar[str] = "minhash"
    threshold: float = 0.8
    num_perm: int = 128
    verify: bool = True
    canonicalize: str = "txtfp"
    k: int = 5
    seed: int | None = None
    bands: int | None = None
    rows: int | None = None

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        if isinstance(self.num_perm, bool) or not isinstance(self.num_perm, int):
            raise ConfigError(f"num_perm must be an integer, got {self.num_perm!r}")
        if not 1 <= self.num_perm <= 8192:
            raise ConfigError(f"num_perm must be between 1 and 8192, got {self.num_perm}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= 64:
            raise ConfigError(f"k must be an integer between 1 and 64, got {self.k!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, int)
            or not 0 <= self.seed < 2**64
        ):
            raise ConfigError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        if (self.bands is None) != (self.rows is None):
            raise ConfigError("bands and rows go together; give both or neither")
        if self.bands is not None and self.rows is not None:
            for name, v in (("bands", self.bands), ("rows", self.rows)):
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise ConfigError(f"{name} must be a positive integer, got {v!r}")
            if self.bands * self.rows > self.num_perm:
                raise ConfigError(
                    f"bands x rows = {self.bands * self.rows} exceeds num_perm={self.num_perm}; "
                    "lower them or raise num_perm"
                )
        if not isinstance(self.verify, bool):
            raise ConfigError(f"verify must be true or false, got {self.verify!r}")
        check_choice("canonicalize", self.canonicalize, tuple(CANONICAL_PRESETS))
        if self.threshold <= 0.0:
            raise ConfigError(
                "threshold must be above 0 for minhash (documents that share no shingle are "
                "never LSH candidates); use a small positive threshold such as 0.1"
            )


#: Cells of a set profile (``buckets.set_profiles``).
PROFILE = 32


def _profiles(sets: tuple[U32, I64]) -> Profiles:
    from neardup._kernels import engine

    values, offsets = sets
    prof, big = engine.kernels("buckets").set_profiles(
        values, np.ascontiguousarray(offsets, dtype=np.int64)
    )
    return prof, big


#: The highest threshold LSH banding is planned for (``plan_lsh`` needs one below 1).
_MAX_PLANNED = 0.99


class MinHashCollector(Collector):
    """Band keys and (when verifying) the 32-bit shingle-hash sets of every document of a
    run; the set sizes are kept as ``int32``."""

    def __init__(self, method: MinHashMethod) -> None:
        self._method = method
        self._writers = w = _Writers()
        self._keys = _Column(np.uint64, method.bands, w)
        self._values = _Column(np.uint32, None, w)
        self._sizes = _Column(np.int32, None, w)
        self._sigs = _Column(np.uint32, method.config.num_perm, w)
        self._prof = _Column(np.uint8, PROFILE, w)
        self._big = _Column(np.bool_, None, w)
        self._compacted = False  # a walk kept only the sets it compares (_walked_sets)

    def prepare(self, payload: MinHashPayload) -> MinHashPayload:
        """The set profiles of the batch's rows, made on its sketching thread: the walk then
        does not make them all on one thread after collection."""
        sigs, sets = payload
        if sets is None or not isinstance(payload, MinHashSketch) or payload.profiles:
            return payload
        return MinHashSketch(sigs, sets, payload.keys, _profiles(sets))

    def add(self, positions: I64, payload: MinHashPayload) -> None:
        self.add_later(positions, payload)()

    def add_later(self, positions: I64, payload: MinHashPayload) -> Callable[[], None]:
        """Reserve the batch's rows here (in input order); the call returned copies them into
        place on any thread (the sketching threads, with ``--jobs N``).

        Raises:
            ConfigError: :meth:`pairs` or :meth:`components` ran already and dropped the
                sets of the rows that shared no band key (a new row could match them).
        """
        if self._compacted:
            raise ConfigError(
                "this MinHash collector was walked already (pairs() or components() keep only "
                "the sets they compare): add every batch before asking for pairs, or start a "
                "new collector"
            )
        sets = payload[1]
        n = len(positions)
        at_keys = self._keys.reserve(n * self._method.bands)
        if sets is None:
            at_sigs = self._sigs.reserve(n * self._method.config.num_perm)
            return partial(self._write_sigs, payload, at_keys, at_sigs)
        values = sets[0]
        at = (
            at_keys,
            self._values.reserve(len(values)),
            self._sizes.reserve(n),
            self._prof.reserve(n * PROFILE),
            self._big.reserve(n),
        )
        return partial(self._write_sets, payload, at)

    def _write_sets(self, payload: MinHashPayload, at: tuple[int, int, int, int, int]) -> None:
        sets = payload[1]
        assert sets is not None
        values, offsets = sets
        ready = payload.profiles if isinstance(payload, MinHashSketch) else None
        prof, big = ready or _profiles(sets)
        keys = self._method.lookup_keys(payload)
        sizes = np.diff(offsets).astype(np.int32)
        with self._writers.writing():
            self._keys.write(at[0], keys)
            self._values.write(at[1], values)
            self._sizes.write(at[2], sizes)
            self._prof.write(at[3], prof)
            self._big.write(at[4], big)

    def _write_sigs(self, payload: MinHashPayload, at_keys: int, at_sigs: int) -> None:
        from neardup.sketch.minhash import fold32

        keys = self._method.lookup_keys(payload)
        folded = fold32(payload[0])
        with self._writers.writing():
            self._keys.write(at_keys, keys)
            self._sigs.write(at_sigs, folded)

    def _walked_sets(self, keys: U64, jobs: int) -> tuple[U32, I64, U64]:
        """The sets and offsets a walk over ``keys`` reads, and each band's rows that share
        its key with another row (``buckets.shared_rows``, on ``jobs`` threads). Only those
        rows are ever compared (most rows are in no such bucket), so only their sets are
        kept: moved to the front of their column in place, the pages past them given back,
        the other rows' sets made empty; and the walk groups only those rows of each band,
        which pays for this pass. The walk's peak memory is then far below the end of
        collection's (100k planted documents: 55% of the values kept)."""
        from neardup._kernels import engine

        kern = engine.kernels("buckets")
        masks, shared = kern.shared_rows(keys, max(1, jobs))
        sizes = self._sizes.values()
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        if not shared.all():
            kept = kern.compact_sets(self._values.values(), offsets, shared)
            self._compacted = True
            self._values.truncate(kept)
            sizes[:] = np.diff(offsets)  # the collector holds only the kept sets now
        values: U32 = self._values.values()
        return values, offsets, masks

    def _profiles(self) -> Profiles:
        prof: npt.NDArray[np.uint8] = self._prof.values()
        big: npt.NDArray[np.bool_] = self._big.values()
        return prof, big

    def _run(self, join: bool, jobs: int) -> tuple[I64, I64, npt.NDArray[np.float64], I64]:
        from neardup.index.buckets import bucket_pairs_verified

        m = self._method
        if not len(self._keys):
            z = np.empty(0, np.int64)
            return z, z, np.empty(0, np.float64), z
        keys = self._keys.values()
        if m.config.verify:
            values, offsets, masks = self._walked_sets(keys, jobs)
            a, b, sim, roots, _ = bucket_pairs_verified(
                keys,
                threshold=m.threshold,
                values=values,
                offsets=offsets,
                join=join,
                jobs=jobs,
                profiles=self._profiles(),
                masks=masks,
            )
        else:
            a, b, sim, roots, _ = bucket_pairs_verified(
                keys, threshold=m.threshold, sigs=self._sigs.values(), join=join, jobs=jobs
            )
        return a, b, sim, roots

    def _roots(self, jobs: int) -> I64:
        """The clusters' roots by one walk whose bands ``jobs`` threads share (see
        :func:`~neardup.index.buckets.bucket_roots`)."""
        from neardup.index.buckets import bucket_roots

        m = self._method
        keys = self._keys.values()
        if not m.config.verify:
            return bucket_roots(keys, threshold=m.threshold, sigs=self._sigs.values(), jobs=jobs)
        values, offsets, masks = self._walked_sets(keys, jobs)
        return bucket_roots(
            keys,
            threshold=m.threshold,
            values=values,
            offsets=offsets,
            jobs=jobs,
            profiles=self._profiles(),
            masks=masks,
        )

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        a, b, sim, _ = self._run(join=False, jobs=jobs)
        return PairArrays.of(a, b, sim)

    def components(self, n: int, *, jobs: int = 1) -> I64:
        if jobs > 1 and len(self._keys):
            roots = self._roots(jobs)
        else:
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
        from neardup.index.lshplan import plan_lsh
        from neardup.sketch.minhash import MinHasher

        c = config
        self._tokenizer = ShingleTokenizer(c.k, WordTokenizer())
        self._hasher = MinHasher(
            c.num_perm,
            tokenizer=self._tokenizer,
            canonicalizer=Canonicalizer(c.canonicalize),
            seed=c.seed,
        )
        # LSHIndex's banding and band keys, without an index (whose table a run never uses).
        # Identical sketches share every band, so a threshold of 1.0 uses the 0.99 banding.
        if c.bands is not None and c.rows is not None:
            self.bands, self.rows = c.bands, c.rows
        else:
            t = min(c.threshold, _MAX_PLANNED)
            plan = plan_lsh(t, c.num_perm, method="recall", recall=0.99)
            self.bands, self.rows = plan.bands, plan.rows

    @property
    def params(self) -> str:
        return self._hasher.config.fingerprint()

    @property
    def index_params(self) -> str:
        return f"lsh-{self.bands}x{self.rows}-verify={int(self.config.verify)}"

    def sketch(self, docs: Sequence[Document]) -> MinHashPayload:
        from neardup.packed import PackedDocs

        # packed documents go down as their buffer (no Python string per document)
        batch = (
            PackedDocs(docs.buf, np.ascontiguousarray(docs.offsets, dtype=np.int64))
            if isinstance(docs, PackedDocs)
            else texts_of(docs)
        )
        # with verification, the one pass also gives each document's shingle-hash set
        # (the slots as uint32 where the pass made them so: the band keys read them as they are)
        sigs, sets = self._hasher.sketch_batch(batch, sets=self.config.verify, narrow=True)
        # the band keys too, here: with --jobs N this runs on the sketching threads
        return MinHashSketch(sigs, sets, self._band_keys(sigs))

    def collector(self) -> MinHashCollector:
        return MinHashCollector(self)

    def lookup_keys(self, payload: MinHashPayload) -> U64:
        """The LSH band keys of each sketch: ``(n, bands)``."""
        if isinstance(payload, MinHashSketch):
            return payload.keys
        return self._band_keys(payload[0])

    def _band_keys(self, sigs: U64 | U32) -> U64:
        """The band keys of ``sigs``: ``uint64`` rows folded to 32 bits, ``uint32`` rows (the
        fused pass's 32-bit slots, equal to the folded ones) as they are."""
        from neardup._kernels import engine
        from neardup.sketch.minhash import fold32

        narrow = isinstance(sigs, np.ndarray) and sigs.dtype == np.uint32
        sigs = sigs if narrow else np.asarray(sigs, dtype=np.uint64)
        if sigs.ndim != 2 or sigs.shape[1] != self.config.num_perm:
            raise IncompatibleSketchError(
                f"expected a (n, {self.config.num_perm}) array of sketches, got {sigs.shape}"
            )
        fold = np.ascontiguousarray(sigs if narrow else fold32(sigs))
        keys: U64 = engine.kernels("minhash").band_keys(fold, self.bands, self.rows)
        return keys

    def blobs(self, payload: MinHashPayload) -> list[bytes]:
        """Compact blobs (:mod:`neardup.sketch.setcodec`): with verification, the shingle-hash
        set (cut to ``log2(n) + 10`` bits, delta-coded, Golomb-Rice); without, the sketch row
        folded to 32-bit slots."""
        from neardup.sketch.setcodec import encode_rows, encode_sets

        sigs, sets = payload
        if sets is None:
            return encode_rows(np.asarray(sigs, dtype=np.uint64))
        values, offsets = sets
        # the top halves, back in place: the codec keeps at most the top 32 bits anyway
        return encode_sets(values.astype(np.uint64) << np.uint64(32), offsets)

    def packed_blobs(self, payload: MinHashPayload) -> PackedBlobs:
        """:meth:`blobs` in one buffer: the set blobs as the kernel writes them."""
        from neardup.sketch.setcodec import encode_sets_packed

        _, sets = payload
        if sets is None:
            return super().packed_blobs(payload)
        values, offsets = sets
        if values.dtype == np.uint32:  # the top halves, encoded as such (no widened copy)
            return encode_sets_packed(values, offsets, top_halves=True)
        return encode_sets_packed(values.astype(np.uint64) << np.uint64(32), offsets)

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
        from neardup.sketch.sets import jaccard_pairs

        _, sets = self._hasher.sketch_batch(texts_of([a, b]), sets=True)
        assert sets is not None
        values, offsets = sets
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
