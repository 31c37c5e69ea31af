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
        clustering="components",
        spark_conf={"spark.driver.memory": "2g"},
        options={"partitions": 4},
    )
    assert config.run() == "summary"  # type: ignore[comparison-overlap]
    assert seen["paths"] == ["a.parquet"] and seen["method"] == "simhash"
    assert seen["collect"] is True and seen["partitions"] == 4
    assert seen["spark_conf"] == {"spark.driver.memory": "2g"}
    assert seen["clustering"] == "components" and seen["keep"] == "first"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "tlsh"}, "runs minhash and simhash"),
        ({"threshold": 1.5}, "threshold"),
        ({"keep": "largest"}, "keep must be"),
        ({"on_error": "ignore"}, "on_error"),
        ({"clustering": "center"}, "clusters by components, not 'center'"),
    ],
)
def test_config_refuses(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SparkDedupConfig(("a.jsonl",), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="stdin"):
        SparkDedupConfig(("-",))
    with pytest.raises(ConfigError, match="input path"):
        SparkDedupConfig(())


def test_cli_passes_clustering_components_to_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """--clustering components goes with --engine spark (one record per cluster); center is
    a usage error."""
    from click.testing import CliRunner

    from neardup.cli import main

    seen: list[SparkDedupConfig] = []
    monkeypatch.setattr("neardup.cli.spark.spark_dedup", lambda config, **_: seen.append(config))
    args = ["dedup", "a.jsonl", "--engine", "spark", "--annotate", "ann.jsonl"]
    res = CliRunner().invoke(main, [*args, "--clustering", "components", "--keep", "longest"])
    assert res.exit_code == 0, res.output
    assert (seen[0].clustering, seen[0].keep) == ("components", "longest")
    res = CliRunner().invoke(main, [*args, "--clustering", "center"])
    assert res.exit_code == 2 and "components only" in res.output
