"""``neardup dedup``: near-duplicate clusters of files, folders, record files or stdin."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from neardup._gc import off_for_the_command
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
from neardup.cli.output import write_summary
from neardup.methods import REGISTRY
from neardup.report import write_clusters, write_pairs

if TYPE_CHECKING:
    from neardup.corpus.reading import Corpus
    from neardup.pipeline import Progress

__all__ = ["dedup_cmd"]


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
    type=click.Choice(["first", "longest", "representative", "largest"]),
    default=None,
    help="Which member of each cluster --output and --annotate keep [default: first]: "
    "first (= representative: read first), longest (most characters; files: bytes), largest "
    "(image methods: most pixels).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(),
    default=None,
    help=(
        "Where the deduplicated copy goes: a record file (.jsonl, .jsonl.gz, .jsonl.zst, .csv "
        "or .parquet; each kept record with all its fields) or a folder that mirrors the "
        "inputs (files copied; each input record file written back as a shard of the same "
        "name holding its kept records)."
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
    "--min-length",
    type=click.IntRange(0),
    default=0,
    help="Text methods: documents shorter than this many characters are left out of "
    "matching and counted as skipped; every output still has them. [default: 0, none]",
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
    default=None,
    help="components: union-find (documents can chain); center: every member is within the "
    "threshold of its cluster's representative [default: the method's; center for "
    "embedding, else components]. Given as components, --keep/--output/--annotate remove "
    "every member but one per cluster, chains included.",
)
@quiet_option("No progress bar and no summary.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress with a total and an ETA: a bar on a terminal, else a status line "
    "every 10 s (default: on when stderr is a terminal).",
)
@errors
def dedup_cmd(paths: tuple[str, ...], method: str, engine: str, quiet: bool, **o: Any) -> None:
    """Find near-duplicate clusters in files, folders, record files (JSONL, CSV, TSV, Parquet,
    Arrow; compressed or not), Hugging Face save_to_disk folders, or stdin (-)."""
    from neardup.corpus import dedup_corpus, read_corpus

    if o["keep"] is not None and o["output"] is None and o["annotate"] is None:
        raise click.UsageError("--keep goes with --output (or --annotate)")
    options = _method_options(method, o)
    if o["exact_first"] and (method == "exact" or o["index_path"] or engine == "spark"):
        raise click.UsageError(
            "--exact-first goes with a near-duplicate method, locally, no --index"
        )
    if engine == "spark":
        from neardup.cli.spark import spark_config, spark_dedup

        config = spark_config(paths, method, options, o)
        spark_dedup(config, fmt=o["fmt"], max_members=o["max_members"], quiet=quiet)
        return
    if any(o[k] for k in _SPARK):
        raise click.UsageError(
            "--master, --spark-output, --partitions and --spark-conf go with --engine spark"
        )
    quiet_models(quiet, method)
    corpus = read_corpus(paths, **{k: o[k] for k in _READ.split()})
    update, close = _progress(corpus, method, quiet, o["progress"])
    off_for_the_command()  # the process ends after the output: no collection till then
    try:
        run = dedup_corpus(
            corpus,
            method=None if o["index_path"] and not _explicit("method") else method,
            index=o["index_path"],
            pairs=o["show_pairs"],
            jobs=o["jobs"] or min(8, os.cpu_count() or 1),
            progress=update,
            **{k: o[k] for k in _RUN.split()},
            **options,
        )
    finally:
        close()
    if o["show_pairs"]:
        write_pairs(run.result.pairs, sys.stdout, fmt=o["fmt"])
    else:
        write_clusters(run.clusters, sys.stdout, fmt=o["fmt"], max_members=o["max_members"])
    if not quiet:
        write_summary(run)


#: The options that say how the corpus is read, how the run goes, and where Spark runs.
_READ = "text_field id_field include exclude input_format main_content follow_symlinks on_error"
_RUN = "threshold keep output annotate report force clustering exact_first min_length batch_size"
_RUN += " commit_every"
_SPARK = ("master", "spark_output", "partitions", "spark_conf")
#: Method options named as the method takes them, and the ones that the CLI renames.
_SAME = ("num_perm", "seed", "bands", "rows", "bloom_capacity", "bloom_fp_rate", "model")
_RENAMED = {"k": "ngram", "canonicalize": "canonical", "cache": "embedding_cache"}
_RENAMED |= {"dihedral": "dihedral", "crops": "crops", "min_quality": "min_quality"}


def _method_options(method: str, o: dict[str, Any]) -> dict[str, Any]:
    """The method keywords given on the command line (``--bits 64`` as 64; flags off: unset)."""
    given = {n: o[n] for n in _SAME} | {n: o[flag] for n, flag in _RENAMED.items()}
    given["bits"] = None if o["bits"] is None else int(o["bits"])
    for flag in ("dihedral", "crops"):
        given[flag] = given[flag] or None
    return method_options(method, **given)


def _explicit(name: str) -> bool:
    """Whether option ``name`` was given on the command line (not its default)."""
    source = click.get_current_context().get_parameter_source(name)
    return source is not click.core.ParameterSource.DEFAULT


def _progress(
    corpus: Corpus, method: str, quiet: bool, progress: bool | None
) -> tuple[Progress | None, Callable[[], None]]:
    """The progress display (its total counted only when it is shown)."""
    from neardup.cli.progress import count_documents, make_progress
    from neardup.methods import method_info

    info = method_info(method)
    return make_progress(
        quiet,
        progress,
        lambda: count_documents(
            corpus.paths,
            binary=info.binary,
            include=corpus.include,
            exclude=corpus.exclude,
            images_only=info.images,
        ),
    )
