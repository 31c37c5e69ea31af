"""The xxh3 kernel family: ``reference.py`` (the xxhash package) and ``neardup._native.xxh3``.

Pick one with :func:`neardup._kernels.engine.kernels` (``kernels("xxh3")``).
"""
