"""numpy reference of the set kernels: the twin of ``neardup._native.sets``.

Same functions, arguments, results and errors as the native kernels (the front,
:mod:`neardup.sketch.sets`, prepares the arguments once for both): each function checks
its arguments as the native one does and raises the same :class:`~neardup.errors.ConfigError`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = [
    "bucket_pairs",
    "center_adjacency",
    "center_pass",
    "components",
    "intersections",
    "rice_decode",
    "rice_encode",
    "rice_sets",
    "rice_sets32",
    "unique_pairs",
    "unique_per_doc",
    "unique_per_doc32",
]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
F64 = npt.NDArray[np.float64]


def check_offsets(offsets: I64, length: int) -> None:
    """``offsets`` rise from 0 to ``length`` (CSR boundaries), never decreasing.

    Raises:
        ConfigError: they do not.
    """
    if not (
        len(offsets)
        and offsets[0] == 0
        and not np.any(offsets[1:] < offsets[:-1])
        and offsets[-1] == length
    ):
        raise ConfigError(
            f"offsets must start at 0, never decrease and end at {length} (the number of "
            "values); pass CSR boundaries"
        )


def check_sorted_runs(values: U64 | npt.NDArray[np.uint32], offsets: I64) -> None:
    """Each document's values rise (sorted, repeats allowed); ``offsets`` checked.

    Raises:
        ConfigError: a document's values fall somewhere (the message names the first).
    """
    falls = np.flatnonzero(values[1:] < values[:-1]) + 1  # a fall inside a document
    if len(falls):
        docs = np.searchsorted(offsets, falls, side="right") - 1
        starts_at = offsets[docs] == falls  # a fall at a document's first value is fine
        if not starts_at.all():
            d = int(docs[~starts_at][0])
            raise ConfigError(
                f"the values of document {d} are not sorted; pass each document's values "
                "sorted ascending (unique_per_doc)"
            )


def check_rows(rows: I64, n: int, what: str) -> None:
    """Every ``rows[k]`` lies in ``0 .. n``.

    Raises:
        ConfigError: one does not (the message names the first).
    """
    bad = np.flatnonzero((rows < 0) | (rows >= n))
    if len(bad):
        raise ConfigError(
            f"{what} holds {int(rows[bad[0]])}, outside 0..{n}; pass row numbers below {n}"
        )


def check_same_length(a: int, b: int, names: str) -> None:
    """Two arrays of one length.

    Raises:
        ConfigError: they differ.
    """
    if a != b:
        raise ConfigError(f"{names} differ in length ({a} and {b}); pass one entry each")


def _count(n: int | np.integer) -> int:
    if int(n) < 0:
        raise ConfigError(f"n is {int(n)}; pass a number of rows, 0 or more")
    return int(n)


def unique_per_doc(values: U64, doc_offsets: I64) -> tuple[U64, I64]:
    """Sort and de-duplicate each document's run of values; return ``(values, offsets)``."""
    check_offsets(doc_offsets, len(values))
    n_docs = len(doc_offsets) - 1
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(doc_offsets))
    order = np.lexsort((values, doc))
    v = values[order]
    d = doc[order]
    keep = np.ones(len(v), dtype=bool)
    if len(v) > 1:
        keep[1:] = (v[1:] != v[:-1]) | (d[1:] != d[:-1])
    v = v[keep]
    counts = np.bincount(d[keep], minlength=n_docs)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return v, offsets


def unique_per_doc32(values: U64, doc_offsets: I64) -> tuple[npt.NDArray[np.uint32], I64]:
    """The top 32 bits of each document's values, sorted and de-duplicated."""
    top = (np.asarray(values, dtype=np.uint64) >> np.uint64(32)).astype(np.uint32)
    v, offsets = unique_per_doc(top, doc_offsets)  # type: ignore[arg-type]
    return v.astype(np.uint32), offsets


