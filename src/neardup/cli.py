"""The ``neardup`` command line: a thin layer over pipeline, methods, indexes and report writers.

Results go to stdout; logs and progress go to stderr. A :class:`~neardup.errors.NeardupError`
becomes a one-line message and exit code 1; usage errors exit with 2.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from neardup import __version__
from neardup.errors import NeardupError
from neardup.io import Document
from neardup.methods import REGISTRY, make_method, method_info, method_names
from neardup.report import DedupResult, write_clusters, write_pairs
from neardup.types import DocId

if TYPE_CHECKING:
    from neardup.readers import ReadStats
    from neardup.report.sources import DocumentSource

__all__ = ["main"]

log = logging.getLogger("neardup")
F = TypeVar("F", bound=Callable[..., Any])

#: ``neardup hash`` computes every method's fingerprint, and FuzzySum's.
HASH_METHODS = (*method_names(streams=True), *method_names(streams=False), "fuzzysum")


def _errors(fn: F) -> F:
    """Turn NeardupError into a one-line message and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except NeardupError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            # Stores commit one transaction per batch: what was committed is kept.
            click.echo("neardup: interrupted; every batch committed so far is kept", err=True)
            raise click.exceptions.Exit(130) from None

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neardup")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv: debug).")
def main(verbose: int) -> None:
    """Find near-duplicate text and images: fingerprints, indexes, dedup and reports."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("neardup: %(levelname)s: %(message)s"))
    root = logging.getLogger("neardup")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    # the one line saying that kernels compile on this first use (docs/engine.md)
    logging.getLogger("neardup._kernels.cache").setLevel(min(level, logging.INFO))


def _documents(
    paths: tuple[str, ...],
    *,
    binary: bool,
    id_field: str | None = None,
    text_field: str | tuple[str, ...] = "text",
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    input_format: str = "auto",
    main_content: bool = False,
    follow_symlinks: bool = False,
    on_error: str = "fail",
    keep_fields: bool = False,
    stats: ReadStats | None = None,
) -> Iterator[Document]:
    from neardup.readers import ReadOptions, RecordSpec, read_documents

    options = ReadOptions(
        spec=RecordSpec.of(text_field, id_field),
        include=include,
        exclude=exclude,
        binary=binary,
        input_format=input_format,
        main_content=main_content,
        follow_symlinks=follow_symlinks,
        on_error=on_error,
        keep_fields=keep_fields,
    )
    from neardup.io import _UniqueIds

    # a record id repeated in the data is refused (the readers keep ids unique across roots)
    return _UniqueIds().check(read_documents(paths, options, stats=stats), ", ".join(paths))


def _one_jsonl(paths: tuple[str, ...]) -> bool:
    """Whether the input is one plain ``.jsonl`` file."""
    return len(paths) == 1 and paths[0].lower().endswith(".jsonl") and Path(paths[0]).is_file()


@main.command("hash")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--method",
    "-m",
    type=click.Choice(HASH_METHODS),
    default="simhash-go",
    show_default=True,
    help="Fingerprint to compute.",
)
@_errors
def hash_cmd(files: tuple[str, ...], method: str) -> None:
    """Print one line per file: path <TAB> fingerprint."""
    if method == "fuzzysum":
        from neardup.fuzzy import legacy_fuzzysum

        for doc in _documents(files, binary=False):
            a, b = legacy_fuzzysum(doc.text or "")
            click.echo(f"{doc.id}\t{a}:{b}")
        return
    if method != "fuzzysum" and method_info(method).streams:
        # streamed in 1 MiB chunks: memory stays flat however large the file
        from neardup.sketch.stream import hash_file

        for path in files:
            click.echo(f"{path}\t{hash_file(path, method)}")
        return
    m = make_method(method)
    for doc in _documents(files, binary=m.binary):
        click.echo(f"{doc.id}\t{m.fingerprint(doc)}")


@main.command()
@click.argument("a", type=click.Path(exists=True, dir_okay=False))
@click.argument("b", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--method",
    "-m",
    type=click.Choice(list(REGISTRY)),
    default="minhash",
    show_default=True,
    help="How to compare.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@_errors
def compare(a: str, b: str, method: str, fmt: str) -> None:
    """Similarity (and distance, where it is a count) of two files."""
    m = make_method(method)
    da, db = _documents((a, b), binary=m.binary)
    sim, dist = m.compare(da, db)
    if fmt == "json":
        click.echo(
            json.dumps({"a": a, "b": b, "method": method, "similarity": sim, "distance": dist})
        )
    else:
        extra = f"\tdistance={dist}" if dist is not None else ""
        click.echo(f"similarity={sim:.6f}{extra}")


@main.command()
@click.option("--threshold", "-t", type=float, required=True, help="Jaccard threshold.")
@click.option("--num-perm", "-n", type=int, default=128, show_default=True)
@click.option("--fp-weight", type=float, default=0.5, show_default=True)
@click.option("--fn-weight", type=float, default=0.5, show_default=True)
@click.option(
    "--mode",
    type=click.Choice(["recall", "weighted", "txtfp"]),
    default="recall",
    show_default=True,
    help="recall: P(t) >= 0.99 (LSHIndex's default).",
)
@_errors
def plan(threshold: float, num_perm: int, fp_weight: float, fn_weight: float, mode: str) -> None:
    """Bands, rows and predicted false positive/negative rates, with the S-curve."""
    from neardup.index.lsh import plan_lsh

    p = plan_lsh(threshold, num_perm, fp_weight=fp_weight, fn_weight=fn_weight, method=mode)  # type: ignore[arg-type]
    click.echo(f"bands={p.bands} rows={p.rows} (uses {p.bands * p.rows} of {num_perm} slots)")
    click.echo(
        f"false positive rate={p.fp:.4f} false negative rate={p.fn:.4f} "
        f"P(candidate | J={threshold})={p.recall_at_threshold:.4f}"
    )
    click.echo("S-curve: Jaccard -> P(candidate)")
    for s, prob in p.curve(11):
        bar = "#" * round(prob * 50)
        click.echo(f"  {s:4.2f} {prob:6.4f} {bar}")


def _record_options(fn: F) -> F:
    """``--id-field`` and ``--text-field``: where records keep their id and text."""
    fn = click.option(
        "--text-field",
        multiple=True,
        default=("text",),
        show_default=True,
        help="Record field with the text (nested: a.b); repeat to join several with newlines.",
    )(fn)
    fn = click.option(
        "--id-field",
        default=None,
        help="Record field with the id (nested: a.b); default: id if present, else the row.",
    )(fn)
    return fn


@main.command("dedup")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--method",
    "-m",
    type=click.Choice(list(REGISTRY)),
    default="minhash",
    show_default=True,
    help="Fingerprint and index to use: "
    + "; ".join(f"{n}: {i.summary}" for n, i in REGISTRY.items())
    + ".",
)
@click.option(
    "--threshold",
    "-t",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Similarity threshold (default: the method's; minhash 0.8).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv", "text"]),
    default="jsonl",
    show_default=True,
    help="Output format on stdout.",
)
@click.option("--pairs", "show_pairs", is_flag=True, help="Print pairs instead of clusters.")
@click.option(
    "--report",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a self-contained HTML report here.",
)
@click.option(
    "--keep",
    type=click.Choice(["first", "longest", "representative"]),
    default=None,
    help="Write a deduplicated copy (with --output).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(),
    default=None,
    help="Where the deduplicated copy goes: a .jsonl file or a directory.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing non-empty --output folder (written aside, then swapped in).",
)
@click.option(
    "--annotate",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write every input record with cluster_id, is_duplicate, duplicate_of and "
    "similarity here (.parquet, .jsonl, .jsonl.gz, .jsonl.zst or .csv).",
)
@_record_options
@click.option("--include", multiple=True, help="Glob a walked file must match (repeatable).")
@click.option("--exclude", multiple=True, help="Glob that leaves a walked file out.")
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="Follow symbolic links in folders (each real folder once: cycle-safe).",
)
@click.option(
    "--input-format",
    type=click.Choice(["auto", "text", "html", "markdown", "pdf"]),
    default="auto",
    show_default=True,
    help="How files become text (auto: by extension, then content; needs the markup extra).",
)
@click.option(
    "--main-content",
    is_flag=True,
    help="For HTML input, keep only the main content (no navigation, headers or footers).",
)
@click.option(
    "--index",
    "index_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also dedup against this persistent index and add the documents to it.",
)
@click.option(
    "--on-error",
    type=click.Choice(["fail", "skip"]),
    default="fail",
    show_default=True,
    help="Stop at a bad record, file or document, or skip it and count it in the summary.",
)
@click.option("--batch-size", type=click.IntRange(1), default=2048, show_default=True)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 256),
    default=None,
    help="Threads that sketch in parallel (default: one per core).",
)
@click.option(
    "--num-perm", type=click.IntRange(8, 4096), default=None, help="MinHash slots (default 128)."
)
@click.option(
    "--bits",
    type=click.Choice(["64", "128", "256"]),
    default=None,
    help="SimHash width (default 64).",
)
@click.option(
    "--max-members",
    type=click.IntRange(1),
    default=None,
    help="Cap on members printed per cluster.",
)
@click.option(
    "--exact-first/--no-exact-first",
    default=False,
    show_default=True,
    help="Remove exact copies (equal canonical text) before the near-duplicate method runs.",
)
@click.option(
    "--bloom-capacity",
    type=click.IntRange(1),
    default=None,
    help="--method exact: Bloom-filter mode for corpora beyond RAM, sized for N documents.",
)
@click.option(
    "--bloom-fp-rate",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=None,
    help="--method exact with --bloom-capacity: the filter's false-positive rate (0.001).",
)
@click.option(
    "--canonicalize",
    "canonical",
    type=click.Choice(["txtfp", "secure", "none"]),
    default=None,
    help="Canonicalizer preset for minhash/simhash (default txtfp; secure also undoes "
    "look-alike characters).",
)
@click.option(
    "--model",
    default=None,
    help="--method embedding: static (default: the bundled static model), minilm (the "
    "sentence-transformers model, ~100x slower), a model folder (model2vec or "
    "sentence-transformers), or openai:/voyage:/cohere:MODEL.",
)
@click.option(
    "--embedding-cache",
    type=click.Path(dir_okay=False),
    default=None,
    help="--method embedding: keep vectors in this SQLite file (by model and text hash) so "
    "a re-run embeds only new texts.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="spark: run on Apache Spark (extra spark).",
)
@click.option(
    "--master",
    default=None,
    help="Spark master URL (--engine spark; default: spark-submit's, else local[*]).",
)
@click.option(
    "--spark-output",
    default=None,
    help="--engine spark: write (id, cluster) rows here (.parquet or JSON lines).",
)
@click.option(
    "--partitions",
    type=click.IntRange(min=1),
    default=None,
    help="--engine spark: tasks per shuffle step (default: input partitions or parallelism).",
)
@click.option(
    "--clustering",
    type=click.Choice(["components", "center"]),
    default="components",
    show_default=True,
    help="components: union-find (documents can chain); center: every member is within the "
    "threshold of its cluster's representative.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress with a total and an ETA: a bar on a terminal, else a status line "
    "every 10 s (default: on when stderr is a terminal).",
)
@_errors
def dedup_cmd(
    paths: tuple[str, ...],
    method: str,
    threshold: float | None,
    fmt: str,
    show_pairs: bool,
    report: str | None,
    keep: str | None,
    output: str | None,
    force: bool,
    annotate: str | None,
    id_field: str | None,
    text_field: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    follow_symlinks: bool,
    input_format: str,
    main_content: bool,
    index_path: str | None,
    on_error: str,
    batch_size: int,
    jobs: int | None,
    num_perm: int | None,
    bits: str | None,
    max_members: int | None,
    exact_first: bool,
    bloom_capacity: int | None,
    bloom_fp_rate: float | None,
    canonical: str | None,
    model: str | None,
    embedding_cache: str | None,
    engine: str,
    master: str | None,
    spark_output: str | None,
    partitions: int | None,
    clustering: str,
    quiet: bool,
    progress: bool | None,
) -> None:
    """Find near-duplicate clusters in files, folders, record files (JSONL, CSV, TSV, Parquet,
    Arrow; compressed or not), Hugging Face save_to_disk folders, or stdin (-)."""
    from neardup.corpus.output import check_target
    from neardup.pipeline import dedup
    from neardup.readers import ReadStats

    if output is not None and keep is None:
        raise click.UsageError("--keep and --output go together")
    if keep is not None and output is None and annotate is None:
        raise click.UsageError("--keep goes with --output (or --annotate)")
    if output is not None and "-" in paths:
        raise click.UsageError("--output needs re-readable inputs; save stdin to a file first")
    from neardup._paths import check_outputs

    check_outputs(paths, report=report, output=output)  # before the work, not after it
    if output is not None and not output.lower().endswith(".jsonl"):
        check_target(Path(output), force=force)
    if annotate is not None:
        from neardup.corpus.records import record_format

        record_format(annotate)
    options: dict[str, Any] = {}
    takes = method_info(method).options
    for flag, name, value in (
        ("--num-perm", "num_perm", num_perm),
        ("--bits", "bits", None if bits is None else int(bits)),
        ("--canonicalize", "canonicalize", canonical),
        ("--bloom-capacity", "bloom_capacity", bloom_capacity),
        ("--bloom-fp-rate", "bloom_fp_rate", bloom_fp_rate),
        ("--model", "model", model),
        ("--embedding-cache", "cache", embedding_cache),
    ):
        if value is None:
            continue
        if name not in takes:
            users = [n for n, info in REGISTRY.items() if name in info.options]
            raise click.UsageError(f"{flag} applies to --method {' and '.join(users)}")
        options[name] = value
    if bloom_fp_rate is not None and bloom_capacity is None:
        raise click.UsageError("--bloom-fp-rate goes with --bloom-capacity")
    if exact_first and (method == "exact" or index_path is not None or engine == "spark"):
        raise click.UsageError(
            "--exact-first goes with a near-duplicate method, locally, no --index"
        )
    if engine == "spark":
        if clustering != "components":
            raise click.UsageError("--engine spark clusters by components only")
        if partitions is not None:
            options["partitions"] = partitions
        _spark_dedup(
            paths,
            method,
            threshold,
            id_field,
            text_field,
            spark_output,
            master,
            fmt,
            show_pairs,
            report,
            keep if annotate is None else None,
            index_path,
            max_members,
            quiet,
            options,
            annotate=annotate,
            annotate_keep=keep or "first",
        )
        return
    if spark_output is not None or master is not None or partitions is not None:
        raise click.UsageError("--master, --spark-output and --partitions go with --engine spark")
    store = None
    if index_path is not None:
        explicit = click.get_current_context().get_parameter_source("method")
        store = _open_index(
            index_path,
            method if explicit is not click.core.ParameterSource.DEFAULT else None,
            threshold,
            num_perm=num_perm,
            bits=None if bits is None else int(bits),
            canonicalize=canonical,
        )
        m = store.method
    else:
        m = make_method(method, threshold, **options)
    read: dict[str, Any] = {
        "id_field": id_field,
        "text_field": text_field,
        "include": include,
        "exclude": exclude,
        "input_format": input_format,
        "follow_symlinks": follow_symlinks,
        "on_error": on_error,
        "main_content": main_content,
    }
    stats = ReadStats()
    docs: Any
    source = None
    plain = len(text_field) == 1 and "." not in text_field[0] and "." not in (id_field or "")
    fast = plain and annotate is None and report is None and on_error == "fail"
    if _one_jsonl(paths) and not m.binary and fast and not exact_first:
        from neardup.packed import PackedBatches

        # one JSONL file: its texts go to the kernels as one buffer, never as Python strings
        docs = PackedBatches(Path(paths[0]), id_field or "id", text_field[0], batch_size)
    else:
        docs = _documents(
            paths, binary=m.binary, stats=stats, keep_fields=annotate is not None, **read
        )
        if report is not None:
            # the report reads back only what it shows: record texts are kept aside
            source = _report_source(input_format, main_content)
            docs = source.tap(docs)
    spool = None
    if annotate is not None:
        from neardup.corpus.records import RecordSpool

        spool = RecordSpool(Path(annotate).resolve().parent)
        docs = spool.tee(docs)
    from neardup.cli_progress import count_documents, make_progress

    update, close = make_progress(
        quiet,
        progress,
        lambda: count_documents(paths, binary=m.binary, include=include, exclude=exclude),
    )
    try:
        n_jobs = jobs if jobs is not None else min(8, os.cpu_count() or 1)
        want_pairs = show_pairs or report is not None or annotate is not None
        try:
            if exact_first:
                from neardup.corpus.exact import exact_first as run_exact_first

                result = run_exact_first(
                    docs,
                    method=m,
                    batch_size=batch_size,
                    on_error=on_error,
                    progress=update,
                    jobs=n_jobs,
                )
            else:
                result = dedup(
                    docs,
                    method=m,
                    batch_size=batch_size,
                    on_error=on_error,
                    progress=update,
                    jobs=n_jobs,
                    index=store,
                    pairs=want_pairs or clustering == "center",
                    clustering=clustering,
                )
        finally:
            close()
            if store is not None:
                store.close()
        if spool is not None and annotate is not None:
            from neardup.corpus.annotate import annotate_records

            n_annotated = annotate_records(
                spool, result, Path(annotate), keep=keep or "first", method=m
            )
            log.info("annotated %d records in %s", n_annotated, annotate)
    finally:
        if spool is not None:
            spool.close()
    out = sys.stdout
    if show_pairs:
        write_pairs(result.pairs, out, fmt=fmt)  # type: ignore[arg-type]
    else:
        write_clusters(result.clusters, out, fmt=fmt, max_members=max_members)  # type: ignore[arg-type]
    if report is not None and source is not None:
        _write_report(result, report, source, binary=m.binary)
    if keep is not None and output is not None:
        n = _write_kept(result, paths, Path(output), keep, binary=m.binary, force=force, **read)
        log.info("kept %d documents in %s", n, output)
    if not quiet:
        s = result.stats
        click.echo(
            f"neardup: {result.n_docs} documents, {len(result.clusters)} clusters, "
            f"{result.duplicates} duplicates, {len(result.pairs)} pairs, "
            f"{int(s.get('skipped', 0)) + stats.bad_records} skipped, "
            f"{s.get('seconds_total', 0.0):.2f} s",
            err=True,
        )
        left = stats.summary()
        if left:
            click.echo(f"neardup: {left}", err=True)


def _report_source(input_format: str, main_content: bool) -> DocumentSource:
    """Remembers where each document is while the run streams them (no second read)."""
    from neardup.io import read_file_text
    from neardup.report.sources import DocumentSource

    def load(path: Path) -> str:
        return read_file_text(path, input_format=input_format, main_content=main_content)

    return DocumentSource(loader=load)


def _write_report(
    result: DedupResult, report: str, source: DocumentSource, *, binary: bool
) -> None:
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


def _write_kept(
    result: DedupResult,
    paths: tuple[str, ...],
    output: Path,
    keep: str,
    *,
    binary: bool,
    force: bool = False,
    **read: Any,
) -> int:
    from neardup.corpus.output import write_kept_copy
    from neardup.pipeline import kept_ids

    sizes: dict[DocId, int] | None = None
    if keep == "longest":
        sizes = {}
        for d in _documents(paths, binary=binary, **read):
            sizes[d.id] = d.path.stat().st_size if binary and d.path else len(d.text or "")
    kept = kept_ids(result, keep=keep, sizes=sizes)
    return write_kept_copy(
        _documents(paths, binary=binary, **read), {str(k) for k in kept}, output, force=force
    )


def _corpus_inputs(fn: F) -> F:
    """Options shared by ``lines`` and ``substrings``: input, output and record fields."""
    for opt in reversed(
        [
            click.option(
                "--output",
                "-o",
                type=click.Path(dir_okay=False),
                required=True,
                help="Cleaned records (.jsonl, .jsonl.gz, .jsonl.zst, .csv or .parquet).",
            ),
            _record_options,
            click.option("--include", multiple=True, help="Glob a walked file must match."),
            click.option("--exclude", multiple=True, help="Glob that leaves a walked file out."),
            click.option("--follow-symlinks", is_flag=True, help="Follow links (cycle-safe)."),
            click.option(
                "--on-error",
                type=click.Choice(["fail", "skip"]),
                default="fail",
                show_default=True,
                help="Stop at a bad record or file, or skip and count it.",
            ),
            click.option("--quiet", "-q", is_flag=True, help="No summary line."),
        ]
    ):
        fn = opt(fn)
    return fn


def _corpus_reader(paths: tuple[str, ...], kw: dict[str, Any]) -> Callable[[], Iterator[Document]]:
    if "-" in paths:
        raise click.UsageError("this command reads its inputs twice; save stdin to a file first")
    if len(kw["text_field"]) != 1:
        raise click.UsageError("give one --text-field: the cleaned text is written back into it")
    return lambda: _documents(paths, binary=False, keep_fields=True, input_format="text", **kw)


@main.command("lines")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--min-docs",
    type=click.IntRange(2),
    required=True,
    help="Remove a line (paragraph) found in at least this many documents.",
)
@click.option(
    "--unit",
    type=click.Choice(["line", "paragraph"]),
    default="line",
    show_default=True,
    help="Compare lines, or paragraphs (lines between blank lines).",
)
@_corpus_inputs
@_errors
def lines_cmd(
    paths: tuple[str, ...], min_docs: int, unit: str, output: str, quiet: bool, **kw: Any
) -> None:
    """Remove lines or paragraphs that occur in at least --min-docs documents (boilerplate)."""
    from neardup.corpus.lines import LinesSummary, remove_frequent_units
    from neardup.corpus.records import cleaned_records, record_format, write_records

    record_format(output)
    read = _corpus_reader(paths, kw)
    summary = LinesSummary(unit, min_docs)
    docs = remove_frequent_units(read, min_docs=min_docs, unit=unit, summary=summary)
    write_records(cleaned_records(docs, text_field=kw["text_field"][0]), Path(output))
    if not quiet:
        click.echo(f"neardup lines: {summary.line()}", err=True)


@main.command("substrings")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--min-length",
    type=click.IntRange(8),
    required=True,
    help="Remove every repeat of at least this many UTF-8 bytes (the first copy stays).",
)
@click.option(
    "--shard-bytes",
    type=click.IntRange(1024),
    default=32 * 1024 * 1024,
    show_default=True,
    help="Text per suffix-array shard; bounds memory (about 26 bytes per shard byte).",
)
@_corpus_inputs
@_errors
def substrings_cmd(
    paths: tuple[str, ...],
    min_length: int,
    shard_bytes: int,
    output: str,
    quiet: bool,
    **kw: Any,
) -> None:
    """Remove exact repeated substrings across the corpus (suffix array, Lee et al. 2022)."""
    from neardup.corpus.records import cleaned_records, record_format, write_records
    from neardup.corpus.substrings import SubstringSummary, remove_repeated_substrings

    record_format(output)
    if "-" in paths:
        raise click.UsageError("substrings reads files; save stdin to a file first")
    if len(kw["text_field"]) != 1:
        raise click.UsageError("give one --text-field: the cleaned text is written back into it")
    summary = SubstringSummary(min_length)
    docs = remove_repeated_substrings(
        _documents(paths, binary=False, keep_fields=True, input_format="text", **kw),
        min_length=min_length,
        shard_bytes=shard_bytes,
        summary=summary,
        workdir=Path(output).resolve().parent,
    )
    write_records(cleaned_records(docs, text_field=kw["text_field"][0]), Path(output))
    if not quiet:
        click.echo(f"neardup substrings: {summary.line()}", err=True)


def _open_index(
    path: str,
    method: str | None,
    threshold: float | None,
    *,
    readonly: bool = False,
    create: bool = True,
    **options: str | int | None,
) -> Any:
    """Open an index, rebuilding its method; explicit options must agree with the store's."""
    from neardup.store.persistent import PersistentIndex

    return PersistentIndex.open(
        path, readonly=readonly, create=create, method=method, threshold=threshold, **options
    )


