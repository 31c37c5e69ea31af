"""The lsh kernel family: the band-key hash table of :class:`neardup.index.lsh.LSHIndex`.

``reference.py`` (Python and numpy) and ``neardup._native.lsh`` give the same tables and hits;
pick one with :func:`neardup._kernels.engine.kernels` (``kernels("lsh")``).

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

__all__ = ["NO_ROOM", "plan_growth"]

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
