"""The pdq kernel family: the native module ``neardup._native.pdq`` and its numpy twin
``reference.py``, same bits.

Pick one with :func:`neardup._kernels.engine.kernels` (``kernels("pdq")``). Both hold
Meta's PDQ steps on float32 luma: the Jarosz box-filter downsample to 64x64, the quality
metric and the 16x16 DCT; :mod:`neardup.image.pdqhashing` turns the DCT into bits.
"""
