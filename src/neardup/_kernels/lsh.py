"""Reference of the LSH band-key table kernels (Python and numpy): the twin of the native
``neardup._native.lsh``, the band-key hash table of :class:`neardup.index.lsh.LSHIndex`.

Same functions, arguments, results, errors and table contents as the native kernels; band
keys come from :func:`neardup._kernels.minhash.band_keys` (vectorised), the probing
and the chains are plain Python. :class:`BandIndex` (the per-call state of ``LSHIndex``) is
in :mod:`neardup._kernels._band_index` (this module's class, kept apart for its length).

The whole table is one int64 array ``tab`` (so that a per-document call passes few
arguments; each array argument is converted anew on every call). Header, ``tab[0:8]``:
``[slots used, entries used, query stamp, slots, entry capacity, bands, rows, base]``,
``base`` the offset of the slots (8 here; :mod:`neardup._kernels.hamming` keeps its block
bounds in a longer header). Then ``slots`` slots of two words, ``(key, head)``: the 64-bit
band key's bit pattern and the last entry filed under it (-1: empty slot), side by side so a
probe touches one cache line; then ``capacity`` entries of two words, ``(row, previous
entry of the same key or -1)``, so each key's rows form a chain, newest first. The slots are open
addressing with linear probing over a power of two; the key of band ``j`` is seeded by ``j``, so one
table serves every band. ``mark`` (one int64 per row) de-duplicates a query's candidates without
clearing anything between queries.

A kernel that would overflow the table or the row arrays files nothing and returns ``-1``;
the caller grows them (:func:`grow`, with :func:`plan_growth`) and calls again.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.minhash import band_keys

__all__ = [  # noqa: F822  # BandIndex: the module's __getattr__ (from ._band_index)
    "BandIndex",
    "add_query_one",
    "add_query_same",
    "add_rows",
    "candidate_rows",
    "candidates_one",
    "grow",
    "insert_rows",
    "new_table",
    "query_one",
    "query_rows",
]

# NO_ROOM and plan_growth serve the callers that grow the table: not kernels, so outside
# __all__.
NO_ROOM = -(1 << 62)  # add_query_one: the add found no room (nothing done)


def plan_growth(
    used_slots: int, used_entries: int, slots: int, capacity: int, more: int
) -> tuple[int, int]:
    """``(slots, capacity)`` with room for ``more`` entries: the capacity at least doubles
    when it grows, and the slots (a power of two) stay at most 3/4 full even when all ``more``
    entries hold new keys. The slots are sized to the keys in use, not to the free entries
    (a smaller table: fewer cache misses per probe, fewer pages to fault in); a kernel that
    would pass 3/4 returns -1 and the caller grows the slots."""
    need = used_entries + more
    if need > capacity:
        capacity = max(need, 2 * capacity)
    while 4 * (used_slots + more) > 3 * slots:
        slots *= 2
    return slots, capacity


U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW32 = np.uint64(0xFFFFFFFF)
HEADER = 8


def unsigned(values: object) -> U64:
    """``values`` (an unsigned integer array) as uint64; ``TypeError`` for anything else."""
    if not isinstance(values, np.ndarray) or values.dtype.kind != "u":
        what = getattr(values, "dtype", type(values))
        raise TypeError(
            f"sketch slots must be an unsigned integer array, got {what}; pass uint32 or uint64"
        )
    return values.astype(np.uint64)


def row_count(size: int, num_perm: int) -> int:
    """The rows of ``num_perm`` slots in ``size`` values; ``ValueError`` when they do not
    make whole rows."""
    if num_perm == 0 or size % num_perm:
        raise ValueError(
            f"{size} slot values do not make rows of {num_perm}; pass (k, num_perm) sketches"
        )
    return size // num_perm


def _one_row(size: int, num_perm: int) -> None:
    if size != num_perm:
        raise ValueError(f"a query needs {num_perm} slot values, got {size}")


def _fold(values: U64) -> U32:
    return ((values ^ (values >> np.uint64(32))) & _LOW32).astype(np.uint32)


def _empty(values: U64) -> npt.NDArray[np.bool_]:
    result: npt.NDArray[np.bool_] = np.all(values == _MAX64, axis=1) | np.all(
        values == _LOW32, axis=1
    )
    return result


def signed(key: int) -> int:
    """The int64 bit pattern of a 64-bit key (what the table stores)."""
    return key - (1 << 64) if key >= 1 << 63 else key


def slot(tab: I64, key: int) -> int:
    """Index in ``tab`` of ``key``'s slot (an int64 bit pattern; its key word, the head
    follows): where it is, or the empty slot where it would go."""
    base, mask = int(tab[7]), int(tab[3]) - 1
    s = key & mask
    while tab[base + 2 * s + 1] >= 0 and int(tab[base + 2 * s]) != key:
        s = (s + 1) & mask
    return base + 2 * s


def file_key(tab: I64, key: int, row: int) -> None:
    """File ``row`` under ``key`` (an int64 bit pattern)."""
    ents = int(tab[7]) + 2 * int(tab[3])
    at = slot(tab, key)
    if tab[at + 1] < 0:
        tab[at] = key
        tab[0] += 1
    e = int(tab[1])
    tab[ents + 2 * e] = row
    tab[ents + 2 * e + 1] = tab[at + 1]
    tab[at + 1] = e
    tab[1] = e + 1


def chain(tab: I64, key: int) -> list[int]:
    """Rows filed under ``key``, newest first."""
    ents = int(tab[7]) + 2 * int(tab[3])
    e = int(tab[slot(tab, key) + 1])
    out = []
    while e >= 0:
        out.append(int(tab[ents + 2 * e]))
        e = int(tab[ents + 2 * e + 1])
    return out


def room(tab: I64, keys: int) -> bool:
    """Whether ``keys`` more entries fit (and the slots stay at most 3/4 full)."""
    return bool(tab[1] + keys <= tab[4] and 4 * (tab[0] + keys) <= 3 * tab[3])


def new_table(slots: int, capacity: int, bands: int, rows: int, base: int) -> I64:
    """An empty table: ``slots`` (a power of two) slots, room for ``capacity`` entries, a
    header of ``base`` words (``tab[8:base]`` zero, for the caller)."""
    _check_size(slots, capacity, base)
    tab = np.zeros(base + 2 * slots + 2 * capacity, dtype=np.int64)
    tab[3:8] = (slots, capacity, bands, rows, base)
    tab[base + 1 : base + 2 * slots : 2] = -1
    return tab


def _check_size(slots: int, capacity: int, base: int) -> None:
    if slots < 1 or slots & (slots - 1) or capacity < 0 or base < HEADER:
        raise ValueError(
            "a table needs a power of two of slots, capacity >= 0 and a header of at least "
            f"{HEADER} words, got slots={slots}, capacity={capacity}, base={base}"
        )


def grow(tab: I64, slots: int, capacity: int) -> I64:
    """The same table with ``slots`` slots and room for ``capacity`` entries (rehashed)."""
    base, old = int(tab[7]), int(tab[3])
    _check_size(slots, capacity, base)
    out = new_table(slots, capacity, int(tab[5]), int(tab[6]), base)
    out[:3] = tab[:3]
    out[8:base] = tab[8:base]
    for s in np.flatnonzero(tab[base + 1 : base + 2 * old : 2] >= 0).tolist():
        at = slot(out, int(tab[base + 2 * s]))
        out[at : at + 2] = tab[base + 2 * s : base + 2 * s + 2]
    used = 2 * int(tab[1])
    out[base + 2 * slots : base + 2 * slots + used] = tab[base + 2 * old : base + 2 * old + used]
    return out


def insert_rows(rows_in: I64, sig32: U32, tab: I64) -> int:
    """File the band keys of stored rows ``rows_in`` (their ``sig32`` rows are set).

    Returns 0, or -1 (nothing filed) when the table lacks room for them.
    """
    bands, rows = int(tab[5]), int(tab[6])
    if not room(tab, len(rows_in) * bands):
        return -1
    keys = band_keys(np.ascontiguousarray(sig32[rows_in]), bands, rows)
    for i, r in enumerate(rows_in.tolist()):
        for j in range(bands):
            file_key(tab, signed(int(keys[i, j])), r)
    return 0


def add_rows(sig64: U64, first: int, sig32: U32, state: U8, tab: I64) -> int:
    """Store sketches ``sig64`` (``(k, num_perm)``, or one row; any unsigned dtype) as rows
    ``first..first+k-1``: fold each slot to 32 bits into ``sig32``, mark the row live (1) or
    live but empty (2: every slot at its maximum, never a hit) in ``state``, and file its band
    keys. Returns 0, or -1 (nothing stored) when the rows or the table lack room."""
    flat = unsigned(sig64).reshape(-1)
    k = row_count(len(flat), sig32.shape[1])
    src = flat.reshape(k, sig32.shape[1])
    if first < 0 or first + k > min(len(sig32), len(state)) or not room(tab, k * int(tab[5])):
        return -1
    sig32[first : first + k] = _fold(src)
    state[first : first + k] = np.where(_empty(src), 2, 1)
    return insert_rows(np.arange(first, first + k, dtype=np.int64), sig32, tab)


def _hits(
    q32: U32, tab: I64, state: U8, sig32: U32, mark: I64, min_est: float
) -> list[tuple[int, int]]:
    """``(num_perm - equal slots, row)`` of each hit of one folded query, sorted."""
    num_perm = sig32.shape[1]
    tab[2] += 1
    stamp = int(tab[2])
    found: list[tuple[int, int]] = []
    for key in band_keys(q32.reshape(1, -1), int(tab[5]), int(tab[6]))[0].tolist():
        for r in chain(tab, signed(int(key))):
            if mark[r] == stamp or state[r] != 1:
                continue
            mark[r] = stamp
            same = int(np.count_nonzero(sig32[r] == q32))
            if same / num_perm >= min_est:
                found.append((num_perm - same, r))
    found.sort()
    return found


def query_one(
    sig64: U64, sig32: U32, state: U8, mark: I64, tab: I64, out_rows: I64, out_est: F64,
    min_est: float,
) -> int:  # fmt: skip
    """Hits of one query sketch ``sig64`` (``(num_perm,)``) into ``out_rows`` / ``out_est``:
    live rows sharing a band key whose estimated Jaccard is ``>= min_est``, best first, ties
    by row. Returns the number of hits, or ``-n`` (nothing written) when ``n`` hits do not fit
    in the output arrays. An empty query (every slot at its maximum) has no hits."""
    num_perm = sig32.shape[1]
    flat = unsigned(sig64).reshape(-1)
    _one_row(len(flat), num_perm)
    src = flat.reshape(1, num_perm)
    if _empty(src)[0]:
        return 0
    found = _hits(_fold(src)[0], tab, state, sig32, mark, min_est)
    if len(found) > len(out_rows):
        return -len(found)
    for i, (d, r) in enumerate(found):
        out_rows[i] = r
        out_est[i] = (num_perm - d) / num_perm
    return len(found)


def add_query_one(
    add64: U64, first: int, sig64: U64, sig32: U32, state: U8, mark: I64, tab: I64,
    out_rows: I64, out_est: F64, min_est: float,
) -> int:  # fmt: skip
    """:func:`add_rows` of ``add64`` at row ``first``, then :func:`query_one` of ``sig64``, in
    one call. Returns :data:`NO_ROOM` (nothing done) when the add lacks room, else the
    query's result."""
    row_count(unsigned(add64).size, sig32.shape[1])
    _one_row(unsigned(sig64).size, sig32.shape[1])
    if add_rows(add64, first, sig32, state, tab):
        return NO_ROOM
    return query_one(sig64, sig32, state, mark, tab, out_rows, out_est, min_est)


