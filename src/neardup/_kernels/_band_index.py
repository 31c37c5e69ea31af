"""The numpy twin of the native ``BandIndex`` (``neardup._native.lsh.BandIndex``): the
per-call state of :class:`neardup.index.lsh.LSHIndex` and of the datasketch drop-in's table.

Same methods, results, table contents and errors as the native class (the parity test
``tests/kernels/test_parity_lsh.py`` compares them), over numpy arrays and the reference
table kernels of :mod:`neardup._kernels.lsh`. See the native class for the two
modes: the estimate mode (``LSHIndex``: folded slots, ranked hits, empty sketches never hit)
and the exact mode (raw slots, unranked candidates in datasketch's exact buckets).

The per-call methods take the sketch they expect (the ``sketch_type`` of :meth:`_setup` with
the index's ``(scheme, params)`` and ``num_perm`` uint64 slots) and hand anything else to the
subclass's ``_add_general``, ``_query_general`` and ``_candidates_general``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from neardup._kernels.lsh import (  # the twin's own helpers (this class is split off for length)
    _LOW32,
    _MAX64,
    HEADER,
    _fold,
    file_key,
    grow,
    new_table,
    plan_growth,
    row_count,
    signed,
    slot,
    unsigned,
)
from neardup._kernels.minhash import band_keys
from neardup.errors import InputError

__all__ = ["BandIndex"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
_MIN_SLOTS = 512
_MIN_ENTRIES = 256
Hit = tuple[Hashable, float]


def _live(values: U64) -> bool:
    return not (bool(np.all(values == _MAX64)) or bool(np.all(values == _LOW32)))


def _exact_width(values: object, num_perm: int) -> int | None:
    if not isinstance(values, np.ndarray) or values.ndim != 1 or values.size != num_perm:
        return None
    width = values.dtype.itemsize
    return width if values.dtype.kind == "u" and width in (4, 8) else None


class BandIndex:
    """The per-call state of a banded LSH index over MinHash sketches (module docstring)."""

    _np: int = 0

    def __new__(cls, *args: object, **kwargs: object) -> BandIndex:
        return super().__new__(cls)

    # ------------------------------------------------------------------ set-up

    def _setup(
        self,
        num_perm: int,
        bands: int,
        rows: int,
        sketch_type: type | None = None,
        exact: bool = False,
    ) -> None:
        """Make this an empty index of ``bands`` bands of ``rows`` slots over sketches of
        ``num_perm`` slots. ``sketch_type``: the sketch class whose ``hashvalues``,
        ``scheme`` and ``params`` the per-call paths read; ``exact``: the exact mode."""
        if num_perm == 0 or bands == 0 or rows == 0 or bands * rows > num_perm:
            raise ValueError(
                f"an index needs 1 <= bands * rows <= num_perm, got num_perm={num_perm}, "
                f"bands={bands}, rows={rows}"
            )
        self._np = num_perm
        self._bands = bands
        self._exact = exact
        self._sketch_type = sketch_type
        self._params: tuple[object, object] | None = None
        self._b_width = 0
        self._clear_rows(rows)

    def _ready(self) -> None:
        if self._np == 0:
            raise ValueError(
                "this BandIndex was not set up; call _setup(num_perm, bands, rows) first"
            )

    def _clear_rows(self, rows: int) -> None:
        self._b_tab = new_table(_MIN_SLOTS, _MIN_ENTRIES, self._bands, rows, HEADER)
        dtype = np.uint64 if self._exact else np.uint32
        self._b_sig: npt.NDArray[np.unsignedinteger] = np.zeros((0, self._np), dtype=dtype)
        self._b_state: U8 = np.zeros(0, dtype=np.uint8)
        self._b_mark: I64 = np.zeros(0, dtype=np.int64)
        self._b_keys: list[Hashable] = []
        self._b_row: dict[Hashable, int] = {}
        self._b_n = 0
        self._b_dead = 0
        self._b_last: tuple[int, int] | None = None

    @property
    def _n(self) -> int:
        """Rows used (removed ones included)."""
        return self._b_n

    @property
    def _rows_dict(self) -> dict[Hashable, int]:
        """The dict key -> row of the indexed keys (read it; change it only through the
        index)."""
        return self._b_row

    @property
    def _dead(self) -> int:
        """Removed rows not yet dropped."""
        return self._b_dead

    @property
    def _width(self) -> int:
        """Slot width in bytes of the exact mode's sketches (0: none indexed yet)."""
        return self._b_width

    def __len__(self) -> int:
        return self._b_n - self._b_dead

    def __contains__(self, key: object) -> bool:
        return key in self._b_row

    # ------------------------------------------------------------------ rows and the table

    def _reserve(self, k: int) -> None:
        need = self._b_n + k
        cap = len(self._b_state)
        if need > cap:
            cap = max(need, 2 * cap, 64)
            sig = np.zeros((cap, self._np), dtype=self._b_sig.dtype)
            sig[: len(self._b_sig)] = self._b_sig
            self._b_sig = sig
            self._b_state = np.concatenate(
                [self._b_state, np.zeros(cap - len(self._b_state), np.uint8)]
            )
            self._b_mark = np.concatenate(
                [self._b_mark, np.zeros(cap - len(self._b_mark), np.int64)]
            )
        tab = self._b_tab
        used, entries, slots, capacity = (int(x) for x in tab[[0, 1, 3, 4]])
        new_slots, new_cap = plan_growth(used, entries, slots, capacity, k * self._bands)
        if new_slots != slots:
            self._b_tab = grow(tab, new_slots, new_cap)
        elif new_cap != capacity:
            more = np.zeros(2 * (new_cap - capacity), dtype=np.int64)
            self._b_tab = np.concatenate([tab, more])
            self._b_tab[4] = new_cap

    def _keys_of(self, row: npt.NDArray[np.unsignedinteger]) -> list[int]:
        rows = int(self._b_tab[6])
        values = row.reshape(1, -1).astype(np.uint64)
        if self._exact:
            keys = _band_keys64(values, self._bands, rows)
        else:
            keys = band_keys(values.astype(np.uint32), self._bands, rows)
        return [signed(int(k)) for k in keys[0].tolist()]

    def _file_row(self, r: int) -> int:
        first = int(self._b_tab[1])
        for key in self._keys_of(self._b_sig[r]):
            file_key(self._b_tab, key, r)
        return first

    def _put_row(self, src: U64, r: int) -> None:
        if self._exact:
            self._b_sig[r] = src
            self._b_state[r] = 1
        else:
            self._b_sig[r] = _fold(src)
            self._b_state[r] = 1 if _live(src) else 2

    def _append_rows(self, keys: Sequence[Hashable], src: U64) -> None:
        k = len(keys)
        if not k:
            return
        self._reserve(k)
        lo = self._b_n
        for i in range(k):
            self._put_row(src[i], lo + i)
            self._file_row(lo + i)
        for i, key in enumerate(keys):
            self._b_row[key] = lo + i
            self._b_keys.append(key)
        self._b_n = lo + k
        self._b_last = None

    def _sketch(self, mh: object) -> U64 | None:
        kind = self._sketch_type
        if kind is None or type(mh) is not kind or self._params is None:
            return None
        scheme, params = self._params
        p = mh.params  # type: ignore[attr-defined]
        if not (p is params or p == params):
            return None
        s = mh.scheme  # type: ignore[attr-defined]
        if not (s is scheme or s == scheme):
            return None
        hv = mh.hashvalues  # type: ignore[attr-defined]
        if (
            isinstance(hv, np.ndarray)
            and hv.dtype == np.uint64
            and hv.ndim == 1
            and len(hv) == self._np
            and (hv.flags.c_contiguous or hv.flags.f_contiguous)
        ):
            return hv
        return None

    def _heads(self, keys: list[int]) -> list[int]:
        tab = self._b_tab
        return [int(tab[slot(tab, key) + 1]) for key in keys]

    def _chain(self, e: int) -> list[int]:
        tab = self._b_tab
        ents = int(tab[7]) + 2 * int(tab[3])
        out = []
        while e >= 0:
            out.append(int(tab[ents + 2 * e]))
            e = int(tab[ents + 2 * e + 1])
        return out

    def _ranked(self, q: U32, min_est: float) -> list[tuple[int, int]]:
        p = self._np
        last = self._b_last
        if (
            last is not None
            and self._b_state[last[0]] == 1
            and np.array_equal(self._b_sig[last[0]], q)
        ):
            heads = [last[1] + j for j in range(self._bands)]
        else:
            heads = self._heads(self._keys_of(q))
        self._b_tab[2] += 1
        stamp = int(self._b_tab[2])
        hits: list[tuple[int, int]] = []
        for head in heads:
            for r in self._chain(head):
                if self._b_mark[r] == stamp or self._b_state[r] != 1:
                    continue
                self._b_mark[r] = stamp
                same = int(np.count_nonzero(self._b_sig[r] == q))
                if same / p < min_est:
                    continue
                hits.append((p - same, r))
        hits.sort()
        return hits

    def _hit_list(self, hits: list[tuple[int, int]]) -> list[Hit]:
        p = self._np
        return [(self._b_keys[r], (p - d) / p) for d, r in hits]

    def _unranked(self, q: U64) -> list[int]:
        if self._exact:
            last = self._b_last
            if last is not None and np.array_equal(self._b_sig[last[0]], q):
                heads = [last[1] + j for j in range(self._bands)]
            else:
                heads = self._heads(self._keys_of(q))
            self._b_tab[2] += 1
            stamp = int(self._b_tab[2])
            rows = int(self._b_tab[6])
            found = []
            for j, head in enumerate(heads):
                band = q[j * rows : (j + 1) * rows]
                for r in self._chain(head):
                    if self._b_mark[r] == stamp or self._b_state[r] == 0:
                        continue
                    if not np.array_equal(self._b_sig[r, j * rows : (j + 1) * rows], band):
                        continue  # another band under the same 64-bit key
                    self._b_mark[r] = stamp
                    found.append(r)
            return found
        if not _live(q):
            return []
        heads = self._heads(self._keys_of(_fold(q)))
        self._b_tab[2] += 1
        stamp = int(self._b_tab[2])
        found = []
        for head in heads:
            for r in self._chain(head):
                if self._b_mark[r] == stamp or self._b_state[r] != 1:
                    continue
                self._b_mark[r] = stamp
                found.append(r)
        return found

    def _compact(self) -> None:
        live = np.flatnonzero(self._b_state[: self._b_n] != 0)
        keys = [self._b_keys[i] for i in live.tolist()]
        sig, state = self._b_sig[live], self._b_state[live]
        self._clear_rows(int(self._b_tab[6]))
        self._restore_rows(keys, sig, state)

    def _restore_rows(
        self, keys: list[Hashable], sig: npt.NDArray[np.unsignedinteger], state: U8
    ) -> None:
        count = len(keys)
        self._reserve(count)
        self._b_sig[:count] = sig[:count]
        self._b_state[:count] = state[:count]
        self._b_row = {k: i for i, k in enumerate(keys)}
        self._b_keys = list(keys)
        self._b_n = count
        for r in range(count):
            if self._b_state[r] == 1:
                self._file_row(r)
        self._b_last = None

    def _check_values(self, values: object) -> U64:
        src = unsigned(values)
        k = row_count(src.size, self._np)
        if src.ndim != 2 or src.shape[0] != k:
            raise ValueError(
                f"expected a (n, {self._np}) array of sketches, got shape {tuple(src.shape)}"
            )
        return src

    # ------------------------------------------------------------------ per call

    def add(self, key: Hashable, mh: object) -> None:
        """Index one sketch under ``key`` (an existing ``key`` is replaced)."""
        self._ready()
        hv = self._sketch(mh)
        if hv is None or self._exact or key in self._b_row:
            self._add_general(key, mh)
            return
        self._reserve(1)
        r = self._b_n
        self._put_row(hv, r)
        first = self._file_row(r)
        self._b_row[key] = r
        self._b_keys.append(key)
        self._b_n = r + 1
        self._b_last = (r, first)

    def query(self, mh: object, *, min_similarity: float | None = None) -> list[Hit]:
        """Keys sharing a band with ``mh``, each with its estimated Jaccard, best first."""
        self._ready()
        hv = self._sketch(mh)
        if hv is None or self._exact:
            return self._query_general(mh, min_similarity)
        if not self._b_n:
            return []
        min_est = -1.0 if min_similarity is None else float(min_similarity)
        if not _live(hv):
            return []
        return self._hit_list(self._ranked(_fold(hv), min_est))

    def remove(self, key: Hashable) -> None:
        """Remove ``key`` from the index."""
        self._ready()
        r = self._b_row.get(key)
        if r is None:
            raise InputError(f"key {key!r} is not in the index; check `key in index` first")
        del self._b_row[key]
        self._b_state[r] = 0
        self._b_keys[r] = None
        self._b_dead += 1

    def key_of(self, row: int) -> Hashable:
        """The key indexed in insertion slot ``row``."""
        return self._b_keys[row]

    def candidates(self, values: npt.ArrayLike) -> list[Hashable]:
        """Keys sharing a band key with one sketch given as its slot values, unranked."""
        self._ready()
        ok = (
            not self._exact
            and isinstance(values, np.ndarray)
            and values.ndim == 1
            and values.size == self._np
            and values.dtype.kind == "u"
        )
        if not ok:
            return self._candidates_general(values)
        if not self._b_n:
            return []
        assert isinstance(values, np.ndarray)
        return [self._b_keys[r] for r in self._unranked(values.astype(np.uint64))]

    # ------------------------------------------------------------------ the general paths

    def _add_general(self, key: Hashable, mh: object) -> None:
        """The subclass's path for what :meth:`add` does not take."""
        raise NotImplementedError

    def _query_general(self, mh: object, min_similarity: float | None) -> list[Hit]:
        """The subclass's path for what :meth:`query` does not take."""
        raise NotImplementedError

    def _candidates_general(self, values: object) -> list[Hashable]:
        """The subclass's path for what :meth:`candidates` does not take."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the exact mode

    def _insert_values(self, key: Hashable, values: object) -> int:
        """Exact mode: add ``values`` (a 1-D uint32 or uint64 array of ``num_perm`` slots)
        under a new ``key``. Returns 1, 0 (``key`` is indexed: nothing done) or -1 (not such
        an array, or another width than the indexed sketches': nothing done)."""
        self._ready()
        width = _exact_width(values, self._np)
        if width is None or not self._exact or self._b_width not in (0, width):
            return -1
        if key in self._b_row:
            return 0
        if self._b_dead > max(64, self._b_n // 4):
            self._compact()
        src = unsigned(values)
        self._reserve(1)
        r = self._b_n
        self._put_row(src, r)
        first = self._file_row(r)
        self._b_row[key] = r
        self._b_keys.append(key)
        self._b_n = r + 1
        self._b_width = width
        self._b_last = (r, first)
        return 1

    def _candidates_exact(self, values: object) -> list[Hashable] | None:
        """Exact mode: the keys whose bucket in some band is the query's (band by band, each
        bucket newest first), or None when ``values`` is not a 1-D array of the indexed
        sketches' width and ``num_perm`` slots."""
        self._ready()
        width = _exact_width(values, self._np)
        if width is None or not self._exact or self._b_width not in (0, width):
            return None
        if not self._b_n:
            return []
        return [self._b_keys[r] for r in self._unranked(unsigned(values))]

    # ------------------------------------------------------------------ bulk

    def _append(self, keys: list[Hashable], values: object) -> None:
        """Append new ``keys`` (no repeats, none indexed) with their sketches ``values``
        (``(len(keys), num_perm)``, any unsigned dtype; exact mode: the indexed width)."""
        self._ready()
        src = self._check_values(values)
        k = len(src)
        if len(keys) != k:
            raise ValueError(f"_append got {len(keys)} keys for {k} sketches")
        if self._exact and k:
            self._b_width = values.dtype.itemsize  # type: ignore[attr-defined]
        self._append_rows(keys, src)

    def _query_lists(self, values: object, min_est: float) -> list[list[Hit]]:
        """The hits of every row of ``values`` (``(k, num_perm)``, any unsigned dtype), as
        lists of ``(key, estimate)``, best first."""
        self._ready()
        src = self._check_values(values)
        if not self._b_n or self._exact:
            return [[] for _ in range(len(src))]
        out = []
        for q in src:
            out.append(self._hit_list(self._ranked(_fold(q), min_est) if _live(q) else []))
        return out

    def _candidate_lists(self, values: object) -> list[list[Hashable]]:
        """The unranked candidates of every row of ``values`` (``(k, num_perm)``), as lists
        of keys (exact mode: of the indexed width)."""
        self._ready()
        src = self._check_values(values)
        out: list[list[Hashable]] = []
        for q in src:
            if not self._b_n:
                out.append([])
                continue
            out.append([self._b_keys[r] for r in self._unranked(q)])
        return out

    def _live(self) -> tuple[list[Hashable], npt.NDArray[np.unsignedinteger], U8, I64]:
        """The rows not removed, in insertion order: ``(keys, slots, states, rows)`` (slots
        folded to uint32 in estimate mode, raw uint64 in exact mode)."""
        self._ready()
        live = np.flatnonzero(self._b_state[: self._b_n] != 0).astype(np.int64)
        keys = [self._b_keys[i] for i in live.tolist()]
        return keys, self._b_sig[live], self._b_state[live], live

    def _arrays(self) -> tuple[U32, U8]:
        """Copies of the folded slots and the states of rows ``0.._n`` (estimate mode)."""
        self._ready()
        n = self._b_n
        return self._b_sig[:n].astype(np.uint32), self._b_state[:n].copy()

    def _maybe_compact(self) -> None:
        """Drop removed rows (renumbering the rest) once they are a quarter of the index."""
        self._ready()
        if self._b_dead <= max(64, self._b_n // 4):
            return
        self._compact()

    def _restore(self, keys: list[Hashable], sig: object, state: object) -> None:
        """Rows from saved ones: ``keys``, their slots ``sig`` (``(len(keys), num_perm)``:
        uint32 folded, or the raw slots in exact mode) and ``state`` (uint8); the live rows'
        band keys are filed in order."""
        self._ready()
        self._clear_rows(int(self._b_tab[6]))
        count = len(keys)
        values = unsigned(sig).reshape(-1)
        st = unsigned(state).reshape(-1).astype(np.uint8)
        if len(values) < count * self._np or len(st) < count:
            raise ValueError("saved rows are shorter than their keys")
        rows = values[: count * self._np].reshape(count, self._np)
        self._restore_rows(list(keys), rows.astype(self._b_sig.dtype), st)

    def _dump(self) -> dict[str, object]:
        """The pickled state: the same names (``_sig``, ``_state``, ``_tab``, ``_keys``,
        ``_row``, ``_n``, ``_dead``, ``_params``) as the native class's and earlier
        versions' pickles."""
        self._ready()
        n = self._b_n
        tab = self._b_tab.copy()
        tab[2] = 0  # the query stamp restarts with fresh marks
        return {
            "_raw" if self._exact else "_sig": self._b_sig[:n].copy(),
            "_state": self._b_state[:n].copy(),
            "_tab": tab,
            "_keys": list(self._b_keys),
            "_row": dict(self._b_row),
            "_n": n,
            "_dead": self._b_dead,
            "_params": self._params,
            "_width": self._b_width,
        }

    def _load(self, state: dict[str, object]) -> None:
        """Set the rows and the table from :meth:`_dump`'s dict (or an earlier version's
        pickled ``LSHIndex`` state, whose arrays may hold more rows than ``_n``)."""
        self._ready()

        def get(name: str) -> object:
            if name not in state:
                raise ValueError(f"pickled index lacks {name}")
            return state[name]

        n = int(get("_n"))  # type: ignore[call-overload]
        p = self._np
        self._clear_rows(int(self._b_tab[6]))
        self._reserve(n)
        values = unsigned(get("_raw" if self._exact else "_sig")).reshape(-1)
        st = unsigned(get("_state")).reshape(-1)
        if len(values) < n * p or len(st) < n:
            raise ValueError("pickled index rows are shorter than _n")
        self._b_sig[:n] = values[: n * p].reshape(n, p).astype(self._b_sig.dtype)
        self._b_state[:n] = st[:n].astype(np.uint8)
        self._b_tab = np.array(get("_tab"), dtype=np.int64)
        keys = list(get("_keys"))[:n]  # type: ignore[call-overload]
        if len(keys) != n:
            raise ValueError("pickled index has fewer keys than _n")
        self._b_keys = keys
        self._b_row = dict(get("_row"))  # type: ignore[call-overload]
        self._b_n = n
        self._b_dead = int(get("_dead"))  # type: ignore[call-overload]
        params = get("_params")
        self._params = None if params is None else tuple(params)  # type: ignore[arg-type,assignment]
        if "_width" in state:
            self._b_width = int(state["_width"])  # type: ignore[call-overload]

    def _nbytes(self) -> int:
        """Bytes of the rows' arrays and the table (not the keys and their dict)."""
        arrays = (self._b_sig, self._b_state, self._b_mark, self._b_tab)
        return sum(int(a.nbytes) for a in arrays)


def _band_keys64(values: U64, bands: int, rows: int) -> U64:
    """:func:`band_keys` of raw 64-bit slots (the exact mode's keys; equal to the folded
    slots' keys for slots below ``2**32``)."""
    from neardup._kernels.minhash import fmix64

    n = values.shape[0]
    cube = values[:, : bands * rows].reshape(n, bands, rows)
    mix = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        h = np.broadcast_to(np.arange(1, bands + 1, dtype=np.uint64) * mix, (n, bands)).copy()
        for c in range(rows):
            h = (((h << np.uint64(27)) | (h >> np.uint64(37))) ^ cube[:, :, c]) * mix
        result: U64 = fmix64(h)
        return result
