"""``dedup_corpus``: near-duplicate clusters of a :class:`~neardup.corpus.reading.Corpus`,
and every output a data team asks for (deduplicated copy, annotated records, HTML report,
persistent index) planned before the run and written from one read of the inputs.

What the run reads is kept aside as it streams past (the records in a spool, a plain JSONL
file as a byte copy), so the outputs never read the inputs again: the copy written is the
data that was deduplicated, even when a file changes during the run or comes from stdin.
See ``docs/library.md``.
"""

from __future__ import annotations

import contextlib
import logging
import os
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.corpus.reading import Corpus
from neardup.errors import ConfigError
from neardup.io import Document
from neardup.methods import Method, make_method, method_info
from neardup.pipeline import KnownDocuments, Progress
from neardup.report import Cluster, DedupResult
from neardup.types import DocId

if TYPE_CHECKING:
    from neardup.corpus.records import RecordSpool
    from neardup.readers import ReadStats
    from neardup.report.sources import DocumentSource
    from neardup.store.persistent import PersistentIndex

__all__ = ["KEEP_RULES", "CorpusResult", "dedup_corpus"]

log = logging.getLogger(__name__)

#: Which member of a cluster the outputs keep: ``first`` / ``representative`` (the member
#: read first), ``longest`` (most characters; a binary file: most bytes), ``largest`` (image
#: methods: most pixels). Ties go to the earlier member.
KEEP_RULES = ("first", "representative", "longest", "largest")

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class CorpusResult:
    """What :func:`dedup_corpus` found and wrote.

    Attributes:
        result: The clusters and pairs (:class:`~neardup.report.DedupResult`).
        written: Each output written, by name (``output``, ``annotate``, ``report``,
            ``index``), with its path.
        kept: Documents in the deduplicated copy (``None``: no ``output``).
        annotated: Records written to ``annotate`` (``None``: none asked for).
        removed: Records the keep rule removes (left out of ``output``, marked
            ``is_duplicate`` in ``annotate``; ``None``: neither asked for). It can differ
            from :attr:`duplicates` when clusters chain (:mod:`neardup.keep`).
        short: Documents left out of matching for being shorter than ``min_length`` (still in
            every output, as singletons).
        read_stats: What the readers left out and skipped (``None``: the packed JSONL reader
            ran, which skips nothing).
    """

    result: DedupResult
    written: dict[str, Path] = field(default_factory=dict)
    kept: int | None = None
    annotated: int | None = None
    short: tuple[DocId, ...] = ()
    read_stats: ReadStats | None = None
    removed: int | None = None

    @property
    def clusters(self) -> list[Cluster]:
        """The clusters (two or more members each)."""
        return self.result.clusters

    @property
    def duplicates(self) -> int:
        """Cluster members beyond one each (:attr:`DedupResult.duplicates`): what a copy
        keeping one record per cluster drops; the keep rule drops :attr:`removed`."""
        return self.result.duplicates

    @property
    def skipped(self) -> int:
        """Documents left out of matching: unreadable (``on_error="skip"``) or short."""
        bad = self.read_stats.bad_records if self.read_stats is not None else 0
        return int(self.result.stats.get("skipped", 0)) + bad + len(self.short)


@dataclass
class _Plan:
    """What the run keeps aside while the documents stream past, for the outputs."""

    keep: str | None
    min_length: int
    within: bool = True  # a record removed only for a kept one it has a pair with
    spool: RecordSpool | None = None
    copy: Path | None = None  # the byte copy of a packed JSONL file
    sources: list[tuple[Path, str, bool]] = field(default_factory=list)  # (file, name, is_file)
    origin: array[int] = field(default_factory=lambda: array("q"))  # per spooled doc
    sizes: dict[DocId, int] = field(default_factory=dict)
    paths: dict[DocId, Path] = field(default_factory=dict)  # images, for keep="largest"
    short: list[DocId] = field(default_factory=list)

    def tap(self, docs: Iterable[Document], stats: ReadStats | None) -> Iterator[Document]:
        """Yield the documents to match (short ones held back), keeping what outputs need."""
        last: tuple[Path, str] | None = None
        where = -1
        for d in docs:
            if self.spool is not None:
                current = stats.current if stats is not None else None
                if current is None:
                    where = -1
                elif current is not last:
                    self.sources.append((current[0], current[1], d.path is not None))
                    where = len(self.sources) - 1
                last = current
                self.origin.append(where)
            if self.keep == "longest":
                size = len(d.text) if d.text is not None else _file_size(d.path)
                self.sizes[d.id] = size
            elif self.keep == "largest" and d.path is not None:
                self.paths[d.id] = d.path
            if self.min_length and len(d.text or "") < self.min_length:
                self.short.append(d.id)
                continue
            yield d

    def spooled(self, docs: Iterable[Document]) -> Iterator[Document]:
        """``docs`` through the record spool (when one is kept)."""
        return iter(docs) if self.spool is None else self.spool.tee(docs)


