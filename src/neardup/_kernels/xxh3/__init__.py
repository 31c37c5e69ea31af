"""The xxh3 kernel family: ``reference.py`` (the xxhash package) and ``fast.py`` (numba).

Pick one with :func:`neardup._kernels.engine.kernels` (``kernels("xxh3")``).
"""
