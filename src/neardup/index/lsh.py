"""Banded LSH for MinHash (Indyk and Motwani 1998; Leskovec, Rajaraman, Ullman, MMDS ch. 3).

:class:`LSHIndex` stores sketches in numpy arrays (band keys hashed to 64 bits in one
open-addressing table, no dict of Python sets) and returns every hit with its estimated
Jaccard; :func:`plan_lsh` (from :mod:`neardup.index.lshplan`) chooses ``(bands, rows)``.
The whole index lives in memory (the algorithm needs random access to every band key).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup.config import check_range
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError
from neardup.index._lsh_bytes import SavedLSH, dump_index, load_index
from neardup.index.lshplan import MAX_WEIGHTED_PERM, LSHPlan, _plan, plan_lsh
from neardup.sketch.minhash import MinHash, fold32
from neardup.sketch.sets import bucket_pairs, sorted_unique

__all__ = ["MAX_WEIGHTED_PERM", "LSHIndex", "LSHPlan", "plan_lsh"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
_MAX32 = np.uint64(0xFFFFFFFF)
_TABLE_FAMILY = "lsh"  # the band-key table and the per-call state (BandIndex)
_SKETCH_FAMILY = "minhash"  # band_keys and estimate
_NATIVE_SLOTS = (np.dtype(np.uint32), np.dtype(np.uint64))  # slot arrays the kernels take


#: 32-bit fingerprint of each slot (:func:`neardup.sketch.minhash.fold32`).
_fold = fold32


if TYPE_CHECKING:
    from neardup._kernels._band_index import BandIndex as _Base
else:  # the per-call state class of this process's backend, chosen when this module loads
    _Base = engine.kernels(_TABLE_FAMILY).BandIndex


def _min_est(min_similarity: float | None) -> float:
    return -1.0 if min_similarity is None else float(min_similarity)


class LSHIndex(_Base):
    """Banded LSH index over MinHash sketches, tuned for recall, with estimates on every hit.

    Args:
        threshold: The Jaccard similarity that should be found.
        num_perm: Slots per sketch.
        bands: Number of bands (default: planned, see ``recall``).
        rows: Slots per band (default: ``num_perm // bands`` or planned).
        recall: Planned probability that a pair exactly at ``threshold`` becomes a
            candidate (default 0.99; logged when ``num_perm`` cannot reach it).

    ``add``, ``query``, ``remove``, ``candidates`` and ``key_of`` are the compiled base
    class's (one native call each; see ``neardup._native.lsh.BandIndex``).

    Memory: about ``4 * num_perm + 12 * bands + 1`` bytes of arrays per document (32-bit slot
    fingerprints for the estimates, sorted band keys and row ids), plus the key object and a
    dict entry (about 100 bytes). :attr:`nbytes` reports the arrays.

    Examples:
        >>> from neardup.sketch.minhash import MinHasher
        >>> h = MinHasher(num_perm=64)
        >>> idx = LSHIndex(threshold=0.5, num_perm=64)
        >>> text = "a b c d e f g h i j k l m n o p"
        >>> idx.add("doc1", h.sketch(text))
        >>> idx.add("doc2", h.sketch(text + " q"))
        >>> [(k, round(s, 1)) for k, s in idx.query(h.sketch(text))][0]
        ('doc1', 1.0)
        >>> [(a, b) for a, b, _ in idx.pairs()]
        [('doc1', 'doc2')]
    """

    def __init__(
        self,
        threshold: float = 0.8,
        num_perm: int = 128,
        *,
        bands: int | None = None,
        rows: int | None = None,
        recall: float = 0.99,
    ) -> None:
        check_range("num_perm", num_perm, 1, 1 << 16, integer=True)
        if bands is None and rows is None:
            self.plan = plan_lsh(threshold, num_perm, method="recall", recall=recall)
        else:
            b = bands if bands is not None else num_perm // int(rows or 1)
            r = rows if rows is not None else num_perm // int(bands or 1)
            check_range("bands", b, 1, num_perm, integer=True)
            check_range("rows", r, 1, num_perm, integer=True)
            if (rows is None or bands is None) and num_perm % (bands or rows or 1):
                raise ConfigError(
                    f"num_perm={num_perm} is not divisible into bands of equal size "
                    f"(bands={bands}, rows={rows}); give both bands and rows, or a divisor"
                )
            if b * r > num_perm:
                raise ConfigError(
                    f"bands * rows = {b * r} exceeds num_perm={num_perm}; lower one of them"
                )
            check_range("threshold", threshold, 0.0, 1.0)
            self.plan = _plan(min(max(threshold, 1e-9), 1 - 1e-9), num_perm, b, r)
        self.num_perm = num_perm
        self._setup(num_perm, self.plan.bands, self.plan.rows, MinHash)

    def __getstate__(self) -> dict[str, object]:
        return {"plan": self.plan, "num_perm": self.num_perm, **self._dump()}

    def __setstate__(self, state: dict[str, object]) -> None:
        # (also the pickles of earlier versions: the same names, arrays of more rows)
        plan, num_perm = state["plan"], state["num_perm"]
        assert isinstance(plan, LSHPlan) and isinstance(num_perm, int)
        self.plan, self.num_perm = plan, num_perm
        self._setup(num_perm, plan.bands, plan.rows, MinHash)
        self._load(state)

    @property
    def bands(self) -> int:
        """Number of bands."""
        return self.plan.bands

    @property
    def rows(self) -> int:
        """Slots per band."""
        return self.plan.rows

    def __repr__(self) -> str:
        b, r = self.bands, self.rows
        return f"LSHIndex(bands={b}, rows={r}, num_perm={self.num_perm}, n={len(self)})"

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's arrays (not the Python keys and their dict)."""
        return self._nbytes()

    # ------------------------------------------------------------------ adding

    def _add_general(self, key: Hashable, mh: object) -> None:
        """:meth:`add` of what its compiled path does not take: a key already indexed, the
        first sketch, another kind of sketch (raises for a wrong one)."""
        self.add_many([key], [mh])  # type: ignore[list-item]

    def add_many(
        self, keys: Sequence[Hashable], sigs: Sequence[MinHash] | npt.NDArray[np.unsignedinteger]
    ) -> None:
        """Index many sketches at once (the fast path).

        Args:
            keys: One hashable key per sketch; no repeats within the call.
            sigs: MinHash values, or a ``(n, num_perm)`` uint64 array from
                ``MinHasher.sketch_many`` (or uint32, as datasketch's hashvalues; arrays
                carry no scheme: do not mix presets).

        Raises:
            InputError: Lengths differ, or a key repeats.
            IncompatibleSketchError: Wrong ``num_perm``, or another scheme or params than the
                sketches already indexed.
        """
        values = self._slots(sigs)
        if len(keys) != len(values):
            raise InputError(f"add_many got {len(keys)} keys for {len(values)} sketches")
        if len(set(keys)) != len(keys):
            raise InputError("add_many got the same key twice; keys must be unique")
        if not self._rows_dict.keys().isdisjoint(keys):
            for key in keys:
                if key in self:
                    self.remove(key)
        self._maybe_compact()
        if len(values):
            self._append(list(keys), np.ascontiguousarray(values))

    def _slots(
        self, sigs: Sequence[MinHash] | npt.NDArray[np.unsignedinteger]
    ) -> npt.NDArray[np.unsignedinteger]:
        """:meth:`_matrix`, but a 2-D uint32 or uint64 array of the right width as it is (the
        kernels fold either; no uint64 copy of a datasketch user's uint32 sketches)."""
        if (
            isinstance(sigs, np.ndarray)
            and sigs.dtype in _NATIVE_SLOTS
            and sigs.ndim == 2
            and sigs.shape[1] == self.num_perm
        ):
            return sigs
        return self._matrix(sigs)

    def _matrix(self, sigs: Sequence[MinHash] | U64) -> U64:
        if isinstance(sigs, np.ndarray):
            values = np.asarray(sigs, dtype=np.uint64)
            if values.ndim != 2 or values.shape[1] != self.num_perm:
                raise IncompatibleSketchError(
                    f"expected a (n, {self.num_perm}) array of sketches, got {values.shape}"
                )
            return values
        if not sigs:
            return np.empty((0, self.num_perm), dtype=np.uint64)
        for mh in sigs:
            if not isinstance(mh, MinHash):
                raise IncompatibleSketchError(f"expected MinHash values, got {type(mh).__name__}")
            if mh.num_perm != self.num_perm:
                raise IncompatibleSketchError(
                    f"sketch has {mh.num_perm} slots, the index {self.num_perm}; "
                    "use an index with the sketches' num_perm"
                )
            if self._params is None:
                self._params = (mh.scheme, mh.params)
            elif (mh.scheme, mh.params) != self._params:
                raise IncompatibleSketchError(
                    f"sketch made with {mh.scheme}/{mh.params}, the index holds "
                    f"{self._params[0]}/{self._params[1]}; index sketches of one MinHasher"
                )
        return np.stack([mh.hashvalues for mh in sigs])

    def count(self) -> int:
        """Number of indexed keys (``len(index)``; datasketch users know it as a count)."""
        return len(self)

    def merge(self, other: LSHIndex) -> None:
        """Add every key of ``other`` to this index (``other`` is unchanged).

        A key indexed in both takes ``other``'s sketch, as :meth:`add` would.

        Raises:
            IncompatibleSketchError: Different ``num_perm``, ``bands`` or ``rows``, or
                sketches of another scheme or params.

        Examples:
            >>> from neardup.sketch.minhash import MinHasher
            >>> h = MinHasher(num_perm=32)
            >>> a, b = LSHIndex(0.5, 32), LSHIndex(0.5, 32)
            >>> a.add("x", h.sketch_tokens(["p", "q"])); b.add("y", h.sketch_tokens(["p", "q"]))
            >>> a.merge(b); a.count(), [k for k, _ in a.query(h.sketch_tokens(["p", "q"]))]
            (2, ['x', 'y'])
        """
        if not isinstance(other, LSHIndex) or (self.num_perm, self.bands, self.rows) != (
            other.num_perm,
            other.bands,
            other.rows,
        ):
            raise IncompatibleSketchError(
                "cannot merge LSH indexes of different num_perm, bands or rows; build both "
                "with the same parameters"
            )
        if self._params and other._params and self._params != other._params:
            raise IncompatibleSketchError(
                f"cannot merge an index of {other._params[0]}/{other._params[1]} sketches into "
                f"one of {self._params[0]}/{self._params[1]}; index sketches of one MinHasher"
            )
        self._params = self._params or other._params
        keys, sig, state, _ = other._live()
        for key in keys:
            if key in self:
                self.remove(key)
        self._maybe_compact()
        if not keys:
            return
        # the 32-bit slot fingerprints are their own fingerprints; empty rows stay empty
        values = sig.astype(np.uint64)
        values[state == 2] = _MAX32
        self._append(keys, values)

    def get_counts(self) -> list[dict[int, int]]:
        """Per band, the number of indexed documents in each bucket (64-bit band key ->
        count), as datasketch's ``MinHashLSH.get_counts``. Empty sketches are in no bucket.

        Examples:
            >>> from neardup.sketch.minhash import MinHasher
            >>> h = MinHasher(num_perm=16)
            >>> idx = LSHIndex(0.5, 16, bands=4, rows=4)
            >>> idx.add_many(["a", "b"], [h.sketch_tokens(["x"]), h.sketch_tokens(["x"])])
            >>> [sorted(c.values()) for c in idx.get_counts()]
            [[2], [2], [2], [2]]
        """
        sig, state = self._arrays()
        keys = self._band_keys(sig[state == 1])
        out: list[dict[int, int]] = []
        for j in range(self.bands):
            uniq, counts = np.unique(keys[:, j], return_counts=True)
            out.append(dict(zip(uniq.tolist(), counts.tolist(), strict=True)))
        return out

    # ------------------------------------------------------------------ lookups

    def _band_keys(self, sig32: U32) -> U64:
        keys: U64 = engine.kernels(_SKETCH_FAMILY).band_keys(
            np.ascontiguousarray(sig32), self.bands, self.rows
        )
        return keys

    def _query_general(
        self, mh: object, min_similarity: float | None
    ) -> list[tuple[Hashable, float]]:
        """:meth:`query` of what its compiled path does not take: a sketch of an index that
        has no sketch parameters yet (arrays only, or nothing), or another kind of sketch
        (raises for a wrong one)."""
        if (
            type(mh) is MinHash and self._params is None and len(mh.hashvalues) == self.num_perm
        ):  # a query does not set the index's sketch parameters
            if not self._n:
                return []
            return self._query_lists(mh.hashvalues.reshape(1, -1), _min_est(min_similarity))[0]
        return self.query_many([mh], min_similarity=min_similarity)[0]  # type: ignore[list-item]

    def query_many(
        self, sigs: Sequence[MinHash] | U64, *, min_similarity: float | None = None
    ) -> list[list[tuple[Hashable, float]]]:
        """:meth:`query` for many sketches at once (one list of hits per sketch)."""
        values = self._matrix(sigs)
        if not len(values) or not self._n:
            return [[] for _ in range(len(values))]
        return self._query_lists(np.ascontiguousarray(values), _min_est(min_similarity))

    def _estimate(self, a32: U32, ai: I64, b32: U32, bi: I64) -> npt.NDArray[np.float64]:
        est: npt.NDArray[np.float64] = engine.kernels(_SKETCH_FAMILY).estimate(
            np.ascontiguousarray(a32), ai, np.ascontiguousarray(b32), bi
        )
        return est

    def pair_rows(
        self, *, min_similarity: float | None = None
    ) -> tuple[I64, I64, npt.NDArray[np.float64]]:
        """Every candidate pair once as arrays ``(row_a, row_b, estimate)``, ``row_a < row_b``.

        Rows are insertion slots; :meth:`key_of` maps them back to keys. This is the bulk
        form of :meth:`pairs` (no Python object per pair), for pipelines.
        """
        self._maybe_compact()
        sig, state = self._arrays()
        n = self._n
        live = np.flatnonzero(state == 1)
        flat = self._band_keys(sig[live]).ravel()
        order = np.argsort(flat, kind="stable")
        srows = np.repeat(live, self.bands)[order]
        # every pair in each bucket (no cap); a pair shared by several bands repeats here
        a, b, _, _ = bucket_pairs(flat[order], srows.astype(np.int64), n + 1)
        if not len(a):
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
        codes = sorted_unique(a * np.int64(n) + b)
        a, b = codes // n, codes % n
        est = self._estimate(sig, a, sig, b)
        if min_similarity is not None:
            ok = est >= min_similarity
            a, b, est = a[ok], b[ok], est[ok]
        return a, b, est

    def to_bytes(self) -> bytes:
        """Serialize the index: params, keys (JSON) and slot fingerprints (see ``_lsh_bytes``).

        Raises:
            InputError: A key is not a str or int (only those can be saved; pickle keeps any).
        """
        keys, sig, state, _ = self._live()
        plan = self.plan
        saved = SavedLSH(
            num_perm=self.num_perm,
            bands=plan.bands,
            rows=plan.rows,
            threshold=plan.threshold,
            keys=keys,
            params=self._params,  # type: ignore[arg-type]
            sig=sig,
            state=state,
        )
        return dump_index(saved)

    @classmethod
    def from_bytes(cls, data: bytes) -> LSHIndex:
        """Read :meth:`to_bytes` output (the band-key table is rebuilt).

        Raises:
            FormatError: Malformed or truncated data, or an unknown version.
        """
        saved = load_index(data)
        try:
            index = cls(saved.threshold, saved.num_perm, bands=saved.bands, rows=saved.rows)
        except ConfigError as exc:
            raise FormatError(f"saved LSHIndex has bad parameters: {exc}") from None
        index._params = saved.params
        index._restore(list(saved.keys), saved.sig, saved.state)
        return index

    def entries(self) -> tuple[list[Hashable], U32]:
        """Every indexed key in insertion order, with its row of 32-bit slot fingerprints
        (the slots themselves when they are below ``2**32``, as uint32 sketches are)."""
        keys, sig, _, _ = self._live()
        return keys, sig

    def _candidates_general(self, values: object) -> list[Hashable]:
        """:meth:`candidates` of what its compiled path does not take: anything but a 1-D
        unsigned array (converted to uint64), or one of the wrong length (raises)."""
        hv = values
        if type(hv) is not np.ndarray or hv.dtype.kind != "u":
            hv = np.ascontiguousarray(values, dtype=np.uint64)
        if hv.shape != (self.num_perm,):
            raise IncompatibleSketchError(
                f"expected {self.num_perm} slot values, got shape {hv.shape}; "
                "query with a sketch of the index's num_perm"
            )
        return self.candidates(hv)

    def candidates_many(self, values: npt.ArrayLike) -> list[list[Hashable]]:
        """:meth:`candidates` of each row of a ``(n, num_perm)`` array, in one native call."""
        sigs = self._slots(np.asarray(values))
        if not len(sigs) or not self._n:
            return [[] for _ in range(len(sigs))]
        return self._candidate_lists(np.ascontiguousarray(sigs))

    def band_keys(self, sigs: Sequence[MinHash] | U64) -> U64:
        """The ``(n, bands)`` 64-bit band keys this index computes for sketches: documents
        are candidates exactly when they share a key in the same column. For engines that
        group by key themselves (Spark, the SQLite store)."""
        keys: U64 = self._band_keys(_fold(self._matrix(sigs)))
        return keys

    def pairs(
        self, *, min_similarity: float | None = None
    ) -> Iterator[tuple[Hashable, Hashable, float]]:
        """Every candidate pair once, as ``(key_a, key_b, estimated Jaccard)``.

        ``key_a`` was indexed before ``key_b``; pairs come in insertion order of ``key_a``.
        Candidates come from one sort of all band keys (no per-document queries).
        """
        a, b, est = self.pair_rows(min_similarity=min_similarity)
        get = self.key_of
        yield from zip(map(get, a.tolist()), map(get, b.tolist()), est.tolist(), strict=True)
