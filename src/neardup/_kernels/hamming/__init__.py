"""The hamming kernel family: ``reference.py`` (numpy) and ``fast.py`` (numba), same bits.

Pick one with :func:`neardup._kernels.engine.kernels` (``kernels("hamming")``).
"""
