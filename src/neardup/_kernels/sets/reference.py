"""numpy reference of the set kernels: the oracle of :mod:`neardup._kernels.sets.fast`.

Same functions, arguments and results as the numba kernels (the front,
:mod:`neardup._kernels.sets`, prepares the arguments once for both).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "bucket_pairs",
    "intersections",
    "rice_decode",
    "rice_encode",
    "rice_sets",
    "unique_pairs",
    "unique_per_doc",
    "unique_per_doc32",
]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


def unique_per_doc(values: U64, doc_offsets: I64) -> tuple[U64, I64]:
    """Reference of :func:`neardup._kernels.sets.fast.unique_per_doc`."""
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
    """Reference of :func:`neardup._kernels.sets.fast.unique_per_doc32`."""
    top = (np.asarray(values, dtype=np.uint64) >> np.uint64(32)).astype(np.uint32)
    v, offsets = unique_per_doc(top, doc_offsets)  # type: ignore[arg-type]
    return v.astype(np.uint32), offsets


def intersections(values: U64, offsets: I64, a: I64, b: I64) -> I64:
    """Reference of :func:`neardup._kernels.sets.fast.intersections`."""
    out = np.empty(len(a), dtype=np.int64)
    for k, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        x = values[offsets[i] : offsets[i + 1]]
        y = values[offsets[j] : offsets[j + 1]]
        out[k] = len(np.intersect1d(x, y, assume_unique=True))
    return out


def unique_pairs(a: I64, b: I64, n: np.int64) -> tuple[I64, I64]:
    """Reference of :func:`neardup._kernels.sets.fast.unique_pairs`."""
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    keep = np.ones(len(a), dtype=bool)
    if len(a) > 1:
        keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return a[keep], b[keep]


def bucket_pairs(
    keys: U64, items: I64, rows: U64, cap: np.int64, radius: np.int64
) -> tuple[I64, I64, int, int]:
    """Reference of :func:`neardup._kernels.sets.fast.bucket_pairs` (keys sorted, items not)."""
    order = np.lexsort((items, keys))
    check = radius >= 0
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
        dist += 1
        run = run[:-1] & same[dist - 1 :]
    a, b = np.concatenate(lefts), np.concatenate(rights)
    return a, b, int(np.count_nonzero(sizes > cap)), int(sizes.max())


def _bits(value: int, width: int) -> list[int]:
    return [(value >> t) & 1 for t in range(width - 1, -1, -1)]


def rice_encode(deltas: U64, counts: I64, k: I64, nbytes: I64) -> npt.NDArray[np.uint8]:
    """Reference of :func:`neardup._kernels.sets.fast.rice_encode`."""
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


def rice_decode(
    body: npt.NDArray[np.uint8], starts: I64, counts: I64, k: I64
) -> tuple[U64, npt.NDArray[np.uint8]]:
    """Reference of :func:`neardup._kernels.sets.fast.rice_decode`."""
    deltas = np.zeros(int(counts.sum()), dtype=np.uint64)
    ok = np.ones(len(counts), dtype=np.uint8)
    j = 0
    for i, (n, kk) in enumerate(zip(counts.tolist(), k.tolist(), strict=True)):
        bits = np.unpackbits(body[starts[i] : starts[i + 1]]).tolist()
        if n * kk > len(bits):
            ok[i] = 0
            j += n
            continue
        at = n * kk
        for r in range(n):
            low = 0
            for b in bits[r * kk : (r + 1) * kk]:
                low = (low << 1) | b
            try:
                one = bits.index(1, at)
            except ValueError:
                ok[i] = 0
                break
            if one - at >= 1 << 32:
                ok[i] = 0
                break
            deltas[j + r] = ((one - at) << kk) | low
            at = one + 1
        if ok[i] and len(bits) - at >= 8:
            ok[i] = 0
        j += n
    return deltas, ok


def rice_sets(values: U64, offsets: I64, margin: int, max_width: int) -> tuple[U8, I64]:
    """Reference of :func:`neardup._kernels.sets.fast.rice_sets` (numpy, batch-wide)."""
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


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