STORABLE = method_names(storable=True)


def _index_options(fn: F) -> F:
    fn = click.option(
        "--index",
        "index_path",
        type=click.Path(dir_okay=False),
        required=True,
        help="The SQLite index file.",
    )(fn)
    fn = click.option(
        "--method",
        "-m",
        type=click.Choice(STORABLE),
        default=None,
        help="A new index's method (default minhash); an existing index uses its own.",
    )(fn)
    fn = click.option(
        "--threshold",
        "-t",
        type=click.FloatRange(0.0, 1.0),
        default=None,
        help="A new index's threshold (default: the method's); must match an existing one's.",
    )(fn)
    fn = click.option(
        "--num-perm",
        type=click.IntRange(8, 4096),
        default=None,
        help="MinHash slots of a new index (default 128); must match an existing one's.",
    )(fn)
    fn = click.option(
        "--bits",
        type=click.Choice(["64", "128", "256"]),
        default=None,
        help="SimHash width of a new index (default 64); must match an existing one's.",
    )(fn)
    fn = click.option(
        "--canonicalize",
        "canonical",
        type=click.Choice(["txtfp", "secure", "none"]),
        default=None,
        help="Canonicalizer of a new index (default txtfp); must match an existing one's.",
    )(fn)
    return fn


def _index_open(
    index_path: str,
    method: str | None,
    threshold: float | None,
    num_perm: int | None,
    bits: str | None,
    canonical: str | None,
    *,
    readonly: bool = False,
    create: bool = True,
) -> Any:
    return _open_index(
        index_path,
        method,
        threshold,
        readonly=readonly,
        create=create,
        num_perm=num_perm,
        bits=None if bits is None else int(bits),
        canonicalize=canonical,
    )


