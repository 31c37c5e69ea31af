"""Edge values, hangs and smaller defects of issue 43: each is refused with a NeardupError (or
works), never a traceback, a hang or a blow-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.errors import ConfigError

SRC = str(Path(__file__).resolve().parents[2] / "src")
TEXT = "the committee approved the annual budget for public libraries after a long debate"


def run(*args: object) -> tuple[int, str, str, BaseException | None]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    exc = result.exception
    return (
        result.exit_code,
        result.stdout,
        result.stderr,
        None if isinstance(exc, SystemExit) else exc,
    )


def _jsonl(path: Path, texts: list[str]) -> Path:
    path.write_text(
        "".join(json.dumps({"id": f"r{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    )
    return path


# ------------------------------------------------------------------ edge values


def test_a_one_band_one_row_plan_runs(tmp_path: Path) -> None:
    from neardup.methods import make_method
    from neardup.pipeline import dedup

    src = _jsonl(tmp_path / "in.jsonl", [TEXT, TEXT, "something else entirely here"])
    code, _, err, exc = run("dedup", src, "-q", "-t", "1e-300")
    assert exc is None and code == 0, err
    for method in (make_method("minhash", 1e-300), make_method("minhash", 0.5, num_perm=1)):
        result = dedup([TEXT, TEXT, "other words here and there"], method=method)
        assert [sorted(c.members) for c in result.clusters][:1] == [["0", "1"]]


def test_a_huge_bloom_capacity_is_refused(tmp_path: Path) -> None:
    from neardup.methods import make_method

    src = _jsonl(tmp_path / "in.jsonl", [TEXT, TEXT])
    code, _, err, exc = run("dedup", src, "-q", "-m", "exact", "--bloom-capacity", 10**15)
    assert exc is None and code == 1 and "bloom" in err.lower(), err
    with pytest.raises(ConfigError, match="capacity"):
        make_method("exact", bloom_capacity=10**15)
    assert make_method("exact", bloom_capacity=10**6) is not None


@pytest.mark.parametrize("splits", [["."], [""], [".."], ["a/../."], ["x", "x"], "train"])
def test_a_dataset_dict_that_names_itself_is_an_error(tmp_path: Path, splits: Any) -> None:
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "x").mkdir()
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": splits}))
    code, _, err, exc = run("dedup", folder, "-q")
    assert exc is None and code == 1 and "dataset_dict.json" in err, err


def test_a_nested_dataset_dict_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "hf"
    (folder / "train").mkdir(parents=True)
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": ["train"]}))
    (folder / "train" / "dataset_dict.json").write_text(json.dumps({"splits": ["."]}))
    code, _, err, exc = run("dedup", folder, "-q")
    assert exc is None and code == 1, err


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "jsonl.gz"])
def test_substrings_keep_a_lone_surrogate(tmp_path: Path, suffix: str) -> None:
    row = '{"id": "%s", "text": "a shared sentence that repeats \\ud800 and a tail %s"}\n'
    src = tmp_path / "in.jsonl"
    src.write_text(row % ("a", "one") + row % ("b", "two"))
    out = tmp_path / f"out.{suffix}"
    code, _, err, exc = run("substrings", src, "--min-length", "16", "-q", "-o", out)
    assert exc is None and code == 0, err
    if suffix == "jsonl":
        rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
        assert "\ud800" in rows[0]["text"] and "\ud800" not in rows[1]["text"]
    code, _, err, exc = run("lines", src, "--min-docs", "2", "-q", "-o", tmp_path / f"l.{suffix}")
    assert exc is None and code == 0, err


def test_a_non_ascii_api_key_is_a_config_error() -> None:
    pytest.importorskip("httpx")
    from neardup.embeddings.http import RetryingClient, RetryPolicy

    with pytest.raises(ConfigError, match="API key"):
        RetryingClient(
            service="openai",
            base_url="https://api.example.com/v1",
            api_key="sk-clé",
            key_hint="OPENAI_API_KEY",
            policy=RetryPolicy(),
        )


def test_retry_after_zero_still_waits_the_backoff() -> None:
    httpx = pytest.importorskip("httpx")
    from neardup.embeddings.http import RetryingClient, RetryPolicy

    calls = {"n": 0}

    def handler(request: Any) -> Any:
        calls["n"] += 1
        if calls["n"] < 4:
            return httpx.Response(429, headers={"Retry-After": "0"})
        return httpx.Response(200, json={"ok": True})

    slept: list[float] = []
    client = RetryingClient(
        service="openai",
        base_url="https://api.example.com/v1",
        api_key="sk-test",
        key_hint="OPENAI_API_KEY",
        policy=RetryPolicy(initial_backoff=0.5, jitter=0.0),
        transport=httpx.MockTransport(handler),
        sleep=slept.append,
    )
    assert client.post_json("/embeddings", {"input": ["x"]}) == {"ok": True}
    assert slept == [0.5, 1.0, 2.0]  # the policy's backoff: a 0 from the server is no faster


# ------------------------------------------------------------------ hangs


def _bounded(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize("method", ["simhash-go", "minhash", "ctph"])
def test_hash_refuses_a_fifo(tmp_path: Path, method: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = _bounded("hash", "-m", method, str(fifo))  # no writer: reading would wait forever
    assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/urandom"), reason="no /dev/urandom")
def test_hash_refuses_an_endless_device() -> None:
    done = _bounded("hash", "/dev/urandom")
    assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr


def test_a_sweep_of_too_many_thresholds_is_refused() -> None:
    from neardup.evaluate.sweep import MAX_THRESHOLDS, parse_range

    with pytest.raises(ConfigError, match="thresholds"):
        parse_range("0:1:1e-6")
    with pytest.raises(ConfigError):
        parse_range("0:inf:0.1")
    with pytest.raises(ConfigError):
        parse_range("0:1:nan")
    assert len(parse_range("0:1:0.001")) == 1001 <= MAX_THRESHOLDS
    code, _, err, exc = run("eval", __file__, "--truth", "exact", "--sweep", "0:1:1e-9")
    assert exc is None and code != 0 and "thresholds" in err, err


def test_compare_record_files_is_a_clear_error(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [TEXT, TEXT])
    code, _, err, exc = run("compare", src, src)
    assert exc is None and code == 1 and "records" in err, err
