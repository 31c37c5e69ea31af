"""XXH3-64 and XXH3-128 as numba kernels over slices of a uint8 buffer, bit-exact with xxhash.

The algorithm follows the XXH3 specification by Yann Collet ("xxHash fast digest algorithm",
``doc/xxhash_spec.md`` in https://github.com/Cyan4973/xxHash) and the reference implementation
``xxhash.h`` (v0.8.x, the version bundled by python-xxhash >= 3.0): the 0, 1-3, 4-8, 9-16,
17-128 and 129-240 byte paths keyed by the default secret plus the seed, and the long-input path
(> 240 bytes: 64-byte stripes, 1024-byte blocks, eight accumulators, scrambling) keyed by the
secret that ``XXH3_initCustomSecret`` derives from the seed (for seed 0 that is the default
secret itself).

Every ``@njit`` function here can be called from other numba kernels. Arguments and results:
``buf`` is a 1-d ``uint8`` array, ``start`` / ``end`` are integer offsets (the hashed bytes are
``buf[start:end]``), ``seed`` is a ``uint64`` (other integer types are reinterpreted as 64-bit
unsigned). All arithmetic stays in ``np.uint64`` (mixing in a Python or int64 integer would make
numba promote to float64), and 64x64 -> 128-bit products are built from 32-bit halves. The Python
annotations describe the numba types and are ignored by numba. Nothing is compiled at import
time; each kernel is compiled on its first call and cached on disk.

Inlining: byte reads use unsigned offsets (no negative-index wraparound, so LLVM merges them
into single loads). The entry points ``xxh3_64`` / ``xxh3_128`` and the <= 240-byte paths are
inlined into their numba callers at the IR level (``inline="always"``): an out-of-line call costs
about as much as hashing a short shingle. The long-input path and the helpers stay
``inline="never"`` (LLVM still inlines the small ones), which keeps callers' compile times down.

The ``*_bytes`` functions at the end are plain Python wrappers for tests and one-off use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit
from neardup.errors import ConfigError

__all__ = [
    "xxh3_64",
    "xxh3_64_bytes",
    "xxh3_64_ranges",
    "xxh3_128",
    "xxh3_128_bytes",
    "xxh3_128_ranges",
]

_F = TypeVar("_F", bound=Callable[..., Any])

U8Array = npt.NDArray[np.uint8]
U64Array = npt.NDArray[np.uint64]
IndexArray = npt.NDArray[np.integer[Any]]


def _kernel(fn: _F) -> _F:
    """Wrap ``fn`` in a lazily compiled, disk-cached numba dispatcher (nothing compiles here)."""
    return cast(_F, njit(inline="never")(fn))


def _inlined_kernel(fn: _F) -> _F:
    """Like :func:`_kernel`, but inlined into numba callers at the IR level."""
    return cast(_F, njit(inline="always")(fn))


# The default 192-byte secret (kSecret), from the specification; numba freezes it as a constant.
_KSECRET: U8Array = np.frombuffer(
    bytes.fromhex(
        "b8 fe 6c 39 23 a4 4b be 7c 01 81 2c f7 21 ad 1c"
        "de d4 6d e9 83 90 97 db 72 40 a4 a4 b7 b3 67 1f"
        "cb 79 e6 4e cc c0 e5 78 82 5a d0 7d cc ff 72 21"
        "b8 08 46 74 f7 43 24 8e e0 35 90 e6 81 3a 26 4c"
        "3c 28 52 bb 91 c3 00 cb 88 d0 65 8b 1b 53 2e a3"
        "71 64 48 97 a2 0d f9 4e 38 19 ef 46 a9 de ac d8"
        "a8 fa 76 3f e3 9c 34 3f f9 dc bb c7 c7 0b 4f 1d"
        "8a 51 e0 4b cd b4 59 31 c8 9f 7e c9 d9 78 73 64"
        "ea c5 ac 83 34 d3 eb c3 c5 81 a0 ff fa 13 63 eb"
        "17 0d dd 51 b7 f0 da 49 d3 16 55 26 29 d4 68 9e"
        "2b 16 be 58 7d 47 a1 fc 8f f8 b8 d1 7a d0 31 ce"
        "45 cb 3a 8f 95 16 04 28 af d7 fb ca bb 4b 40 7e"
    ),
    dtype=np.uint8,
)  # read-only

_SECRET_SIZE = 192  # bytes in the default (and in every seed-derived) secret
_STRIPE_LEN = 64  # bytes in one stripe of the long-input path
_STRIPES_PER_BLOCK = (_SECRET_SIZE - _STRIPE_LEN) // 8  # 16
_BLOCK_LEN = _STRIPE_LEN * _STRIPES_PER_BLOCK  # 1024
_MIDSIZE_MAX = 240  # longest input of the medium path

_PRIME32_1 = np.uint64(0x9E3779B1)
_PRIME32_2 = np.uint64(0x85EBCA77)
_PRIME32_3 = np.uint64(0xC2B2AE3D)
_PRIME64_1 = np.uint64(0x9E3779B185EBCA87)
_PRIME64_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_PRIME64_3 = np.uint64(0x165667B19E3779F9)
_PRIME64_4 = np.uint64(0x85EBCA77C2B2AE63)
_PRIME64_5 = np.uint64(0x27D4EB2F165667C5)
_PRIME_MX1 = np.uint64(0x165667919E3779F9)
_PRIME_MX2 = np.uint64(0x9FB21C651E98DF25)

_ZERO = np.uint64(0)
_MASK8 = np.uint64(0xFF)
_MASK32 = np.uint64(0xFFFFFFFF)
_SH1 = np.uint64(1)
_SH2 = np.uint64(2)
_SH3 = np.uint64(3)
_SH8 = np.uint64(8)
_SH13 = np.uint64(13)
_SH16 = np.uint64(16)
_SH19 = np.uint64(19)
_SH24 = np.uint64(24)
_SH28 = np.uint64(28)
_SH29 = np.uint64(29)
_SH32 = np.uint64(32)
_SH33 = np.uint64(33)
_SH35 = np.uint64(35)
_SH37 = np.uint64(37)
_SH40 = np.uint64(40)
_SH47 = np.uint64(47)
_SH48 = np.uint64(48)
_SH49 = np.uint64(49)
_SH54 = np.uint64(54)
_SH56 = np.uint64(56)
_SH64 = np.uint64(64)
_OFF = tuple(np.uint64(k) for k in range(8))  # unsigned byte offsets 0..7


# --------------------------------------------------------------------------- primitives


@_kernel
def _read32(buf: U8Array, i: int) -> np.uint64:
    """Little-endian 32-bit word at ``buf[i:i + 4]``, widened to uint64.

    The offsets are unsigned so that numba emits no negative-index wraparound and LLVM can
    merge the byte loads into one load (signed offsets make this several times slower).
    """
    j = np.uint64(i)
    return (
        np.uint64(buf[j])
        | (np.uint64(buf[j + _OFF[1]]) << _SH8)
        | (np.uint64(buf[j + _OFF[2]]) << _SH16)
        | (np.uint64(buf[j + _OFF[3]]) << _SH24)
    )


@_kernel
def _read64(buf: U8Array, i: int) -> np.uint64:
    """Little-endian 64-bit word at ``buf[i:i + 8]`` (unsigned offsets, as in :func:`_read32`)."""
    j = np.uint64(i)
    return (
        np.uint64(buf[j])
        | (np.uint64(buf[j + _OFF[1]]) << _SH8)
        | (np.uint64(buf[j + _OFF[2]]) << _SH16)
        | (np.uint64(buf[j + _OFF[3]]) << _SH24)
        | (np.uint64(buf[j + _OFF[4]]) << _SH32)
        | (np.uint64(buf[j + _OFF[5]]) << _SH40)
        | (np.uint64(buf[j + _OFF[6]]) << _SH48)
        | (np.uint64(buf[j + _OFF[7]]) << _SH56)
    )


@_kernel
def _rotl64(x: np.uint64, r: np.uint64) -> np.uint64:
    """Rotate the 64-bit ``x`` left by ``r`` bits (0 < r < 64)."""
    return (x << r) | (x >> (_SH64 - r))


@_kernel
def _bswap32(x: np.uint64) -> np.uint64:
    """Byte-swap the low 32 bits of ``x`` (the high 32 bits must be zero)."""
    return (
        ((x & _MASK8) << _SH24)
        | (((x >> _SH8) & _MASK8) << _SH16)
        | (((x >> _SH16) & _MASK8) << _SH8)
        | ((x >> _SH24) & _MASK8)
    )


@_kernel
def _bswap64(x: np.uint64) -> np.uint64:
    """Byte-swap the 64-bit ``x``."""
    return (_bswap32(x & _MASK32) << _SH32) | _bswap32(x >> _SH32)


@_kernel
def _mul128(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """Full 64x64 -> 128-bit product of ``a`` and ``b`` as ``(low, high)``, via 32-bit halves."""
    a_lo = a & _MASK32
    a_hi = a >> _SH32
    b_lo = b & _MASK32
    b_hi = b >> _SH32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> _SH32) + (hi_lo & _MASK32) + lo_hi
    high = (hi_lo >> _SH32) + (cross >> _SH32) + hi_hi
    low = (cross << _SH32) | (lo_lo & _MASK32)
    return low, high


@_kernel
def _mul128_fold64(a: np.uint64, b: np.uint64) -> np.uint64:
    """XXH3_mul128_fold64: the low and high halves of the 128-bit ``a * b``, xored."""
    low, high = _mul128(a, b)
    return low ^ high


@_kernel
def _xxh64_avalanche(h: np.uint64) -> np.uint64:
    """XXH64's final mix (``avalanche_XXH64`` in the specification)."""
    h = h ^ (h >> _SH33)
    h = h * _PRIME64_2
    h = h ^ (h >> _SH29)
    h = h * _PRIME64_3
    return h ^ (h >> _SH32)


