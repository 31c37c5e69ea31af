"""The lsh kernel family: the band-key hash table of :class:`neardup.index.lsh.LSHIndex`.

``reference.py`` (Python and numpy) and ``fast.py`` (numba) give the same tables and hits;
pick one with :func:`neardup._kernels.engine.kernels` (``kernels("lsh")``).

The table is open addressing with linear probing over a power-of-two number of slots:
``tkeys[s]`` holds a 64-bit band key (the key of band ``j`` is seeded by ``j``, so one table
serves every band) and ``thead[s]`` the last entry filed under it (-1: empty slot). Entry
``e`` is a row number ``erow[e]`` and the previous entry of its key, ``enext[e]`` (-1: none),
so each key's rows form a chain, newest first. ``meta`` holds the counts the kernels update:
``[slots used, entries used, query stamp]``; ``mark`` (one int64 per row) de-duplicates a
query's candidates without clearing anything between queries.
"""
