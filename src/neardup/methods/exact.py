"""Exact duplicates of the canonical text: XXH3-128 of the canonicalizer's output, found in a
stream, with an optional Bloom-filter mode that bounds memory for corpora beyond RAM
(``neardup.corpus.exact.exact_first`` runs it before a near-duplicate method).

The digest is XXH3-128 (Collet, "xxHash fast digest algorithm") of the UTF-8 bytes of
``Canonicalizer.canonicalize(text)``, computed by the batch engine's kernel over one buffer
plus offsets. Two documents are duplicates when their digests are equal (a collision among
``n`` documents has probability about ``n**2 / 2**129``).

Bloom mode (Bloom 1970, "Space/time trade-offs in hash coding with allowable errors"): the
digests go to a spill file on disk while a Bloom filter of ``m = -n ln p / (ln 2)**2`` bits
(``k = (m / n) ln 2`` probes, derived from the digest by double hashing) flags every digest
that was probably seen before. The flagged digests, duplicates plus at most a fraction ``p``
of the unique ones (the filter's false-positive rate at ``capacity`` documents), are the
only ones held in memory; a second pass over the spill file then pairs each duplicate with
the first document of its digest exactly. A false positive costs memory, never a wrong pair.
"""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, ClassVar

import numpy as np
import numpy.typing as npt

from neardup.canonicalize import PRESETS as CANONICAL_PRESETS
from neardup.canonicalize import Canonicalizer
from neardup.config import check_choice
from neardup.errors import ConfigError
from neardup.io import Document
from neardup.methods.base import Collector, Method, MethodConfig, PairArrays, texts_of

__all__ = ["BloomFilter", "ExactCollector", "ExactConfig", "ExactMethod", "exact_digests"]

log = logging.getLogger(__name__)

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def exact_digests(texts: Sequence[str], canonicalizer: Canonicalizer | None = None) -> U64:
    """XXH3-128 digests of the canonical texts as an ``(n, 2)`` uint64 array ``(low, high)``.

    Examples:
        >>> import xxhash
        >>> d = exact_digests(["Hello World", "hello world"])
        >>> bool((d[0] == d[1]).all())
        True
        >>> int(d[1, 0]) == xxhash.xxh3_128_intdigest(b"hello world") & (2**64 - 1)
        True
    """
    from neardup._kernels.engine import hash_spans
    from neardup._spans import Spans
    from neardup.packed import pack

    canon = canonicalizer if canonicalizer is not None else Canonicalizer("txtfp")
    packed = pack([canon.canonicalize(t) for t in texts])
    starts, ends = packed.offsets[:-1], packed.offsets[1:]
    offsets = np.arange(len(texts) + 1, dtype=np.int64)
    lo, hi = hash_spans(Spans(packed.buf, starts, ends, offsets), "xxh3_128")
    out = np.empty((len(texts), 2), dtype=np.uint64)
    out[:, 0], out[:, 1] = lo, hi
    return out


#: The largest Bloom filter (bits): 8 GiB, about 4.8 billion documents at the default 0.001
#: false-positive rate. A larger capacity is refused before anything is allocated.
MAX_BLOOM_BITS = 1 << 36


def bloom_bits(capacity: int, fp_rate: float) -> int:
    """The bits of a filter for ``capacity`` items at ``fp_rate``.

    Raises:
        ConfigError: more than :data:`MAX_BLOOM_BITS`.

    Examples:
        >>> bloom_bits(1000, 0.01)
        9586
    """
    bits = max(64, math.ceil(-capacity * math.log(fp_rate) / math.log(2) ** 2))
    if bits > MAX_BLOOM_BITS:
        raise ConfigError(
            f"a Bloom filter for a capacity of {capacity} documents at a false-positive rate of "
            f"{fp_rate:g} needs {bits / 8 / 2**30:.3g} GiB, over the "
            f"{MAX_BLOOM_BITS // 8 // 2**30} GiB cap; lower --bloom-capacity (or raise "
            "--bloom-fp-rate), or dedup the corpus in parts"
        )
    return bits


