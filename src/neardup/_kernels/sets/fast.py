"""numba kernel of :mod:`neardup._kernels.sets` (compiled lazily, cached)."""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.hamming.fast import _popcount
from neardup._kernels.minhash.fast import sort_unique

__all__ = [
    "bucket_pairs",
    "center_adjacency",
    "center_pass",
    "components",
    "intersections",
    "rice_decode",
    "rice_encode",
    "rice_sets",
    "unique_pairs",
    "unique_per_doc",
    "unique_per_doc32",
]


@njit()
def intersections(values, offsets, a, b):  # type: ignore[no-untyped-def]
    """Merge-count the common values of sorted runs ``a[k]`` and ``b[k]``."""
    out = np.empty(len(a), dtype=np.int64)
    for k in range(len(a)):
        i = np.uint64(offsets[a[k]])
        ie = np.uint64(offsets[a[k] + 1])
        j = np.uint64(offsets[b[k]])
        je = np.uint64(offsets[b[k] + 1])
        n = 0
        while i < ie and j < je:
            x = values[i]
            y = values[j]
            if x == y:
                n += 1
                i += np.uint64(1)
                j += np.uint64(1)
            elif x < y:
                i += np.uint64(1)
            else:
                j += np.uint64(1)
        out[k] = n
    return out


@njit()
def unique_per_doc(values, doc_offsets):  # type: ignore[no-untyped-def]
    """Sort and de-duplicate each document's run of values; return (values, offsets)."""
    n_docs = len(doc_offsets) - 1
    out = np.empty(len(values), dtype=np.uint64)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    for d in range(n_docs):
        run = np.sort(values[doc_offsets[d] : doc_offsets[d + 1]])
        for k in range(len(run)):
            if k == 0 or run[k] != run[k - 1]:
                out[pos] = run[k]
                pos += 1
        offsets[d + 1] = pos
    return out[:pos].copy(), offsets


@njit()
def unique_per_doc32(values, doc_offsets):  # type: ignore[no-untyped-def]
    """The top 32 bits of each document's values, sorted and de-duplicated (in place in the
    output: no allocation per document); return (values, offsets)."""
    n_docs = len(doc_offsets) - 1
    out = np.empty(len(values), dtype=np.uint32)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    for d in range(n_docs):
        lo, hi = doc_offsets[d], doc_offsets[d + 1]
        for k in range(lo, hi):
            out[pos + k - lo] = np.uint32(values[k] >> np.uint64(32))
        pos += sort_unique(out[pos : pos + hi - lo])
        offsets[d + 1] = pos
    return out[:pos].copy(), offsets


@njit()
def components(n, a, b):  # type: ignore[no-untyped-def]
    """Union-find over ``n`` elements and the edges ``(a[k], b[k])``; every element's root is
    the smallest member of its component (the rule of :mod:`neardup.cluster`)."""
    parent = np.arange(n)
    for k in range(len(a)):
        x = a[k]
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        y = b[k]
        while parent[y] != y:
            parent[y] = parent[parent[y]]
            y = parent[y]
        if x < y:
            parent[y] = x
        elif y < x:
            parent[x] = y
    for i in range(n):
        r = i
        while parent[r] != r:
            r = parent[r]
        parent[i] = r
    return parent


@njit()
def _close(codes, u, v, radius):  # type: ignore[no-untyped-def]
    """Whether rows u and v of ``codes`` are within Hamming distance ``radius``."""
    d = 0
    for w in range(codes.shape[1]):
        d += _popcount(codes[u, w] ^ codes[v, w])
    return d <= radius