def intersections(values: U64 | npt.NDArray[np.uint32], offsets: I64, a: I64, b: I64) -> I64:
    """Common values of the sorted sets ``a[k]`` and ``b[k]`` (a merge's count: for runs
    with repeats, the smaller count of each value), all pairs at once."""
    check_same_length(len(a), len(b), "a and b")
    check_offsets(offsets, len(values))
    check_sorted_runs(values, offsets)
    check_rows(a, len(offsets) - 1, "a")
    check_rows(b, len(offsets) - 1, "b")
    out = np.zeros(len(a), dtype=np.int64)
    sizes = np.diff(offsets)
    step = 1 << 20  # values gathered per chunk of pairs
    cum = np.cumsum(sizes[a] + sizes[b])
    lo = 0
    while lo < len(a):
        hi = max(lo + 1, int(np.searchsorted(cum, (cum[lo - 1] if lo else 0) + step)))
        out[lo:hi] = _common(values, offsets, a[lo:hi], b[lo:hi])
        lo = hi
    return out


def _common(values: U64 | npt.NDArray[np.uint32], offsets: I64, a: I64, b: I64) -> I64:
    """For each pair, the sum over values of the smaller count in its two runs."""
    sizes = np.diff(offsets)
    pair = np.arange(len(a), dtype=np.int64)
    parts = []
    for which, rows in ((0, a), (1, b)):
        length = sizes[rows]
        owner = np.repeat(pair, length)
        first = np.repeat(offsets[rows] - (np.cumsum(length) - length), length)
        parts.append((owner, values[first + np.arange(len(owner))], np.full(len(owner), which)))
    owner = np.concatenate([p[0] for p in parts])
    val = np.concatenate([p[1] for p in parts]).astype(np.uint64)
    side = np.concatenate([p[2] for p in parts])
    order = np.lexsort((val, owner))
    owner, val, side = owner[order], val[order], side[order]
    if not len(owner):
        return np.zeros(len(a), dtype=np.int64)
    new = np.ones(len(owner), dtype=bool)
    new[1:] = (owner[1:] != owner[:-1]) | (val[1:] != val[:-1])
    group = np.cumsum(new) - 1
    in_b = np.bincount(group, weights=side).astype(np.int64)
    total = np.bincount(group).astype(np.int64)
    mins = np.minimum(total - in_b, in_b)
    return np.bincount(owner[new], weights=mins, minlength=len(a)).astype(np.int64)


def components(n: int, a: I64, b: I64) -> I64:
    """Roots (smallest members) of the components of ``n`` elements joined by the edges
    ``(a[k], b[k])``: hooking roots onto smaller roots and pointer jumping, all edges at once
    (Shiloach and Vishkin, "An O(log n) parallel connectivity algorithm", 1982)."""
    n = _count(n)
    check_same_length(len(a), len(b), "a and b")
    check_rows(a, n, "a")
    check_rows(b, n, "b")
    parent = np.arange(n, dtype=np.int64)
    while True:
        x, y = parent[a], parent[b]
        differ = x != y
        if not differ.any():
            return parent
        lo, hi = np.minimum(x[differ], y[differ]), np.maximum(x[differ], y[differ])
        np.minimum.at(parent, hi, lo)  # roots point at smaller roots only
        while True:  # every element straight to its root
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent = up


def unique_pairs(a: I64, b: I64, n: np.int64 | int) -> tuple[I64, I64]:
    """Distinct ``(a, b)`` pairs sorted by ``a`` then ``b``, for ``0 <= a < n``."""
    count = _count(n)
    check_same_length(len(a), len(b), "a and b")
    check_rows(a, count, "a")
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    keep = np.ones(len(a), dtype=bool)
    if len(a) > 1:
        keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return a[keep], b[keep]


def bucket_pairs(
    keys: U64, items: I64, rows: U64, cap: np.int64 | int, radius: np.int64 | int
) -> tuple[I64, I64, int, int]:
    """Pairs of items sharing a key, from ``keys`` sorted ascending: in a run of ``m`` items
    (sorted by item, stably, with their ``rows`` of codes) each pairs with the next
    ``min(m, cap) - 1`` other items, in that order; with ``radius >= 0``, only pairs whose
    codes are within that Hamming distance. Returns ``(a, b, over, largest)``."""
    check_same_length(len(keys), len(items), "keys and items")
    check = int(radius) >= 0
    if check:
        check_same_length(len(keys), rows.shape[0], "keys and codes")
    if np.any(keys[1:] < keys[:-1]):
        raise ConfigError("keys must be sorted ascending; sort keys and items by key")
    order = np.lexsort((items, keys))
    return _bucket_pairs(
        keys[order],
        items[order].astype(np.int64),
        rows[order] if check else None,
        int(cap),
        int(radius),
    )


