"""The unicode kernel family: the Unicode lookup tables the text kernels take.

``reference.py`` builds them from the running Python's :mod:`unicodedata` (a Python loop over
every code point, about a second); the compiled core carries the same tables, generated from
Python 3.11's Unicode 14.0 by ``scripts/unicode_tables.py`` and embedded in the crate, so a
process neither builds them nor writes a cache. Pick one with
:func:`neardup._kernels.engine.kernels` (``kernels("unicode")``).
"""