@njit()
def _walk_buckets(keys, items, codes, cap, radius, left, right, fill):  # type: ignore[no-untyped-def]
    """One pass over the runs of equal keys. The first pass (``fill`` false) sorts each
    run's items (with their ``codes`` rows) and counts the pairs; the second writes them."""
    n = len(keys)
    check = radius >= 0
    p = 0
    over = 0
    largest = 0
    i = 0
    while i < n:
        j = i + 1
        while j < n and keys[j] == keys[i]:
            j += 1
        m = j - i
        if not fill:
            largest = max(largest, m)
            if m > cap:
                over += 1
            if m > 1 and check:
                perm = np.argsort(items[i:j])
                items[i:j] = items[i:j][perm]
                codes[i:j] = codes[i:j][perm]
            elif m > 1:
                items[i:j] = np.sort(items[i:j])
        w = min(m, cap) - 1
        for u in range(i, j):
            for v in range(u + 1, min(j, u + 1 + w)):
                if items[u] != items[v] and (not check or _close(codes, u, v, radius)):
                    if fill:
                        left[p] = items[u]
                        right[p] = items[v]
                    p += 1
        i = j
    return p, over, largest


@njit()
def bucket_pairs(keys, items, codes, cap, radius):  # type: ignore[no-untyped-def]
    """Pairs of items sharing a key, from arrays sorted by key (``items``, and the rows of
    ``codes``, are sorted within each run, in place): in a run of ``m`` items each one pairs
    with the next ``min(m, cap) - 1``. With ``radius >= 0``, only pairs whose ``codes`` rows
    are within that Hamming distance. Returns (a, b, over, largest)."""
    none = np.empty(0, dtype=np.int64)
    total, over, largest = _walk_buckets(keys, items, codes, cap, radius, none, none, False)
    left = np.empty(total, dtype=np.int64)
    right = np.empty(total, dtype=np.int64)
    _walk_buckets(keys, items, codes, cap, radius, left, right, True)
    return left, right, over, largest


@njit()
def unique_pairs(a, b, n):  # type: ignore[no-untyped-def]
    """Distinct (a, b) pairs sorted by a then b, for ``0 <= a < n``: a counting sort by
    ``a``, then a sort of each group's ``b`` values."""
    starts = np.zeros(n + 1, dtype=np.int64)
    for k in range(len(a)):
        starts[a[k] + 1] += 1
    for i in range(n):
        starts[i + 1] += starts[i]
    grouped = np.empty(len(b), dtype=np.int64)
    pos = starts[:-1].copy()
    for k in range(len(a)):
        grouped[pos[a[k]]] = b[k]
        pos[a[k]] += 1
    out_a = np.empty(len(a), dtype=np.int64)
    out_b = np.empty(len(b), dtype=np.int64)
    p = 0
    for i in range(n):
        run = np.sort(grouped[starts[i] : starts[i + 1]])
        for j in range(len(run)):
            if j == 0 or run[j] != run[j - 1]:
                out_a[p] = i
                out_b[p] = run[j]
                p += 1
    return out_a[:p].copy(), out_b[:p].copy()


@njit()
def center_adjacency(n, i, j):  # type: ignore[no-untyped-def]
    """CSR ``(indptr, neighbor, edge)`` of the pairs ``(i[k], j[k])`` by a counting sort (the
    reference sorts with numpy; :func:`center_pass` does not depend on the order)."""
    indptr = np.zeros(n + 1, dtype=np.int64)
    for k in range(len(i)):
        indptr[i[k] + 1] += 1
        indptr[j[k] + 1] += 1
    for u in range(n):
        indptr[u + 1] += indptr[u]
    fill = indptr[:-1].copy()
    nbr = np.empty(2 * len(i), dtype=np.int64)
    edge = np.empty(2 * len(i), dtype=np.int64)
    for k in range(len(i)):
        a = i[k]
        b = j[k]
        nbr[fill[a]] = b
        edge[fill[a]] = k
        fill[a] += 1
        nbr[fill[b]] = a
        edge[fill[b]] = k
        fill[b] += 1
    return indptr, nbr, edge


