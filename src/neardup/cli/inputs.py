"""How the commands read their inputs: paths in, :class:`~neardup.io.Document` records out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neardup.io import Document
    from neardup.readers import ReadStats

__all__ = ["documents", "one_jsonl", "plain_jsonl"]


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
    """The documents of ``paths``, read with the commands' options (ids kept unique).

    ``images_only`` (an image method): a folder walk picks image files, and counts the rest.
    """
    from neardup.io import _UniqueIds
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
        images_only=images_only,
    )
    # a record id repeated in the data is refused (the readers keep ids unique across roots)
    return _UniqueIds().check(read_documents(paths, options, stats=stats), ", ".join(paths))


def images(method: str) -> bool:
    """Whether ``method`` reads images (then folder walks pick image files only)."""
    from neardup.methods import REGISTRY

    info = REGISTRY.get(method)
    return info is not None and info.images


def one_jsonl(paths: tuple[str, ...]) -> bool:
    """Whether the input is one plain ``.jsonl`` file."""
    return len(paths) == 1 and paths[0].lower().endswith(".jsonl") and Path(paths[0]).is_file()


def plain_jsonl(
    paths: tuple[str, ...], text_fields: tuple[str, ...], id_field: str | None, on_error: str
) -> bool:
    """Whether the input is one plain ``.jsonl`` file that the packed JSONL reader takes:
    one top-level text field, a top-level id field, and bad records stopping the run (the
    packed reader skips none)."""
    if len(text_fields) != 1 or on_error != "fail" or not one_jsonl(paths):
        return False
    return "." not in text_fields[0] + (id_field or "id")
