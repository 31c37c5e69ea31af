"""datasketch's ``lsh`` module: :class:`MinHashLSH` with in-memory storage.

The same constructor, parameter search (:func:`neardup.index.lshparams.jaccard_params`),
band keys (big-endian bytes of each band's slots), ``hashtables`` / ``keys`` layout,
``merge``, ``get_counts``, sessions and query buffers as datasketch 2.0.0.

Where it can, the index keeps its sketches in a compiled band table instead of the dicts
(``neardup._native.lsh.BandIndex`` in its exact mode, with the same ``(b, r)``): one native
call per ``insert`` or ``query``, and one per bulk ``insert_many`` / ``query_many``. Each
band's bucket there is datasketch's exactly (the table files a 64-bit hash of the band and
checks each candidate's band against the query's), empty sketches included. This holds the
sketches of one slot width (uint32, as the ``affine32`` default makes them, or uint64)
without ``hashfunc`` or ``prepickle``. Any other sketch, a re-insert under an indexed key
without ``check_duplication``, and every read of datasketch's layout (``keys``,
``hashtables``, ``get_counts``, ``merge``, pickling, query buffers) first move the native
table into the dicts, in insertion order, and the index stays there.

In the dicts, band keys are cut from one byte-swap of the whole sketch by one ``struct``
unpack, and the last sketch's keys are kept, so ``insert`` then ``query`` of the same sketch
cuts them once; each band's table is a plain dict whose value is the bucket's only key, or a
set once a second key arrives; ``hashtables`` (datasketch's dicts of sets) is built from
those tables when read, and kept until the next change.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import repeat
from operator import attrgetter
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

from neardup._kernels import engine
from neardup.compat.datasketch.minhash import _check_scheme_consistency
from neardup.compat.datasketch.storage import (
    DictListStorage,
    DictSetStorage,
    _check_config,
    unordered_storage,
)
from neardup.index.lshparams import jaccard_params

if TYPE_CHECKING:
    from neardup._kernels._band_index import BandIndex

__all__ = ["MinHashLSH", "MinHashLSHDeletionSession", "MinHashLSHInsertionSession"]

_MISSING = object()  # dict.get's default: a band key with no bucket
# A table maps a band key to its bucket: the only key filed under it, or a set of keys (a
# set is never a key: sets are unhashable). Tables are plain dicts.
_Table = dict[bytes, object]
_WIDTHS: dict[int, np.dtype[np.unsignedinteger]] = {
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}
_HASHVALUES = attrgetter("hashvalues")
_BAND_INDEX = engine.kernels("lsh").BandIndex  # (the backend's, chosen when this module loads)
_DTYPE = attrgetter("dtype")


def _schemes(minhashes: Sequence[object]) -> set[object]:
    """The schemes the sketches name (those without one left out)."""
    found = set(map(getattr, minhashes, repeat("scheme"), repeat(None)))
    found.discard(None)
    return found


def _bucket_set(v: object) -> set[Hashable]:
    """The keys of a bucket as a new set."""
    return set(v) if type(v) is set else {v}


def _file(table: _Table, h: bytes, key: Hashable) -> None:
    """File ``key`` under band key ``h``."""
    v = table.setdefault(h, key)
    if v is key:
        return
    if type(v) is set:
        v.add(key)
    elif v != key:
        table[h] = {v, key}


def _unfile(table: _Table, h: bytes, key: Hashable) -> None:
    """Remove ``key`` from the bucket of ``h`` (the bucket goes when it empties)."""
    v = table.get(h, _MISSING)
    if type(v) is set:
        v.discard(key)
        if not v:
            del table[h]
    elif v is not _MISSING and v == key:
        del table[h]


def _native_table(num_perm: int, b: int, r: int) -> BandIndex:
    """An empty native table (exact mode) of ``b`` bands of ``r`` slots."""
    table: BandIndex = _BAND_INDEX()
    table._setup(num_perm, b, r, None, True)
    return table


class _Slots:
    """A sketch's slot values alone: what the dict tables file (no scheme to check)."""

    __slots__ = ("hashvalues",)

    def __init__(self, hashvalues: np.ndarray) -> None:
        self.hashvalues = hashvalues


def _optimal_param(
    threshold: float, num_perm: int, false_positive_weight: float, false_negative_weight: float
) -> tuple[int, int]:
    """datasketch's ``_optimal_param``."""
    return jaccard_params(float(threshold), num_perm, false_positive_weight, false_negative_weight)