@_kernel
def _avalanche(h: np.uint64) -> np.uint64:
    """XXH3's final mix (``avalanche`` in the specification)."""
    h = h ^ (h >> _SH37)
    h = h * _PRIME_MX1
    return h ^ (h >> _SH32)


@_kernel
def _rrmxmx(h: np.uint64, length: np.uint64) -> np.uint64:
    """XXH3_rrmxmx, the stronger final mix of the 64-bit 4-8 byte path."""
    h = h ^ _rotl64(h, _SH49) ^ _rotl64(h, _SH24)
    h = h * _PRIME_MX2
    h = h ^ ((h >> _SH35) + length)
    h = h * _PRIME_MX2
    return h ^ (h >> _SH28)


@_kernel
def _mix16(buf: U8Array, i: int, secret: U8Array, s: int, seed: np.uint64) -> np.uint64:
    """XXH3_mix16B: mix ``buf[i:i + 16]`` with ``secret[s:s + 16]`` and the seed."""
    lo = _read64(buf, i) ^ (_read64(secret, s) + seed)
    hi = _read64(buf, i + 8) ^ (_read64(secret, s + 8) - seed)
    return _mul128_fold64(lo, hi)


# --------------------------------------------------------------------------- 64-bit, <= 240 bytes


@_inlined_kernel
def _short_64(buf: U8Array, start: int, length: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of ``buf[start:start + length]`` for ``length <= 240`` (default secret + seed)."""
    ln = np.uint64(length)
    sec = _KSECRET
    if length == 0:
        return _xxh64_avalanche(seed ^ _read64(sec, 56) ^ _read64(sec, 64))
    if length <= 3:
        c1 = np.uint64(buf[start])
        c2 = np.uint64(buf[start + (length >> 1)])
        c3 = np.uint64(buf[start + length - 1])
        combined = (c1 << _SH16) | (c2 << _SH24) | c3 | (ln << _SH8)
        bitflip = (_read32(sec, 0) ^ _read32(sec, 4)) + seed
        return _xxh64_avalanche(combined ^ bitflip)
    if length <= 8:
        seed2 = seed ^ (_bswap32(seed & _MASK32) << _SH32)
        first = _read32(buf, start)
        last = _read32(buf, start + length - 4)
        bitflip = (_read64(sec, 8) ^ _read64(sec, 16)) - seed2
        return _rrmxmx((last + (first << _SH32)) ^ bitflip, ln)
    if length <= 16:
        bitflip1 = (_read64(sec, 24) ^ _read64(sec, 32)) + seed
        bitflip2 = (_read64(sec, 40) ^ _read64(sec, 48)) - seed
        lo = _read64(buf, start) ^ bitflip1
        hi = _read64(buf, start + length - 8) ^ bitflip2
        return _avalanche(ln + _bswap64(lo) + hi + _mul128_fold64(lo, hi))
    acc = ln * _PRIME64_1
    if length <= 128:
        rounds = ((length - 1) >> 5) + 1
        for r in range(rounds - 1, -1, -1):
            acc += _mix16(buf, start + 16 * r, sec, 32 * r, seed)
            acc += _mix16(buf, start + length - 16 * r - 16, sec, 32 * r + 16, seed)
        return _avalanche(acc)
    for r in range(8):
        acc += _mix16(buf, start + 16 * r, sec, 16 * r, seed)
    acc = _avalanche(acc)
    for r in range(8, length >> 4):
        acc += _mix16(buf, start + 16 * r, sec, 16 * (r - 8) + 3, seed)
    acc += _mix16(buf, start + length - 16, sec, 136 - 17, seed)
    return _avalanche(acc)


# --------------------------------------------------------------------------- 128-bit, <= 240 bytes


@_kernel
def _mix32(
    acc: tuple[np.uint64, np.uint64], buf: U8Array, i1: int, i2: int, s: int, seed: np.uint64
) -> tuple[np.uint64, np.uint64]:
    """XXH128_mix32B: fold the 16-byte chunks at ``i1`` and ``i2`` into the accumulator pair.

    Keyed by ``_KSECRET[s:s + 32]`` plus the seed (only the medium paths use it).
    """
    acc_lo = acc[0] + _mix16(buf, i1, _KSECRET, s, seed)
    acc_lo = acc_lo ^ (_read64(buf, i2) + _read64(buf, i2 + 8))
    acc_hi = acc[1] + _mix16(buf, i2, _KSECRET, s + 16, seed)
    acc_hi = acc_hi ^ (_read64(buf, i1) + _read64(buf, i1 + 8))
    return acc_lo, acc_hi


@_inlined_kernel
def _short_128(
    buf: U8Array, start: int, length: int, seed: np.uint64
) -> tuple[np.uint64, np.uint64]:
    """XXH3-128 ``(low, high)`` of ``buf[start:start + length]`` for ``length <= 240``."""
    ln = np.uint64(length)
    sec = _KSECRET
    if length == 0:
        lo = _xxh64_avalanche(seed ^ _read64(sec, 64) ^ _read64(sec, 72))
        hi = _xxh64_avalanche(seed ^ _read64(sec, 80) ^ _read64(sec, 88))
        return lo, hi
    if length <= 3:
        c1 = np.uint64(buf[start])
        c2 = np.uint64(buf[start + (length >> 1)])
        c3 = np.uint64(buf[start + length - 1])
        combined_lo = (c1 << _SH16) | (c2 << _SH24) | c3 | (ln << _SH8)
        # 32-bit rotate left by 13 of the byte-swapped combined value.
        swapped = _bswap32(combined_lo)
        combined_hi = ((swapped << _SH13) | (swapped >> _SH19)) & _MASK32
        bitflip_lo = (_read32(sec, 0) ^ _read32(sec, 4)) + seed
        bitflip_hi = (_read32(sec, 8) ^ _read32(sec, 12)) - seed
        lo = _xxh64_avalanche(combined_lo ^ bitflip_lo)
        hi = _xxh64_avalanche(combined_hi ^ bitflip_hi)
        return lo, hi
    if length <= 8:
        seed2 = seed ^ (_bswap32(seed & _MASK32) << _SH32)
        first = _read32(buf, start)
        last = _read32(buf, start + length - 4)
        bitflip = (_read64(sec, 16) ^ _read64(sec, 24)) + seed2
        keyed = (first + (last << _SH32)) ^ bitflip
        lo, hi = _mul128(keyed, _PRIME64_1 + (ln << _SH2))
        hi = hi + (lo << _SH1)
        lo = lo ^ (hi >> _SH3)
        lo = lo ^ (lo >> _SH35)
        lo = lo * _PRIME_MX2
        lo = lo ^ (lo >> _SH28)
        return lo, _avalanche(hi)
    if length <= 16:
        bitflip_lo = (_read64(sec, 32) ^ _read64(sec, 40)) - seed
        bitflip_hi = (_read64(sec, 48) ^ _read64(sec, 56)) + seed
        input_lo = _read64(buf, start)
        input_hi = _read64(buf, start + length - 8)
        m_lo, m_hi = _mul128(input_lo ^ input_hi ^ bitflip_lo, _PRIME64_1)
        m_lo = m_lo + ((ln - _SH1) << _SH54)
        input_hi = input_hi ^ bitflip_hi
        m_hi = m_hi + input_hi + (input_hi & _MASK32) * (_PRIME32_2 - _SH1)
        m_lo = m_lo ^ _bswap64(m_hi)
        lo, hi = _mul128(m_lo, _PRIME64_2)
        hi = hi + m_hi * _PRIME64_2
        return _avalanche(lo), _avalanche(hi)
    acc = (ln * _PRIME64_1, _ZERO)
    end = start + length
    if length <= 128:
        for r in range(((length - 1) >> 5), -1, -1):
            acc = _mix32(acc, buf, start + 16 * r, end - 16 * r - 16, 32 * r, seed)
    else:
        for r in range(4):
            acc = _mix32(acc, buf, start + 32 * r, start + 32 * r + 16, 32 * r, seed)
        acc = (_avalanche(acc[0]), _avalanche(acc[1]))
        for r in range(4, length >> 5):
            acc = _mix32(acc, buf, start + 32 * r, start + 32 * r + 16, 32 * (r - 4) + 3, seed)
        # The last 32 bytes, halves swapped and the seed negated (as in xxhash.h).
        acc = _mix32(acc, buf, end - 16, end - 32, 136 - 17 - 16, _ZERO - seed)
    acc_lo, acc_hi = acc
    lo = acc_lo + acc_hi
    hi = acc_lo * _PRIME64_1 + acc_hi * _PRIME64_4 + (ln - seed) * _PRIME64_2
    return _avalanche(lo), _ZERO - _avalanche(hi)


# --------------------------------------------------------------------------- long inputs (> 240)


@_kernel
def _init_custom_secret(seed: np.uint64) -> U8Array:
    """XXH3_initCustomSecret: the 192-byte secret of the long path for ``seed``.

    Adds the seed to the even and subtracts it from the odd 64-bit little-endian words of the
    default secret. For seed 0 the result equals the default secret.
    """
    out = np.empty(_SECRET_SIZE, dtype=np.uint8)
    for w in range(_SECRET_SIZE // 8):
        v = _read64(_KSECRET, 8 * w)
        v = v + seed if w % 2 == 0 else v - seed
        for b in range(8):
            out[8 * w + b] = np.uint8((v >> np.uint64(8 * b)) & _MASK8)
    return out


@_kernel
def _accumulate_512(acc: U64Array, buf: U8Array, i: int, secret: U8Array, s: int) -> None:
    """XXH3_accumulate_512: fold the 64-byte stripe at ``buf[i]`` into the eight accumulators."""
    for lane in range(8):
        data_val = _read64(buf, i + 8 * lane)
        data_key = data_val ^ _read64(secret, s + 8 * lane)
        acc[lane ^ 1] += data_val
        acc[lane] += (data_key & _MASK32) * (data_key >> _SH32)


@_kernel
def _scramble(acc: U64Array, secret: U8Array) -> None:
    """XXH3_scrambleAcc with the last 64 bytes of the secret."""
    s = _SECRET_SIZE - _STRIPE_LEN
    for lane in range(8):
        a = acc[lane]
        a = a ^ (a >> _SH47)
        a = a ^ _read64(secret, s + 8 * lane)
        acc[lane] = a * _PRIME32_1


@_kernel
def _long_acc(buf: U8Array, start: int, length: int, secret: U8Array) -> U64Array:
    """The eight accumulators after XXH3_hashLong_internal_loop over ``length > 240`` bytes."""
    acc = np.empty(8, dtype=np.uint64)
    acc[0] = _PRIME32_3
    acc[1] = _PRIME64_1
    acc[2] = _PRIME64_2
    acc[3] = _PRIME64_3
    acc[4] = _PRIME64_4
    acc[5] = _PRIME32_2
    acc[6] = _PRIME64_5
    acc[7] = _PRIME32_1
    n_blocks = (length - 1) // _BLOCK_LEN
    for n in range(n_blocks):
        block = start + n * _BLOCK_LEN
        for k in range(_STRIPES_PER_BLOCK):
            _accumulate_512(acc, buf, block + k * _STRIPE_LEN, secret, 8 * k)
        _scramble(acc, secret)
    # The last, possibly partial, block: its full stripes except the last one ...
    block = start + n_blocks * _BLOCK_LEN
    n_stripes = ((length - 1) - _BLOCK_LEN * n_blocks) // _STRIPE_LEN
    for k in range(n_stripes):
        _accumulate_512(acc, buf, block + k * _STRIPE_LEN, secret, 8 * k)
    # ... then the last 64 bytes of the input (XXH_SECRET_LASTACC_START = 7).
    _accumulate_512(acc, buf, start + length - _STRIPE_LEN, secret, _SECRET_SIZE - _STRIPE_LEN - 7)
    return acc


@_kernel
def _merge_accs(acc: U64Array, secret: U8Array, s: int, init: np.uint64) -> np.uint64:
    """XXH3_mergeAccs: fold the accumulators with ``secret[s:s + 64]`` into one 64-bit value."""
    result = init
    for i in range(4):
        result += _mul128_fold64(
            acc[2 * i] ^ _read64(secret, s + 16 * i),
            acc[2 * i + 1] ^ _read64(secret, s + 16 * i + 8),
        )
    return _avalanche(result)


@_kernel
def _long_64(buf: U8Array, start: int, length: int, secret: U8Array) -> np.uint64:
    """XXH3-64 of ``length > 240`` bytes with a 192-byte (default or seed-derived) secret."""
    acc = _long_acc(buf, start, length, secret)
    return _merge_accs(acc, secret, 11, np.uint64(length) * _PRIME64_1)


@_kernel
def _long_128(
    buf: U8Array, start: int, length: int, secret: U8Array
) -> tuple[np.uint64, np.uint64]:
    """XXH3-128 ``(low, high)`` of ``length > 240`` bytes with a 192-byte secret."""
    acc = _long_acc(buf, start, length, secret)
    ln = np.uint64(length)
    lo = _merge_accs(acc, secret, 11, ln * _PRIME64_1)
    hi = _merge_accs(acc, secret, _SECRET_SIZE - _STRIPE_LEN - 11, ~(ln * _PRIME64_2))
    return lo, hi


# --------------------------------------------------------------------------- kernel entry points


@_inlined_kernel
def xxh3_64(buf: U8Array, start: int, end: int, seed: np.uint64) -> np.uint64:
    """XXH3-64 of ``buf[start:end]`` with a 64-bit seed; equals ``xxhash.xxh3_64_intdigest``.

    Args:
        buf: 1-d uint8 array.
        start: first byte offset.
        end: one past the last byte offset (``start <= end <= len(buf)``; not checked).
        seed: the seed, as uint64.

    Returns:
        The hash as a uint64.
    """
    useed = np.uint64(seed)
    length = end - start
    if length <= _MIDSIZE_MAX:
        return _short_64(buf, start, length, useed)
    if useed == _ZERO:
        return _long_64(buf, start, length, _KSECRET)
    return _long_64(buf, start, length, _init_custom_secret(useed))


@_inlined_kernel
def xxh3_128(buf: U8Array, start: int, end: int, seed: np.uint64) -> tuple[np.uint64, np.uint64]:
    """XXH3-128 of ``buf[start:end]`` as ``(low, high)`` uint64 halves.

    ``(high << 64) | low`` equals ``xxhash.xxh3_128_intdigest(bytes(buf[start:end]), seed)``.
    Arguments as for :func:`xxh3_64`.
    """
    useed = np.uint64(seed)
    length = end - start
    if length <= _MIDSIZE_MAX:
        return _short_128(buf, start, length, useed)
    if useed == _ZERO:
        return _long_128(buf, start, length, _KSECRET)
    return _long_128(buf, start, length, _init_custom_secret(useed))


@_kernel
def xxh3_64_ranges(buf: U8Array, starts: IndexArray, ends: IndexArray, seed: np.uint64) -> U64Array:
    """XXH3-64 of every ``buf[starts[i]:ends[i]]``, one seed for all.

    The seed-derived secret of the long path is computed once per call.

    Returns:
        A uint64 array with one hash per range.
    """
    useed = np.uint64(seed)
    secret = _init_custom_secret(useed)
    n = starts.shape[0]
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        start = starts[i]
        length = ends[i] - start
        if length <= _MIDSIZE_MAX:
            out[i] = _short_64(buf, start, length, useed)
        else:
            out[i] = _long_64(buf, start, length, secret)
    return out


@_kernel
def xxh3_128_ranges(
    buf: U8Array, starts: IndexArray, ends: IndexArray, seed: np.uint64
) -> tuple[U64Array, U64Array]:
    """XXH3-128 of every ``buf[starts[i]:ends[i]]`` as two uint64 arrays ``(low, high)``."""
    useed = np.uint64(seed)
    secret = _init_custom_secret(useed)
    n = starts.shape[0]
    lo = np.empty(n, dtype=np.uint64)
    hi = np.empty(n, dtype=np.uint64)
    for i in range(n):
        start = starts[i]
        length = ends[i] - start
        if length <= _MIDSIZE_MAX:
            lo[i], hi[i] = _short_128(buf, start, length, useed)
        else:
            lo[i], hi[i] = _long_128(buf, start, length, secret)
    return lo, hi


# --------------------------------------------------------------------------- Python wrappers


def _as_seed(seed: int) -> np.uint64:
    if not 0 <= seed < 1 << 64:
        msg = f"seed must be in [0, 2**64), got {seed}; reduce it modulo 2**64"
        raise ConfigError(msg)
    return np.uint64(seed)


def _as_buffer(data: bytes) -> U8Array:
    return np.frombuffer(data, dtype=np.uint8)


def xxh3_64_bytes(data: bytes, seed: int = 0) -> int:
    """XXH3-64 of ``data``, computed by the numba kernel.

    Examples:
        >>> import xxhash
        >>> xxh3_64_bytes(b"abc", seed=7) == xxhash.xxh3_64_intdigest(b"abc", 7)
        True
    """
    buf = _as_buffer(data)
    return int(xxh3_64(buf, 0, buf.shape[0], _as_seed(seed)))


def xxh3_128_bytes(data: bytes, seed: int = 0) -> int:
    """XXH3-128 of ``data`` as one 128-bit integer, computed by the numba kernel.

    Examples:
        >>> import xxhash
        >>> xxh3_128_bytes(b"abc", seed=7) == xxhash.xxh3_128_intdigest(b"abc", 7)
        True
    """
    buf = _as_buffer(data)
    lo, hi = xxh3_128(buf, 0, buf.shape[0], _as_seed(seed))
    return (int(hi) << 64) | int(lo)
