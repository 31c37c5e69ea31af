"""Ahead-of-time kernels (:mod:`neardup._kernels.aot`): a module built by another process gives
the bits of the JIT and numpy kernels, the CLI runs on it without importing numba, the guard
hands every call it was not compiled for to the JIT, and the cache never serves a module that
is half-written, of another build, or turned off."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neardup._kernels import aot, engine

_WORDS = [f"w{i}" for i in range(400)] + ["façade", "Ünïcödé", "東京", "테스트", "ｆｕｌｌ", "ﬁle"]
_ODD = ["e\u0301t\u00e9", "\u200bzero\u200dwidth", "\u202ebidi\u202c", "\u1100\u1161\u11a8", "Ⅻ ①"]


def _corpus(path: Path, n: int = 300, seed: int = 5) -> None:
    """``n`` documents of 40-80 words, a third of them edited copies of an earlier one."""
    rng = random.Random(seed)
    docs: list[str] = []
    for i in range(n):
        if i > 10 and rng.random() < 0.33:
            words = docs[rng.randrange(len(docs))].split()
            for _ in range(rng.randint(0, 3)):
                words[rng.randrange(len(words))] = rng.choice(_WORDS)
        else:
            words = [rng.choice(_WORDS) for _ in range(rng.randint(40, 80))]
            if rng.random() < 0.3:
                words.insert(rng.randrange(len(words)), rng.choice(_ODD))
        docs.append(" ".join(words))
    with path.open("w", encoding="utf-8") as out:
        for i, text in enumerate(docs):
            out.write(json.dumps({"id": i, "text": text}, ensure_ascii=False) + "\n")


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(NEARDUP_CACHE_DIR=str(root), NEARDUP_BACKGROUND_COMPILE="0", NEARDUP_AOT="1")
    env.pop("NEARDUP_BACKEND", None)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kernel cache whose ahead-of-time module was built by a ``neardup warmup`` process
    (seeded with this suite's JIT kernels, so that it loads them instead of compiling).

    The suite's own cache holds that module when ``neardup warmup`` built it for this build
    (``make`` runs it): its key covers every kernel source and ``aot.py``, so a complete one
    (manifest written last) is what a warmup here would build, and it is copied instead of
    compiled again (about 45 CPU-s). Without one, a warmup process builds it here."""
    pytest.importorskip("numba")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: the ahead-of-time module cannot be built here")
    from neardup._kernels import cache

    root = tmp_path_factory.mktemp("aot-cache")
    module = Path("kernels", "aot", aot.light_key())
    with cache.locked():
        if cache.kernel_dir().is_dir():
            shutil.copytree(
                cache.kernel_dir(),
                root / "kernels" / cache.build_key(),
                ignore=shutil.ignore_patterns(".lock", "complete", "warmup.*", "*.tmp"),
            )
        if (cache.cache_root() / module / "manifest.json").is_file():
            shutil.copytree(cache.cache_root() / module, root / module)
            return root
    done = subprocess.run(
        [sys.executable, "-m", "neardup", "warmup"],
        env=_env(root),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "no ahead-of-time kernels" not in done.stderr, done.stderr
    return root


_CLI = """
import sys
from neardup.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    from neardup._kernels import aot
    print("numba" in sys.modules, aot.calls()["jit"], file=sys.stderr)
"""


def _cli(root: Path, corpus: Path, *args: str, **extra: str) -> tuple[str, str]:
    return _command(root, "dedup", str(corpus), "--threshold", "0.6", *args, **extra)


def _command(root: Path, *argv: str, **extra: str) -> tuple[str, str]:
    """Run ``neardup *argv`` on ``root``'s cache: its stdout, and its last stderr line
    ("numba imported, JIT calls")."""
    extra.setdefault("NEARDUP_SMALL_INPUT", "0")  # numpy is the reference run's choice only
    done = subprocess.run(
        [sys.executable, "-c", _CLI, *argv],
        env=_env(root, **extra),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, done.stderr.splitlines()[-1]


@pytest.mark.parametrize(("form", "jobs"), [("jsonl", "1"), ("jsonl", None), ("files", "1")])
def test_cli_on_a_module_another_process_built_gives_the_reference_clusters(
    built: Path, tmp_path: Path, form: str, jobs: str | None
) -> None:
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus)
    if form == "files":  # a folder of text files: the unpacked path
        folder = tmp_path / "docs"
        folder.mkdir()
        for line in corpus.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            (folder / f"{record['id']:04d}.txt").write_text(record["text"], encoding="utf-8")
        corpus = folder
    threads = ("--jobs", jobs) if jobs else ()  # without --jobs: AOT on every core
    on_aot, tail = _cli(built, corpus, *threads)
    assert tail == "False 0"  # numba never imported, no call handed to the JIT
    on_jit, tail = _cli(built, corpus, *threads, NEARDUP_AOT="0")
    assert tail.startswith("True")
    on_numpy, _ = _cli(built, corpus, *threads, NEARDUP_BACKEND="reference")
    assert on_aot == on_jit == on_numpy
    assert on_aot.count("\n") >= 20  # many clusters: the edited copies were found
    pairs_aot, _ = _cli(built, corpus, *threads, "--pairs")
    pairs_numpy, _ = _cli(built, corpus, *threads, "--pairs", NEARDUP_BACKEND="reference")
    assert pairs_aot == pairs_numpy


def test_jobs_above_one_run_the_module_on_threads(built: Path, tmp_path: Path) -> None:
    """The module's wrappers release the GIL (they call ``PyEval_SaveThread``, which a wrapper
    that holds the GIL never does), so ``--jobs 2`` runs the module's kernels on two threads,
    without numba, and finds what ``--jobs 1`` finds."""
    (so,) = (built / "kernels" / "aot").glob("*/*.so")
    assert b"PyEval_SaveThread" in so.read_bytes()
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus)
    on_two, tail = _cli(built, corpus, "--jobs", "2")
    assert tail == "False 0"  # no numba import, no call handed to the JIT
    on_one, tail = _cli(built, corpus, "--jobs", "1")
    assert tail == "False 0"
    assert on_two == on_one


