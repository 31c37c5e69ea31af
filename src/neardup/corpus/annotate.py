"""``--annotate OUT``: every input record, in input order, with all its fields and four more:
``cluster_id`` (null for a singleton), ``is_duplicate`` (true for every member removed under
the ``--keep`` rule: a member within the threshold of a kept one, :mod:`neardup.keep`),
``duplicate_of`` (that kept member's id) and ``similarity`` (of the duplicate to it).

The records come from a :class:`~neardup.corpus.records.RecordSpool` filled while dedup read
them, so the inputs are read once; one JSONL file annotated to JSON lines is annotated
from its byte copy instead, as raw lines (:func:`annotate_jsonl_lines`), and no record is
decoded (:func:`neardup.corpus.dedup.dedup_corpus` plans both). The
similarity of a duplicate is that of its accepted pair with the kept member; with the
one-per-cluster rule (``within_threshold=False``) a duplicate that the method paired only with
another member (clusters are transitive) gets it computed from the two texts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup.corpus.records import RecordSpool, record_format, write_records
from neardup.errors import NeardupError
from neardup.io import Document
from neardup.methods import Method
from neardup.report import DedupResult
from neardup.types import DocId

__all__ = [
    "ANNOTATION_COLUMNS",
    "Annotation",
    "annotate_jsonl_lines",
    "annotate_records",
    "plan_annotations",
]

log = logging.getLogger(__name__)
_REPLACED = "input records already have dedup columns; they are replaced"

#: The columns ``--annotate`` adds to each record.
ANNOTATION_COLUMNS = ("cluster_id", "is_duplicate", "duplicate_of", "similarity")


@dataclass(frozen=True, slots=True)
class Annotation:
    """The dedup columns of one clustered record (singletons have none: all null / false)."""

    cluster_id: int
    is_duplicate: bool
    duplicate_of: DocId | None
    similarity: float | None


def plan_annotations(
    result: DedupResult,
    *,
    keep: str = "first",
    sizes: dict[DocId, int] | None = None,
    within_threshold: bool = True,
) -> tuple[dict[DocId, Annotation], set[DocId]]:
    """The annotation of every clustered document, and the duplicates whose similarity to the
    kept member the result does not hold (no direct pair, which happens only with
    ``within_threshold=False``; :func:`annotate_records` computes it).

    A member is a duplicate of the kept member it has an accepted pair with
    (:func:`neardup.keep.kept_for`): its ``similarity`` is at or above the threshold. With
    ``within_threshold=False`` every member but one per cluster is a duplicate.

    Raises:
        ConfigError: unknown ``keep`` rule, ``longest`` without sizes, or a result without
            pairs (with ``within_threshold``).

    Examples:
        >>> from neardup.pipeline import dedup
        >>> r = dedup(["a b c d e f", "a b c d e f", "z"], method="simhash")
        >>> plan_annotations(r)[0]["1"]
        Annotation(cluster_id=0, is_duplicate=True, duplicate_of='0', similarity=1.0)
    """
    from neardup.keep import kept_for

    plan = kept_for(result, keep=keep, sizes=sizes, within_threshold=within_threshold)
    out: dict[DocId, Annotation] = {}
    missing: set[DocId] = set()
    for m, (cid, w, sim) in plan.items():
        if m == w:
            out[m] = Annotation(cid, False, None, None)
            continue
        if sim is None:
            missing.add(m)
        out[m] = Annotation(cid, True, w, sim)
    return out, missing


def annotate_records(
    spool: RecordSpool,
    result: DedupResult,
    out: Path,
    *,
    keep: str = "first",
    method: Method | None = None,
    sizes: dict[DocId, int] | None = None,
    within_threshold: bool = True,
) -> int:
    """Write the spooled records with the dedup columns to ``out`` (format by extension).

    Args:
        spool: The records as read (filled by :meth:`RecordSpool.tee` during dedup).
        result: The dedup result of those records.
        out: Target file: ``.parquet``, ``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst`` or ``.csv``;
            written under a temporary name and renamed.
        keep: Which member of a cluster is kept: ``first`` / ``representative`` (the first
            in input order) or ``longest`` (most characters; ties: the earlier).
        method: Computes the similarity of duplicates the result pairs only transitively
            (``None``: left null).
        sizes: What ``longest`` compares (default: the spooled texts' lengths), e.g. the
            pixels of images for ``keep="largest"``.
        within_threshold: A record is a duplicate only of a kept record it has an accepted
            pair with (default; see :mod:`neardup.keep`); ``False``: one kept per cluster.

    Returns:
        The number of records written.

    Raises:
        ConfigError: bad ``keep`` or extension.
        InputError: records that do not fit one Parquet schema.
    """
    fmt = record_format(out)
    clustered = {m for c in result.clusters for m in c.members} if sizes is None else set()
    sizes = {} if sizes is None else sizes
    columns: dict[str, None] = {}
    schema: Any = None
    pa: Any = None
    if fmt == "parquet":
        from neardup._extras import require_extra

        pa = require_extra("parquet", "pyarrow")
    for batch in spool.batches():  # pass 1: sizes, columns, the Parquet schema
        for doc_id, text, record in batch:
            if doc_id in clustered:
                sizes[doc_id] = len(text or "")
            if fmt == "csv":
                columns.update(dict.fromkeys(record))
        if pa is not None:
            inferred = _infer(pa, [r for _, _, r in batch], out)
            schema = inferred if schema is None else _unify(pa, schema, inferred, out)
    plan, missing = plan_annotations(
        result, keep=keep, sizes=sizes, within_threshold=within_threshold
    )
    if missing and method is not None:
        _fill_similarities(spool, plan, missing, method)
    if pa is not None:
        base = schema if schema is not None else pa.schema([])
        keep_fields = [f for f in base if f.name not in ANNOTATION_COLUMNS]
        schema = pa.schema(
            [
                *keep_fields,
                pa.field("cluster_id", pa.int64()),
                pa.field("is_duplicate", pa.bool_()),
                pa.field("duplicate_of", pa.string()),
                pa.field("similarity", pa.float64()),
            ]
        )
    cols = [c for c in columns if c not in ANNOTATION_COLUMNS] + list(ANNOTATION_COLUMNS)

    def rows() -> Iterator[list[dict[str, object]]]:
        warned = False
        for batch in spool.batches():
            rows_out = []
            for doc_id, _, record in batch:
                a = plan.get(doc_id)
                if not warned and any(c in record for c in ANNOTATION_COLUMNS):
                    log.warning(_REPLACED)
                    warned = True
                row = {k: v for k, v in record.items() if k not in ANNOTATION_COLUMNS}
                rows_out.append(row | _columns(a))
            yield rows_out

    return write_records(rows(), out, columns=cols, schema=schema)


def _mixed_types(out: Path, exc: BaseException) -> NeardupError:
    from neardup.errors import InputError

    return InputError(
        f"{out}: the records' fields differ in type across the inputs ({exc}); "
        "annotate to .jsonl instead"
    )


def _infer(pa: Any, rows: list[dict[str, object]], out: Path) -> Any:
    """The Parquet schema of one batch of records (a field of two types in it is refused).

    Inferred from the records with every string emptied: a string's type does not depend on
    its content, and copying the texts into Arrow only to read the schema cost 0.36 s of a
    31 MB corpus (0.006 s so).

    Examples:
        >>> import pyarrow as pa
        >>> _infer(pa, [{"t": "long text", "m": {"a": ["x"], "n": 1}}], Path("o.parquet"))
        t: string
        m: struct<a: list<item: string>, n: int64>
          child 0, a: list<item: string>
              child 0, item: string
          child 1, n: int64
    """
    try:
        return pa.Table.from_pylist([_blank(r) for r in rows]).schema
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise _mixed_types(out, exc) from None


def _blank(value: Any) -> Any:
    """``value`` with every string in it (nested in dicts and lists too) made empty."""
    kind = type(value)
    if kind is str:
        return ""
    if kind is dict:
        return {k: _blank(v) for k, v in value.items()}
    if kind is list:
        return [_blank(v) for v in value]
    return value


def _unify(pa: Any, a: Any, b: Any, out: Path) -> Any:
    try:
        return pa.unify_schemas([a, b], promote_options="permissive")
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise _mixed_types(out, exc) from None


def _fill_similarities(
    spool: RecordSpool, plan: dict[DocId, Annotation], missing: set[DocId], method: Method
) -> None:
    """Compute the similarity of each duplicate in ``missing`` to its kept member."""
    wanted = {plan[m].duplicate_of for m in missing}
    texts: dict[DocId, str] = {}
    for batch in spool.batches():
        for doc_id, text, _ in batch:
            if doc_id in wanted and text is not None:
                texts[doc_id] = text
    for batch in spool.batches():
        for doc_id, text, _ in batch:
            if doc_id in missing and text is not None:
                _fill_one(plan, doc_id, text, texts, method)


def _fill_one(
    plan: dict[DocId, Annotation],
    doc_id: DocId,
    text: str,
    kept_texts: dict[DocId, str],
    method: Method,
) -> None:
    """The similarity of duplicate ``doc_id`` (its ``text``) to its kept member, into
    ``plan`` (left null when the kept member's text is unknown or the method refuses)."""
    a = plan[doc_id]
    kept = a.duplicate_of
    if kept is None or kept not in kept_texts:
        return
    try:
        sim, _ = method.compare(Document(str(kept), kept_texts[kept]), Document(str(doc_id), text))
    except NeardupError as exc:
        log.warning("no similarity for %s: %s", doc_id, exc)
        return
    plan[doc_id] = Annotation(a.cluster_id, True, kept, float(sim))


def _columns(a: Annotation | None) -> dict[str, object]:
    """A record's four dedup columns (a singleton's: null, false, null, null)."""
    return {
        "cluster_id": a.cluster_id if a else None,
        "is_duplicate": a.is_duplicate if a else False,
        "duplicate_of": a.duplicate_of if a else None,
        "similarity": round(a.similarity, 6) if a and a.similarity is not None else None,
    }


def _encoded(record: dict[str, object]) -> bytes:
    """``record`` as the record writer encodes a JSON line (without the newline): a lone
    surrogate in a string becomes its ``\\udXXX`` escape (valid JSON, read back the same)."""
    return json.dumps(record, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")


#: What follows a singleton's last field: the same for every one.
_SINGLETON = b", " + _encoded(_columns(None))[1:]
_KEYS = tuple(f'"{c}"'.encode() for c in ANNOTATION_COLUMNS)


def _suffix(a: Annotation | None) -> bytes:
    """The four columns as the record writer encodes them, after a record's last field."""
    return _SINGLETON if a is None else b", " + _encoded(_columns(a))[1:]


def _reencoded(body: bytes, a: Annotation | None) -> tuple[bytes, bool]:
    """A record line in which a column's name appears: decoded, the columns replaced, and
    encoded again as the record writer does; and whether the record had one of them."""
    record = json.loads(body)
    had = any(c in record for c in ANNOTATION_COLUMNS)
    row = {k: v for k, v in record.items() if k not in ANNOTATION_COLUMNS}
    return _encoded(row | _columns(a)) + b"\n", had


def annotate_jsonl_lines(
    path: Path,
    result: DedupResult,
    *,
    keep: str = "first",
    method: Method | None = None,
    id_field: str = "id",
    text_field: str = "text",
    sizes: dict[DocId, int] | None = None,
    within_threshold: bool = True,
) -> Iterator[list[bytes]]:
    """:func:`annotate_records` for one JSONL file, as JSON lines in batches: each record is
    its input line (surrounding whitespace and a CRLF's ``\\r`` trimmed) with the four
    columns put before its closing brace, so its own fields stay byte for byte as written
    and none is decoded. A line that already has one of the columns is decoded and gets
    them replaced (with a warning), as :func:`annotate_records` does. The file is read once
    more for ``keep="longest"`` without ``sizes`` (the clustered records' sizes) and once
    more when a duplicate the method paired only transitively needs its similarity (the kept
    members' texts, held; the duplicate's own text comes with its line): native scans, texts
    decoded for those records alone.

    Raises:
        ConfigError: bad ``keep``.
        InputError: a line that is not a JSON object with a string ``text_field``.

    Examples:
        >>> import tempfile
        >>> from neardup.pipeline import dedup
        >>> p = Path(tempfile.mkdtemp()) / "in.jsonl"
        >>> _ = p.write_text('{"id":"a","text":"x y z w"}\\n{"id":"b","text":"x y z w"}\\n')
        >>> r = dedup([Document("a", "x y z w"), Document("b", "x y z w")], method="simhash")
        >>> lines = [line for batch in annotate_jsonl_lines(p, r) for line in batch]
        >>> for part in lines[1].split(b", "):
        ...     print(part.decode().strip())
        {"id":"b","text":"x y z w"
        "cluster_id": 0
        "is_duplicate": true
        "duplicate_of": "a"
        "similarity": 1.0}
    """
    from neardup.packed import read_jsonl_packed, read_jsonl_packed_lines

    def texts(wanted: set[DocId]) -> Iterator[tuple[DocId, str]]:
        """The ``wanted`` records' texts, in file order (one native scan of the file)."""
        if wanted:
            for docs in read_jsonl_packed(path, id_field=id_field, text_field=text_field):
                for k, doc_id in enumerate(docs.ids):
                    if doc_id in wanted:
                        yield doc_id, docs.text(k)

    if keep == "longest" and sizes is None:
        sizes = {
            doc_id: len(t) for doc_id, t in texts({m for c in result.clusters for m in c.members})
        }
    plan, missing = plan_annotations(
        result, keep=keep, sizes=sizes, within_threshold=within_threshold
    )
    kept_texts: dict[DocId, str] = {}
    if missing and method is not None:  # a missing duplicate's own text comes with its line
        kept_texts = dict(texts({w for m in missing if (w := plan[m].duplicate_of) is not None}))
    else:
        missing = set()
    warned = False
    for docs, lines, _ in read_jsonl_packed_lines(path, id_field=id_field, text_field=text_field):
        out = []
        for k, (doc_id, line) in enumerate(zip(docs.ids, lines, strict=True)):
            if doc_id in missing:
                assert method is not None
                _fill_one(plan, doc_id, docs.text(k), kept_texts, method)
            body = line.strip(b" \t\r")
            if any(c in body for c in _KEYS):  # the record, or a value, names a column
                got, had = _reencoded(body, plan.get(doc_id))
                if had and not warned:
                    log.warning(_REPLACED)
                    warned = True
                out.append(got)
            else:  # the columns go before the object's closing brace
                out.append(body[:-1] + _suffix(plan.get(doc_id)) + b"\n")
        yield out
