"""The steps that run inside Spark executors: Arrow batches in, Arrow batches out.

Pure functions of pyarrow record batches and numpy arrays (no Spark session needed), so they
are tested directly and shipped to executors by reference. They call the same
:class:`~neardup.methods.Method` objects as the local engine (``sketch``, ``lookup_keys``) and
the same kernels (:func:`~neardup.sketch.sets.jaccard_pairs`, popcount, union-find), which is
what makes the Spark clusters equal the local ones. What they exchange is described in
:mod:`neardup.spark.routing`.

Verification bytes per document:

==========  ============================================================================
kind        bytes
==========  ============================================================================
jaccard     MinHash with ``verify=True``: sorted unique 32-bit shingle hashes (``<u8``)
estimate    MinHash with ``verify=False``: the 32-bit folded signature (``num_perm`` words)
hamming     SimHash: the code's 64-bit words (``bits / 64`` of them)
==========  ============================================================================
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError, InputError, InputTooLargeError
from neardup.io import Document
from neardup.spark.blobs import ids_from_arrow, ids_to_arrow, pack, take_ids, take_rows, unpack
from neardup.spark.routing import (
    ACCEPTED,
    DATA,
    DUPLICATE_IDS,
    FORWARD,
    IDS,
    KEYS,
    NEEDS,
    NULL_IDS,
    NULL_TEXT,
    PAIRS,
    Docs,
    by_target,
    duplicate_ids,
    home_side,
    id_hashes,
    partition_id,
    pieces,
    route,
    rows_batches,
    split_kinds,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from neardup.methods import Method

__all__ = [
    "Kind",
    "bucket_step",
    "components_step",
    "forward_step",
    "method_kind",
    "similarities",
    "sketch_arrays",
    "sketch_step",
    "verify_step",
]

#: Most documents, and most text bytes, sketched per call of ``Method.sketch``.
SKETCH_DOCS = 8192
SKETCH_BYTES = 32 << 20

Kind = Literal["jaccard", "estimate", "hamming"]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
_ITEM: dict[str, np.dtype[Any]] = {
    "jaccard": np.dtype("<u8"),
    "estimate": np.dtype("<u4"),
    "hamming": np.dtype("<u8"),
}


def method_kind(method: Method) -> Kind:
    """How candidate pairs of ``method`` are verified (see the module docstring).

    Raises:
        ConfigError: the method has no Spark engine (only MinHash and SimHash do).

    Examples:
        >>> from neardup.methods import make_method
        >>> method_kind(make_method("simhash")), method_kind(make_method("minhash"))
        ('hamming', 'jaccard')
    """
    from neardup.methods import method_info, method_names

    spark = method_info(method.name).spark
    if spark == "bands":
        return "jaccard" if getattr(method.config, "verify", True) else "estimate"
    if spark == "blocks" and not method_info(method.name).binary:
        return "hamming"
    runs = [n for n in method_names() if method_info(n).spark and not method_info(n).binary]
    raise ConfigError(
        f"method {method.name!r} has no Spark engine; use {' or '.join(runs)} "
        "(or the local engine for the others)"
    )


def sketch_arrays(
    method: Method, texts: Sequence[str], *, drop_empty: bool = False
) -> tuple[U64, I64, bytes, I64]:
    """Sketch one chunk of texts: bucket keys and verification bytes, both as CSR.

    Args:
        method: A MinHash or SimHash method (the same object the local engine uses).
        texts: The documents' texts.
        drop_empty: Give documents whose shingle set is empty no bucket keys (MinHash with
            verification and a threshold above 0: their exact Jaccard with anything is 0).

    Returns:
        ``(keys, key_offsets, data, data_offsets)``: the 64-bit bucket keys of document ``i``
        are ``keys[key_offsets[i]:key_offsets[i + 1]]``; its verification bytes are
        ``data[data_offsets[i]:data_offsets[i + 1]]``.

    Examples:
        >>> from neardup.methods import make_method
        >>> keys, ko, data, do = sketch_arrays(make_method("simhash"), ["a b c", "d e f"])
        >>> ko.tolist(), do.tolist()
        ([0, 7, 14], [0, 8, 16])
    """
    from neardup.index.lsh import _fold

    kind = method_kind(method)
    docs = [Document("", t) for t in texts]
    payload: Any = method.sketch(docs)
    n = len(docs)
    key_matrix = np.ascontiguousarray(method.lookup_keys(payload), dtype=np.uint64)
    per_doc = np.full(n, key_matrix.shape[1] if n else 0, dtype=np.int64)
    if kind == "jaccard":
        values, offsets = payload[1]
        data = np.ascontiguousarray(values, dtype="<u8").tobytes()
        data_offsets = np.asarray(offsets, dtype=np.int64) * 8
        if drop_empty:
            per_doc[np.diff(offsets) == 0] = 0
    elif kind == "estimate":
        folded = np.ascontiguousarray(_fold(payload[0]), dtype="<u4")
        data = folded.tobytes()
        data_offsets = np.arange(n + 1, dtype=np.int64) * folded.shape[1] * 4
    else:
        codes = np.ascontiguousarray(payload, dtype="<u8").reshape(n, -1)
        data = codes.tobytes()
        data_offsets = np.arange(n + 1, dtype=np.int64) * codes.shape[1] * 8
    key_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_doc, out=key_offsets[1:])
    keep = np.repeat(per_doc > 0, key_matrix.shape[1]) if n else np.zeros(0, dtype=bool)
    keys: U64 = key_matrix.ravel()[keep]
    return keys, key_offsets, data, data_offsets


def _chunks(texts: pa.Array) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` runs of at most SKETCH_DOCS documents and about SKETCH_BYTES of text."""
    import pyarrow as pa

    n = len(texts)
    arr = texts.cast(pa.large_string())
    off = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    start = 0
    while start < n:
        limit = int(off[start]) + SKETCH_BYTES
        stop = int(np.searchsorted(off, limit, side="right")) - 1
        stop = min(max(stop, start + 1), start + SKETCH_DOCS, n)
        yield start, stop
        start = stop


