"""``neardup index``: a persistent index that documents are added to, queried and removed from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from neardup.cli.inputs import documents, images
from neardup.cli.options import (
    F,
    commit_every_option,
    errors,
    input_format_option,
    input_options,
    lsh_options,
    method_options,
    ngram_option,
    on_error_option,
    progress_option,
    quiet_option,
    record_options,
    seed_option,
    sketch_options,
    stack,
    threshold_option,
)
from neardup.errors import InputError
from neardup.methods import method_info, method_names

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from neardup.io import Document
    from neardup.methods import Method
    from neardup.readers import ReadStats
    from neardup.store.persistent import PersistentIndex

__all__ = ["STORABLE", "index_group", "open_index"]

#: Methods whose index can be kept in a store.
STORABLE = method_names(storable=True)


def open_index(
    path: str,
    method: str | None,
    threshold: float | None,
    *,
    readonly: bool = False,
    create: bool = True,
    num_perm: int | None = None,
    bits: str | None = None,
    canonicalize: str | None = None,
    commit_every_seconds: float | None = None,
    ngram: int | None = None,
    seed: int | None = None,
    bands: int | None = None,
    rows: int | None = None,
) -> PersistentIndex:
    """Open an index, rebuilding its method; explicit options must agree with the store's.

    ``ngram``, ``seed``, ``bands`` and ``rows`` (MinHash's shingle size, seed and banding,
    ``dedup``'s options of the same names) are stored in a new index; given for an existing
    one, each must equal what the index uses (a planned banding included).
    """
    import os

    from neardup.store.knobs import open_with_knobs
    from neardup.store.persistent import COMMIT_EVERY_SECONDS

    knobs = {"k": ngram, "seed": seed, "bands": bands, "rows": rows}
    if create and not readonly and not os.path.exists(path):
        method_options(method or "minhash", **knobs)  # a usage error unless minhash
    return open_with_knobs(
        path,
        knobs,
        check=_check_knobs,
        readonly=readonly,
        create=create,
        method=method,
        threshold=threshold,
        num_perm=num_perm,
        bits=None if bits is None else int(bits),
        canonicalize=canonicalize,
        commit_every_seconds=(
            COMMIT_EVERY_SECONDS if commit_every_seconds is None else commit_every_seconds
        ),
    )


def _check_knobs(method: Method, path: str, knobs: dict[str, int | None]) -> None:
    """Refuse a knob that contradicts the existing index's (a usage error when its method
    lacks them)."""
    from neardup.store.knobs import KNOB_FLAGS, check_knobs

    given = [k for k, v in knobs.items() if v is not None]
    if given and method.name != "minhash":
        flags = ", ".join(KNOB_FLAGS[k] for k in given)
        raise click.UsageError(
            f"{flags} apply to minhash; the index {path!r} holds {method.name}: drop the option"
        )
    check_knobs(method, path, knobs)


_STORED_THRESHOLD = "A new index's threshold (default: the method's); must match an existing one's."
_QUERY_THRESHOLD = (
    "Print matches at or above this similarity (default: the index's threshold). Above the "
    "index's it finds exactly the index's matches that pass it; below it only the pairs that "
    "share a stored LSH band or Hamming block (see docs/store.md)."
)


def _index_options(*, query: bool = False) -> Callable[[F], F]:
    """``--index`` and the options that build a new index (an existing one uses its own);
    with ``query``, ``--threshold`` is the query's threshold instead."""
    return stack(
        click.option(
            "--index",
            "index_path",
            type=click.Path(dir_okay=False),
            required=True,
            help="The SQLite index file.",
        ),
        click.option(
            "--method",
            "-m",
            type=click.Choice(STORABLE),
            default=None,
            help="A new index's method (default minhash); an existing index uses its own.",
        ),
        threshold_option(_QUERY_THRESHOLD if query else _STORED_THRESHOLD),
        sketch_options(stored=True),
        ngram_option,
        seed_option,
        lsh_options,
    )


def _inputs(fn: F) -> F:
    """The input options ``dedup`` takes too: record fields, folder walk, format, errors."""
    return stack(record_options, input_options, input_format_option, on_error_option)(fn)


def _read(
    paths: tuple[str, ...], idx: PersistentIndex, read: dict[str, Any], stats: ReadStats
) -> Iterator[Document]:
    """The documents of ``paths`` as the index's method reads them."""
    m = idx.method
    return documents(
        paths, binary=method_info(m.name).binary, images_only=images(m.name), stats=stats, **read
    )


_BUILD = (
    "index_path",
    "method",
    "threshold",
    "num_perm",
    "bits",
    "canonical",
    "ngram",
    "seed",
    "bands",
    "rows",
)


def _open(
    options: dict[str, Any],
    *,
    readonly: bool = False,
    create: bool = True,
    commit_every_seconds: float | None = None,
) -> PersistentIndex:
    """Open ``--index`` with the build options a command was given (None = not given)."""
    return open_index(
        options["index_path"],
        options["method"],
        options["threshold"],
        readonly=readonly,
        create=create,
        num_perm=options["num_perm"],
        bits=options["bits"],
        canonicalize=options["canonical"],
        commit_every_seconds=commit_every_seconds,
        ngram=options["ngram"],
        seed=options["seed"],
        bands=options["bands"],
        rows=options["rows"],
    )