def _bucket_pairs(
    keys: U64, items: I64, codes: U64 | None, cap: int, radius: int
) -> tuple[I64, I64, int, int]:
    n = len(keys)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), 0, 0
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, n])
    lefts: list[I64] = [np.empty(0, np.int64)]
    rights: list[I64] = [np.empty(0, np.int64)]
    where: list[I64] = [np.empty(0, np.int64)]  # the position of each pair's first item
    dists: list[I64] = [np.empty(0, np.int64)]
    same = keys[1:] == keys[:-1]
    run = same.copy()
    dist = 1
    while dist < cap and run.any():
        i = np.flatnonzero(run)
        keep = items[i] != items[i + dist]
        if codes is not None:
            d = np.bitwise_count(codes[i] ^ codes[i + dist]).sum(axis=1, dtype=np.int64)
            keep &= d <= radius
        lefts.append(items[i][keep])
        rights.append(items[i + dist][keep])
        where.append(i[keep])
        dists.append(np.full(int(keep.sum()), dist, dtype=np.int64))
        dist += 1
        run = run[:-1] & same[dist - 1 :]
    # each item's pairs in turn, nearest first
    order = np.lexsort((np.concatenate(dists), np.concatenate(where)))
    a, b = np.concatenate(lefts)[order], np.concatenate(rights)[order]
    return a, b, int(np.count_nonzero(sizes > cap)), int(sizes.max())


def center_adjacency(n: int, i: I64, j: I64) -> tuple[I64, I64, I64]:
    """CSR ``(indptr, neighbor, edge)`` of the undirected pairs ``(i[k], j[k])``: each row's
    neighbors in the order of the pairs (a stable sort of the pairs' ends)."""
    n = _count(n)
    check_same_length(len(i), len(j), "a and b")
    check_rows(i, n, "a")
    check_rows(j, n, "b")
    m = len(i)
    src = np.stack((i, j), axis=1).ravel()
    dst = np.stack((j, i), axis=1).ravel()
    edge = np.repeat(np.arange(m, dtype=np.int64), 2)
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, dst[order].astype(np.int64), edge[order]


def center_pass(indptr: I64, nbr: I64, edge: I64, sim: F64) -> tuple[I64, F64]:
    """CENTER clustering in row order (Haveliwala, Gionis and Indyk, WebDB 2000): a free row
    becomes a center and takes its free neighbors; a pair given twice counts with its
    highest similarity. Returns ``(root, to_root)``."""
    check_same_length(len(nbr), len(edge), "nbr and edge")
    if not (
        len(indptr)
        and indptr[0] == 0
        and not np.any(indptr[1:] < indptr[:-1])
        and indptr[-1] == len(nbr)
    ):
        raise ConfigError(
            f"indptr must start at 0, never decrease and end at {len(nbr)} (the number of "
            "neighbors); pass center_adjacency's arrays"
        )
    n = len(indptr) - 1
    check_rows(nbr, n, "nbr")
    check_rows(edge, len(sim), "edge")
    root = [-1] * n
    to_root = [1.0] * n
    ptr, nb, sims = indptr.tolist(), nbr.tolist(), sim[edge].tolist()
    for u in range(n):
        if root[u] != -1:
            continue
        root[u] = u
        for k in range(ptr[u], ptr[u + 1]):
            v = nb[k]
            if v == u:
                continue
            if root[v] == -1:
                root[v] = u
                to_root[v] = sims[k]
            elif root[v] == u and sims[k] > to_root[v]:
                to_root[v] = sims[k]
    return np.array(root, dtype=np.int64), np.array(to_root, dtype=np.float64)


