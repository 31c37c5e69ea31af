"""numpy reference of the Hamming index kernels: the twin of ``neardup._native.hamming``.

The functions sort blocks and scan all pairs; :class:`HammingTable` holds an index's rows and
answers its per-call queries (plain Python: a dict of rows per block value).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = ["HammingTable", "all_pairs", "block_order", "block_values"]

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]


def _check_block(words: int, start: int, end: int) -> None:
    if start < 0 or end <= start or end - start > 64 or end > 64 * words:
        raise ValueError(
            f"block [{start}, {end}) is not 1 to 64 bits within a {64 * words}-bit code"
        )


def block_values(codes: U64, start: int, end: int) -> U64:
    """Value of bits ``[start, end)`` (at most 64) of every ``(n, words)`` code row."""
    _check_block(codes.shape[1], start, end)
    k, off = divmod(start, 64)
    v = codes[:, k] >> np.uint64(off)
    if off and off + (end - start) > 64:
        v = v | (codes[:, k + 1] << np.uint64(64 - off))
    if end - start < 64:
        v = v & np.uint64((1 << (end - start)) - 1)
    return v


def block_order(codes: U64, start: int, end: int) -> tuple[U64, I64]:
    """Values of block ``[start, end)`` sorted ascending, and the row of each."""
    values = block_values(codes, start, end)
    order = np.argsort(values, kind="stable").astype(np.int64)
    return values[order], order


def all_pairs(codes: U64, starts: I64, ends: I64, masks: U64, radius: int) -> tuple[I64, I64, I64]:
    """Every pair of rows within ``radius``, each once.

    For each block ``j``: sort rows by the block's value, scan runs of equal values, verify
    candidates by popcount, and keep a pair only if ``j`` is the first block it agrees on.

    Args:
        codes: ``(n, words)`` uint64 codes.
        starts, ends: ``(blocks,)`` int64 bit ranges of the blocks.
        masks: ``(blocks, words)`` uint64; block ``b`` covers the bits set in ``masks[b]``.
        radius: Largest Hamming distance reported (must be below the number of blocks).

    Returns:
        ``(a, b, d)`` int64 arrays, ``a < b`` rows and ``d`` their distance, in block order,
        then sorted position.
    """
    if len(starts) != len(ends):
        raise ValueError(f"starts and ends differ in length ({len(starts)} and {len(ends)})")
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        _check_block(codes.shape[1], s, e)
    mrows, mwords = masks.shape
    if mrows != len(starts) or (mwords != codes.shape[1] and mrows > 0):
        raise ValueError(
            f"masks of shape ({mrows}, {mwords}) do not fit {len(starts)} blocks of "
            f"{codes.shape[1]}-word codes"
        )
    out: list[tuple[I64, I64, I64]] = []
    n = len(codes)
    for j in range(len(starts)):
        keys, order = block_order(codes, int(starts[j]), int(ends[j]))
        if n < 2:
            break
        new_run = np.concatenate(([True], keys[1:] != keys[:-1]))
        run_end = np.append(np.flatnonzero(new_run)[1:], n)[np.cumsum(new_run) - 1]
        partners = run_end - np.arange(n) - 1
        total = int(partners.sum())
        if total == 0:
            continue
        p = np.repeat(np.arange(n), partners)
        first = np.zeros(n, dtype=np.int64)
        np.cumsum(partners[:-1], out=first[1:])
        q = p + 1 + (np.arange(total) - first[p])
        x = codes[order[p]] ^ codes[order[q]]
        d = np.bitwise_count(x).sum(axis=1, dtype=np.int64)
        keep = d <= radius
        for jj in range(j):
            keep &= ((x & masks[jj]) != 0).any(axis=1)
        a, b = order[p[keep]], order[q[keep]]
        out.append((np.minimum(a, b), np.maximum(a, b), d[keep]))
    if not out:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy()
    return (
        np.concatenate([o[0] for o in out]),
        np.concatenate([o[1] for o in out]),
        np.concatenate([o[2] for o in out]),
    )


_MASK64 = (1 << 64) - 1


def _code64(code: object) -> int:
    if isinstance(code, bool) or not isinstance(code, int | np.integer) or not 0 <= code <= _MASK64:
        raise ValueError(f"code {code} is not an unsigned 64-bit integer")
    return int(code)


class HammingTable:
    """The rows of a Hamming index and their block buckets (the per-call path of
    ``HammingIndex``): rows in insertion order, live or dead; queries return live rows within
    a radius sorted by distance, then row.

    Args:
        words: uint64 words per code (1 to 4).
        starts, ends: The blocks' bit ranges ``[starts[j], ends[j])``, 1 to 64 bits each.
    """

    def __init__(self, words: int, starts: I64, ends: I64) -> None:
        if not 1 <= words <= 4:
            raise ValueError(f"words must be 1 to 4, got {words}")
        if len(starts) != len(ends):
            raise ValueError(f"starts and ends differ in length ({len(starts)} and {len(ends)})")
        bounds = [(int(s), int(e)) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        for s, e in bounds:
            _check_block(words, s, e)
        self._words = words
        self._bounds = bounds
        self._codes: list[int] = []  # each row's code as one int
        self._alive: list[bool] = []
        self._buckets: list[dict[int, list[int]]] = [{} for _ in bounds]

    def __len__(self) -> int:
        return len(self._alive)

    def _file(self, code: int) -> None:
        row = len(self._codes)
        self._codes.append(code)
        for (s, e), bucket in zip(self._bounds, self._buckets, strict=True):
            bucket.setdefault((code >> s) & ((1 << (e - s)) - 1), []).append(row)

    def add_rows(self, codes: U64, alive: npt.NDArray[np.bool_]) -> None:
        """Append rows: ``codes`` ``(k, words)`` uint64 and their ``alive`` flags ``(k,)``."""
        k, words = codes.shape
        if (words != self._words and k > 0) or len(alive) != k:
            raise ValueError(
                f"rows of shape ({k}, {words}) with {len(alive)} flags do not fit a table of "
                f"{self._words}-word codes"
            )
        for row in codes.tolist():
            self._file(sum(int(w) << (64 * i) for i, w in enumerate(row)))
        self._alive += [bool(a) for a in alive.tolist()]

    def add_code(self, code: int) -> int:
        """Append the 64-bit ``code`` (an int) as a live row; returns the row."""
        if self._words != 1:
            raise ValueError("add_code takes 64-bit codes; use add_rows")
        self._file(_code64(code))
        self._alive.append(True)
        return len(self._alive) - 1

    def kill(self, row: int) -> None:
        """Mark ``row`` dead."""
        n = len(self._alive)
        if not 0 <= row < n:
            raise ValueError(f"row {row} is not in the table of {n} rows")
        self._alive[row] = False

    def _found(self, q: int, radius: int) -> list[tuple[int, int]]:
        if radius < 0 or radius > 0xFFFFFFFF:
            raise ValueError(f"radius {radius} is negative or too large")
        if radius >= len(self._bounds):
            rows: Iterable[int] = range(len(self._codes))
        else:
            seen: set[int] = set()
            for (s, e), bucket in zip(self._bounds, self._buckets, strict=True):
                seen.update(bucket.get((q >> s) & ((1 << (e - s)) - 1), ()))
            rows = seen
        codes, alive = self._codes, self._alive
        found = [((codes[r] ^ q).bit_count(), r) for r in rows if alive[r]]
        return sorted(f for f in found if f[0] <= radius)

    def query(self, q: U64, radius: int) -> tuple[I64, I64]:
        """Live rows within ``radius`` of the code ``q`` (``(words,)`` uint64), sorted by
        distance, then row: ``(rows, distances)`` int64."""
        if len(q) != self._words:
            raise ValueError(
                f"a query of {len(q)} words does not fit a table of {self._words}-word codes"
            )
        found = self._found(sum(int(w) << (64 * i) for i, w in enumerate(q.tolist())), radius)
        rows = np.array([r for _, r in found], dtype=np.int64)
        return rows, np.array([d for d, _ in found], dtype=np.int64)

    def query_keys(self, code: int, radius: int, keys: list[object]) -> list[tuple[object, int]]:
        """:meth:`query` of the 64-bit ``code`` (an int), as ``[(keys[row], distance)]``."""
        if self._words != 1:
            raise ValueError("query_keys takes 64-bit codes; use query")
        return [(keys[r], d) for d, r in self._found(_code64(code), radius)]

    def codes(self) -> U64:
        """A copy of every row's code: ``(len, words)`` uint64."""
        out = np.zeros((len(self._codes), self._words), dtype=np.uint64)
        for i, c in enumerate(self._codes):
            out[i] = [(c >> (64 * k)) & _MASK64 for k in range(self._words)]
        return out

    def alive(self) -> npt.NDArray[np.bool_]:
        """A copy of every row's live flag: ``(len,)`` bool."""
        return np.array(self._alive, dtype=bool)
