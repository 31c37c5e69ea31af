"""``neardup serve``: near-duplicate detection as an HTTP service over a persistent index."""

from __future__ import annotations

import logging
import signal
import sys
from typing import Any

import click

from neardup.cli.index import STORABLE, open_index
from neardup.cli.options import (
    errors,
    lsh_options,
    ngram_option,
    seed_option,
    sketch_options,
    threshold_option,
)

__all__ = ["serve_cmd"]


@click.command("serve")
@click.option(
    "--index",
    "index_path",
    type=click.Path(dir_okay=False),
    required=True,
    help="The SQLite index file to serve (created with --method and --threshold if missing).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="TCP port (0: a free one; the address is printed on stderr when ready).",
)
@click.option(
    "--api-key-file",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="Bearer keys, one a line: 'KEY read' or 'KEY write'. Without it the service "
    "listens on loopback only and takes no keys.",
)
@click.option(
    "--method",
    "-m",
    type=click.Choice(STORABLE),
    default=None,
    help="A new index's method (default minhash); an existing index uses its own.",
)
@threshold_option("A new index's threshold (default: the method's); must match an existing one's.")
@sketch_options(stored=True)
@ngram_option
@seed_option
@lsh_options
@click.option(
    "--readers",
    type=click.IntRange(1, 256),
    default=None,
    help="Threads that sketch documents and answer reads (default: one per core, at most 8).",
)
@click.option(
    "--queue-size",
    type=click.IntRange(1),
    default=8192,
    show_default=True,
    help="Documents in flight at most; past it a request is answered 503 with Retry-After.",
)
@click.option(
    "--queue-bytes",
    type=click.IntRange(1),
    default=256 * 1024 * 1024,
    show_default=True,
    help="Bytes of request bodies in flight at most; past it, 503 with Retry-After too.",
)
@click.option(
    "--max-documents",
    type=click.IntRange(1),
    default=1024,
    show_default=True,
    help="Documents in one request at most (413 above).",
)
@click.option(
    "--max-document-bytes",
    type=click.IntRange(1),
    default=1024 * 1024,
    show_default=True,
    help="Bytes of one document's text (UTF-8) or image at most (413 above).",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(1),
    default=16 * 1024 * 1024,
    show_default=True,
    help="Bytes of one request body at most (413 above).",
)
@click.option(
    "--max-duplicates",
    type=click.IntRange(1),
    default=100,
    show_default=True,
    help="Duplicates listed per document at most (the most similar first).",
)
@click.option(
    "--commit-delay",
    type=click.FloatRange(0, 10),
    default=0.0,
    show_default=True,
    metavar="SECONDS",
    help="How long the writer waits for more documents to join a group commit (0: it "
    "commits what is waiting as soon as it is free; groups form while it commits).",
)
@click.option(
    "--max-group",
    type=click.IntRange(1),
    default=4096,
    show_default=True,
    help="Documents in one group commit at most.",
)
@click.option(
    "--synchronous",
    type=click.Choice(["normal", "full"]),
    default="normal",
    show_default=True,
    help="normal: an acknowledged document survives a crash of the process (SIGKILL); full: "
    "each group commit is also fsynced, so it survives a power loss too (slower).",
)
@click.option(
    "--access-log/--no-access-log",
    default=False,
    show_default=True,
    help="Log one line per request on stderr (never the keys).",
)
@errors
def serve_cmd(
    index_path: str,
    host: str,
    port: int,
    api_key_file: str | None,
    method: str | None,
    threshold: float | None,
    num_perm: int | None,
    bits: str | None,
    canonical: str | None,
    ngram: int | None,
    seed: int | None,
    bands: int | None,
    rows: int | None,
    readers: int | None,
    queue_size: int,
    queue_bytes: int,
    max_documents: int,
    max_document_bytes: int,
    max_body_bytes: int,
    max_duplicates: int,
    commit_delay: float,
    max_group: int,
    synchronous: str,
    access_log: bool,
) -> None:
    """Serve an index over HTTP: check documents for near-duplicates and remember them
    (POST /v1/check), query (POST /v1/query), documents, stats, health, metrics; see
    docs/serve.md. SIGTERM drains requests in flight, then exits."""
    from neardup._extras import require_extra
    from neardup.serve.auth import ApiKeys
    from neardup.serve.config import Limits, ServeConfig
    from neardup.serve.server import run

    for module in ("starlette", "uvicorn"):  # before a new index file is made
        require_extra("serve", module)
    keys = None if api_key_file is None else ApiKeys.from_file(api_key_file)
    extra: dict[str, Any] = {} if readers is None else {"readers": readers}
    config = ServeConfig(
        index=index_path,
        host=host,
        port=port,
        keys=keys,
        limits=Limits(
            max_body_bytes=max_body_bytes,
            max_documents=max_documents,
            max_document_bytes=max_document_bytes,
            queue_documents=queue_size,
            queue_bytes=queue_bytes,
            max_duplicates=max_duplicates,
        ),
        commit_delay=commit_delay,
        max_group=max_group,
        synchronous=synchronous,
        access_log=access_log,
        **extra,
    )
    # create or check the store with the options given, then let the service reopen it
    with open_index(
        index_path,
        method,
        threshold,
        num_perm=num_perm,
        bits=bits,
        canonicalize=canonical,
        ngram=ngram,
        seed=seed,
        bands=bands,
        rows=rows,
    ) as idx:
        m = idx.method
        held = len(idx)
    _server_logs(access_log)

    def ready(url: str) -> None:
        auth = "API keys required" if keys is not None else "loopback, no keys"
        click.echo(
            f"neardup serve: listening on {url} ({m.name}, threshold {m.threshold:g}, "
            f"{held} documents; {auth})",
            err=True,
        )

    stopped = run(config, m, on_ready=ready)
    if stopped:
        click.echo(
            f"neardup serve: {signal.Signals(stopped).name}: drained; every acknowledged "
            "document is committed",
            err=True,
        )
    if stopped == signal.SIGINT:
        raise click.exceptions.Exit(130)


def _server_logs(access_log: bool) -> None:
    """uvicorn's warnings (and the access log, if asked) on the CLI's stderr handler."""
    ours = logging.getLogger("neardup")
    handler = ours.handlers[0] if ours.handlers else logging.StreamHandler(sys.stderr)
    for name, level in (("uvicorn.error", logging.WARNING), ("uvicorn.access", logging.INFO)):
        log = logging.getLogger(name)
        log.handlers[:] = [handler]
        log.setLevel(min(level, ours.level) if name == "uvicorn.error" else level)
        log.propagate = False
    logging.getLogger("uvicorn.access").disabled = not access_log
