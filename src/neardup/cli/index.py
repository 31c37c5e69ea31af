"""``neardup index``: a persistent index that documents are added to, queried and removed from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from neardup.cli.inputs import documents
from neardup.cli.options import F, errors, sketch_options, stack, threshold_option
from neardup.methods import method_names

if TYPE_CHECKING:
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
) -> PersistentIndex:
    """Open an index, rebuilding its method; explicit options must agree with the store's."""
    from neardup.store.persistent import PersistentIndex

    return PersistentIndex.open(
        path,
        readonly=readonly,
        create=create,
        method=method,
        threshold=threshold,
        num_perm=num_perm,
        bits=None if bits is None else int(bits),
        canonicalize=canonicalize,
    )


def _index_options(fn: F) -> F:
    """``--index`` and the options that build a new index (an existing one uses its own)."""
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
        threshold_option(
            "A new index's threshold (default: the method's); must match an existing one's."
        ),
        sketch_options(stored=True),
    )(fn)


def _record_fields(fn: F) -> F:
    return stack(
        click.option("--id-field", default="id", show_default=True),
        click.option("--text-field", default="text", show_default=True),
    )(fn)


def _open(build: dict[str, Any], *, readonly: bool = False, create: bool = True) -> PersistentIndex:
    """Open ``--index`` with the build options a command was given (None = not given)."""
    return open_index(
        build["index_path"],
        build["method"],
        build["threshold"],
        readonly=readonly,
        create=create,
        num_perm=build["num_perm"],
        bits=build["bits"],
        canonicalize=build["canonical"],
    )


@click.group("index")
def index_group() -> None:
    """A persistent index: add documents over time, ask what a document duplicates."""


@index_group.command("add")
@click.argument("paths", nargs=-1, required=True)
@_index_options
@_record_fields
@errors
def index_add(paths: tuple[str, ...], id_field: str, text_field: str, **build: Any) -> None:
    """Sketch documents and add them to the index (a key already there is replaced)."""
    from neardup.store.persistent import WRITE_DOCS

    with _open(build) as idx:
        docs = documents(paths, binary=idx.method.binary, id_field=id_field, text_field=text_field)
        n = idx.add(docs, write_size=WRITE_DOCS)
        click.echo(f"added {n} documents; the index holds {len(idx)}", err=True)


@index_group.command("query")
@click.argument("paths", nargs=-1, required=True)
@_index_options
@_record_fields
@errors
def index_query(paths: tuple[str, ...], id_field: str, text_field: str, **build: Any) -> None:
    """Print, as JSONL, every stored document each input near-duplicates."""
    with _open(build, readonly=True) as idx:
        m = idx.method
        docs = documents(paths, binary=m.binary, id_field=id_field, text_field=text_field)
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
@errors
def index_remove(keys: tuple[str, ...], **build: Any) -> None:
    """Remove documents from the index by key."""
    with _open(build, create=False) as idx:
        click.echo(f"removed {idx.remove(keys)} of {len(keys)}", err=True)


@index_group.command("stats")
@_index_options
@errors
def index_stats(**build: Any) -> None:
    """Print the index's statistics and the configuration it was built with, as JSON."""
    with _open(build, create=False) as idx:
        click.echo(json.dumps(idx.stats(), sort_keys=True))