class BloomFilter:
    """A Bloom filter over 128-bit digests, sized for ``capacity`` items at ``fp_rate``.

    Examples:
        >>> bf = BloomFilter(1000, 0.01)
        >>> d = exact_digests(["a", "b", "a"])
        >>> bf.add_and_test(d).tolist()
        [False, False, True]
        >>> bf.bits, bf.probes
        (9586, 7)
    """

    def __init__(self, capacity: int, fp_rate: float) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ConfigError(f"bloom capacity must be a positive integer, got {capacity!r}")
        if not 0.0 < fp_rate < 1.0:
            raise ConfigError(f"bloom false-positive rate must be in (0, 1), got {fp_rate!r}")
        self.capacity, self.fp_rate = capacity, fp_rate
        self.bits = bloom_bits(capacity, fp_rate)
        self.probes = max(1, round(self.bits / capacity * math.log(2)))
        self._words = np.zeros((self.bits + 63) // 64, dtype=np.uint64)
        self.count = 0

    @property
    def nbytes(self) -> int:
        """Memory of the bit array."""
        return int(self._words.nbytes)

    def expected_fp_rate(self) -> float:
        """The false-positive rate for the items added so far: ``(1 - e^(-kn/m))^k``."""
        return float((1 - math.exp(-self.probes * self.count / self.bits)) ** self.probes)

    def _positions(self, digests: U64) -> U64:
        lo, hi = digests[:, 0:1], digests[:, 1:2] | np.uint64(1)
        i = np.arange(self.probes, dtype=np.uint64)[None, :]
        with np.errstate(over="ignore"):
            return (lo + i * hi) % np.uint64(self.bits)  # Kirsch-Mitzenmacher double hashing

    def add_and_test(self, digests: U64) -> npt.NDArray[np.bool_]:
        """Add a batch; True for each digest that was (probably) there before it, including
        an earlier copy in the same batch."""
        pos = self._positions(digests)
        words, bits = pos >> np.uint64(6), pos & np.uint64(63)
        present = ((self._words[words] >> bits) & np.uint64(1)).astype(bool).all(axis=1)
        if len(digests) > 1:  # copies within the batch: all but the first occurrence
            _, first = np.unique(digests.view(np.dtype((np.void, 16))).ravel(), return_index=True)
            again = np.ones(len(digests), dtype=bool)
            again[first] = False
            present |= again
        out: npt.NDArray[np.bool_] = present
        np.bitwise_or.at(self._words, words.ravel(), np.uint64(1) << bits.ravel())
        self.count += len(digests)
        if self.count > self.capacity and (self.count - len(digests)) <= self.capacity:
            log.warning(
                "bloom filter past its capacity of %d; the false-positive rate rises above %g "
                "(only memory grows: pairs stay exact); raise --bloom-capacity",
                self.capacity,
                self.fp_rate,
            )
        return out


def _groups(digests: U64, positions: I64) -> PairArrays:
    """``(first, other)`` for every document whose digest an earlier one has, similarity 1."""
    if len(positions) < 2:
        return PairArrays.empty()
    order = np.lexsort((positions, digests[:, 1], digests[:, 0]))
    d, p = digests[order], positions[order]
    new = np.ones(len(p), dtype=bool)
    new[1:] = (d[1:] != d[:-1]).any(axis=1)
    starts = np.maximum.accumulate(np.where(new, np.arange(len(p)), 0))
    dup = ~new
    first, other = p[starts[dup]], p[dup]
    return PairArrays.of(first, other, np.ones(len(other)), np.zeros(len(other))).sorted()


@dataclass(frozen=True, slots=True)
class ExactConfig(MethodConfig):
    """Exact duplicates of the canonical text.

    Attributes:
        threshold: Accepted for the protocol's sake and ignored: similarity is 1.0 or 0.0.
        canonicalize: Canonicalizer preset applied before hashing.
        bloom_capacity: Bloom-filter mode, sized for this many documents (``None``: the
            digests are kept in memory, 24 bytes per document).
        bloom_fp_rate: The filter's false-positive rate at ``bloom_capacity``.
    """

    KIND: ClassVar[str] = "exact"
    threshold: float = 1.0
    canonicalize: str = "txtfp"
    bloom_capacity: int | None = None
    bloom_fp_rate: float = 1e-3

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        check_choice("canonicalize", self.canonicalize, tuple(CANONICAL_PRESETS))
        cap = self.bloom_capacity
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ConfigError(f"bloom_capacity must be a positive integer, got {cap!r}")
        p = self.bloom_fp_rate
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 < p < 1.0:
            raise ConfigError(f"bloom_fp_rate must be in (0, 1), got {p!r}")
        if cap is not None:
            bloom_bits(cap, p)  # refused here, before a run reads anything


class ExactCollector(Collector):
    """Digests of one run: in memory, or (Bloom mode) spilled to disk with the flagged ones
    in memory; :meth:`pairs` is the exact second pass."""

    def __init__(self, config: ExactConfig) -> None:
        self._bloom = (
            BloomFilter(config.bloom_capacity, config.bloom_fp_rate)
            if config.bloom_capacity is not None
            else None
        )
        self._digests: list[U64] = []
        self._positions: list[I64] = []
        self._spill: IO[bytes] | None = None
        self._flagged: list[U64] = []

    def add(self, positions: I64, payload: U64) -> None:
        pos = np.asarray(positions, dtype=np.int64)
        if self._bloom is None:
            self._digests.append(payload)
            self._positions.append(pos)
            return
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="neardup-exact-")  # noqa: SIM115 - closed in pairs()
        rows = np.empty((len(pos), 3), dtype="<u8")
        rows[:, :2], rows[:, 2] = payload, pos.astype(np.uint64)
        self._spill.write(rows.tobytes())
        flagged = self._bloom.add_and_test(payload)
        if flagged.any():
            self._flagged.append(payload[flagged])

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        if self._bloom is None:
            if not self._digests:
                return PairArrays.empty()
            return _groups(np.concatenate(self._digests), np.concatenate(self._positions))
        spill, self._spill = self._spill, None
        if spill is None:
            return PairArrays.empty()
        with spill:
            return self._second_pass(spill) if self._flagged else PairArrays.empty()

    def _second_pass(self, spill: IO[bytes]) -> PairArrays:
        """Read the spill file back, holding only the rows of flagged digests."""
        flagged = np.unique(np.concatenate(self._flagged), axis=0)
        assert self._bloom is not None
        log.info(
            "exact bloom: %d flagged digests of %d documents (expected false-positive rate %.2g)",
            len(flagged),
            self._bloom.count,
            self._bloom.expected_fp_rate(),
        )
        spill.seek(0)
        keep_d: list[U64] = []
        keep_p: list[I64] = []
        while raw := spill.read((1 << 16) * 24):
            rows = np.frombuffer(raw, dtype="<u8").reshape(-1, 3)
            hit = np.isin(rows[:, 0], flagged[:, 0])
            if hit.any():
                keep_d.append(rows[hit, :2].astype(np.uint64))
                keep_p.append(rows[hit, 2].astype(np.int64))
        if not keep_d:
            return PairArrays.empty()
        return _groups(np.concatenate(keep_d), np.concatenate(keep_p))