@main.group("index")
def index_group() -> None:
    """A persistent index: add documents over time, ask what a document duplicates."""


@index_group.command("add")
@click.argument("paths", nargs=-1, required=True)
@_index_options
@click.option("--id-field", default="id", show_default=True)
@click.option("--text-field", default="text", show_default=True)
@_errors
def index_add(
    paths: tuple[str, ...],
    index_path: str,
    method: str | None,
    threshold: float | None,
    num_perm: int | None,
    bits: str | None,
    canonical: str | None,
    id_field: str,
    text_field: str,
) -> None:
    """Sketch documents and add them to the index (a key already there is replaced)."""
    from neardup.store.persistent import WRITE_DOCS

    with _index_open(index_path, method, threshold, num_perm, bits, canonical) as idx:
        docs = _documents(paths, binary=idx.method.binary, id_field=id_field, text_field=text_field)
        n = idx.add(docs, write_size=WRITE_DOCS)
        click.echo(f"added {n} documents; the index holds {len(idx)}", err=True)


@index_group.command("query")
@click.argument("paths", nargs=-1, required=True)
@_index_options
@click.option("--id-field", default="id", show_default=True)
@click.option("--text-field", default="text", show_default=True)
@_errors
def index_query(
    paths: tuple[str, ...],
    index_path: str,
    method: str | None,
    threshold: float | None,
    num_perm: int | None,
    bits: str | None,
    canonical: str | None,
    id_field: str,
    text_field: str,
) -> None:
    """Print, as JSONL, every stored document each input near-duplicates."""
    with _index_open(
        index_path, method, threshold, num_perm, bits, canonical, readonly=True
    ) as idx:
        m = idx.method
        docs = _documents(paths, binary=m.binary, id_field=id_field, text_field=text_field)
        for hit in idx.query(docs):
            record: dict[str, Any] = {
                "query": hit.query,
                "match": hit.key,
                "similarity": round(hit.similarity, 6),
            }
            if hit.distance is not None:
                record["distance"] = hit.distance
            click.echo(json.dumps(record, ensure_ascii=False))


