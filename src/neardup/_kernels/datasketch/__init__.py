"""The datasketch kernel family: datasketch 2.0.0's default MinHash of Python token lists.

datasketch hashes each token with SHA-1 (the first 4 bytes, or 8 for ``affine64``, read
little-endian: ``sha1_hash32`` / ``sha1_hash64``) and keeps, per slot, the minimum of a
permutation of those hashes (:mod:`neardup.sketch.tokensets` states the schemes). These
kernels take the tokens as they come, lists of ``bytes`` (or ``str``, as their UTF-8 bytes,
where the caller allows it), with no packing pass in Python: the native module reads each
token's bytes in place. ``reference.py`` is the numpy twin (``hashlib``).
"""
