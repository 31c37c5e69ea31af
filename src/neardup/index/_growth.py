"""Growing the indexes' row arrays and band-key tables with as few copies and page faults as
possible (shared by :mod:`neardup.index.lsh` and :mod:`neardup.index.hamming`).

Page faults dominate growth on small VMs (a first touch of a page costs 4 to 46 µs there): a
fresh copy faults in every kept page again, ``ndarray.resize`` (``realloc``) moves them.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels import engine
from neardup._kernels.lsh import plan_growth

__all__ = ["grow_array", "grow_table"]


def grow_array(owner: object, name: str, shape: tuple[int, ...], n: int) -> None:
    """Give ``owner``'s array attribute ``name`` ``shape`` (more rows), its first ``n`` rows
    kept, the new rows zero.

    In place when nothing else refers to it (``realloc``: the kept pages are neither copied
    nor faulted in again; numpy refuses when another reference exists), else a zeroed copy.
    """
    a = owner.__dict__.pop(name)
    try:
        a.resize(shape)
    except ValueError:
        out = np.zeros(shape, dtype=a.dtype)
        out[:n] = a[:n]
        a = out
    setattr(owner, name, a)


def grow_table(owner: object, more: int, name: str = "_tab") -> None:
    """Room in ``owner``'s band-key table (attribute ``name``, layout in
    :mod:`neardup._kernels.lsh`) for ``more`` entries, its slots at most 3/4 full.

    New slots mean a rehash (the kernel ``grow``); more entries alone extend the array in
    place (the entries are its tail), so the table is neither rehashed nor copied.
    """
    tab = owner.__dict__[name]
    used, entries, slots, cap, base = tab[[0, 1, 3, 4, 7]].tolist()
    new_slots, new_cap = plan_growth(used, entries, slots, cap, more)
    if new_slots != slots:
        setattr(owner, name, engine.kernels("lsh").grow(tab, new_slots, new_cap))
    elif new_cap != cap:
        del tab
        grow_array(owner, name, (base + 2 * slots + 2 * new_cap,), base + 2 * slots + 2 * cap)
        owner.__dict__[name][4] = new_cap
