"""Banded LSH for MinHash (Indyk and Motwani 1998; Leskovec, Rajaraman, Ullman, MMDS ch. 3).

:class:`LSHIndex` stores sketches in numpy arrays (band keys hashed to 64 bits in one
open-addressing table, no dict of Python sets) and returns every hit with its estimated
Jaccard; :func:`plan_lsh` (from :mod:`neardup.index.lshplan`) chooses ``(bands, rows)``.
The whole index lives in memory (the algorithm needs random access to every band key).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._kernels.lsh import NO_ROOM
from neardup._kernels.sets import bucket_pairs, sorted_unique
from neardup.config import check_range
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError
from neardup.index._growth import grow_array, grow_table
from neardup.index._lsh_bytes import SavedLSH, dump_index, load_index
from neardup.index.lshplan import MAX_WEIGHTED_PERM, LSHPlan, _plan, plan_lsh
from neardup.sketch.minhash import MinHash, fold32

__all__ = ["MAX_WEIGHTED_PERM", "LSHIndex", "LSHPlan", "plan_lsh"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
_MAX32 = np.uint64(0xFFFFFFFF)
_MIN_SLOTS = 512
_MIN_ENTRIES = 256
_HEADER = 8  # words of the table header (layout in neardup._kernels.lsh)
_TABLE_FAMILY = "lsh"  # the band-key table kernels
_SKETCH_FAMILY = "minhash"  # band_keys and estimate
_NATIVE_SLOTS = (np.dtype(np.uint32), np.dtype(np.uint64))  # slot arrays the kernels take


#: 32-bit fingerprint of each slot (:func:`neardup.sketch.minhash.fold32`).
_fold = fold32


class LSHIndex:
    """Banded LSH index over MinHash sketches, tuned for recall, with estimates on every hit.

    Args:
        threshold: The Jaccard similarity that should be found.
        num_perm: Slots per sketch.
        bands: Number of bands (default: planned, see ``recall``).
        rows: Slots per band (default: ``num_perm // bands`` or planned).
        recall: Planned probability that a pair exactly at ``threshold`` becomes a
            candidate (default 0.99; logged when ``num_perm`` cannot reach it).

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
        self._params: tuple[str, str] | None = None
        self._clear()

    def _clear(self) -> None:
        self._sig = np.empty((0, self.num_perm), dtype=np.uint32)
        self._state = np.empty(0, dtype=np.uint8)  # 0 removed, 1 live, 2 live but empty
        self._mark = np.zeros(0, dtype=np.int64)  # query stamps (see _kernels/lsh)
        self._keys: list[Hashable | None] = []
        self._row: dict[Hashable, int] = {}
        self._n = 0
        self._dead = 0
        # the last add's (slots, row), filed by the next query or any other read (_flush)
        self._pending: tuple[U64, int] | None = None
        self._lsh = engine.kernels(_TABLE_FAMILY)
        # the band-key table, one int64 array (layout in neardup._kernels.lsh)
        self._tab: I64 = self._lsh.new_table(
            _MIN_SLOTS, _MIN_ENTRIES, self.plan.bands, self.plan.rows, _HEADER
        )
        self._bind()

    def _bind(self) -> None:
        """Look up the kernels once and keep the per-call entry points and output buffers
        on the instance (the index pickles the family names, not modules)."""
        self._lsh = engine.kernels(_TABLE_FAMILY)
        self._mh = engine.kernels(_SKETCH_FAMILY)
        self._add_rows = self._lsh.add_rows
        self._query_one = self._lsh.query_one
        self._add_query_one = self._lsh.add_query_one
        self._add_query_same = self._lsh.add_query_same
        self._outputs(64)

    def _outputs(self, m: int) -> None:
        """Room for ``m`` hits: one int64 buffer, rows in the first half and estimates (as
        float64) in the second, so the per-document kernel takes one output array."""
        self._out: I64 = np.empty(2 * m, dtype=np.int64)
        self._out_rows: I64 = self._out[:m]
        self._out_est: F64 = self._out[m:].view(np.float64)
        # the same buffers as memoryviews: their items are Python ints and floats, read
        # several times faster than numpy's (a query's few hits become tuples)
        self._rows_mv = self._out_rows.data
        self._est_mv = self._out_est.data

    _UNPICKLED = (
        "_lsh", "_mh", "_add_rows", "_query_one", "_add_query_one", "_add_query_same", "_out",
        "_out_rows", "_out_est", "_rows_mv", "_est_mv",
    )  # fmt: skip

    def __getstate__(self) -> dict[str, object]:
        self._flush()
        state = {k: v for k, v in self.__dict__.items() if k not in self._UNPICKLED}
        state["_mark"] = np.zeros(0, dtype=np.int64)
        state["_tab"] = self._tab.copy()
        state["_tab"][2] = 0  # the query stamp restarts with the fresh marks
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self._pending = None
        self.__dict__.update(state)
        self._mark = np.zeros(len(self._state), dtype=np.int64)
        self._bind()

    @property
    def bands(self) -> int:
        """Number of bands."""
        return self.plan.bands

    @property
    def rows(self) -> int:
        """Slots per band."""
        return self.plan.rows

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def __repr__(self) -> str:
        b, r = self.bands, self.rows
        return f"LSHIndex(bands={b}, rows={r}, num_perm={self.num_perm}, n={len(self)})"

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's numpy arrays (not the Python keys and their dict)."""
        self._flush()
        arrays = (self._sig, self._state, self._mark, self._tab)
        return sum(int(a.nbytes) for a in arrays)

    # ------------------------------------------------------------------ adding

    def add(self, key: Hashable, mh: MinHash) -> None:
        """Index one sketch under ``key`` (an existing ``key`` is replaced).

        The sketch is filed by the next :meth:`query` (one native call for both: the
        per-document path of datasketch's ``insert`` pattern) or by any other read.
        """
        if self._pending is not None:
            self._flush()
        params = self._params
        if (
            type(mh) is not MinHash
            or params is None
            or mh.params != params[1]
            or mh.scheme != params[0]
            or key in self._row
            or len(mh.hashvalues) != self.num_perm
        ):
            self.add_many([key], [mh])  # the general path (raises for a wrong sketch)
            return
        hv = mh.hashvalues
        r = self._n
        self._pending = (hv, r)  # hashvalues are read-only: safe to file later
        self._keys.append(key)
        self._row[key] = r
        self._n = r + 1

    def _flush(self) -> None:
        """File the pending sketch of the last :meth:`add` (every reader calls this first)."""
        if self._pending is None:
            return
        hv, r = self._pending
        self._pending = None
        if self._add_rows(hv, r, self._sig, self._state, self._tab):
            self._reserve(1, r)
            self._add_rows(hv, r, self._sig, self._state, self._tab)

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
        self._flush()
        values = self._slots(sigs)
        if len(keys) != len(values):
            raise InputError(f"add_many got {len(keys)} keys for {len(values)} sketches")
        if len(set(keys)) != len(keys):
            raise InputError("add_many got the same key twice; keys must be unique")
        if not self._row.keys().isdisjoint(keys):
            for key in keys:
                if key in self._row:
                    self.remove(key)
        self._maybe_compact()
        n = len(values)
        if not n:
            return
        self._reserve(n)
        lo = self._n
        self._lsh.add_rows(np.ascontiguousarray(values), lo, self._sig, self._state, self._tab)
        self._keys.extend(keys)
        self._row.update(zip(keys, range(lo, lo + n), strict=True))
        self._n = lo + n

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

    def _reserve(self, k: int, n: int | None = None) -> None:
        """Room for ``k`` more rows after the first ``n`` (default all), their entries, and
        a table at most 3/4 full."""
        n = self._n if n is None else n
        need = n + k
        if need > len(self._state):
            cap = max(need, 2 * len(self._state), 64)
            grow_array(self, "_sig", (cap, self.num_perm), n)
            grow_array(self, "_state", (cap,), n)
            grow_array(self, "_mark", (cap,), n)
        grow_table(self, k * self.plan.bands)

    def remove(self, key: Hashable) -> None:
        """Remove ``key`` from the index.

        Raises:
            InputError: ``key`` is not in the index.
        """
        self._flush()
        row = self._row.pop(key, None)
        if row is None:
            raise InputError(f"key {key!r} is not in the index; check `key in index` first")
        self._state[row] = 0
        self._keys[row] = None
        self._dead += 1

    def count(self) -> int:
        """Number of indexed keys (``len(index)``; datasketch users know it as a count)."""
        return len(self._row)

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
        self._flush()
        other._flush()
        self._params = self._params or other._params
        rows = np.flatnonzero(other._state[: other._n] != 0)
        keys = [other._keys[i] for i in rows.tolist()]
        for key in keys:
            if key in self._row:
                self.remove(key)
        self._maybe_compact()
        n = len(rows)
        if not n:
            return
        # the 32-bit slot fingerprints are their own fingerprints; empty rows stay empty
        values = other._sig[rows].astype(np.uint64)
        values[other._state[rows] == 2] = _MAX32
        self._reserve(n)
        lo = self._n
        self._lsh.add_rows(np.ascontiguousarray(values), lo, self._sig, self._state, self._tab)
        for i, key in enumerate(keys):
            self._keys.append(key)
            self._row[key] = lo + i
        self._n = lo + n

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
        self._flush()
        live = np.flatnonzero(self._state[: self._n] == 1)
        keys = self._band_keys(self._sig[live])
        out: list[dict[int, int]] = []
        for j in range(self.bands):
            uniq, counts = np.unique(keys[:, j], return_counts=True)
            out.append(dict(zip(uniq.tolist(), counts.tolist(), strict=True)))
        return out

    def _maybe_compact(self) -> None:
        """Drop removed rows (renumbering the rest) once they are a quarter of the index."""
        if self._dead <= max(64, self._n // 4):
            return
        self._flush()
        live = np.flatnonzero(self._state[: self._n] != 0)
        sig, state = self._sig[live], self._state[live]
        keys = [self._keys[i] for i in live.tolist()]
        params = self._params
        self._clear()
        self._params = params
        self._reserve(len(live))
        self._sig[: len(live)] = sig
        self._state[: len(live)] = state
        self._keys = keys
        self._row = {k: i for i, k in enumerate(keys)}
        self._n = len(live)
        self._lsh.insert_rows(np.flatnonzero(state == 1).astype(np.int64), self._sig, self._tab)

    # ------------------------------------------------------------------ lookups

    def _band_keys(self, sig32: U32) -> U64:
        keys: U64 = self._mh.band_keys(np.ascontiguousarray(sig32), self.bands, self.rows)
        return keys

    def query(
        self, mh: MinHash, *, min_similarity: float | None = None
    ) -> list[tuple[Hashable, float]]:
        """Keys sharing a band with ``mh``, each with its estimated Jaccard, best first.

        One native call (probe, walk, estimate, sort): datasketch's per-document pattern.

        Args:
            mh: The query sketch (same ``num_perm``, scheme and params as the index).
            min_similarity: Keep only hits whose estimate is at least this.
        """
        pending = self._pending
        if type(mh) is not MinHash:
            return self.query_many([mh], min_similarity=min_similarity)[0]  # raises
        hv = mh.hashvalues
        if pending is None or pending[0] is not hv:  # (a pending sketch was checked by add)
            params = self._params
            other = params is not None and (mh.params != params[1] or mh.scheme != params[0])
            if other or len(hv) != self.num_perm:
                return self.query_many([mh], min_similarity=min_similarity)[0]  # raises
            if not self._n:
                return []
        min_est = -1.0 if min_similarity is None else float(min_similarity)
        if pending is None:
            n = self._query_one(
                hv, self._sig, self._state, self._mark, self._tab, self._out_rows,
                self._out_est, min_est,
            )  # fmt: skip
        else:
            add, r = pending
            self._pending = None
            if add is hv:  # datasketch's pattern: add a sketch, then query it
                n = self._add_query_same(
                    hv, r, self._sig, self._state, self._mark, self._tab, self._out, min_est
                )
            else:
                n = self._add_query_one(
                    add, r, hv, self._sig, self._state, self._mark, self._tab,
                    self._out_rows, self._out_est, min_est,
                )  # fmt: skip
            if n == NO_ROOM:  # the add lacked room: make it, file, query
                self._pending = pending
                self._flush()
                return self.query(mh, min_similarity=min_similarity)
        if n < 0:  # more hits than the output buffers hold (the add is filed): grow, ask again
            self._outputs(2 * -n)
            return self.query(mh, min_similarity=min_similarity)
        keys, rows, est = self._keys, self._rows_mv, self._est_mv
        if n == 1:  # the common cases without a loop
            return [(keys[rows[0]], est[0])]
        if n == 2:
            return [(keys[rows[0]], est[0]), (keys[rows[1]], est[1])]
        return [(keys[rows[i]], est[i]) for i in range(n)]

    def query_many(
        self, sigs: Sequence[MinHash] | U64, *, min_similarity: float | None = None
    ) -> list[list[tuple[Hashable, float]]]:
        """:meth:`query` for many sketches at once (one list of hits per sketch)."""
        self._flush()
        values = self._matrix(sigs)
        if not len(values) or not self._n:
            return [[] for _ in range(len(values))]
        offsets, rows, est = self._lsh.query_rows(
            np.ascontiguousarray(values), self._sig, self._state, self._mark, self._tab,
            -1.0 if min_similarity is None else float(min_similarity),
        )  # fmt: skip
        # every (key, estimate) pair once, then one slice of them per query (C-level maps)
        hits = list(zip(map(self._keys.__getitem__, rows.tolist()), est.tolist(), strict=True))
        bounds = offsets.tolist()
        return list(map(hits.__getitem__, map(slice, bounds[:-1], bounds[1:])))

    def _estimate(self, a32: U32, ai: I64, rows: I64) -> npt.NDArray[np.float64]:
        est: npt.NDArray[np.float64] = self._mh.estimate(
            np.ascontiguousarray(a32), ai, self._sig, rows
        )
        return est

    def pair_rows(
        self, *, min_similarity: float | None = None
    ) -> tuple[I64, I64, npt.NDArray[np.float64]]:
        """Every candidate pair once as arrays ``(row_a, row_b, estimate)``, ``row_a < row_b``.

        Rows are insertion slots; :meth:`key_of` maps them back to keys. This is the bulk
        form of :meth:`pairs` (no Python object per pair), for pipelines.
        """
        self._flush()
        self._maybe_compact()
        live = np.flatnonzero(self._state[: self._n] == 1)
        flat = self._band_keys(self._sig[live]).ravel()
        order = np.argsort(flat, kind="stable")
        srows = np.repeat(live, self.bands)[order]
        # every pair in each bucket (no cap); a pair shared by several bands repeats here
        a, b, _, _ = bucket_pairs(flat[order], srows.astype(np.int64), self._n + 1)
        if not len(a):
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
        codes = sorted_unique(a * np.int64(self._n) + b)
        a, b = codes // self._n, codes % self._n
        est = self._estimate(self._sig, a, b)
        if min_similarity is not None:
            ok = est >= min_similarity
            a, b, est = a[ok], b[ok], est[ok]
        return a, b, est

    def to_bytes(self) -> bytes:
        """Serialize the index: params, keys (JSON) and slot fingerprints (see ``_lsh_bytes``).

        Raises:
            InputError: A key is not a str or int (only those can be saved; pickle keeps any).
        """
        self._flush()
        live = np.flatnonzero(self._state[: self._n] != 0)
        plan = self.plan
        saved = SavedLSH(
            num_perm=self.num_perm,
            bands=plan.bands,
            rows=plan.rows,
            threshold=plan.threshold,
            keys=[self._keys[i] for i in live.tolist()],
            params=self._params,
            sig=self._sig[live],
            state=self._state[live],
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
        count = len(saved.keys)
        index._params = saved.params
        index._reserve(count)
        index._sig[:count] = saved.sig
        index._state[:count] = saved.state
        index._keys = list(saved.keys)
        index._row = {k: i for i, k in enumerate(saved.keys)}
        index._n = count
        index._lsh.insert_rows(
            np.flatnonzero(saved.state == 1).astype(np.int64), index._sig, index._tab
        )
        return index

    def entries(self) -> tuple[list[Hashable], U32]:
        """Every indexed key in insertion order, with its row of 32-bit slot fingerprints
        (the slots themselves when they are below ``2**32``, as uint32 sketches are)."""
        self._flush()
        live = np.flatnonzero(self._state[: self._n] != 0)
        return [self._keys[i] for i in live.tolist()], self._sig[live]

    def candidates(self, values: npt.ArrayLike) -> list[Hashable]:
        """Keys sharing a band key with one sketch given as its slot values, unranked.

        The bare candidate set of datasketch's ``MinHashLSH.query`` (no estimate threshold):
        one native call that reads no candidate's slots; band by band, each band's keys newest
        first. An empty sketch (every slot at its maximum) has none.

        Raises:
            IncompatibleSketchError: ``values`` is not ``num_perm`` slots.
        """
        if self._pending is not None:
            self._flush()
        hv = values
        if type(hv) is not np.ndarray or hv.dtype.kind != "u":
            hv = np.ascontiguousarray(values, dtype=np.uint64)
        if hv.shape != (self.num_perm,):
            raise IncompatibleSketchError(
                f"expected {self.num_perm} slot values, got shape {hv.shape}; "
                "query with a sketch of the index's num_perm"
            )
        if not self._n:
            return []
        while True:  # no estimate: no candidate's slots are read
            n = self._lsh.candidates_one(hv, self._state, self._mark, self._tab, self._out_rows)
            if n >= 0:
                break
            self._outputs(2 * -n)
        return list(map(self._keys.__getitem__, self._rows_mv[:n]))

    def candidates_many(self, values: npt.ArrayLike) -> list[list[Hashable]]:
        """:meth:`candidates` of each row of a ``(n, num_perm)`` array, in one native call."""
        self._flush()
        sigs = self._slots(np.asarray(values))
        if not len(sigs) or not self._n:
            return [[] for _ in range(len(sigs))]
        offsets, rows = self._lsh.candidate_rows(
            np.ascontiguousarray(sigs), self._state, self._mark, self._tab
        )
        hits = list(map(self._keys.__getitem__, rows.tolist()))
        bounds = offsets.tolist()
        return list(map(hits.__getitem__, map(slice, bounds[:-1], bounds[1:])))

    def key_of(self, row: int) -> Hashable:
        """The key indexed in insertion slot ``row`` (see :meth:`pair_rows`)."""
        return self._keys[row]

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
        get = self._keys.__getitem__
        yield from zip(map(get, a.tolist()), map(get, b.tolist()), est.tolist(), strict=True)
