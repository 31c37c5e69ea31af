"""Exact duplicates of the canonical text: XXH3-128 of the canonicalizer's output, found in a
stream; an optional Bloom-filter mode bounds memory for corpora beyond RAM; and
``exact_first``, which removes exact copies before a near-duplicate method runs.

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
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from neardup.canonicalize import Canonicalizer
from neardup.errors import ConfigError
from neardup.io import Document
from neardup.methods import Method, PairRow, _texts
from neardup.report import Cluster, DedupResult, Pair
from neardup.types import DocId

__all__ = ["BloomFilter", "ExactMethod", "exact_digests", "exact_first"]

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
    from neardup._kernels.spans import Spans, pack

    canon = canonicalizer if canonicalizer is not None else Canonicalizer("txtfp")
    packed = pack([canon.canonicalize(t) for t in texts])
    starts, ends = packed.offsets[:-1], packed.offsets[1:]
    offsets = np.arange(len(texts) + 1, dtype=np.int64)
    lo, hi = hash_spans(Spans(packed.buf, starts, ends, offsets), "xxh3_128")
    out = np.empty((len(texts), 2), dtype=np.uint64)
    out[:, 0], out[:, 1] = lo, hi
    return out


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
        self.bits = max(64, math.ceil(-capacity * math.log(fp_rate) / math.log(2) ** 2))
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


def _groups(digests: U64, positions: I64) -> Iterator[PairRow]:
    """``(first, other, 1.0, 0)`` for every document whose digest an earlier one has."""
    if len(positions) < 2:
        return
    order = np.lexsort((positions, digests[:, 1], digests[:, 0]))
    d, p = digests[order], positions[order]
    new = np.ones(len(p), dtype=bool)
    new[1:] = (d[1:] != d[:-1]).any(axis=1)
    starts = np.maximum.accumulate(np.where(new, np.arange(len(p)), 0))
    dup = ~new
    first, other = p[starts[dup]], p[dup]
    keep = np.argsort(other, kind="stable")
    yield from zip(
        first[keep].tolist(), other[keep].tolist(), [1.0] * len(keep), [0] * len(keep), strict=True
    )


class ExactMethod(Method):
    """``--method exact``: documents whose canonical texts are equal (XXH3-128 digests).

    ``threshold`` is accepted for the protocol's sake and ignored: similarity is 1.0 or 0.0.
    Memory: 24 bytes per document (digest and position) by default; with ``bloom_capacity``,
    the Bloom filter (about ``1.44 * log2(1 / fp_rate)`` bits per document of capacity) plus
    the flagged digests, the rest spilled to a temporary file.

    Examples:
        >>> from neardup.pipeline import dedup
        >>> r = dedup(["A b c", "a b c", "x"], method=ExactMethod(1.0))
        >>> [c.members for c in r.clusters]
        [('0', '1')]
    """

    name = "exact"

    def __init__(
        self,
        threshold: float = 1.0,
        *,
        canonicalizer: Canonicalizer | None = None,
        bloom_capacity: int | None = None,
        bloom_fp_rate: float = 1e-3,
    ) -> None:
        super().__init__(threshold)
        self._canon = canonicalizer or Canonicalizer("txtfp")
        self._bloom_capacity = bloom_capacity
        self._bloom_fp_rate = bloom_fp_rate
        self._bloom = (
            BloomFilter(bloom_capacity, bloom_fp_rate) if bloom_capacity is not None else None
        )
        self._digests: list[U64] = []
        self._positions: list[I64] = []
        self._spill: IO[bytes] | None = None
        self._flagged: list[U64] = []

    @property
    def params(self) -> str:
        return f"exact-xxh3-128|{self._canon.config}"

    @property
    def index_params(self) -> str:
        return "exact"

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        for key in ("_digests", "_spill", "_flagged", "_bloom"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._digests, self._positions, self._flagged = [], [], []
        self._spill, self._bloom = None, None

    def sketch(self, docs: Sequence[Document]) -> U64:
        return exact_digests(_texts(docs), self._canon)

    def index(self, positions: npt.NDArray[np.int64], payload: U64) -> None:
        pos = np.asarray(positions, dtype=np.int64)
        if self._bloom is None:
            self._digests.append(payload)
            self._positions.append(pos)
            return
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="neardup-exact-")  # noqa: SIM115 - lives with the method
        rows = np.empty((len(pos), 3), dtype="<u8")
        rows[:, :2], rows[:, 2] = payload, pos.astype(np.uint64)
        self._spill.write(rows.tobytes())
        flagged = self._bloom.add_and_test(payload)
        if flagged.any():
            self._flagged.append(payload[flagged])

    def pairs(self) -> Iterator[PairRow]:
        if self._bloom is None:
            if not self._digests:
                return
            yield from _groups(np.concatenate(self._digests), np.concatenate(self._positions))
            return
        yield from self._bloom_pairs()

    def _bloom_pairs(self) -> Iterator[PairRow]:
        """Second pass over the spill file, holding only the flagged digests' rows; the file
        is closed (and so removed) afterwards."""
        spill, self._spill = self._spill, None
        if spill is None:
            return
        with spill:
            if self._flagged:
                yield from self._second_pass(spill)

    def _second_pass(self, spill: IO[bytes]) -> Iterator[PairRow]:
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
        chunk = 1 << 16
        while True:
            raw = spill.read(chunk * 24)
            if not raw:
                break
            rows = np.frombuffer(raw, dtype="<u8").reshape(-1, 3)
            hit = np.isin(rows[:, 0], flagged[:, 0])
            if hit.any():
                keep_d.append(rows[hit, :2].astype(np.uint64))
                keep_p.append(rows[hit, 2].astype(np.int64))
        if keep_d:
            yield from _groups(np.concatenate(keep_d), np.concatenate(keep_p))

    def fingerprint(self, doc: Document) -> str:
        lo, hi = self.sketch([doc])[0]
        return f"{int(hi):016x}{int(lo):016x}"

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        d = self.sketch([a, b])
        same = bool((d[0] == d[1]).all())
        return (1.0 if same else 0.0), (0 if same else 1)


def exact_first(
    docs: Iterable[Document],
    *,
    method: Method,
    batch_size: int = 2048,
    canonicalizer: Canonicalizer | None = None,
    **dedup_options: Any,
) -> DedupResult:
    """Remove exact copies (equal canonical text) in a stream, run ``method`` on the rest,
    and fold the copies back into its clusters: each copy joins the cluster of the document
    it copies, with a pair of similarity 1.0.

    Args:
        docs: The documents.
        method: The near-duplicate method that runs on the first copy of each text.
        batch_size: Documents hashed per batch.
        canonicalizer: Canonicalizer of the exact pass (default: the method's own when it
            has one, else ``txtfp``), so a copy is what the method would also see as equal.
        **dedup_options: Passed to :func:`neardup.pipeline.dedup`.

    Returns:
        A :class:`~neardup.report.DedupResult` over every document, in input order.

    Examples:
        >>> from neardup.methods import make_method
        >>> from neardup.io import Document
        >>> texts = ["a b c d e f", "x y", "a b c d e f"]
        >>> docs = [Document(str(i), t) for i, t in enumerate(texts)]
        >>> [c.members for c in exact_first(docs, method=make_method("simhash")).clusters]
        [('0', '2')]
    """
    from itertools import islice

    from neardup.cluster import cluster_labels, components
    from neardup.pipeline import dedup

    canon = canonicalizer or getattr(method, "_canon", None) or Canonicalizer("txtfp")
    order: list[DocId] = []
    copies: list[tuple[DocId, DocId]] = []  # (copy id, first id)
    first_of: dict[tuple[int, int], DocId] = {}

    def uniques() -> Iterator[Document]:
        stream = iter(docs)
        while batch := list(islice(stream, batch_size)):
            texts = [d.text for d in batch]
            if any(t is None for t in texts):
                yield from batch  # binary documents: no text to compare
                order.extend(d.id for d in batch)
                continue
            digests = exact_digests([t for t in texts if t is not None], canon)
            for d, (lo, hi) in zip(batch, digests.tolist(), strict=True):
                order.append(d.id)
                key = (lo, hi)
                seen = first_of.get(key)
                if seen is None and d.text and d.text.strip():
                    first_of[key] = d.id
                    yield d
                elif seen is None:
                    yield d  # empty texts are left to the method
                else:
                    copies.append((d.id, seen))

    inner = dedup(uniques(), method=method, batch_size=batch_size, **dedup_options)
    pos: dict[DocId, int] = {d: i for i, d in enumerate(order)}
    pairs = list(inner.pairs) + [Pair(first, copy, 1.0, 0) for copy, first in copies]
    pairs.sort(key=lambda p: (pos[p.a], pos[p.b]) if pos[p.a] < pos[p.b] else (pos[p.b], pos[p.a]))
    a = np.array([min(pos[p.a], pos[p.b]) for p in pairs], dtype=np.int64)
    b = np.array([max(pos[p.a], pos[p.b]) for p in pairs], dtype=np.int64)
    roots = components(len(order), a, b)
    clusters = [
        Cluster(n, tuple(order[i] for i in g), order[g[0]])
        for n, g in enumerate(cluster_labels(roots))
    ]
    stats = dict(inner.stats)
    stats["exact_copies"] = float(len(copies))
    stats["documents"] = float(len(order))
    stats["clusters"] = float(len(clusters))
    stats["pairs"] = float(len(pairs))
    return DedupResult(
        clusters=clusters,
        pairs=pairs,
        n_docs=len(order),
        method=f"exact+{inner.method}",
        threshold=inner.threshold,
        params=inner.params,
        stats=stats,
        doc_ids=order,
    )