def add_query_same(
    sig64: U64, first: int, sig32: U32, state: U8, mark: I64, tab: I64, out: I64,
    min_est: float,
) -> int:  # fmt: skip
    """:func:`add_rows` of ``sig64`` at row ``first``, then its own query, in one call. Hits
    go into ``out`` (int64, even length ``2 * m``): rows in ``out[:m]``, estimates as float64
    bit patterns in ``out[m:]``. Returns :data:`NO_ROOM` (nothing done) when the add lacks
    room, ``-n`` (the add done, no hit written) when ``n`` hits do not fit, else the number
    of hits."""
    _one_row(unsigned(sig64).size, sig32.shape[1])
    if add_rows(sig64, first, sig32, state, tab):
        return NO_ROOM
    if state[first] != 1:
        return 0
    num_perm = sig32.shape[1]
    found = _hits(sig32[first], tab, state, sig32, mark, min_est)
    m = len(out) // 2
    if len(found) > m:
        return -len(found)
    est = out[m:].view(np.float64)
    for i, (d, r) in enumerate(found):
        out[i] = r
        est[i] = (num_perm - d) / num_perm
    return len(found)


def query_rows(
    sig64: U64, sig32: U32, state: U8, mark: I64, tab: I64, min_est: float
) -> tuple[I64, I64, F64]:
    """Hits of each query sketch (``(k, num_perm)``), as :func:`query_one` finds them.

    Returns ``(offsets, hit_rows, estimates)`` (CSR by query).
    """
    num_perm = sig32.shape[1]
    flat = unsigned(sig64).reshape(-1)
    src = flat.reshape(row_count(len(flat), num_perm), num_perm)
    q32 = _fold(src)
    empty = _empty(src)
    offsets = [0]
    hit_rows: list[int] = []
    estimates: list[float] = []
    for q in range(len(src)):
        found = [] if empty[q] else _hits(q32[q], tab, state, sig32, mark, min_est)
        hit_rows.extend(r for _, r in found)
        estimates.extend((num_perm - d) / num_perm for d, _ in found)
        offsets.append(len(hit_rows))
    return (
        np.asarray(offsets, dtype=np.int64),
        np.asarray(hit_rows, dtype=np.int64),
        np.asarray(estimates, dtype=np.float64),
    )