def _file_size(path: Path | None) -> int:
    return 0 if path is None else path.stat().st_size


def dedup_corpus(
    corpus: Corpus,
    *,
    method: str | Method | None = None,
    threshold: float | None = None,
    keep: str | None = None,
    output: PathLike | None = None,
    annotate: PathLike | None = None,
    report: PathLike | None = None,
    index: PathLike | KnownDocuments | None = None,
    force: bool = False,
    pairs: bool = False,
    clustering: str | None = None,
    exact_first: bool = False,
    min_length: int = 0,
    batch_size: int = 2048,
    jobs: int = 1,
    commit_every: float | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> CorpusResult:
    """Find the near-duplicate clusters of ``corpus`` and write the outputs asked for, from
    one read of the inputs.

    Args:
        corpus: The inputs (:func:`~neardup.corpus.reading.read_corpus`).
        method: A method name (``minhash``, the default; ``simhash``, ``phash``... see
            :mod:`neardup.methods.registry`) or a :class:`~neardup.methods.Method`. With
            ``index``, ``None`` means the index's own.
        threshold: Similarity threshold (default: the method's).
        keep: Which member of each cluster the outputs keep (:data:`KEEP_RULES`; default
            ``first``).
        output: The deduplicated copy: a record file (``.jsonl``, ``.jsonl.gz``,
            ``.jsonl.zst``, ``.csv``, ``.parquet``: the kept records with all their fields),
            or a folder that mirrors the inputs (files copied; each input record file
            written back as a shard of the same name with its kept records).
        annotate: Every input record with ``cluster_id``, ``is_duplicate``, ``duplicate_of``
            and ``similarity`` added (a record file).
        report: A self-contained HTML report.
        index: A persistent index (SQLite) to dedup against; the documents are added to it.
            A path is opened (created when new) and closed; an open index
            (:class:`~neardup.store.PersistentIndex`) is used and left open.
        force: Replace an ``output`` folder an earlier run wrote.
        pairs: Keep every accepted pair (``result.pairs``; always kept for ``annotate``
            and ``report``).
        clustering: ``components`` (union-find) or ``center`` (every member within the
            threshold of its representative); ``None``: the method's (``center`` for
            embeddings, else ``components``). Whatever the clustering, ``keep``, ``output``
            and ``annotate`` remove a record only for a kept record it has an accepted pair
            with (:mod:`neardup.keep`), unless ``components`` is given explicitly: then one
            record is kept per cluster, chains included.
        exact_first: Remove exact copies before the method runs (not with ``index``).
        min_length: Documents of fewer characters (after reading, before canonicalizing)
            are left out of matching and counted in :attr:`CorpusResult.short`; every output
            still has them, as singletons. ``0``: none.
        batch_size: Documents sketched per batch.
        jobs: Sketching threads.
        commit_every: With ``index``: seconds between commits (default 2; 0: every batch).
        progress: Called as ``progress(stage, count)`` after each batch.
        **options: The method's options (``num_perm``, ``k``, ``seed``, ``bands``,
            ``rows``, ``bits``, ``dihedral``...).

    Returns:
        A :class:`CorpusResult`.

    Raises:
        ConfigError: a bad method, option, output path or combination.
        InputError: unreadable inputs, a bad record or a repeated id.
        OutputError: an output cannot be written.

    Examples:
        >>> import tempfile
        >>> from neardup.corpus.reading import read_corpus
        >>> d = Path(tempfile.mkdtemp())
        >>> lines = ['{"id": "a", "text": "the cat sat on the mat"}',
        ...          '{"id": "b", "text": "the cat sat on the mat"}', '{"id": "c", "text": "x"}']
        >>> _ = (d / "in.jsonl").write_text("\\n".join(lines) + "\\n")
        >>> r = dedup_corpus(read_corpus(d / "in.jsonl"), method="simhash",
        ...                  output=d / "kept.jsonl")
        >>> [c.members for c in r.clusters], r.kept
        ([('a', 'b')], 2)
    """
    from neardup._paths import check_outputs, record_file
    from neardup.corpus.records import RecordSpool, record_format

    if output is not None and keep is None:
        keep = "first"
    if keep is not None and keep not in KEEP_RULES:
        raise ConfigError(f"keep must be one of {', '.join(KEEP_RULES)}, got {keep!r}")
    if keep is not None and output is None and annotate is None:
        raise ConfigError("keep goes with output (or annotate): it says which member they keep")
    name = method.name if isinstance(method, Method) else method
    if exact_first and (index is not None or name == "exact"):
        raise ConfigError("exact_first goes with a near-duplicate method and no index")
    if isinstance(min_length, bool) or not isinstance(min_length, int) or min_length < 0:
        raise ConfigError(f"min_length must be a count of characters >= 0, got {min_length!r}")
    out_s, ann_s, rep_s = (None if p is None else os.fspath(p) for p in (output, annotate, report))
    check_outputs(corpus.paths, report=rep_s, output=out_s, annotate=ann_s, force=force)
    if ann_s is not None:
        record_format(ann_s)
    with contextlib.ExitStack() as stack:
        store: KnownDocuments | None
        if index is None or isinstance(index, str | os.PathLike):
            store = _open_index(index, method, threshold, commit_every, options)
            if store is not None:
                stack.callback(store.close)
        else:
            store = index
        m = store.method if store is not None else _method(method, threshold, options)
        info = method_info(m.name)
        if keep == "largest" and not info.images:
            raise ConfigError("keep='largest' (most pixels) goes with an image method")
        if min_length and info.binary:
            raise ConfigError("min_length counts characters: it goes with a text method")
        plan = _Plan(keep, min_length, within=clustering != "components")
        folder_out = out_s is not None and not record_file(Path(out_s))
        packed = (
            corpus.packable
            and not info.binary
            and (ann_s is None or record_format(ann_s).startswith("jsonl"))
            and rep_s is None
            and not exact_first
            and not min_length
            and not folder_out
        )
        spool_dir = Path(ann_s or out_s or ".").resolve().parent
        stats: ReadStats | None = None
        source: DocumentSource | None = None
        copy: _ByteCopy | None = None
        docs: Any
        if packed:
            if ann_s is not None or out_s is not None:
                copy = stack.enter_context(_ByteCopy(spool_dir))
            docs = corpus.packed(batch_size=batch_size, tee=None if copy is None else copy.write)
        else:
            from neardup.readers import ReadStats

            stats = ReadStats()
            if ann_s is not None or out_s is not None:
                plan.spool = stack.enter_context(RecordSpool(spool_dir))
            docs = plan.spooled(
                corpus.documents(
                    binary=info.binary,
                    stats=stats,
                    keep_fields=plan.spool is not None,
                    images_only=info.images,
                )
            )
            if rep_s is not None:  # the report reads back only what it shows
                source = stack.enter_context(_report_source(corpus))
                docs = source.tap(docs)
            docs = plan.tap(docs, stats)
        result = _run(
            docs,
            m,
            store,
            exact_first=exact_first,
            batch_size=batch_size,
            jobs=jobs,
            on_error=corpus.on_error,
            progress=progress,
            # the keep rule needs every pair (each removed record has one with its kept record)
            pairs=pairs
            or rep_s is not None
            or ann_s is not None
            or out_s is not None
            or clustering == "center",
            clustering=clustering,
        )
        if copy is not None:
            plan.copy = copy.close()
        written: dict[str, Path] = {}
        kept = annotated = removed = None
        if ann_s is not None or out_s is not None:
            rule = _sizes(corpus, plan, result)
            removed = _removed(result, rule, within=plan.within)
        if ann_s is not None:
            annotated = _write_annotations(corpus, plan, result, Path(ann_s), m, rule)
            written["annotate"] = Path(ann_s)
            log.info("annotated %d records in %s", annotated, ann_s)
        if out_s is not None:
            kept = _write_kept(corpus, plan, result, Path(out_s), rule, force=force)
            written["output"] = Path(out_s)
            log.info("kept %d documents in %s", kept, out_s)
        if rep_s is not None and source is not None:
            _write_report(result, rep_s, source, binary=info.binary)
            written["report"] = Path(rep_s)
        if isinstance(index, str | os.PathLike):
            written["index"] = Path(os.fspath(index))
    return CorpusResult(result, written, kept, annotated, tuple(plan.short), stats, removed)


def _method(
    method: str | Method | None, threshold: float | None, options: dict[str, Any]
) -> Method:
    if isinstance(method, Method):
        if threshold is not None or options:
            raise ConfigError("give threshold and options to make_method, not with a Method")
        return method
    return make_method(method or "minhash", threshold, **options)


def _open_index(
    index: PathLike | None,
    method: str | Method | None,
    threshold: float | None,
    commit_every: float | None,
    options: dict[str, Any],
) -> PersistentIndex | None:
    """The persistent index, opened (created with these parameters when new)."""
    if index is None:
        return None
    from neardup.store.knobs import open_with_knobs
    from neardup.store.persistent import COMMIT_EVERY_SECONDS

    return open_with_knobs(
        os.fspath(index),
        {k: options.get(k) for k in ("k", "seed", "bands", "rows")},
        method=method.name if isinstance(method, Method) else method,
        threshold=threshold,
        num_perm=options.get("num_perm"),
        bits=options.get("bits"),
        canonicalize=options.get("canonicalize"),
        commit_every_seconds=COMMIT_EVERY_SECONDS if commit_every is None else commit_every,
    )


class _ByteCopy:
    """A temporary copy of a JSONL file, written piece by piece as the packed reader reads
    it (:attr:`neardup.packed.PackedBatches.tee`); removed on exit."""

    def __init__(self, folder: Path) -> None:
        import tempfile

        from neardup._atomic import sweep_leftovers, temp_prefix, write_error

        sweep_leftovers(folder)  # the copies of killed runs
        try:
            fd, name = tempfile.mkstemp(
                prefix=temp_prefix(".neardup-copy"), suffix=".jsonl", dir=folder
            )
        except OSError as exc:
            raise write_error(folder / ".neardup-copy", exc) from exc
        self.path = Path(name)
        self._fh: Any = open(fd, "wb")  # noqa: SIM115 - closed in close()/__exit__

    def write(self, piece: memoryview) -> None:
        from neardup._atomic import output_errors

        with output_errors(self.path):
            self._fh.write(piece)

    def close(self) -> Path:
        """Finish the copy; return its path."""
        from neardup._atomic import output_errors

        if self._fh is not None:
            with output_errors(self.path):
                self._fh.close()
            self._fh = None
        return self.path

    def __enter__(self) -> _ByteCopy:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):  # a full disk: the file goes anyway
                self._fh.close()
            self._fh = None
        self.path.unlink(missing_ok=True)