@index_group.command("remove")
@click.argument("keys", nargs=-1, required=True)
@_index_options
@_errors
def index_remove(
    keys: tuple[str, ...],
    index_path: str,
    method: str | None,
    threshold: float | None,
    num_perm: int | None,
    bits: str | None,
    canonical: str | None,
) -> None:
    """Remove documents from the index by key."""
    with _index_open(index_path, method, threshold, num_perm, bits, canonical, create=False) as idx:
        click.echo(f"removed {idx.remove(keys)} of {len(keys)}", err=True)


@index_group.command("stats")
@_index_options
@_errors
def index_stats(
    index_path: str,
    method: str | None,
    threshold: float | None,
    num_perm: int | None,
    bits: str | None,
    canonical: str | None,
) -> None:
    """Print the index's statistics and the configuration it was built with, as JSON."""
    with _index_open(index_path, method, threshold, num_perm, bits, canonical, create=False) as idx:
        click.echo(json.dumps(idx.stats(), sort_keys=True))


@main.command("warmup")
@_errors
def warmup_cmd() -> None:
    """Compile the numba kernels now (run once after installing; later calls only load them)."""
    from neardup.warmup import warmup

    report = warmup()
    if report.backend != "fast":
        click.echo("neardup warmup: reference backend, nothing to compile", err=True)
        return
    click.echo(
        f"neardup warmup: {report.compiled} kernels compiled, {report.loaded} loaded, "
        f"{report.seconds:.1f} s, cache {report.cache_dir}",
        err=True,
    )