class ExactMethod(Method):
    """``--method exact``: documents whose canonical texts are equal (XXH3-128 digests).

    Memory: 24 bytes per document (digest and position) by default; in Bloom mode the filter
    (about ``1.44 * log2(1 / fp_rate)`` bits per document of capacity) plus the flagged
    digests, the rest spilled to a temporary file.

    Examples:
        >>> from neardup.pipeline import dedup
        >>> r = dedup(["A b c", "a b c", "x"], method="exact")
        >>> [c.members for c in r.clusters]
        [('0', '1')]
    """

    name: ClassVar[str] = "exact"
    config: ExactConfig

    def __init__(self, config: ExactConfig) -> None:
        super().__init__(config)
        self._canon = Canonicalizer(config.canonicalize)

    @property
    def params(self) -> str:
        return f"exact-xxh3-128|{self._canon.params}"

    @property
    def index_params(self) -> str:
        return "exact"

    def sketch(self, docs: Sequence[Document]) -> U64:
        return exact_digests(texts_of(docs), self._canon)

    def collector(self) -> ExactCollector:
        return ExactCollector(self.config)

    def fingerprint(self, doc: Document) -> str:
        lo, hi = self.sketch([doc])[0]
        return f"{int(hi):016x}{int(lo):016x}"

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        d = self.sketch([a, b])
        same = bool((d[0] == d[1]).all())
        return (1.0 if same else 0.0), (0 if same else 1)