@njit()
def center_pass(indptr, nbr, edge, sim):  # type: ignore[no-untyped-def]
    """CENTER clustering in row order (``neardup.cluster._center_loop`` is the reference):
    a free row becomes a center and takes its free neighbors; a pair given twice counts with
    its highest similarity."""
    n = len(indptr) - 1
    root = np.full(n, -1, dtype=np.int64)
    to_root = np.ones(n, dtype=np.float64)
    for u in range(n):
        if root[u] != -1:
            continue
        root[u] = u
        for k in range(indptr[u], indptr[u + 1]):
            v = nbr[k]
            if v == u:
                continue
            if root[v] == -1:
                root[v] = u
                to_root[v] = sim[edge[k]]
            elif root[v] == u and sim[edge[k]] > to_root[v]:
                to_root[v] = sim[edge[k]]
    return root, to_root


@njit()
def rice_encode(deltas, counts, k, nbytes):  # type: ignore[no-untyped-def]
    """Golomb-Rice bit strings, one per document, each padded to ``nbytes[i]`` bytes."""
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    for i in range(len(counts)):
        starts[i + 1] = starts[i] + nbytes[i]
    out = np.zeros(starts[-1], dtype=np.uint8)
    j = 0
    for i in range(len(counts)):
        kk = k[i]
        bit = starts[i] * 8
        for r in range(counts[i]):  # low parts, most significant bit first
            d = deltas[j + r]
            for t in range(kk - 1, -1, -1):
                if (d >> np.uint64(t)) & np.uint64(1):
                    out[bit >> 3] |= np.uint8(0x80 >> (bit & 7))
                bit += 1
        for r in range(counts[i]):  # high parts in unary: zeros, then a one
            bit += np.int64(deltas[j + r] >> np.uint64(kk))
            out[bit >> 3] |= np.uint8(0x80 >> (bit & 7))
            bit += 1
        j += counts[i]
    return out


@njit()
def rice_decode(body, starts, counts, k):  # type: ignore[no-untyped-def]
    """Deltas of every blob's bit string, and 1 per blob that decodes cleanly (0: damaged)."""
    total = 0
    for i in range(len(counts)):
        total += counts[i]
    deltas = np.zeros(total, dtype=np.uint64)
    ok = np.ones(len(counts), dtype=np.uint8)
    j = 0
    for i in range(len(counts)):
        kk = k[i]
        bit = starts[i] * 8
        end = starts[i + 1] * 8
        n = counts[i]
        if bit + n * kk > end:
            ok[i] = 0
            j += n
            continue
        for r in range(n):
            v = np.uint64(0)
            for _ in range(kk):
                v = (v << np.uint64(1)) | np.uint64((body[bit >> 3] >> (7 - (bit & 7))) & 1)
                bit += 1
            deltas[j + r] = v
        for r in range(n):
            q = np.uint64(0)
            while bit < end and not (body[bit >> 3] >> (7 - (bit & 7))) & 1:
                q += np.uint64(1)
                bit += 1
            if bit >= end or q >= np.uint64(1 << 32):
                ok[i] = 0
                break
            bit += 1
            deltas[j + r] |= q << np.uint64(kk)
        if ok[i] and end - bit >= 8:
            ok[i] = 0  # more than padding after the last value
        j += n
    return deltas, ok


@njit()
def _bit_length(x):  # type: ignore[no-untyped-def]
    n = 0
    while x > 0:
        x >>= 1
        n += 1
    return n


