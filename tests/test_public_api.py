"""The public API: __all__ is sorted and complete; import stays light."""

from __future__ import annotations

import subprocess
import sys

import neardup


def test_all_is_sorted_and_resolves() -> None:
    assert list(neardup.__all__) == sorted(neardup.__all__)
    for name in neardup.__all__:
        assert hasattr(neardup, name), name


def test_public_names_are_exported() -> None:
    public = {n for n in dir(neardup) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(neardup.__all__), public - set(neardup.__all__)


def test_api_contract_names() -> None:
    for name in (
        "Canonicalizer",
        "WordTokenizer",
        "NgramTokenizer",
        "GraphemeTokenizer",
        "ShingleTokenizer",
        "SimHasher",
        "MinHasher",
        "SimHash",
        "MinHash",
        "plan_lsh",
        "LSHIndex",
        "HammingIndex",
        "dedup",
        "NeardupError",
        "read_corpus",
        "dedup_corpus",
        "Corpus",
        "CorpusResult",
    ):
        assert name in neardup.__all__


def test_import_loads_no_extra_and_no_click() -> None:
    code = (
        "import sys, neardup\n"
        "heavy = ['numba', 'click', 'tqdm', 'PIL', 'tlsh', 'torch', 'pyspark', 'selectolax',"
        " 'pypdf', 'sentence_transformers', 'httpx', 'jieba', 'confusables', 'usearch',"
        " 'starlette', 'uvicorn']\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"