def _loaded(built: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as env:
        env.setenv("NEARDUP_CACHE_DIR", str(built))
        env.setenv("NEARDUP_AOT", "1")
        families = aot.load()
    assert families is not None
    assert sorted(families) == sorted(aot.EXPORTS)
    return families


def _three_backends(
    run: Any, families: dict[str, Any], monkeypatch: pytest.MonkeyPatch, min_aot_calls: int
) -> tuple[Any, Any, Any]:
    """``run()`` on the module (no call handed to the JIT, at least ``min_aot_calls`` served),
    on the JIT kernels and on numpy."""
    before = aot.calls()
    with monkeypatch.context() as m:
        m.setattr(engine, "_aot", families)
        on_aot = run()
    after = aot.calls()
    assert after["jit"] == before["jit"]
    assert after["aot"] - before["aot"] >= min_aot_calls
    on_jit = run()
    with monkeypatch.context() as m:
        m.setenv("NEARDUP_BACKEND", "reference")
        on_numpy = run()
    return on_aot, on_jit, on_numpy


def test_library_dedup_on_aot_kernels_equals_numpy(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup.packed import PackedBatches
    from neardup.pipeline import dedup

    families = _loaded(built, monkeypatch)
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus, n=400, seed=11)

    def run() -> list[Any]:
        out: list[Any] = []
        for threshold in (0.5, 0.8):
            for pairs in (False, True):
                result = dedup(
                    PackedBatches(corpus), method="minhash", threshold=threshold, pairs=pairs
                )
                out.append([list(c.members) for c in result.clusters])
                out.append([(p.a, p.b, p.similarity) for p in result.pairs])
        return out

    on_aot, _, on_numpy = _three_backends(run, families, monkeypatch, 4 * 5)
    assert on_aot == on_numpy
    assert any(on_aot[0])


def test_each_export_gives_the_jit_bits(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    families = _loaded(built, monkeypatch)
    fast = engine._module("minhash", "fast")
    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 2**32, (50, 64), dtype=np.uint64).astype(np.uint32)
    for bands, rows in ((16, 4), (8, 8), (32, 2)):
        got = families["minhash"].band_keys(sigs, bands, rows)
        assert np.array_equal(got, fast.band_keys(sigs, bands, rows))
    sets = engine._module("sets", "fast")
    for n in (1, 10, 200):
        a = rng.integers(0, n, 3 * n, dtype=np.int64)
        b = rng.integers(0, n, 3 * n, dtype=np.int64)
        assert np.array_equal(families["sets"].components(n, a, b), sets.components(n, a, b))


def test_the_guard_hands_other_types_to_the_jit(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    families = _loaded(built, monkeypatch)
    from neardup._kernels.minhash import reference

    sigs = np.arange(64 * 3, dtype=np.uint32).reshape(3, 64)
    before = aot.calls()
    strided = np.repeat(sigs, 2, axis=1)[:, ::2]  # not contiguous: numba types it "A"
    assert np.array_equal(
        families["minhash"].band_keys(strided, 16, 4), reference.band_keys(sigs, 16, 4)
    )
    assert aot.calls()["jit"] == before["jit"] + 1
    assert families["minhash"].__name__ == "neardup._kernels.minhash.aot"
    assert families["minhash"].sketch_words_sets32.__module__ == "neardup._kernels.minhash.aot"
    # a name the module does not export comes from the JIT module
    assert families["minhash"].sort_unique is engine._module("minhash", "fast").sort_unique


_A = ("a", "uint32", 2, "C", False)
_RO = ("a", "uint8", 1, "C", True)


@pytest.mark.parametrize(
    ("value", "spec", "fits"),
    [
        (np.zeros((2, 3), np.uint32), _A, True),
        (np.zeros((2, 3), np.int32), _A, False),  # dtype
        (np.zeros(6, np.uint32), _A, False),  # dimensions
        (np.zeros((3, 2), np.uint32).T, _A, False),  # layout F
        (np.zeros((2, 3), np.uint32).astype(">u4"), _A, False),  # byte order
        (np.zeros((2, 3), np.uint32).view(np.ma.MaskedArray), _A, False),  # a subclass
        (np.frombuffer(bytes(16), np.uint32).reshape(2, 2), _A, False),  # read-only, not asked
        (np.frombuffer(b"ab", np.uint8), _RO, True),
        (np.zeros(2, np.uint8), _RO, True),  # writable where read-only is compiled: fine
        ([1, 2], _RO, False),
        (3, ("s", "int64"), True),
        (np.int64(3), ("s", "int64"), True),
        (True, ("s", "int64"), False),  # numba types a bool as boolean
        (1 << 63, ("s", "int64"), False),  # ... and this int as uint64
        (np.int32(3), ("s", "int64"), False),
        (np.uint64(3), ("s", "uint64"), True),
        (3, ("s", "uint64"), False),
        (False, ("s", "bool"), True),
        (np.bool_(True), ("s", "bool"), True),
        (0, ("s", "bool"), False),
        (0.5, ("s", "float64"), True),
        (1, ("s", "float64"), False),
    ],
)
def test_fits_follows_numba_typing(value: object, spec: tuple[Any, ...], fits: bool) -> None:
    assert aot._fits(value, spec) is fits


def test_a_half_written_or_foreign_module_is_never_loaded(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = built / "kernels" / "aot" / aot.light_key()
    target = tmp_path / "kernels" / "aot" / aot.light_key()
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NEARDUP_AOT", "1")
    target.mkdir(parents=True)
    for so in source.glob("*.so"):
        shutil.copy(so, target / so.name)
    assert aot.load() is None  # the module without its manifest (written last)
    manifest = json.loads((source / "manifest.json").read_text())
    (target / "manifest.json").write_text(json.dumps({**manifest, "name": "_neardup_aot_x"}))
    assert aot.load() is None  # a module of another build
    (target / "manifest.json").write_text(json.dumps({**manifest, "format": -1}))
    assert aot.load() is None
    (target / "manifest.json").write_text(json.dumps(manifest))
    assert aot.load() is not None
    monkeypatch.setenv("NEARDUP_AOT", "0")
    assert aot.load() is None
    assert aot.build() == "NEARDUP_AOT=0"


def test_the_key_follows_sources_and_numba_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup._kernels import cache

    extra = tmp_path / "kernel.py"
    extra.write_text("x = 1\n")
    real = cache._keyed_sources
    monkeypatch.setattr(cache, "_keyed_sources", lambda: [*real(), extra])
    monkeypatch.delenv("NUMBA_OPT", raising=False)
    keys = []
    try:
        for change in ("", "source", "option"):
            if change == "source":
                extra.write_text("x = 2\n")
            if change == "option":
                monkeypatch.setenv("NUMBA_OPT", "0")
            aot.light_key.cache_clear()
            keys.append(aot.light_key())
    finally:
        aot.light_key.cache_clear()
    assert len(set(keys)) == 3
    assert all(len(k) == 24 for k in keys)


def test_a_failed_build_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending-deprecation warning
        import numba.pycc

    fast = engine._module("minhash", "fast")
    fast.band_keys(np.zeros((2, 8), np.uint32), 2, 4)  # a JIT signature to export

    def no_compiler(self: object) -> None:
        raise RuntimeError("command 'gcc' failed: No such file or directory")

    monkeypatch.setattr(numba.pycc.CC, "compile", no_compiler)
    monkeypatch.setattr(aot, "EXPORTS", {"minhash": ("band_keys",)})
    monkeypatch.setattr(aot, "aot_dir", lambda: tmp_path / "aot" / "key")
    monkeypatch.setenv("NEARDUP_AOT", "1")
    assert aot.build() == "RuntimeError: command 'gcc' failed: No such file or directory"
    assert list((tmp_path / "aot").iterdir()) == []  # no module, no manifest, no build dir


@pytest.mark.parametrize(
    "argv",
    [
        ("dedup", "{corpus}", "--method", "exact", "--jobs", "1", "--pairs"),
        ("dedup", "{corpus}", "--method", "exact"),  # AOT without --jobs too
        ("lines", "{corpus}", "-o", "{out}.jsonl", "--min-docs", "2"),
        ("lines", "{corpus}", "-o", "{out}.csv", "--min-docs", "2", "--unit", "paragraph"),
        ("substrings", "{corpus}", "-o", "{out}.jsonl", "--min-length", "24"),
        ("substrings", "{corpus}", "-o", "{out}.csv", "--min-length", "24"),
    ],
)
def test_corpus_commands_on_the_module_give_the_reference_output(
    built: Path, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus)
    outputs = []
    for run, extra in (
        ("aot", {}),
        ("jit", {"NEARDUP_AOT": "0"}),
        ("numpy", {"NEARDUP_BACKEND": "reference"}),
    ):
        out = tmp_path / run
        args = [a.format(corpus=corpus, out=out) for a in argv]
        printed, tail = _command(built, *args, **extra)
        if run == "aot":
            assert tail == "False 0"  # numba never imported, no call handed to the JIT
        if run == "jit":
            assert tail.startswith("True")
        written = [Path(a) for a in args if a.startswith(str(out))]
        outputs.append((printed, [p.read_bytes() for p in written]))
    assert outputs[0] == outputs[1] == outputs[2]
    if argv[0] != "dedup":
        assert outputs[0][1][0] != corpus.read_bytes()  # something was removed
    else:
        assert outputs[0][0].count("\n") >= 10  # the unedited copies were found


def test_corpus_kernels_on_the_module_equal_jit_and_numpy(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup._kernels import lines, repeats
    from neardup._kernels.spans import pack

    families = _loaded(built, monkeypatch)
    rng = random.Random(9)
    base = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 60))) for _ in range(40)]
    texts = [t if i % 3 else base[i // 2] + "\n  \n" + t for i, t in enumerate(base)]
    texts += ['quote " and \\ back\x01\n\t', "", "\n\n"]

    def run() -> list[Any]:
        p = pack(texts)
        # writable, as the substrings and lines paths hand them (a read-only one goes to the JIT)
        text = np.frombuffer(b"\xff".join(t.encode() for t in texts), np.uint8).copy()
        out: list[Any] = []
        for min_length in (8, 24):
            starts, ends = repeats.candidate_regions(text, min_length)
            sub, at = repeats.gather(text, starts, ends)
            marks = repeats.window_mask(sub, min_length, 0)
            out += [
                starts,
                ends,
                sub,
                at,
                marks,
                repeats.scatter(marks, at, starts, ends, len(text)),
            ]
            out.append(repeats.window_mask(text, min_length, len(text) // 2))
        spans = lines.line_spans(p.buf, p.offsets)
        keep = np.arange(len(spans[0])) % 3 != 0
        out += [*spans, *lines.kept_text(p.buf, p.offsets, spans[0], spans[1], spans[4], keep)]
        out += lines.json_strings(p.buf.copy(), p.offsets, np.arange(len(texts))[::-1].copy())
        counts = lines.UnitCounts()
        for step in range(40):  # past the first table size: rehashes
            counts.add(
                np.arange(step * 3000, step * 3000 + 4000, dtype=np.uint64), np.full(4000, step)
            )
        out += [counts.lookup(np.arange(0, 130_000, 7, dtype=np.uint64)), len(counts)]
        from neardup._kernels.engine import hash_spans
        from neardup._kernels.spans import Spans

        words = Spans(p.buf, spans[0], spans[1], p.offsets)
        out += [*hash_spans(words, "xxh3_128", 7), *hash_spans(words, "xxh3_64", 7)]
        return out

    on_aot, on_jit, on_numpy = _three_backends(run, families, monkeypatch, 20)
    for a, j, n in zip(on_aot, on_jit, on_numpy, strict=True):
        assert np.array_equal(a, j) and np.array_equal(a, n)