def sketch_step(
    batches: Iterator[pa.RecordBatch],
    *,
    method: str,
    threshold: float,
    options: Mapping[str, Any],
    dest_table: Sequence[int],
    drop_empty: bool = False,
    on_null: str = "fail",
    nulls: Any = None,
    check_ids: bool = False,
    partition: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: ``(id, text)`` batches to KEYS and DATA rows.

    The method is rebuilt in the executor by :func:`~neardup.methods.make_method` from its
    name, threshold and options. Each key goes to task ``key % len(dest_table)`` (keys are
    hashes, so this spreads them evenly); the DATA rows go to task
    ``partition % len(dest_table)``.

    Args:
        batches: Record batches with columns ``id`` and ``text`` (no nulls).
        method: The method name (``minhash``, ``simhash``...).
        threshold: Its similarity threshold.
        options: Its options (``num_perm``, ``verify``, ``bits``...).
        dest_table: ``dest`` value that Spark's hash partitioning sends to each task.
        drop_empty: See :func:`sketch_arrays`.
        on_null: ``"fail"``: a null text raises InputError; ``"skip"``: rows with a null text
            are left out and counted in ``nulls``.
        nulls: A Spark accumulator for the skipped rows, or None.
        check_ids: Also send every id, routed by its hash, to the bucket step, which
            raises InputError on duplicates (:func:`bucket_step`).
        partition: This input partition's number (default: the Spark task's).

    Raises:
        InputError: a null id, or a null text with ``on_null="fail"`` (the messages start
            with :data:`NULL_IDS` and :data:`NULL_TEXT`, which the driver recognizes).
        InputTooLargeError: more than 2**32 documents in one input partition.
    """
    import pyarrow.compute as pc

    from neardup.methods import make_method

    pid = partition_id(partition)
    tasks = len(dest_table)
    m = make_method(method, threshold, **options)
    kind = method_kind(m)
    row = 0
    for batch in batches:
        if batch.column("id").null_count:
            raise InputError(f"{NULL_IDS} {batch.column('id').null_count} in partition {pid}")
        if batch.column("text").null_count:
            missing = batch.column("text").null_count
            if on_null != "skip":
                raise InputError(f"{NULL_TEXT} {missing} in one batch of partition {pid}")
            if nulls is not None:
                nulls.add(missing)
            batch = batch.filter(pc.is_valid(batch.column("text")))
        ids, texts = batch.column("id"), batch.column("text")
        for start, stop in _chunks(texts):
            n = stop - start
            if row + n > 2**32:
                raise InputTooLargeError(
                    "over 2**32 documents in one Spark partition; repartition the input"
                )
            keys, key_offsets, data, data_offsets = sketch_arrays(
                m, texts.slice(start, n).to_pylist(), drop_empty=drop_empty
            )
            refs = (np.int64(pid) << np.int64(32)) | (row + np.arange(n, dtype=np.int64))
            key_refs = np.repeat(refs, np.diff(key_offsets))
            arrays: tuple[npt.NDArray[Any], ...] = (keys, key_refs)
            if kind == "hamming":  # the bucket step filters pairs by distance: codes go along
                codes = np.frombuffer(data, dtype="<u8").reshape(n, -1)
                arrays += (np.repeat(codes, np.diff(key_offsets), axis=0).ravel(),)
            targets = (keys % np.uint64(tasks)).astype(np.int64)
            dests, kinds, blobs = route(targets, dest_table, KEYS, arrays)
            id_parts = ids_from_arrow(ids.slice(start, n))
            if check_ids:
                hashes = id_hashes(id_parts)
                for target, sel in by_target((hashes % np.uint64(tasks)).astype(np.int64)):
                    dests.append(dest_table[target])
                    kinds.append(IDS)
                    blobs.append(pack(hashes[sel], *take_ids(id_parts, sel)))
            dests.append(dest_table[pid % tasks])
            kinds.append(DATA)
            blobs.append(
                pack(
                    refs,
                    *id_parts,
                    np.frombuffer(data, dtype=np.uint8),
                    data_offsets,
                )
            )
            yield from rows_batches(dests, kinds, blobs)
            row += n


def bucket_step(
    batches: Iterator[pa.RecordBatch],
    *,
    max_bucket: int,
    dest_table: Sequence[int],
    oversized: Any = None,
    largest: Any = None,
    string_ids: bool = True,
    radius: int = -1,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: KEYS rows to PAIRS rows (:func:`~neardup.sketch.sets.bucket_pairs`).

    All documents sharing a key are in this task (keys are routed by value). Pairs are
    de-duplicated here, then each goes to the task that holds its home document's data, and
    the refs of the other ends (NEEDS) go to the tasks that hold theirs.
    ``oversized`` and ``largest`` are Spark accumulators (sum, max) for the bucket-cap
    warning, or None. SimHash KEYS carry the documents' codes: with ``radius >= 0`` only
    pairs within that distance leave this step (the verify step's rule, applied before the
    pairs are materialized).

    Raises:
        InputError: IDS rows show an id twice (the message starts with
            :data:`DUPLICATE_IDS`, then the ``repr`` of up to 3 of them).
    """
    from neardup.sketch.sets import bucket_pairs, sorted_unique, unique_pairs

    blobs = split_kinds(batches)
    twice = duplicate_ids(blobs[IDS], string_ids)
    if twice:
        raise InputError(f"{DUPLICATE_IDS} {', '.join(map(repr, twice))}")
    parts = [unpack(b) for b in blobs[KEYS]]
    if not parts:
        return
    keys = np.concatenate([p[0] for p in parts])
    # dense numbers in ref order: pairs then de-duplicate by a counting sort
    refs, dense = np.unique(np.concatenate([p[1] for p in parts]), return_inverse=True)
    codes = (
        np.concatenate([p[2] for p in parts]).reshape(len(keys), -1) if len(parts[0]) > 2 else None
    )
    a, b, over, big = bucket_pairs(keys, dense, max_bucket, codes=codes, radius=radius)
    if over and oversized is not None and largest is not None:
        oversized.add(over)
        largest.add(big)
    if not len(a):
        return
    a, b = unique_pairs(a, b, len(refs))
    home, other = home_side(refs[a], refs[b])
    tasks = len(dest_table)
    home_task, other_task = (home >> np.int64(32)) % tasks, (other >> np.int64(32)) % tasks
    dests, kinds, out = route(home_task, dest_table, PAIRS, (home, other))
    # the forward step verifies pairs whose two ends are in the same task without NEEDS
    needed = sorted_unique(other[home_task != other_task])
    more = route((needed >> np.int64(32)) % tasks, dest_table, NEEDS, (needed,))
    yield from rows_batches(dests + more[0], kinds + more[1], out + more[2])