def _split(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The build options and the read options of a command's keyword arguments."""
    build = {k: v for k, v in options.items() if k in _BUILD}
    return build, {k: v for k, v in options.items() if k not in _BUILD}


@click.group("index")
def index_group() -> None:
    """A persistent index: add documents over time, ask what a document duplicates.

    The command that creates the index (index add, or dedup --index) stores its method,
    threshold and sketch options (--num-perm, --bits, --canonicalize, and for minhash --ngram,
    --seed, --bands, --rows); later commands need only --index, and an option given again
    must agree with the stored one.
    """


def _looser(idx: PersistentIndex, threshold: float) -> str:
    """What a query below the index's threshold can miss, in one line."""
    m = idx.method
    stored = m.threshold
    bands, rows = getattr(m, "bands", None), getattr(m, "rows", None)
    if isinstance(bands, int) and isinstance(rows, int):
        p = 1.0 - (1.0 - threshold**rows) ** bands
        how = (
            f"its LSH bands ({bands} x {rows}) make a pair of similarity {threshold:g} a "
            f"candidate with probability {p:.2f}"
        )
    else:
        how = (
            "its Hamming blocks were cut for its own radius: a pair farther apart is found only "
            "if one block is equal"
        )
    return (
        f"--threshold {threshold:g} is below the index's {stored:g}: {how}; matches below "
        f"{stored:g} can be missed (each one printed was verified at {threshold:g})"
    )


@index_group.command("add")
@click.argument("paths", nargs=-1, required=True)
@_index_options()
@_inputs
@commit_every_option
@quiet_option()
@progress_option
@errors
def index_add(
    paths: tuple[str, ...],
    quiet: bool,
    commit_every: float | None,
    progress: bool | None,
    **options: Any,
) -> None:
    """Sketch documents and add them to the index (a key already there is replaced)."""
    from neardup.readers import ReadStats
    from neardup.store.persistent import WRITE_DOCS

    build, read = _split(options)
    stats = ReadStats()
    with _open(build, commit_every_seconds=commit_every) as idx:
        from neardup.cli.progress import count_documents, counted, pass_progress

        name = idx.method.name
        update, close = pass_progress(
            quiet,
            progress,
            lambda: count_documents(
                paths,
                binary=method_info(name).binary,
                include=read.get("include", ()),
                exclude=read.get("exclude", ()),
                images_only=images(name),
            ),
        )
        try:
            docs = counted(_read(paths, idx, read, stats), update, "add")
            n = idx.add(docs, write_size=WRITE_DOCS)
        finally:
            close()
        held = len(idx)
    if not quiet:
        click.echo(f"neardup index add: {n} documents added; the index holds {held}", err=True)
        left = stats.summary()
        if left:
            click.echo(f"neardup: {left}", err=True)


@index_group.command("query")
@click.argument("paths", nargs=-1, required=True)
@_index_options(query=True)
@_inputs
@errors
def index_query(paths: tuple[str, ...], **options: Any) -> None:
    """Print, as JSONL, every stored document each input near-duplicates."""
    from neardup.readers import ReadStats

    build, read = _split(options)
    threshold = build.pop("threshold")
    with _open({**build, "threshold": None}, readonly=True) as idx:
        if threshold is not None and threshold < idx.method.threshold:
            click.echo(f"neardup: {_looser(idx, threshold)}", err=True)
        hits = idx.query(_read(paths, idx, read, ReadStats()), threshold=threshold)
        for hit in hits:
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
@_index_options()
@quiet_option()
@errors
def index_remove(keys: tuple[str, ...], quiet: bool, **build: Any) -> None:
    """Remove documents from the index by key (exit 1, naming them, if any is not there)."""
    with _open(build, create=False) as idx:
        missing = [key for key in dict.fromkeys(keys) if not idx.remove([key])]
        held = len(idx)
    removed = len(dict.fromkeys(keys)) - len(missing)
    if missing:
        shown = ", ".join(repr(k) for k in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputError(
            f"{len(missing)} of the keys are not in the index: {shown} ({removed} removed; "
            "neardup index query finds a document's stored key)"
        )
    if not quiet:
        click.echo(f"neardup index remove: {removed} removed; the index holds {held}", err=True)


def _writable(path: str) -> bool:
    """Whether the store's folder can be written (else the store is opened read-only: WAL
    mode would want a ``-shm`` file there)."""
    import os

    return os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)


@index_group.command("stats")
@_index_options()
@errors
def index_stats(**build: Any) -> None:
    """Print the index's statistics and the configuration it was built with, as JSON."""
    readonly = not _writable(build["index_path"])
    with _open(build, create=False, readonly=readonly) as idx:
        click.echo(json.dumps(idx.stats(), sort_keys=True))


@index_group.command("check")
@click.option(
    "--index",
    "index_path",
    type=click.Path(dir_okay=False),
    required=True,
    help="The SQLite index file.",
)
@errors
def index_check(index_path: str) -> None:
    """Check every row of the index (SQLite's integrity check, checksums, counters); print
    the report as JSON, and exit 1 naming the damage if there is any."""
    from neardup.errors import StoreError
    from neardup.store import Store

    with Store.open(
        index_path, kind=None, params=None, create=False, readonly=True, quick_check=False
    ) as store:
        report = store.check()
    click.echo(json.dumps(report, sort_keys=True))
    if not report["ok"]:
        problems = report["problems"]
        assert isinstance(problems, list)
        raise StoreError(
            f"the store {index_path!r} is damaged: {report['problem_count']} problem(s): "
            + "; ".join(problems[:3])
            + "; restore it from a backup, or rebuild it (neardup index add --index NEW.db ...)"
        )
