"""How the commands read their inputs: the command options to a
:class:`~neardup.corpus.reading.Corpus`, whose documents (ids kept unique) they process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neardup.io import Document
    from neardup.readers import ReadStats

__all__ = ["documents", "images", "plain_jsonl"]


def documents(
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
    images_only: bool = False,
    stats: ReadStats | None = None,
) -> Iterator[Document]:
    """The documents of ``paths``, read with the commands' options (ids kept unique:
    :meth:`neardup.corpus.reading.Corpus.documents`)."""
    from neardup.corpus.reading import read_corpus

    corpus = read_corpus(
        paths,
        text_field=text_field,
        id_field=id_field,
        include=include,
        exclude=exclude,
        input_format=input_format,
        main_content=main_content,
        follow_symlinks=follow_symlinks,
        on_error=on_error,
    )
    return corpus.documents(
        binary=binary, keep_fields=keep_fields, images_only=images_only, stats=stats
    )


def images(method: str) -> bool:
    """Whether ``method`` reads images (then folder walks pick image files only)."""
    from neardup.methods import REGISTRY

    info = REGISTRY.get(method)
    return info is not None and info.images


def plain_jsonl(
    paths: tuple[str, ...], text_fields: tuple[str, ...], id_field: str | None, on_error: str
) -> bool:
    """Whether the input is one plain ``.jsonl`` file that the packed JSONL reader takes
    (:attr:`neardup.corpus.reading.Corpus.packable`)."""
    from neardup.corpus.reading import read_corpus

    corpus = read_corpus(paths, text_field=text_fields, id_field=id_field, on_error=on_error)
    return corpus.packable
