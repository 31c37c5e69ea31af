"""Compile every numba kernel ahead of use (``neardup warmup``), so no later call compiles.

After ``pip install``, the first call of a fast kernel would compile it (tens of seconds for
the whole set). :func:`warmup` runs the library's public entry points on a tiny corpus while
holding the kernel cache's lock, so each kernel is compiled exactly once, by this process,
into the cache directory of :mod:`neardup._kernels.cache`; later processes only load it. The
Makefile runs ``neardup warmup`` right after installing. Running it again is cheap: every
kernel is then loaded, none compiled. When it is done it leaves the build's ``complete`` mark
(:data:`neardup._kernels.engine.COMPLETE`), which tells ``NEARDUP_BACKEND=auto`` processes
that they can load the kernels instead of running on numpy.

``neardup warmup --background`` (:func:`background`) is the detached compile that a process
starts when it finds the kernels missing (:func:`neardup._kernels.engine.kernels_ready`): at
low priority, under the cache lock, once (it exits if another one finished first); its output
goes to ``warmup.log`` in the build's directory, and a failure leaves ``warmup.failed`` there.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["WarmupReport", "background", "warmup"]

_TEXTS = [
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu",
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda nu",
    "Ünïcödé wörds, façade — 東京 日本語 테스트 and more words here",
    "one two three four five six seven eight nine ten eleven twelve",
    "x",
]


@dataclass(frozen=True, slots=True)
class WarmupReport:
    """What :func:`warmup` did.

    Attributes:
        backend: ``"fast"`` (numba) or ``"reference"`` (numpy: nothing to compile).
        compiled: Kernels compiled by this call (0 when the cache was already full).
        loaded: Kernels loaded from the cache.
        seconds: Wall time of the call.
        cache_dir: The build's cache directory (empty for the reference backend).
        aot: Empty when the ahead-of-time module of the CLI's default path is in place
            (:mod:`neardup._kernels.aot`), else why it is not (one line).
    """

    backend: str
    compiled: int
    loaded: int
    seconds: float
    cache_dir: str
    aot: str = ""


def warmup() -> WarmupReport:
    """Compile (or load) every kernel the library's entry points use.

    Returns:
        A :class:`WarmupReport`.

    Raises:
        ConfigError: ``NEARDUP_BACKEND`` has an unknown value.
    """
    from neardup._kernels import engine

    start = time.perf_counter()
    engine.compile_here()  # warming up is compiling: never hand this process to numpy
    if engine.backend_name() != "fast":
        _exercise()
        return WarmupReport("reference", 0, 0, time.perf_counter() - start, "")
    from neardup._kernels import aot, cache

    before = cache.compiles()
    note = "some kernels could not be saved"
    with cache.locked(), cache.quiet():
        _exercise()
        if cache.compiles()["unsaved"] == before["unsaved"]:  # every kernel is on disk
            _mark(cache.kernel_dir() / engine.COMPLETE, "")
            note = aot.build() or ""  # after the mark: JIT users need not wait for it
    after = cache.compiles()
    return WarmupReport(
        "fast",
        after["compiled"] - before["compiled"],
        after["loaded"] - before["loaded"],
        time.perf_counter() - start,
        str(cache.kernel_dir()),
        note,
    )


def _exercise() -> None:
    """Call every kernel through the public API, with the argument types real calls use."""
    from neardup._kernels import engine
    from neardup._kernels.sets import (
        bucket_pairs,
        intersections,
        jaccard_pairs,
        unique_pairs,
        unique_per_doc,
    )
    from neardup.cluster import components
    from neardup.errors import MissingExtraError
    from neardup.index.hamming import HammingIndex
    from neardup.index.lsh import LSHIndex
    from neardup.pipeline import dedup
    from neardup.sketch.minhash import PRESETS, MinHasher
    from neardup.sketch.simhash import SimHasher
    from neardup.tokenize import ShingleTokenizer, WordTokenizer

    spans = engine.tokenize_texts(_TEXTS, mask=3)
    for name in ("fnv1a64", "xxh3_64", "xxh3_128"):
        engine.hash_spans(spans, name, 7)
    for preset in PRESETS:
        hasher = MinHasher(64, preset=preset)  # type: ignore[arg-type]
        sigs = hasher.sketch_many(_TEXTS)
        hasher.sketch(_TEXTS[0])
        index = LSHIndex(threshold=0.5, num_perm=64)
        index.add_many([f"d{i}" for i in range(len(sigs))], sigs)
        list(index.pairs())
        index.query(hasher.sketch(_TEXTS[1]))
        index.add("one", hasher.sketch(_TEXTS[2]))  # the per-call paths (read-only slots)
        index.query_many(sigs)
        index.candidates(sigs[0])  # the unranked lookups (datasketch's query)
        index.candidates_many(sigs)
    for tok in (WordTokenizer(), ShingleTokenizer(3)):
        MinHasher(64, tokenizer=tok).sketch_many(_TEXTS)
    for bits in (64, 128, 256):
        codes = SimHasher(bits=bits).sketch_many(_TEXTS)
        ham = HammingIndex(bits=bits, radius=3)
        ham.add_many([f"d{i}" for i in range(len(codes))], codes)
        list(ham.pairs())
        ham.query(codes[0])
        ham.add("one", int(codes[0].reshape(-1)[0]) if bits == 64 else codes[0])
        ham.query(int(codes[1].reshape(-1)[0]) if bits == 64 else codes[1])
    values, offsets = unique_per_doc(
        np.array([3, 1, 2, 2, 5], np.uint64), np.array([0, 3, 5], np.int64)
    )
    a, b = np.array([0], np.int64), np.array([1], np.int64)
    intersections(values, offsets, a, b)
    jaccard_pairs(values, offsets, a, b)
    # the 32-bit sets of the minhash method (`neardup compare`, --annotate's similarities)
    jaccard_pairs(values.astype(np.uint32), offsets, a, b)
    unique_pairs(np.array([1, 0, 1]), np.array([2, 1, 2]), 2)
    keys = np.array([7, 7, 9], np.uint64)
    bucket_pairs(keys, np.array([2, 1, 0]), 4)
    bucket_pairs(keys, np.array([2, 1, 0]), 4, codes=np.zeros((3, 1), np.uint64), radius=2)
    components(3, np.array([0]), np.array([2]))
    _exercise_datasketch_family()
    pdq = engine.kernels("pdq")  # the image PDQ kernels (numpy arrays only, no Pillow)
    rgb = np.zeros((70, 90, 3), np.uint8)
    pdq.pdq_rgb(rgb)
    rgb.setflags(write=False)  # pixels read from image files are read-only arrays
    pdq.pdq_rgb(rgb)
    pdq.pdq_float(rgb[:, :, 0].astype(np.float32))
    lsh = engine.kernels("lsh")  # an index that outgrows its table (LSH and Hamming)
    lsh.grow(lsh.new_table(8, 8, 1, 1, 8), 16, 16)
    import json
    import tempfile
    from pathlib import Path

    from neardup.packed import PackedBatches

    with tempfile.TemporaryDirectory() as tmp:  # the packed JSONL path the CLI takes
        path = Path(tmp) / "warm.jsonl"
        path.write_text(
            "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(_TEXTS))
        )
        for method, canonicalize in (
            ("minhash", "txtfp"),
            ("minhash", "secure"),  # no batch kernel: packed from Python strings
            ("simhash", "txtfp"),
            ("simhash", "secure"),
        ):
            for pairs in (True, False):
                try:
                    dedup(
                        PackedBatches(path),
                        method=method,
                        canonicalize=canonicalize,
                        pairs=pairs,
                        jobs=1,
                    )
                except MissingExtraError:  # secure's confusables extra is absent
                    continue
        _exercise_corpus(tmp)
    for method in ("minhash", "simhash", "ctph"):
        try:
            dedup(_TEXTS, method=method)
        except MissingExtraError:  # the method's extra is absent: its kernels are never used
            continue


def _exercise_corpus(folder: str) -> None:
    """The kernels of ``neardup lines`` (JSONL and documents, both units; records that lose
    a unit are rewritten; the unit table grown, as on a large corpus) and ``neardup
    substrings``."""
    import json
    from pathlib import Path

    from neardup._document import Document
    from neardup.corpus.lines import remove_frequent_units, remove_frequent_units_jsonl
    from neardup.corpus.substrings import (
        remove_repeated_substrings,
        remove_repeated_substrings_jsonl,
    )

    texts = [f"{t}\nshared line\n\nshared paragraph" for t in _TEXTS]
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    path = Path(folder) / "warm-lines.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    for unit in ("line", "paragraph"):
        for _ in remove_frequent_units_jsonl(path, min_docs=2, unit=unit):
            pass
        for _ in remove_frequent_units(lambda: docs, min_docs=2, unit=unit):
            pass
    for _ in remove_repeated_substrings(docs, min_length=8):
        pass
    for _ in remove_repeated_substrings_jsonl(path, min_length=8):
        pass
    import numpy as np

    from neardup._kernels.lines import UnitCounts

    many = np.arange(40_000, dtype=np.uint64)  # more units than the first table holds: a rehash
    UnitCounts().add(many, np.zeros(len(many), np.int64))


def _exercise_datasketch_family() -> None:
    """The datasketch-family kernels (sha1, affine, hll, weighted, forest) and their callers,
    and the compatibility package's index on the native table."""
    from neardup.index.lshensemble import LSHEnsemble
    from neardup.index.lshforest import LSHForest
    from neardup.sketch.hyperloglog import HyperLogLog
    from neardup.sketch.tokensets import sketch_token_sets
    from neardup.sketch.weighted import WeightedMinHasher

    sets = [t.encode().split() for t in _TEXTS] + [[b"x" * 80]]
    for scheme in ("affine32", "affine64", "legacy"):
        for hash_name in ("sha1", "xxh3"):
            rows = sketch_token_sets(sets, num_perm=16, scheme=scheme, hash=hash_name)
    for plus in (False, True):
        HyperLogLog.sketch_many(sets, p=4, plus=plus)
    WeightedMinHasher(4, sample_size=8).sketch_many(np.eye(4))
    forest = LSHForest(16, l=4)
    forest.add_many(list(range(len(rows))), rows)
    forest.query_many(rows, 2)
    ens = LSHEnsemble(threshold=0.5, num_perm=16, num_part=2)
    ens.index(list(range(len(rows))), rows, [len(s) or 1 for s in sets])
    ens.query(rows[0], 3)
    import neardup.compat.datasketch as compat  # its uint32 sketches in the native table

    sketches = compat.MinHash.bulk(sets, num_perm=16)
    lsh = compat.MinHashLSH(threshold=0.5, num_perm=16)
    lsh.insert_many(list(range(len(sketches))), sketches)
    lsh.query(sketches[0])
    lsh.query_many(sketches)


def _mark(path: os.PathLike[str] | str, text: str) -> None:
    """Write a mark file atomically (a reader sees it whole or not at all)."""
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def background() -> WarmupReport | None:
    """The detached compile that :func:`neardup._kernels.engine.kernels_ready` starts
    (``neardup warmup --background``): :func:`warmup` at low priority under the cache lock,
    unless another one finished first (then ``None``). Leaves ``warmup.failed`` (the reason)
    in the build's directory when it fails or cannot save every kernel, so that later
    processes compile in the foreground, where the error shows, instead of starting it again.
    """
    from neardup._kernels import cache, engine

    engine.compile_here()
    if hasattr(os, "nice"):
        os.nice(10)  # the process that started this one is running on numpy meanwhile
    with cache.locked():
        where = cache.kernel_dir()
        if (where / engine.COMPLETE).exists():
            return None
        try:
            report = warmup()
        except BaseException as exc:
            _mark(where / engine.FAILED, f"{type(exc).__name__}: {exc}\n")
            raise
        if not (where / engine.COMPLETE).exists():
            _mark(where / engine.FAILED, "some kernels could not be saved\n")
    return report
