"""The MinHash build knobs a new index stores (shingle size, seed, banding), and the check that
knobs given for an existing index agree with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.methods import Method
    from neardup.store.persistent import PersistentIndex

__all__ = ["KNOB_FLAGS", "check_knobs", "open_with_knobs"]

#: The stored MinHash knobs by method keyword, and the options that set them.
KNOB_FLAGS = {"k": "--ngram", "seed": "--seed", "bands": "--bands", "rows": "--rows"}


def check_knobs(method: Method, path: str, knobs: dict[str, int | None]) -> None:
    """Refuse a knob (``k``, ``seed``, ``bands``, ``rows``; ``None``: not given) that
    contradicts what the index at ``path`` uses, its planned banding and default seed included.

    Raises:
        ConfigError: a knob given for an index whose method is not minhash, or one whose
            value differs from the index's.
    """
    given: dict[str, Any] = {k: v for k, v in knobs.items() if v is not None}
    if not given:
        return
    if method.name != "minhash":
        flags = ", ".join(KNOB_FLAGS[k] for k in given)
        raise ConfigError(
            f"{flags} apply to minhash; the index {path!r} holds {method.name}: drop the option"
        )
    from neardup.sketch.minhash import TXTFP_SEED

    config = method.config.to_dict()
    have = {
        "k": config["k"],
        "seed": TXTFP_SEED if config["seed"] is None else config["seed"],
        "bands": getattr(method, "bands", None),
        "rows": getattr(method, "rows", None),
    }
    for name, value in given.items():
        if have[name] != value:
            raise ConfigError(
                f"{KNOB_FLAGS[name]} {value} contradicts the index's {have[name]} ({path!r}); "
                "drop the option to use the index's, or give another index file"
            )


def open_with_knobs(
    path: str,
    knobs: dict[str, int | None],
    *,
    check: Callable[[Method, str, dict[str, int | None]], None] = check_knobs,
    **options: Any,
) -> PersistentIndex:
    """:meth:`PersistentIndex.open <neardup.store.persistent.PersistentIndex.open>` with the
    knobs: a new index stores those given; an existing one is opened with its own, and
    ``check`` (default :func:`check_knobs`) refuses a given knob that contradicts them (the
    index is closed again then).

    Raises:
        ConfigError: from ``check``, and what ``PersistentIndex.open`` raises.
    """
    import os

    from neardup.store.persistent import PersistentIndex

    create = options.get("create", True) and not options.get("readonly", False)
    new = create and not os.path.exists(path)
    given: dict[str, Any] = {k: v for k, v in knobs.items() if v is not None}
    index = PersistentIndex.open(path, **options, **(given if new else {}))
    if not new:
        try:
            check(index.method, path, knobs)
        except BaseException:
            index.close()
            raise
    return index