def _run(
    docs: Any,
    m: Method,
    store: KnownDocuments | None,
    *,
    exact_first: bool,
    batch_size: int,
    jobs: int,
    on_error: str,
    progress: Progress | None,
    pairs: bool,
    clustering: str | None,
) -> DedupResult:
    from neardup.pipeline import dedup

    if exact_first:
        from neardup.corpus.exact import exact_first as run_exact_first

        return run_exact_first(
            docs,
            method=m,
            batch_size=batch_size,
            on_error=on_error,
            progress=progress,
            jobs=jobs,
            clustering=clustering,
        )
    return dedup(
        docs,
        method=m,
        batch_size=batch_size,
        on_error=on_error,
        progress=progress,
        jobs=jobs,
        index=store,
        pairs=pairs,
        clustering=clustering,
    )


def _sizes(corpus: Corpus, plan: _Plan, result: DedupResult) -> tuple[str, dict[DocId, int] | None]:
    """The keep rule as the kept-id planners take it, and the sizes it compares."""
    keep = plan.keep or "first"
    if keep == "largest":
        return "longest", _pixels(plan, result)
    if keep != "longest":
        return keep, None
    if plan.copy is None:
        return keep, plan.sizes
    from neardup.packed import read_jsonl_packed

    wanted = {m for c in result.clusters for m in c.members}
    sizes: dict[DocId, int] = {}
    for docs in read_jsonl_packed(
        plan.copy, id_field=corpus.id_field or "id", text_field=corpus.text_field[0]
    ):
        for k, doc_id in enumerate(docs.ids):
            if doc_id in wanted:
                sizes[doc_id] = len(docs.text(k))
    return keep, sizes