def _bits(value: int, width: int) -> list[int]:
    return [(value >> t) & 1 for t in range(width - 1, -1, -1)]


def _check_rice_params(counts: I64, k: I64) -> None:
    bad = counts[counts < 0]
    if len(bad):
        raise ConfigError(f"counts holds {int(bad[0])}; pass counts of 0 or more")
    bad = k[(k < 0) | (k > 63)]
    if len(bad):
        raise ConfigError(f"k holds {int(bad[0])}; pass Rice parameters in 0..63")


def rice_encode(deltas: U64, counts: I64, k: I64, nbytes: I64) -> npt.NDArray[np.uint8]:
    """Golomb-Rice bit strings, one per document, each padded to ``nbytes[i]`` bytes: the
    low ``k`` bits of every delta (most significant first), then every ``delta >> k`` in
    unary (zeros, then a one)."""
    if not len(counts) == len(k) == len(nbytes):
        raise ConfigError(
            f"counts, k and nbytes differ in length ({len(counts)}, {len(k)} and "
            f"{len(nbytes)}); pass one entry per document"
        )
    _check_rice_params(counts, k)
    bad = nbytes[nbytes < 0]
    if len(bad):
        raise ConfigError(f"nbytes holds {int(bad[0])}; pass byte counts of 0 or more")
    total = sum(counts.tolist())
    if total != len(deltas):
        raise ConfigError(
            f"counts sum to {total}, but there are {len(deltas)} deltas; pass one count per "
            "document"
        )
    j = 0
    for i, (n, kk, size) in enumerate(
        zip(counts.tolist(), k.tolist(), nbytes.tolist(), strict=True)
    ):
        need = n * (kk + 1) + sum(d >> kk for d in deltas[j : j + n].tolist())
        if need > 8 * size:
            raise ConfigError(
                f"document {i} needs {need} bits, more than its {size} bytes hold; pass "
                "larger nbytes"
            )
        j += n
    out = bytearray()
    j = 0
    for n, kk, size in zip(counts.tolist(), k.tolist(), nbytes.tolist(), strict=True):
        bits: list[int] = []
        values = deltas[j : j + n].tolist()
        for d in values:
            bits += _bits(d, kk)
        for d in values:
            bits += [0] * (d >> kk) + [1]
        bits += [0] * (8 * size - len(bits))
        out += np.packbits(np.array(bits, dtype=np.uint8)).tobytes()
        j += n
    return np.frombuffer(bytes(out), dtype=np.uint8).copy()


_MASK64 = (1 << 64) - 1


def rice_decode(
    body: npt.NDArray[np.uint8], starts: I64, counts: I64, k: I64
) -> tuple[U64, npt.NDArray[np.uint8]]:
    """Deltas of every blob's bit string (blob ``i`` is ``body[starts[i]:starts[i+1]]``), and
    1 per blob that decodes cleanly (0: too short, a missing unary one, a high part of
    2**32 or more, or more than padding left over). A damaged blob keeps the low parts it
    read; a high part shifted past 64 bits keeps its low 64."""
    if len(starts) != len(counts) + 1 or len(k) != len(counts):
        raise ConfigError(
            f"starts, counts and k have {len(starts)}, {len(counts)} and {len(k)} entries; "
            "pass one count and k per blob and one start more"
        )
    if starts[0] < 0 or np.any(starts[1:] < starts[:-1]) or starts[-1] > len(body):
        raise ConfigError(
            f"starts must rise from 0 or more to at most {len(body)} (the body's bytes); pass "
            "blob boundaries"
        )
    _check_rice_params(counts, k)
    deltas = np.zeros(int(counts.sum()), dtype=np.uint64)
    ok = np.ones(len(counts), dtype=np.uint8)
    j = 0
    for i, (n, kk) in enumerate(zip(counts.tolist(), k.tolist(), strict=True)):
        bits = np.unpackbits(body[starts[i] : starts[i + 1]]).tolist()
        if n * kk > len(bits):
            ok[i] = 0
            j += n
            continue
        lows = []
        for r in range(n):
            low = 0
            for b in bits[r * kk : (r + 1) * kk]:
                low = (low << 1) | b
            lows.append(low)
        deltas[j : j + n] = lows
        at = n * kk
        for r in range(n):
            try:
                one = bits.index(1, at)
            except ValueError:
                ok[i] = 0
                break
            if one - at >= 1 << 32:
                ok[i] = 0
                break
            deltas[j + r] = (((one - at) << kk) | lows[r]) & _MASK64
            at = one + 1
        if ok[i] and len(bits) - at >= 8:
            ok[i] = 0
        j += n
    return deltas, ok


