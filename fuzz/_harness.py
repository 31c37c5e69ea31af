"""Shared machinery of the atheris harnesses in this folder.

Every harness defines ``target(data: bytes) -> None``, which feeds ``data`` to one group of
parsers of outside data. :func:`one_input` wraps a target so that a :class:`NeardupError`
(the parser refusing bad input, as it must) is swallowed and *anything else* propagates:
atheris reports it as a crash, and the pytest smoke test and the hypothesis properties
(``tests/fuzz``) call the same targets.

Most parsers reject random bytes in their first check, so targets also build inputs by
:func:`mutate`-ing a valid serialization: the first byte of ``data`` picks a seed and the rest
edits it (overwrite, truncate, extend), which reaches the deep paths of every format.

Run a harness with ``python fuzz/<name>.py -runs=N`` (or ``-max_total_time=S``); every
libFuzzer flag works. ``fuzz/run_all.py`` runs them all.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
if SRC.is_dir() and str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))
KERNELS = SRC / "neardup" / "_kernels"

Target = Callable[[bytes], None]


def not_instrumented() -> list[str]:
    """Modules left uninstrumented: the numpy kernel twins and the clustering loops, whose
    coverage says nothing about the parsers under test (atheris excludes exact names)."""
    import pkgutil

    # every module of the kernel package (_kernels/<family>.py and its private helpers)
    kernels = [m.name for m in pkgutil.walk_packages([str(KERNELS)], prefix="neardup._kernels.")]
    return ["neardup._kernels", *kernels, "neardup.cluster"]


def one_input(target: Target) -> Callable[[bytes], None]:
    """Wrap ``target`` for atheris: NeardupError is an answer, every other exception a crash."""
    # Imported here, not at the top, so that main() can import neardup under instrumentation.
    from neardup.errors import NeardupError

    def test_one_input(data: bytes) -> None:
        with contextlib.suppress(NeardupError):
            target(data)

    return test_one_input


def mutate(seed: bytes, data: bytes) -> bytes:
    """Edit ``seed`` by the instructions in ``data``.

    ``data[0]`` chooses the length: under 200, truncate to ``data[0] * len(seed) // 200``
    bytes; else keep the seed and append ``data[1:]`` past its first 24 bytes. The rest is
    read as ``(position high, position low, value)`` byte triples that overwrite the seed.

    Examples:
        >>> mutate(b"abcdef", b"")
        b'abcdef'
        >>> mutate(b"abcdef", bytes([250, 0, 1, 65]))
        b'aAcdef'
        >>> mutate(b"abcdef", bytes([100]))
        b'abc'
    """
    if not data:
        return seed
    out = bytearray(seed)
    mode, rest = data[0], data[1:]
    if mode < 200:
        del out[mode * len(seed) // 200 :]
    elif len(rest) > 24:
        out += rest[24:]
        rest = rest[:24]
    for i in range(0, len(rest) - 2, 3):
        if out:
            out[(rest[i] << 8 | rest[i + 1]) % len(out)] = rest[i + 2]
    return bytes(out)


def attempt(fn: Callable[..., object], *args: object, **kwargs: object) -> object | None:
    """Call ``fn``; return None when it raises a NeardupError (a refusal), else its result."""
    from neardup.errors import NeardupError

    try:
        return fn(*args, **kwargs)
    except NeardupError:
        return None


def pick(seeds: Sequence[bytes], data: bytes) -> tuple[bytes, bytes]:
    """Choose a seed by ``data[0]`` and return it with the remaining bytes."""
    if not data:
        return seeds[0], b""
    return seeds[data[0] % len(seeds)], data[1:]


def scratch_dir(prefix: str) -> Path:
    """A new private folder for files a target needs, in memory (``/dev/shm``) when possible."""
    shm = Path("/dev/shm")
    return Path(tempfile.mkdtemp(prefix=prefix, dir=shm if shm.is_dir() else None))


def text_of(data: bytes) -> str:
    """Decode ``data`` as UTF-8, keeping undecodable bytes as lone surrogates.

    Parsers that take ``str`` must cope with any ``str``, lone surrogates included.
    """
    return data.decode("utf-8", "surrogateescape")


def main(target: Target, *, instrument: Sequence[str] = ("neardup",)) -> None:
    """Run ``target`` under atheris with the command line's libFuzzer flags.

    The modules named in ``instrument`` (and their submodules, except the kernel twins)
    are instrumented for coverage when first imported, so harnesses import neardup lazily,
    inside ``target``.
    """
    import atheris  # only the harness entry point needs it

    # One warm-up call inside the instrumentation block imports (and instruments) every
    # module the target uses lazily, and builds its seeds.
    with atheris.instrument_imports(include=list(instrument), exclude=not_instrumented()):
        one_input(target)(b"")
    atheris.Setup(sys.argv, one_input(target))
    atheris.Fuzz()