def _pixels(plan: _Plan, result: DedupResult) -> dict[DocId, int]:
    """Width x height of every clustered image (its header is read: a few hundred bytes)."""
    from neardup._extras import require_extra

    require_extra("image", "PIL")
    from PIL import Image, UnidentifiedImageError

    wanted = {m for c in result.clusters for m in c.members}
    sizes: dict[DocId, int] = {}
    for doc_id, path in plan.paths.items():
        if doc_id in wanted:
            try:
                with Image.open(path) as im:
                    sizes[doc_id] = im.width * im.height
            except (OSError, UnidentifiedImageError) as exc:
                log.warning("no size for %s: %s", path, exc)
    return sizes


def _spooled_docs(plan: _Plan) -> Iterator[tuple[Document, str | None]]:
    """The spooled documents in input order, each with its input record file's name (a
    record) or ``None`` (a file document, or a record with no file: stdin)."""
    assert plan.spool is not None
    at = 0
    for batch in plan.spool.batches():
        for doc_id, text, record in batch:
            where = plan.origin[at]
            at += 1
            if where < 0:
                yield Document(doc_id, text, None, record), None
                continue
            path, name, is_file = plan.sources[where]
            if is_file:
                yield Document(doc_id, text, path), None
            else:
                yield Document(doc_id, text, None, record), name


