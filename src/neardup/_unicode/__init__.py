"""The Unicode tables the text kernels take: their flag bits, the cached tables of this process
(``engine.kernels("unicode")``: embedded in the compiled core, or built by its numpy twin) and
the builders from the running Python's :mod:`unicodedata` (the twin's)."""