@njit()
def rice_sets(values, offsets, margin, max_width):  # type: ignore[no-untyped-def]
    """Format-2 set blobs (see :mod:`neardup.sketch.setcodec`) of every document, one buffer.

    Two passes a document: the count and sum of the deltas, then the exact cost of the three
    candidate Rice parameters at once; the bits go out through a 64-bit accumulator.
    """
    n_docs = len(offsets) - 1
    widths = np.zeros(n_docs, dtype=np.int64)
    ks = np.zeros(n_docs, dtype=np.int64)
    counts = np.zeros(n_docs, dtype=np.int64)
    starts = np.zeros(n_docs + 1, dtype=np.int64)
    for i in range(n_docs):
        lo, hi = offsets[i], offsets[i + 1]
        w = min(max_width, _bit_length(hi - lo - 1) + margin) if hi - lo > 1 else margin
        shift = np.uint64(64 - w)
        n = 0
        prev = np.uint64(0)
        for j in range(lo, hi):
            c = values[j] >> shift
            if n == 0 or c != prev:
                prev = c
                n += 1
        # the deltas sum to the last value; the sum of their high parts is the cost's rest
        mean = np.int64(prev // np.uint64(n)) if n else 0  # prev < 2**32
        base = _bit_length(mean) - 1 if mean else 0
        k0 = min(max(base - 1, 0), max_width - 1)
        k1 = min(max(base, 0), max_width - 1)
        k2 = min(max(base + 1, 0), max_width - 1)
        u0, u1, u2 = np.uint64(k0), np.uint64(k1), np.uint64(k2)
        c0 = np.int64(n * (k0 + 1))
        c1 = np.int64(n * (k1 + 1))
        c2 = np.int64(n * (k2 + 1))
        prev = np.uint64(0)
        first = True
        for j in range(lo, hi):
            c = values[j] >> shift
            if first or c != prev:
                d = c - prev if not first else c
                c0 += np.int64(d >> u0)
                c1 += np.int64(d >> u1)
                c2 += np.int64(d >> u2)
                prev = c
                first = False
        best_k, best = k0, c0  # the first of the smallest, as step -1, 0, 1 in turn
        if c1 < best:
            best_k, best = k1, c1
        if c2 < best:
            best_k, best = k2, c2
        widths[i], ks[i], counts[i] = w, best_k, n
        head = 4 + max(1, (_bit_length(n) + 6) // 7)
        starts[i + 1] = starts[i] + head + ((best + 7) // 8 if n else 0)
    out = np.zeros(starts[-1], dtype=np.uint8)
    for i in range(n_docs):
        at = starts[i]
        out[at], out[at + 1], out[at + 2], out[at + 3] = 0x53, 0x02, widths[i], ks[i]
        at += 4
        n = counts[i]
        while True:
            byte = n & 0x7F
            n >>= 7
            out[at] = byte | (0x80 if n else 0)
            at += 1
            if not n:
                break
        lo, hi = offsets[i], offsets[i + 1]
        shift = np.uint64(64 - widths[i])
        kk = np.uint64(ks[i])
        low_mask = (np.uint64(1) << kk) - np.uint64(1)
        acc = np.uint64(0)  # the last `held` bits not yet written, most significant first
        held = np.uint64(0)
        for part in range(2):  # the low parts, then the unary high parts
            prev = np.uint64(0)
            first = True
            for j in range(lo, hi):
                c = values[j] >> shift
                if not first and c == prev:
                    continue
                d = c - prev if not first else c
                prev = c
                first = False
                if part == 0:
                    acc = (acc << kk) | (d & low_mask)
                    held += kk
                else:
                    q = d >> kk  # q zeros, then a one
                    while q >= np.uint64(32):
                        acc <<= np.uint64(32)
                        held += np.uint64(32)
                        while held >= np.uint64(8):
                            held -= np.uint64(8)
                            out[at] = np.uint8((acc >> held) & np.uint64(0xFF))
                            at += 1
                        q -= np.uint64(32)
                    acc = (acc << (q + np.uint64(1))) | np.uint64(1)
                    held += q + np.uint64(1)
                while held >= np.uint64(8):
                    held -= np.uint64(8)
                    out[at] = np.uint8((acc >> held) & np.uint64(0xFF))
                    at += 1
        if held:
            out[at] = np.uint8((acc << (np.uint64(8) - held)) & np.uint64(0xFF))
    return out, starts