class MinHashLSH:
    """datasketch 2.0.0's ``MinHashLSH`` (Jaccard threshold queries), in memory.

    Args:
        threshold: Jaccard threshold in [0, 1].
        num_perm: Slots per sketch (``sample_size`` for weighted MinHash).
        weights: ``(false_positive_weight, false_negative_weight)``, summing to 1.
        params: ``(b, r)`` to skip the parameter search.
        storage_config: Only ``{"type": "dict"}`` (the default).
        prepickle: Pickle keys before storing them (default False).
        hashfunc: Optional function compressing each band key's bytes.

    Examples:
        >>> from neardup.compat.datasketch.minhash import MinHash
        >>> m = MinHash(num_perm=32); m.update_batch([b"a", b"b"])
        >>> lsh = MinHashLSH(threshold=0.5, num_perm=32)
        >>> lsh.insert("k", m)
        >>> lsh.query(m), lsh.get_counts()[0][next(iter(lsh.hashtables[0]))]
        (['k'], 1)
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        weights: tuple[float, float] = (0.5, 0.5),
        params: tuple[int, int] | None = None,
        storage_config: Mapping[str, object] | None = None,
        prepickle: bool | None = None,
        hashfunc: Callable[[bytes], bytes] | None = None,
    ) -> None:
        storage_config = storage_config if storage_config else {"type": "dict"}
        _check_config(storage_config)
        self._buffer_size = 50000
        if threshold > 1.0 or threshold < 0.0:
            raise ValueError("threshold must be in [0.0, 1.0]")
        if num_perm < 2:
            raise ValueError("Too few permutation functions")
        if any(w < 0.0 or w > 1.0 for w in weights):
            raise ValueError("Weight must be in [0.0, 1.0]")
        if sum(weights) != 1.0:
            raise ValueError("Weights must sum to 1.0")
        self.h = num_perm
        if params is not None:
            self.b, self.r = params
            if self.b * self.r > num_perm:
                raise ValueError(
                    f"The product of b and r in params is {self.b} * {self.r} = "
                    f"{self.b * self.r} -- it must be less than num_perm {num_perm}. "
                    "Did you forget to specify num_perm?"
                )
        else:
            self.b, self.r = _optimal_param(threshold, num_perm, weights[0], weights[1])
        if self.b < 2:
            raise ValueError("The number of bands are too small (b < 2)")
        self.prepickle = False if prepickle is None else prepickle
        self.hashfunc = hashfunc
        self._tables: list[_Table] = [{} for _ in range(self.b)]
        self._view: list[DictSetStorage] | None = None  # hashtables, built when read
        self._select: list[list[set[Hashable]]] = [[] for _ in range(self.b)]
        self.hashranges = [(i * self.r, (i + 1) * self.r) for i in range(self.b)]
        self._keys_store: DictListStorage = DictListStorage()  # ``keys`` of the dicts
        # the native table (only while no key is in the dicts; module docstring)
        self._native: BandIndex | None = None
        self._minhash_scheme: str | None = None
        self._cuts: tuple[int, struct.Struct | None] = (0, None)  # slot width, band cutter
        self._last: tuple[bytes, tuple[int, ...], tuple[bytes, ...]] | None = None

    @property
    def keys(self) -> DictListStorage:
        """Key -> its band keys (datasketch's layout; reading it moves a native table into
        the dicts)."""
        self._spill()
        return self._keys_store

    @keys.setter
    def keys(self, value: DictListStorage) -> None:
        self._spill()
        self._keys_store = value

    @property
    def hashtables(self) -> list[DictSetStorage]:
        """Per band, band key -> set of keys (datasketch's layout; built when read after a
        change, so read it rather than keep it across changes)."""
        self._spill()
        if self._view is None:
            view = []
            for table in self._tables:
                storage = DictSetStorage()
                for h, v in table.items():
                    storage[h] = _bucket_set(v)
                view.append(storage)
            self._view = view
        return self._view

    @hashtables.setter
    def hashtables(self, tables: list[DictSetStorage]) -> None:
        self._spill()
        self._tables = []
        for storage in tables:
            table: _Table = {}
            for h, keys in storage.items():
                for key in keys:
                    _file(table, h, key)
            self._tables.append(table)
        self._view = None

    @property
    def buffer_size(self) -> int:
        """Buffer size of sessions (no effect in memory)."""
        return self._buffer_size

    @buffer_size.setter
    def buffer_size(self, value: int) -> None:
        self._buffer_size = value

    # ------------------------------------------------------------------ band keys

    def _byteswap(self, hs: np.ndarray) -> bytes:
        return bytes(hs.byteswap().data)

    def _H(self, hs: np.ndarray) -> bytes:  # noqa: N802  # datasketch's name
        raw = bytes(hs.byteswap().data)
        return self.hashfunc(raw) if self.hashfunc else raw

    def _band_keys(self, minhash: object, b: int | None = None) -> tuple[bytes, ...]:
        hv = minhash.hashvalues  # type: ignore[attr-defined]
        if len(hv) != self.h:
            raise ValueError(f"Expecting minhash with length {self.h}, got {len(hv)}")
        return self._cut(hv, b)

    def _keys_of(self, minhash: object) -> tuple[bytes, ...]:
        """Every band key of ``minhash``, reusing the last sketch's when its bytes are the
        same (``insert`` then ``query`` of one sketch cuts the keys once)."""
        hv = minhash.hashvalues  # type: ignore[attr-defined]
        if len(hv) != self.h:
            raise ValueError(f"Expecting minhash with length {self.h}, got {len(hv)}")
        raw = hv.tobytes()
        last = self._last
        if last is not None and last[0] == raw and last[1] == hv.shape:
            return last[2]
        keys = self._cut(hv, None)
        self._last = (raw, hv.shape, keys)
        return keys

    def _cut(self, hv: np.ndarray, b: int | None) -> tuple[bytes, ...]:
        width, cutter = self._cuts
        if cutter is None or width != hv.itemsize * (hv.size // self.h):
            width = hv.itemsize * (hv.size // self.h)
            cutter = struct.Struct(f"{width * self.r}s" * self.b)
            self._cuts = (width, cutter)
        # big-endian slots in C order; one unpack makes every band's bytes
        keys: tuple[bytes, ...] = cutter.unpack_from(hv.byteswap().tobytes())
        if b is not None:
            keys = keys[:b]
        if self.hashfunc:
            return tuple(map(self.hashfunc, keys))
        return keys

    # ------------------------------------------------------------------ insert / merge

    def insert(self, key: Hashable, minhash: object, check_duplication: bool = True) -> None:
        """Index ``minhash`` under ``key``.

        Raises:
            ValueError: Wrong length, another scheme, or a duplicate key.
        """
        if (self._native is not None or not self._keys_store) and self._insert_native(
            key, minhash, check_duplication
        ):
            return
        self._spill()
        self._insert_dict(key, minhash, check_duplication)

    def _insert_native(self, key: Hashable, minhash: object, check_duplication: bool) -> bool:
        """File ``minhash`` in the native table; False (nothing done) when it cannot go there
        (the caller moves the table to the dicts and files it there)."""
        if self.hashfunc is not None or self.prepickle:
            return False
        hv = minhash.hashvalues  # type: ignore[attr-defined]
        if len(hv) != self.h:  # before anything moves, as datasketch raises
            raise ValueError(f"Expecting minhash with length {self.h}, got {len(hv)}")
        scheme = getattr(minhash, "scheme", None)
        if scheme is not None and scheme != self._minhash_scheme:
            self._minhash_scheme = _check_scheme_consistency(self._minhash_scheme, minhash)
        native = self._native
        if native is None:
            native = self._native = _native_table(self.h, self.b, self.r)
        done = native._insert_values(key, hv)
        if done == 1:
            self._view = None
            return True
        if done == 0 and check_duplication:
            raise ValueError("The given key already exists")
        return False

    def _insert_dict(self, key: Hashable, minhash: object, check_duplication: bool) -> None:
        """:meth:`insert` into the dict tables."""
        hs = self._keys_of(minhash)
        scheme = getattr(minhash, "scheme", None)
        if scheme is not None and scheme != self._minhash_scheme:
            self._minhash_scheme = _check_scheme_consistency(self._minhash_scheme, minhash)
        if self.prepickle:
            key = pickle.dumps(key)
        keys = self._keys_store
        if check_duplication and key in keys:
            raise ValueError("The given key already exists")
        old = dict.get(keys, key)
        if old is None:
            keys[key] = list(hs)
        else:
            old.extend(hs)
        self._view = None
        tables = self._tables
        # one C-level loop files the key in every band whose bucket is new; only bands that
        # already had a bucket take the Python loop (a frozenset key could equal a bucket)
        found = list(map(dict.setdefault, tables, hs, repeat(key)))
        if found.count(key) != len(found) or type(key) is frozenset:
            for table, h, v in zip(tables, hs, found, strict=False):
                if v is not key:
                    _file(table, h, key)

    def _insert(
        self, key: Hashable, minhash: object, check_duplication: bool = True, buffer: bool = False
    ) -> None:
        """:meth:`insert` (``buffer``: a session's insert; the same in memory)."""
        self.insert(key, minhash, check_duplication)

    def _flush(self) -> None:
        """Nothing buffered: every insert is filed at once (kept for sessions)."""

    def _spill(self) -> None:
        """Move the native table into the dict tables, in insertion order."""
        native = self._native
        if native is None:
            return
        self._native = None
        keys, rows, _, _ = native._live()
        rows = rows.astype(_WIDTHS.get(native._width, np.dtype(np.uint64)))
        for key, hv in zip(keys, rows, strict=True):
            self._insert_dict(key, _Slots(hv), False)

    def insert_many(self, keys: Sequence[Hashable], minhashes: Sequence[object]) -> None:
        """Insert many (key, MinHash) pairs, as an insertion session does (neardup addition).

        When every sketch can go to the native table and no key is there already, they go in
        one native call; otherwise one by one, with :meth:`insert`'s checks and errors.
        """
        if len(keys) != len(minhashes):
            raise ValueError("keys and minhashes must have the same length")
        if not self._insert_all(keys, minhashes):
            for key, m in zip(keys, minhashes, strict=True):
                self.insert(key, m)

    def _insert_all(self, keys: Sequence[Hashable], minhashes: Sequence[object]) -> bool:
        """File every sketch in the native table at once; False (nothing done) when one of
        them, or a key, needs :meth:`insert`'s one-by-one path."""
        if (
            not keys
            or self.hashfunc is not None
            or self.prepickle
            or (self._native is None and self._keys_store)
        ):
            return False
        native = self._native
        try:
            if len(set(keys)) != len(keys) or (
                native is not None and any(k in native for k in keys)
            ):
                return False
        except TypeError:  # an unhashable key: insert raises it
            return False
        rows = self._native_rows(minhashes)
        if rows is None:
            return False
        schemes = _schemes(minhashes)
        if schemes - {self._minhash_scheme}:
            if self._minhash_scheme is not None or len(schemes) > 1:
                return False  # a scheme that does not match: insert raises at that sketch
            self._minhash_scheme = str(schemes.pop())
        if native is None:
            native = self._native = _native_table(self.h, self.b, self.r)
        native._append(list(keys), rows)
        self._view = None
        return True

    def _native_rows(self, minhashes: Sequence[object]) -> np.ndarray | None:
        """The sketches' slots as one ``(n, h)`` array of the native table's width, or None
        when one of them is not a 1-D array of ``h`` slots of that width (C-level passes
        over the list, no Python loop)."""
        native = self._native
        width = native._width if native is not None else 0
        try:
            hvs = list(map(_HASHVALUES, minhashes))
            dtypes = set(map(_DTYPE, hvs))
            if (
                set(map(type, hvs)) != {np.ndarray}
                or len(dtypes) != 1
                or set(map(len, hvs)) != {self.h}
            ):
                return None
            dtype = dtypes.pop()
            if dtype not in _WIDTHS.values() or (width and dtype != _WIDTHS[width]):
                return None
            rows = np.concatenate(hvs)  # of 1-D arrays: any other shows in its shape
        except (AttributeError, TypeError, ValueError):  # no hashvalues, 0-d or mixed arrays
            return None
        return rows.reshape(len(hvs), self.h) if rows.shape == (len(hvs) * self.h,) else None

    def merge(self, other: MinHashLSH, check_overlap: bool = False) -> None:
        """Add every key of ``other`` (same ``num_perm``, ``b`` and ``r``).

        Raises:
            ValueError: Different parameters or schemes, or overlapping keys with
                ``check_overlap``.
        """
        if not (
            type(self) is type(other)
            and self.h == other.h
            and self.b == other.b
            and self.r == other.r
        ):
            if type(self) is not type(other):
                raise ValueError(f"Cannot merge type MinHashLSH and type {type(other).__name__}.")
            raise ValueError("Cannot merge MinHashLSH with different initialization parameters.")
        known, other_known = self._minhash_scheme, other._minhash_scheme
        if known is not None and other_known is not None and known != other_known:
            raise ValueError(
                f"Cannot merge MinHashLSH indexed with MinHash scheme {other_known!r} into one "
                f"indexed with scheme {known!r}"
            )
        self._spill()
        other._spill()
        if check_overlap and set(self.keys).intersection(set(other.keys)):
            raise ValueError("The keys are overlapping, duplicate key exists.")
        if known is None:
            self._minhash_scheme = other_known
        for key, hs in other.keys.items():
            self.keys.insert(key, *hs)
            for h, table in zip(hs, self._tables, strict=False):
                _file(table, h, key)
        self._view = None

    def insertion_session(self, buffer_size: int = 50000) -> MinHashLSHInsertionSession:
        """A context manager for bulk inserts."""
        return MinHashLSHInsertionSession(self, buffer_size=buffer_size)

    def deletion_session(self, buffer_size: int = 50000) -> MinHashLSHDeletionSession:
        """A context manager for bulk removals."""
        return MinHashLSHDeletionSession(self, buffer_size=buffer_size)

    # ------------------------------------------------------------------ queries

    def query(self, minhash: object) -> list[Hashable]:
        """Keys sharing at least one band with ``minhash`` (candidates, unordered).

        Raises:
            ValueError: Wrong length or another scheme.
        """
        native = self._native
        if native is not None:
            hv = minhash.hashvalues  # type: ignore[attr-defined]
            if len(hv) != self.h:
                raise ValueError(f"Expecting minhash with length {self.h}, got {len(hv)}")
            if getattr(minhash, "scheme", None) not in (None, self._minhash_scheme):
                _check_scheme_consistency(self._minhash_scheme, minhash)
            found: list[Hashable] | None = native._candidates_exact(hv)
            if found is not None:
                return found
            self._spill()  # not a sketch of the table's width: the dicts answer it
        hs = self._keys_of(minhash)
        if getattr(minhash, "scheme", None) not in (None, self._minhash_scheme):
            _check_scheme_consistency(self._minhash_scheme, minhash)
        buckets = map(dict.get, self._tables, hs, repeat(_MISSING))
        try:  # one C-level loop while every bucket holds one key (the common case)
            candidates: set[Hashable] = set(buckets)
        except TypeError:  # a bucket is a set (unhashable): merge them one by one
            candidates = set()
            for v in map(dict.get, self._tables, hs, repeat(_MISSING)):
                if type(v) is set:
                    candidates.update(v)
                else:
                    candidates.add(v)
        candidates.discard(_MISSING)
        if self.prepickle:
            return [pickle.loads(k) for k in candidates]  # type: ignore[arg-type]
        return list(candidates)

    def query_many(self, minhashes: Sequence[object]) -> list[list[Hashable]]:
        """:meth:`query` of each sketch, in one native call over the band tables (neardup
        addition, like rensa's ``query_all``).

        Raises:
            ValueError: A sketch of the wrong length or another scheme.
        """
        native = self._native
        if native is None or not minhashes:
            return [self.query(m) for m in minhashes]
        rows = self._native_rows(minhashes)
        known = self._minhash_scheme
        if rows is None or (known is not None and _schemes(minhashes) - {known}):
            return [self.query(m) for m in minhashes]  # the checks and errors of query
        lists: list[list[Hashable]] = native._candidate_lists(rows)
        return lists

    def add_to_query_buffer(self, minhash: object) -> None:
        """Queue a query for :meth:`collect_query_buffer`."""
        self._spill()
        hs = self._band_keys(minhash)
        _check_scheme_consistency(self._minhash_scheme, minhash)
        for h, table, buf in zip(hs, self._tables, self._select, strict=False):
            buf.append(_bucket_set(table[h]) if h in table else set())

    def collect_query_buffer(self) -> list[Hashable]:
        """Keys in the results of every queued query (their intersection)."""
        collected = [list(buf) for buf in self._select]
        for buf in self._select:
            buf.clear()
        if not any(collected):
            return []
        per_query = [set().union(*lists) for lists in zip(*collected, strict=False)]
        if not per_query:
            return []
        candidates = set.intersection(*per_query)
        if self.prepickle:
            return [pickle.loads(k) for k in candidates]
        return list(candidates)

    def _query_b(self, minhash: object, b: int) -> set[Hashable]:
        if b > len(self._tables):
            raise ValueError("b must be less or equal to the number of hash tables")
        self._spill()
        hs = self._band_keys(minhash, b)
        _check_scheme_consistency(self._minhash_scheme, minhash)
        candidates: set[Hashable] = set()
        for h, table in zip(hs, self._tables, strict=False):
            v = table.get(h, _MISSING)
            if type(v) is set:
                candidates.update(v)
            elif v is not _MISSING:
                candidates.add(v)
        if self.prepickle:
            return {pickle.loads(k) for k in candidates}  # type: ignore[arg-type]
        return candidates

    def __contains__(self, key: Hashable) -> bool:
        if self._native is not None:
            return key in self._native
        if self.prepickle:
            key = pickle.dumps(key)
        return key in self._keys_store

    def remove(self, key: Hashable) -> None:
        """Remove ``key``.

        Raises:
            ValueError: ``key`` is not indexed.
        """
        self._remove(key, buffer=False)

    def _remove(self, key: Hashable, buffer: bool = False) -> None:
        native = self._native
        if native is not None:
            if key not in native:
                raise ValueError("The given key does not exist")
            native.remove(key)
            self._view = None
            return
        if self.prepickle:
            key = pickle.dumps(key)
        if key not in self.keys:
            raise ValueError("The given key does not exist")
        for h, table in zip(self.keys[key], self._tables, strict=False):
            _unfile(table, h, key)
        del self.keys[key]
        self._view = None

    def is_empty(self) -> bool:
        """True when a hash table is empty."""
        if self._native is not None:  # the dicts are empty meanwhile
            return len(self._native) == 0
        return any(len(t) == 0 for t in self._tables)

    def get_counts(self) -> list[dict[Hashable, int]]:
        """Per band, the number of keys in each bucket."""
        self._spill()
        return [{h: len(v) if type(v) is set else 1 for h, v in t.items()} for t in self._tables]

    def get_subset_counts(self, *keys: Hashable) -> list[dict[Hashable, int]]:
        """:meth:`get_counts` restricted to ``keys``."""
        self._spill()
        key_set = [pickle.dumps(k) for k in set(keys)] if self.prepickle else list(set(keys))
        tables = [unordered_storage({"type": "dict"}) for _ in range(self.b)]
        for key, hs in zip(key_set, self.keys.getmany(*key_set), strict=True):
            for h, table in zip(hs, tables, strict=False):  # type: ignore[call-overload]
                table.insert(h, key)
        return [t.itemcounts() for t in tables]

    def __getstate__(self) -> dict[str, object]:
        self._spill()
        state = self.__dict__.copy()
        state["keys"] = state.pop("_keys_store")
        del state["_native"]
        state["_cuts"] = (0, None)
        state["_view"] = None
        state["_last"] = None
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        tables = state.pop("hashtables", None)  # a pickle of the dict-of-sets layout
        state["_keys_store"] = state.pop("keys")
        self.__dict__.update(state)
        self._native = None
        self._cuts = (0, None)
        self.__dict__.setdefault("_view", None)
        self.__dict__.setdefault("_last", None)
        self.__dict__.setdefault("_select", [[] for _ in range(self.b)])
        if tables is not None:
            self.hashtables = tables  # type: ignore[assignment]


class MinHashLSHInsertionSession:
    """Context manager for bulk insertion (datasketch's)."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int) -> None:
        self.lsh = lsh
        self.lsh.buffer_size = buffer_size

    def __enter__(self) -> MinHashLSHInsertionSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to file: every insert is filed at once."""

    def insert(self, key: Hashable, minhash: object, check_duplication: bool = True) -> None:
        """Insert ``minhash`` under ``key``."""
        self.lsh.insert(key, minhash, check_duplication)


class MinHashLSHDeletionSession:
    """Context manager for bulk removal (datasketch's)."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int) -> None:
        self.lsh = lsh
        self.lsh.buffer_size = buffer_size

    def __enter__(self) -> MinHashLSHDeletionSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Flush (nothing to flush in memory)."""

    def remove(self, key: Hashable) -> None:
        """Remove ``key``."""
        self.lsh._remove(key, buffer=True)
