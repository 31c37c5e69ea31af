"""SparkDedupConfig: the Spark run as one validated value (no Spark needed)."""

from __future__ import annotations

import pytest

from neardup.errors import ConfigError
from neardup.spark.config import SparkDedupConfig


def test_config_validates_and_runs_run_spark_dedup(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def fake_run(paths: list[str], **kwargs: object) -> str:
        seen.update(kwargs, paths=paths)
        return "summary"

    monkeypatch.setattr("neardup.spark.cli.run_spark_dedup", fake_run)
    config = SparkDedupConfig(
        ("a.parquet",),
        method="simhash",
        threshold=0.7,
        spark_conf={"spark.driver.memory": "2g"},
        options={"partitions": 4},
    )
    assert config.run() == "summary"  # type: ignore[comparison-overlap]
    assert seen["paths"] == ["a.parquet"] and seen["method"] == "simhash"
    assert seen["collect"] is True and seen["partitions"] == 4
    assert seen["spark_conf"] == {"spark.driver.memory": "2g"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "tlsh"}, "runs minhash and simhash"),
        ({"threshold": 1.5}, "threshold"),
        ({"keep": "largest"}, "keep must be"),
        ({"on_error": "ignore"}, "on_error"),
    ],
)
def test_config_refuses(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SparkDedupConfig(("a.jsonl",), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="stdin"):
        SparkDedupConfig(("-",))
    with pytest.raises(ConfigError, match="input path"):
        SparkDedupConfig(())