def _removed(
    result: DedupResult, rule: tuple[str, dict[DocId, int] | None], *, within: bool
) -> int:
    """How many of the records read the keep rule removes (stored documents are kept)."""
    from neardup.keep import kept_for

    keep, sizes = rule
    stored = set(result.stored)
    plan = kept_for(result, keep=keep, sizes=sizes, within_threshold=within)
    return sum(1 for m, (_, w, _) in plan.items() if w != m and m not in stored)


def _write_annotations(
    corpus: Corpus,
    plan: _Plan,
    result: DedupResult,
    out: Path,
    m: Method,
    rule: tuple[str, dict[DocId, int] | None],
) -> int:
    from neardup.corpus.annotate import annotate_jsonl_lines, annotate_records
    from neardup.corpus.records import write_jsonl_lines

    keep, sizes = rule
    if plan.copy is not None:
        lines = annotate_jsonl_lines(
            plan.copy,
            result,
            keep=keep,
            sizes=sizes,
            method=m,
            id_field=corpus.id_field or "id",
            text_field=corpus.text_field[0],
            within_threshold=plan.within,
        )
        return write_jsonl_lines(lines, out)
    assert plan.spool is not None
    return annotate_records(
        plan.spool, result, out, keep=keep, sizes=sizes, method=m, within_threshold=plan.within
    )


def _write_kept(
    corpus: Corpus,
    plan: _Plan,
    result: DedupResult,
    out: Path,
    rule: tuple[str, dict[DocId, int] | None],
    *,
    force: bool,
) -> int:
    from neardup._paths import record_file
    from neardup.corpus.output import kept_jsonl_lines, write_kept_copy, write_kept_folder
    from neardup.corpus.reading import read_corpus
    from neardup.corpus.records import record_format, write_jsonl_lines
    from neardup.pipeline import kept_ids

    keep, sizes = rule
    kept = {str(k) for k in kept_ids(result, keep=keep, sizes=sizes, within_threshold=plan.within)}
    kept |= {str(k) for k in plan.short}
    if plan.copy is not None:
        fields = {"id_field": corpus.id_field or "id", "text_field": corpus.text_field[0]}
        if record_format(out).startswith("jsonl"):
            # the kept records' own lines, never decoded again
            return write_jsonl_lines(kept_jsonl_lines(plan.copy, kept, **fields), out)
        again = read_corpus(plan.copy, text_field=corpus.text_field, id_field=corpus.id_field)
        return write_kept_copy(again.documents(keep_fields=True), kept, out, force=force)
    if record_file(out):
        return write_kept_copy((d for d, _ in _spooled_docs(plan)), kept, out, force=force)
    return write_kept_folder(_spooled_docs(plan), kept, out, force=force)


def _report_source(corpus: Corpus) -> DocumentSource:
    """Remembers where each document is while the run streams them (no second read)."""
    from neardup.io import read_file_text
    from neardup.report.sources import DocumentSource

    def load(path: Path) -> str:
        return read_file_text(
            path, input_format=corpus.input_format, main_content=corpus.main_content
        )

    return DocumentSource(loader=load)


def _write_report(
    result: DedupResult, report: str, source: DocumentSource, *, binary: bool
) -> None:
    """Write the HTML report, reading back only the documents it shows."""
    from neardup.report.html import write_html

    with source:
        write_html(
            result,
            report,
            texts=None if binary else source.text,
            images=source.path if binary else None,
            links=source.path,
        )
    log.info("report written to %s", report)