def forward_step(
    batches: Iterator[pa.RecordBatch],
    *,
    dest_table: Sequence[int],
    string_ids: bool,
    rule: Mapping[str, Any],
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: PAIRS, NEEDS and DATA rows to FORWARD and DATA rows.

    This task has the data of every pair's home document. It removes pairs repeated across
    bucket tasks, then sends each pair, with the id and verification bytes of its home
    document (once per destination), to the task that verifies it: the one that holds the
    other document's data. It also sends that task the data of the documents it holds that
    some pair needs as its other end, and only those (most documents of a large corpus have
    no candidate pair). Pairs whose other document is in this task too are verified here by
    ``rule`` (the keyword arguments of :func:`similarities`), and only their result moves.
    """
    from neardup.sketch.sets import sorted_unique, unique_pairs

    blobs = split_kinds(batches)
    if not blobs[PAIRS] and not blobs[NEEDS]:
        return
    docs = Docs.from_blobs(blobs[DATA], string_ids)
    tasks = len(dest_table)
    dests: list[int] = []
    kinds: list[int] = []
    out: list[bytes] = []
    if blobs[NEEDS]:
        needed = sorted_unique(np.concatenate([unpack(b)[0] for b in blobs[NEEDS]]))
        rows = docs.rows_of(needed)
        for target, sel in by_target((needed >> np.int64(32)) % tasks):
            for blob in docs.blobs(rows[sel]):
                dests.append(dest_table[target])
                kinds.append(DATA)
                out.append(blob)
    if blobs[PAIRS]:
        parts = [unpack(b) for b in blobs[PAIRS]]
        rows, b = unique_pairs(
            docs.rows_of(np.concatenate([p[0] for p in parts])),
            np.concatenate([p[1] for p in parts]),
            len(docs.refs),
        )
        targets = (b >> np.int64(32)) % tasks
        here = targets == (docs.refs[rows] >> np.int64(32)) % tasks
        if here.any():
            near = docs.rows_of(b[here])
            ok, sims = similarities(
                rule["kind"], docs.data, docs.offsets, rows[here], near, **rule["args"]
            )
            mine, theirs, score = rows[here][ok], near[ok], sims[ok]
            cost = docs.sizes(mine, data=False) + docs.sizes(theirs, data=False)
            for piece in pieces(np.arange(len(mine)), cost):
                out.append(
                    pack(
                        *take_ids(docs.ids, mine[piece]),
                        *take_ids(docs.ids, theirs[piece]),
                        score[piece],
                    )
                )
                dests.append(dest_table[int(targets[here][0])])
                kinds.append(ACCEPTED)
            rows, b, targets = rows[~here], b[~here], targets[~here]
        for target, sel in by_target(targets):
            sel = sel[np.argsort(rows[sel], kind="stable")]  # each home's pairs together
            home = rows[sel]
            first = np.r_[True, home[1:] != home[:-1]]
            cost = 16 + np.where(first, docs.sizes(home), 0)
            for piece in pieces(sel, cost):
                uniq, local = np.unique(rows[piece], return_inverse=True)
                out.append(
                    pack(
                        *take_ids(docs.ids, uniq),
                        *take_rows(docs.data, docs.offsets, uniq),
                        local.astype(np.int64),
                        b[piece],
                    )
                )
                dests.append(dest_table[target])
                kinds.append(FORWARD)
    yield from rows_batches(dests, kinds, out)


def similarities(
    kind: Kind,
    data: npt.NDArray[np.uint8],
    offsets: I64,
    a: I64,
    b: I64,
    *,
    threshold: float,
    radius: int = 0,
    bits: int = 64,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """Verify pairs ``(a[k], b[k])`` of documents whose verification bytes are
    ``data[offsets[i]:offsets[i + 1]]``.

    The rules are the local engine's: ``jaccard`` accepts an exact Jaccard of the shingle-hash
    sets ``>= threshold``; ``estimate`` accepts the fraction of equal folded signature slots
    ``>= threshold``; ``hamming`` accepts ``popcount(a ^ b) <= radius``.

    Returns:
        ``(ok, similarity)`` per pair; for ``hamming`` the similarity is ``1 - d / bits``.

    Examples:
        >>> sets = np.array([1, 2, 3, 2, 3, 4], np.uint64).view(np.uint8)
        >>> ok, sim = similarities("jaccard", sets, np.array([0, 24, 48]), np.array([0]),
        ...                        np.array([1]), threshold=0.5)
        >>> ok.tolist(), sim.tolist()
        ([True], [0.5])
    """
    from neardup.sketch.sets import jaccard_pairs

    item = _ITEM[kind]
    values = data.view(item) if len(data) else np.zeros(0, item)
    off = offsets // item.itemsize
    if kind == "jaccard":
        sims = jaccard_pairs(values.astype(np.uint64, copy=False), off, a, b)
        return sims >= threshold, sims
    width = int(off[1] - off[0]) if len(off) > 1 else 1
    rows = values.reshape(-1, width)
    if kind == "estimate":
        est = np.count_nonzero(rows[a] == rows[b], axis=1) / width
        return est >= threshold, est.astype(np.float64)
    d = np.bitwise_count(rows[a] ^ rows[b]).sum(axis=1, dtype=np.int64)
    limit = min(radius, bits - 1)  # the local HammingIndex caps the radius the same way
    return d <= limit, 1.0 - d / bits


def verify_step(
    batches: Iterator[pa.RecordBatch],
    *,
    kind: Kind,
    threshold: float,
    id_type: pa.DataType,
    mode: Literal["pairs", "edges"],
    radius: int = 0,
    bits: int = 64,
    emitted: Any = None,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: FORWARD, DATA and ACCEPTED rows to accepted pairs or component
    edges.

    ``mode="pairs"``: rows ``(a, b, similarity)`` with ``a < b`` (id order). ``mode="edges"``:
    the accepted pairs of this task reduced by union-find to ``(src, dst)`` edges from each
    node to the smallest id of its local component, a forest with the same connected
    components and at most one edge per document. ``emitted`` is a Spark accumulator for
    the number of rows written, or None.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    blobs = split_kinds(batches)
    if not blobs[FORWARD] and not blobs[ACCEPTED]:
        return
    string_ids = pa.types.is_string(id_type) or pa.types.is_large_string(id_type)
    wide = pa.large_string() if string_ids else pa.int64()
    n_ids = 2 if string_ids else 1
    firsts: list[pa.Array] = []
    seconds: list[pa.Array] = []
    scores: list[npt.NDArray[np.float64]] = []
    for blob in blobs[ACCEPTED]:
        parts = unpack(blob)
        firsts.append(ids_to_arrow(parts[:n_ids]).cast(wide))
        seconds.append(ids_to_arrow(parts[n_ids : 2 * n_ids]).cast(wide))
        scores.append(parts[-1])
    if blobs[FORWARD]:
        docs = Docs.from_blobs(blobs[DATA], string_ids)
        datas, offs, a_rows, b_rows, a_ids = [docs.data], [docs.offsets], [], [], []
        n_docs, base = len(docs.refs), len(docs.data)
        for blob in blobs[FORWARD]:
            parts = unpack(blob)
            ids, (data, off, local, b) = parts[:n_ids], parts[n_ids:]
            a_ids.append(ids_to_arrow(ids).cast(wide))
            a_rows.append(local + n_docs)
            b_rows.append(docs.rows_of(b))
            datas.append(data)
            offs.append(off[1:] + base)
            n_docs += len(off) - 1
            base += len(data)
        a_idx, b_idx = np.concatenate(a_rows), np.concatenate(b_rows)
        ok, sims = similarities(
            kind,
            np.concatenate(datas),
            np.concatenate(offs),
            a_idx,
            b_idx,
            threshold=threshold,
            radius=radius,
            bits=bits,
        )
        firsts.append(pa.concat_arrays(a_ids).take(pa.array(a_idx[ok] - len(docs.refs))))
        seconds.append(ids_to_arrow(take_ids(docs.ids, b_idx[ok])).cast(wide))
        scores.append(sims[ok])
    ida, idb = pa.concat_arrays(firsts), pa.concat_arrays(seconds)
    score = np.concatenate(scores)
    if emitted is not None:
        emitted.add(len(ida))
    if mode == "pairs":
        first = pc.less(ida, idb)
        yield pa.RecordBatch.from_arrays(
            [
                pc.if_else(first, ida, idb).cast(id_type),
                pc.if_else(first, idb, ida).cast(id_type),
                pa.array(score, pa.float64()),
            ],
            names=["a", "b", "similarity"],
        )
        return
    yield _star_edges(ida, idb, id_type)


def components_step(
    batches: Iterator[pa.RecordBatch], *, id_type: pa.DataType
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: all the ``(src, dst)`` edges of a graph (one task) to
    ``(id, component)`` rows, component = the smallest id of the node's component, by
    union-find (:func:`neardup.cluster.components`)."""
    import pyarrow as pa

    src, dst = [], []
    for batch in batches:
        src.append(batch.column("src"))
        dst.append(batch.column("dst"))
    if not src or not sum(len(s) for s in src):
        return
    star = _star_edges(pa.concat_arrays(src), pa.concat_arrays(dst), id_type, roots=True)
    yield star.rename_columns(["id", "component"])


def _star_edges(
    ida: pa.Array, idb: pa.Array, id_type: pa.DataType, *, roots: bool = False
) -> pa.RecordBatch:
    """Edges ``node -> smallest id of its component`` for the graph of pairs ``(ida, idb)``
    (with ``roots``, also ``root -> root`` for every component)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from neardup.cluster import components

    ends = pa.concat_arrays([ida, idb])
    rank = pc.rank(ends, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)
    rank -= 1
    n = int(rank.max()) + 1 if len(rank) else 0
    k = len(ida)
    roots_of = components(n, rank[:k], rank[k:])
    where = np.empty(n, dtype=np.int64)
    where[rank] = np.arange(len(rank), dtype=np.int64)
    nodes = np.arange(n) if roots else np.flatnonzero(roots_of != np.arange(n))
    return pa.RecordBatch.from_arrays(
        [
            ends.take(pa.array(where[nodes])).cast(id_type),
            ends.take(pa.array(where[roots_of[nodes]])).cast(id_type),
        ],
        names=["src", "dst"],
    )
