"""The minhash kernel family: ``reference.py`` (numpy) and ``neardup._native``, same bits.

Pick one with :func:`neardup._kernels.engine.kernels` (``kernels("minhash")``).
"""
