"""``neardup dedup``: near-duplicate clusters of files, folders, record files or stdin."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli import inputs
from neardup.cli.options import (
    commit_every_option,
    errors,
    input_format_option,
    input_options,
    jobs_option,
    lsh_options,
    method_options,
    ngram_option,
    on_error_option,
    quiet_models,
    quiet_option,
    record_options,
    seed_option,
    sketch_options,
    threshold_option,
)
from neardup.cli.output import report_source, write_kept, write_report, write_summary
from neardup.methods import REGISTRY, make_method, method_info
from neardup.report import write_clusters, write_pairs

if TYPE_CHECKING:
    from neardup.readers import ReadStats

__all__ = ["dedup_cmd"]

log = logging.getLogger("neardup")


@click.command("dedup")
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
@threshold_option("Similarity threshold (default: the method's; minhash 0.8).")
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
    help="Which member of each cluster a deduplicated copy (--output) keeps [default: first].",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(),
    default=None,
    help=(
        "Where the deduplicated copy goes: a record file (.jsonl, .jsonl.gz, .jsonl.zst, .csv "
        "or .parquet; each kept record with all its fields) or a directory of copied files."
    ),
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an --output folder an earlier run wrote (written aside, then swapped in); "
    "one holding other files or an input is refused.",
)
@click.option(
    "--annotate",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write every input record with cluster_id, is_duplicate, duplicate_of and "
    "similarity here (.parquet, .jsonl, .jsonl.gz, .jsonl.zst or .csv).",
)
@record_options
@input_options
@input_format_option
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
@commit_every_option
@on_error_option
@click.option("--batch-size", type=click.IntRange(1), default=2048, show_default=True)
@jobs_option
@sketch_options()
@ngram_option
@seed_option
@lsh_options
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
    "--dihedral",
    is_flag=True,
    default=False,
    help="Image methods: mirrored and rotated copies match too (pdq: its 8 dihedral hashes; "
    "phash, ahash, dhash, whash, crop-resistant: the 8 transforms are hashed).",
)
@click.option(
    "--crops",
    is_flag=True,
    default=False,
    help="--method pdq: copies cropped by up to 10%, centred or at a corner, match too (25 "
    "crops of 98-90% of every image are indexed: about 5x the CPU).",
)
@click.option(
    "--min-quality",
    type=click.IntRange(0, 100),
    default=None,
    help="--method pdq: drop images of lower PDQ quality (0-100) and log them (Meta's "
    "production gate is 50). Default 0: none dropped; a pair with an image below quality 50 "
    "must be within distance 16 instead of 31.",
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
    "--spark-conf",
    "spark_conf",
    multiple=True,
    metavar="KEY=VALUE",
    help="--engine spark: a Spark setting for the session (repeatable), e.g. "
    "spark.driver.memory=6g. In local mode the driver memory defaults to half of the "
    "machine's (at most 32g).",
)
@click.option(
    "--clustering",
    type=click.Choice(["components", "center"]),
    default="components",
    show_default=True,
    help="components: union-find (documents can chain); center: every member is within the "
    "threshold of its cluster's representative.",
)
@quiet_option("No progress bar and no summary.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress with a total and an ETA: a bar on a terminal, else a status line "
    "every 10 s (default: on when stderr is a terminal).",
)
@errors
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
    commit_every: float | None,
    on_error: str,
    batch_size: int,
    jobs: int | None,
    num_perm: int | None,
    ngram: int | None,
    seed: int | None,
    bands: int | None,
    rows: int | None,
    bits: str | None,
    canonical: str | None,
    max_members: int | None,
    exact_first: bool,
    bloom_capacity: int | None,
    bloom_fp_rate: float | None,
    model: str | None,
    embedding_cache: str | None,
    dihedral: bool,
    crops: bool,
    min_quality: int | None,
    engine: str,
    master: str | None,
    spark_output: str | None,
    partitions: int | None,
    spark_conf: tuple[str, ...],
    clustering: str,
    quiet: bool,
    progress: bool | None,
) -> None:
    """Find near-duplicate clusters in files, folders, record files (JSONL, CSV, TSV, Parquet,
    Arrow; compressed or not), Hugging Face save_to_disk folders, or stdin (-)."""
    from neardup.pipeline import dedup

    if output is not None and keep is None:
        if engine == "spark":
            raise click.UsageError("--output is not available with --engine spark")
        keep = "first"  # --output alone keeps the first of each cluster
    if keep is not None and output is None and annotate is None:
        raise click.UsageError("--keep goes with --output (or --annotate)")
    if output is not None and "-" in paths:
        raise click.UsageError("--output needs re-readable inputs; save stdin to a file first")
    from neardup._paths import check_outputs

    # before the work, not after it
    check_outputs(paths, report=report, output=output, annotate=annotate, force=force)
    if annotate is not None:
        from neardup.corpus.records import record_format

        record_format(annotate)
    options = method_options(
        method,
        num_perm=num_perm,
        k=ngram,
        seed=seed,
        bands=bands,
        rows=rows,
        bits=None if bits is None else int(bits),
        canonicalize=canonical,
        bloom_capacity=bloom_capacity,
        bloom_fp_rate=bloom_fp_rate,
        model=model,
        cache=embedding_cache,
        dihedral=True if dihedral else None,
        crops=True if crops else None,
        min_quality=min_quality,
    )
    if exact_first and (method == "exact" or index_path is not None or engine == "spark"):
        raise click.UsageError(
            "--exact-first goes with a near-duplicate method, locally, no --index"
        )
    if engine == "spark":
        if clustering != "components":
            raise click.UsageError("--engine spark clusters by components only")
        if partitions is not None:
            options["partitions"] = partitions
        from neardup.cli.spark import spark_dedup

        spark_dedup(
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
            on_error=on_error,
            spark_conf=spark_conf,
        )
        return
    if spark_output is not None or master is not None or partitions is not None or spark_conf:
        raise click.UsageError(
            "--master, --spark-output, --partitions and --spark-conf go with --engine spark"
        )
    quiet_models(quiet, method)
    store = None
    if index_path is not None:
        from neardup.cli.index import open_index

        explicit = click.get_current_context().get_parameter_source("method")
        store = open_index(
            index_path,
            method if explicit is not click.core.ParameterSource.DEFAULT else None,
            threshold,
            num_perm=num_perm,
            bits=bits,
            canonicalize=canonical,
            commit_every_seconds=commit_every,
            ngram=ngram,
            seed=seed,
            bands=bands,
            rows=rows,
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
    stats: ReadStats | None = None  # what the readers skipped (the packed reader skips none)
    docs: Any
    source = None
    from neardup.corpus.records import record_format

    # one JSONL file annotated to JSON lines: its lines are read again when written
    lines_out = annotate is None or record_format(annotate).startswith("jsonl")
    packed = (
        inputs.plain_jsonl(paths, text_field, id_field, on_error)
        and not method_info(m.name).binary
        and lines_out
        and report is None
        and not exact_first
    )
    if packed:
        from neardup.packed import PackedBatches

        # one JSONL file: its texts go to the kernels as one buffer, never as Python strings
        docs = PackedBatches(
            Path(paths[0]),
            id_field or "id",
            text_field[0],
            batch_size,
            id_required=id_field is not None,
        )
    else:
        from neardup.readers import ReadStats

        stats = ReadStats()
        docs = inputs.documents(
            paths,
            binary=method_info(m.name).binary,
            stats=stats,
            keep_fields=annotate is not None,
            images_only=inputs.images(m.name),
            **read,
        )
        if report is not None:
            # the report reads back only what it shows: record texts are kept aside
            source = report_source(input_format, main_content)
            docs = source.tap(docs)
    spool = None
    if annotate is not None and not packed:
        from neardup.corpus.records import RecordSpool

        spool = RecordSpool(Path(annotate).resolve().parent)
        docs = spool.tee(docs)
    from neardup.cli.progress import count_documents, make_progress

    update, close = make_progress(
        quiet,
        progress,
        lambda: count_documents(
            paths,
            binary=method_info(m.name).binary,
            include=include,
            exclude=exclude,
            images_only=inputs.images(m.name),
        ),
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
        elif annotate is not None:
            from neardup.corpus.annotate import annotate_jsonl_lines
            from neardup.corpus.records import write_jsonl_lines

            lines = annotate_jsonl_lines(
                Path(paths[0]),
                result,
                keep=keep or "first",
                method=m,
                id_field=id_field or "id",
                text_field=text_field[0],
            )
            n_annotated = write_jsonl_lines(lines, Path(annotate))
            log.info("annotated %d records in %s", n_annotated, annotate)
    except BaseException:
        if source is not None:
            source.close()  # the report's text spool: no report comes
        raise
    finally:
        if spool is not None:
            spool.close()
    out = sys.stdout
    if show_pairs:
        write_pairs(result.pairs, out, fmt=fmt)  # type: ignore[arg-type]
    else:
        write_clusters(result.clusters, out, fmt=fmt, max_members=max_members)  # type: ignore[arg-type]
    if report is not None and source is not None:
        write_report(result, report, source, binary=method_info(m.name).binary)
    if keep is not None and output is not None:
        n = write_kept(
            result,
            paths,
            Path(output),
            keep,
            binary=method_info(m.name).binary,
            force=force,
            **read,
        )
        log.info("kept %d documents in %s", n, output)
    if not quiet:
        write_summary(result, stats)