def _register_eval() -> None:
    from neardup.cli_eval import eval_cmd

    main.add_command(eval_cmd)


_register_eval()


def _spark_dedup(
    paths: tuple[str, ...],
    method: str,
    threshold: float | None,
    id_field: str | None,
    text_field: tuple[str, ...],
    output: str | None,
    master: str | None,
    fmt: str,
    show_pairs: bool,
    report: str | None,
    keep: str | None,
    index_path: str | None,
    max_members: int | None,
    quiet: bool,
    options: dict[str, Any],
    *,
    annotate: str | None = None,
    annotate_keep: str = "first",
) -> None:
    """``dedup --engine spark``: JSONL/Parquet paths in, the same cluster output as local."""
    if method not in ("minhash", "simhash"):
        raise click.UsageError("--engine spark supports --method minhash and simhash")
    local_only = (
        ("--pairs", show_pairs),
        ("--report", report),
        ("--keep", keep),
        ("--index", index_path),
    )
    for flag, value in local_only:
        if value:
            raise click.UsageError(f"{flag} is not available with --engine spark")
    from neardup.spark.cli import run_spark_dedup

    summary = run_spark_dedup(
        list(paths),
        method=method,
        threshold=threshold,
        id_field=id_field,
        text_field=text_field,
        output=output,
        master=master,
        collect=output is None,
        annotate=annotate,
        keep=annotate_keep,
        **options,
    )
    if output is None:
        write_clusters(summary.clusters, sys.stdout, fmt=fmt, max_members=max_members)  # type: ignore[arg-type]
    if not quiet:
        click.echo(
            f"neardup (spark): {summary.n_docs} documents, {len(summary.clusters)} clusters, "
            f"{summary.n_clustered} clustered documents, "
            f"{summary.stats.get('seconds_total', 0.0):.2f} s",
            err=True,
        )