def rice_sets(values: U64, offsets: I64, margin: int, max_width: int) -> tuple[U8, I64]:
    """Format-2 set blobs (:mod:`neardup.sketch.setcodec`) of every document (each one's
    values sorted) in one buffer, and the blob boundaries (numpy, batch-wide)."""
    if not 1 <= margin <= max_width <= 32:
        raise ConfigError(
            f"margin {margin} and max_width {max_width} must satisfy 1 <= margin <= max_width <= 32"
        )
    check_offsets(offsets, len(values))
    check_sorted_runs(values, offsets)
    sizes = np.diff(offsets)
    n_docs = len(sizes)
    _, exponent = np.frexp(np.maximum(sizes - 1, 0).astype(np.float64))
    bits = np.where(sizes > 1, exponent, 0).astype(np.int64)  # (n - 1).bit_length()
    widths = np.minimum(max_width, bits + margin)
    doc = np.repeat(np.arange(n_docs), sizes)
    cut = values >> (np.uint64(64) - widths[doc].astype(np.uint64))  # each doc's width
    first = np.zeros(len(cut), dtype=bool)
    first[offsets[:-1][sizes > 0]] = True
    keep = first.copy()  # drop the values that the cut made equal (neighbours)
    keep[1:] |= cut[1:] != cut[:-1]
    cut, first, doc = cut[keep], first[keep], doc[keep]
    deltas = cut.copy()  # delta-coded within each document, the first value absolute
    deltas[1:] -= cut[:-1]
    deltas[first] = cut[first]
    counts = np.bincount(doc, minlength=n_docs).astype(np.int64)
    sums = np.bincount(doc, weights=deltas.astype(np.float64), minlength=n_docs).astype(np.int64)
    mean = sums // np.maximum(counts, 1)
    _, exponent = np.frexp(mean.astype(np.float64))
    base = np.where(mean > 0, exponent - 1, 0).astype(np.int64)  # floor(log2(mean))
    k = np.zeros(n_docs, dtype=np.int64)
    best = np.full(n_docs, -1, dtype=np.int64)
    for step in (-1, 0, 1):
        kk = np.clip(base + step, 0, max_width - 1)
        high = (deltas >> kk[doc].astype(np.uint64)).astype(np.float64)
        cost = counts * (kk + 1) + np.bincount(doc, weights=high, minlength=n_docs).astype(np.int64)
        better = (best < 0) | (cost < best)
        k[better], best[better] = kk[better], cost[better]
    body = rice_encode(deltas, counts, k, (best + 7) // 8)
    out = bytearray()
    starts = [0]
    at = 0
    for i, (w, kp, n) in enumerate(zip(widths.tolist(), k.tolist(), counts.tolist(), strict=True)):
        size = (int(best[i]) + 7) // 8
        out += (
            bytes((0x53, 0x02, w, kp)) + _varint(n) + (body[at : at + size].tobytes() if n else b"")
        )
        at += size
        starts.append(len(out))
    return np.frombuffer(bytes(out), dtype=np.uint8).copy(), np.array(starts, dtype=np.int64)


def rice_sets32(
    values: npt.NDArray[np.uint32], offsets: I64, margin: int, max_width: int
) -> tuple[U8, I64]:
    """:func:`rice_sets` of 32-bit values taken as the top halves of 64-bit ones."""
    wide = np.asarray(values, dtype=np.uint32).astype(np.uint64) << np.uint64(32)
    return rice_sets(wide, offsets, margin, max_width)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