def _unranked(q32: U32, tab: I64, state: U8, mark: I64) -> list[int]:
    """The live rows sharing a band key with one folded query, band by band, each chain
    newest first (no estimate)."""
    tab[2] += 1
    stamp = int(tab[2])
    found: list[int] = []
    for key in band_keys(q32.reshape(1, -1), int(tab[5]), int(tab[6]))[0].tolist():
        for r in chain(tab, signed(int(key))):
            if mark[r] == stamp or state[r] != 1:
                continue
            mark[r] = stamp
            found.append(r)
    return found


def candidates_one(sig64: U64, state: U8, mark: I64, tab: I64, out: I64) -> int:
    """The candidates of one sketch ``sig64`` (``(num_perm,)``, any unsigned dtype) into
    ``out``: live rows sharing a band key with it, band by band, each chain newest first, no
    estimate (datasketch's ``MinHashLSH.query``). Returns their number, or ``-n`` when ``n``
    do not fit in ``out``. An empty query (every slot at its maximum) has none."""
    src = unsigned(sig64).reshape(1, -1)
    if _empty(src)[0]:
        return 0
    found = _unranked(_fold(src)[0], tab, state, mark)
    if len(found) > len(out):
        return -len(found)
    out[: len(found)] = found
    return len(found)


def candidate_rows(sig64: U64, state: U8, mark: I64, tab: I64) -> tuple[I64, I64]:
    """:func:`candidates_one` of each row of ``sig64`` (``(k, num_perm)``): ``(offsets,
    rows)``, CSR by query."""
    src = unsigned(sig64)
    if src.ndim != 2:
        raise ValueError(
            f"candidate_rows needs (k, num_perm) sketches, got shape {tuple(src.shape)}"
        )
    q32 = _fold(src)
    empty = _empty(src)
    offsets = [0]
    rows: list[int] = []
    for q in range(len(src)):
        if not empty[q]:
            rows.extend(_unranked(q32[q], tab, state, mark))
        offsets.append(len(rows))
    return np.asarray(offsets, dtype=np.int64), np.asarray(rows, dtype=np.int64)


def __getattr__(name: str) -> object:
    # BandIndex (in ._band_index, which imports this module's functions) on first use
    if name == "BandIndex":
        from neardup._kernels._band_index import BandIndex

        return BandIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
