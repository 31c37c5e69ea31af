"""--method embedding: provider choice (--model), zero vectors, the embedding cache via the CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from static_models import _tiny_model

import neardup
from neardup.cli import main
from neardup.embeddings import (
    LocalProvider,
    OpenAIProvider,
    StaticProvider,
    provider_for,
)
from neardup.errors import ConfigError
from neardup.methods import make_method


def test_provider_for_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(provider_for(), StaticProvider)
    assert isinstance(provider_for("static"), StaticProvider)
    assert isinstance(provider_for("minilm"), LocalProvider)  # constructed, not loaded
    tiny = _tiny_model(tmp_path / "tiny")
    assert provider_for(tiny).model_path == tiny.resolve()  # type: ignore[union-attr]
    st_folder = tmp_path / "st"
    st_folder.mkdir()
    (st_folder / "modules.json").write_text("[]")
    (st_folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    assert isinstance(provider_for(st_folder), LocalProvider)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai = provider_for("openai:text-embedding-3-large")
    assert isinstance(openai, OpenAIProvider) and openai.dimension == 3072
    with pytest.raises(ConfigError, match="not 'static', 'minilm'"):
        provider_for("no-such-model")


def test_default_method_is_static_and_skips_zero_vectors(tmp_path: Path) -> None:
    m = make_method("embedding")
    assert m.params.startswith("embedding-static:minilm-l6-v2-static:")
    tiny = _tiny_model(tmp_path / "tiny")
    docs = [("a", "the cat sat"), ("b", "The CAT sat qqq"), ("c", ""), ("d", "zzz"), ("e", "")]
    result = neardup.dedup(docs, method=make_method("embedding", 0.95, model=str(tiny)))
    assert [c.members for c in result.clusters] == [("a", "b")]
    with pytest.raises(ConfigError, match="non-empty string"):
        make_method("embedding", model="")


def test_cli_model_and_embedding_cache(tmp_path: Path) -> None:
    tiny = _tiny_model(tmp_path / "tiny")
    data = tmp_path / "docs.jsonl"
    rows = [
        {"id": "1", "text": "the dog ran far"},
        {"id": "2", "text": "The dog ran far zzz"},
        {"id": "3", "text": "tax law"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache = tmp_path / "cache.sqlite"
    args = ["dedup", str(data), "--method", "embedding", "--model", str(tiny), "-t", "0.95"]
    args += ["--embedding-cache", str(cache), "--format", "text", "-q"]
    runner = CliRunner()
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "1, 2" in first.output
    conn = sqlite3.connect(cache)
    assert conn.execute("SELECT COUNT(*) FROM embeddings").fetchone() == (3,)
    conn.close()
    data.write_text(data.read_text() + json.dumps({"id": "4", "text": "TAX law"}) + "\n")
    second = runner.invoke(main, args)
    assert second.exit_code == 0, second.output
    assert "1, 2" in second.output and "3, 4" in second.output
    conn = sqlite3.connect(cache)
    assert conn.execute("SELECT COUNT(*) FROM embeddings").fetchone() == (4,)  # one new text
    conn.close()
    bad = runner.invoke(main, ["dedup", str(data), "--model", "static"])
    assert bad.exit_code == 2 and "--method embedding" in bad.output
