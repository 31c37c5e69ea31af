"""The embedding cache: keyed by model and text hash, re-runs embed only new texts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from neardup.errors import ConfigError, FormatError, SchemaVersionError, StoreError
from neardup.store.embcache import SCHEMA_VERSION, CachedProvider, EmbeddingCache, text_hash


class Counting:
    """A provider that records what it was asked to embed."""

    dimension = 3

    def __init__(self, model_id: str = "count") -> None:
        self.model_id = model_id
        self.asked: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked.extend(texts)
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], np.float32)


def test_rerun_embeds_nothing_and_models_never_mix(tmp_path: Path) -> None:
    db = tmp_path / "emb.sqlite"
    inner = Counting()
    with EmbeddingCache(db) as cache:
        p = CachedProvider(inner, cache)
        first = p.embed(["banana", "kiwi", "banana", ""])
        assert inner.asked == ["banana", "kiwi", ""]
        assert p.model_id == "count" and p.dimension == 3
    inner2 = Counting()
    with EmbeddingCache(db) as cache:
        p = CachedProvider(inner2, cache)
        again = p.embed(["kiwi", "banana", "", "apple"])
        assert inner2.asked == ["apple"]
        assert p.hits == 3 and p.misses == 1
        np.testing.assert_array_equal(again[:3], first[[1, 0, 3]])
        assert len(cache) == 4
    other = Counting("other-model")
    with EmbeddingCache(db) as cache:
        CachedProvider(other, cache).embed(["kiwi"])
    assert other.asked == ["kiwi"]


def test_many_texts_span_query_chunks(tmp_path: Path) -> None:
    inner = Counting()
    p = CachedProvider(inner, tmp_path / "c.sqlite")
    texts = [f"t{i} " + "a" * (i % 7) for i in range(1_200)]
    a = p.embed(texts)
    b = p.embed(texts)
    np.testing.assert_array_equal(a, b)
    assert len(inner.asked) == 1_200 and p.hits == 1_200


def test_http_provider_gets_the_cache(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx")
    from neardup.embeddings import OpenAIProvider

    calls: list[int] = []

    def handler(request: object) -> object:
        import json

        body = json.loads(request.content)  # type: ignore[attr-defined]
        calls.append(len(body["input"]))
        data = [
            {"index": i, "embedding": [float(len(t)), 1.0]} for i, t in enumerate(body["input"])
        ]
        return httpx.Response(200, json={"data": data})

    provider = OpenAIProvider(api_key="k", dimension=2, transport=httpx.MockTransport(handler))
    cached = CachedProvider(provider, tmp_path / "c.sqlite")
    cached.embed(["one", "two"])
    out = cached.embed(["two", "three"])
    assert calls == [2, 1]
    assert out[:, 0].tolist() == [3.0, 5.0]


def test_schema_and_errors(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    EmbeddingCache(db).close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT value FROM embcache_meta").fetchone() == (str(SCHEMA_VERSION),)
    conn.execute("UPDATE embcache_meta SET value = '99'")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError, match="newer"):
        EmbeddingCache(db)
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="cannot open"):
        EmbeddingCache(bad)
    cache = EmbeddingCache(tmp_path / "ok.sqlite")
    with pytest.raises(ConfigError, match="one vector per text"):
        cache.put("m", ["a", "b"], np.zeros((1, 2)))
    cache._conn.execute(
        "INSERT INTO embeddings VALUES ('m', ?, ?)", (text_hash("x"), b"\x00\x01\x02")
    )
    with pytest.raises(FormatError, match="truncated"):
        cache.get("m", ["x"])
    cache.close()


def test_cache_shares_a_file_with_the_store(tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    with EmbeddingCache(db) as cache:
        cache.put("m", ["a"], np.ones((1, 2), np.float32))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone() == (7,)  # the store's, untouched
    conn.close()
