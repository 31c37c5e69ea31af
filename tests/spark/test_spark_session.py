"""How `neardup dedup --engine spark` starts its session: driver memory from the machine in
local mode unless the user set it, --spark-conf KEY=VALUE, and one line when Java is missing.
None of these tests starts a JVM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.errors import ConfigError
from neardup.spark.session import (
    check_java,
    default_driver_memory,
    memory_set_by_user,
    parse_spark_conf,
    session_conf,
)

SRC = Path(__file__).resolve().parents[2] / "src"
GIB = 1 << 30


def test_driver_memory_is_half_the_machine_within_bounds() -> None:
    assert default_driver_memory(24 * GIB) == "12288m"
    assert default_driver_memory(1 * GIB) == "1024m"  # never below Spark's own default
    assert default_driver_memory(512 * GIB) == "32768m"  # compressed pointers end above 32g
    assert default_driver_memory(None) is None


@pytest.mark.parametrize(
    ("user", "env"),
    [
        ({"spark.driver.memory": "2g"}, {}),
        ({}, {"PYSPARK_SUBMIT_ARGS": "--driver-memory 6g pyspark-shell"}),
        ({}, {"PYSPARK_SUBMIT_ARGS": "--conf spark.driver.memory=6g pyspark-shell"}),
        ({}, {"SPARK_DRIVER_MEMORY": "6g"}),
    ],
)
def test_a_memory_the_user_chose_is_kept(user: dict[str, str], env: dict[str, str]) -> None:
    assert memory_set_by_user(user, env)
    conf = session_conf(local=True, user=user, env=env, total=64 * GIB)
    assert conf.get("spark.driver.memory") == user.get("spark.driver.memory")


def test_spark_defaults_conf_counts_as_the_users_choice(tmp_path: Path) -> None:
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.memory  5g\n", encoding="utf-8")
    assert memory_set_by_user({}, {"SPARK_CONF_DIR": str(tmp_path)})
    (tmp_path / "spark-defaults.conf").write_text("spark.executor.memory 5g\n", encoding="utf-8")
    assert not memory_set_by_user({}, {"SPARK_CONF_DIR": str(tmp_path)})


def test_local_sessions_get_machine_memory_clusters_do_not() -> None:
    user = {"spark.sql.shuffle.partitions": "64"}
    local = session_conf(local=True, user=user, env={}, total=16 * GIB)
    assert local == {"spark.sql.shuffle.partitions": "64", "spark.driver.memory": "8192m"}
    assert session_conf(local=False, user=user, env={}, total=16 * GIB) == user


def test_parse_spark_conf() -> None:
    assert parse_spark_conf(["a.b=1", "c = x=y", "a.b=2"]) == {"a.b": "2", "c": "x=y"}
    for bad in ("spark.driver.memory", "=6g"):
        with pytest.raises(ConfigError, match="KEY=VALUE"):
            parse_spark_conf([bad])


def test_spark_conf_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "text": "x"}) + "\n", encoding="utf-8")
    seen: dict[str, object] = {}

    def fake_run(paths: list[str], **kwargs: object) -> object:
        seen.update(kwargs)
        raise ConfigError("stop here")

    monkeypatch.setattr("neardup.spark.cli.run_spark_dedup", fake_run)
    args = ["dedup", str(data), "--engine", "spark", "-q"]
    conf = ["--spark-conf", "spark.driver.memory=6g", "--spark-conf", "spark.x=1"]
    result = CliRunner().invoke(main, [*args, *conf])
    assert result.exit_code == 1 and "stop here" in result.output
    assert seen["spark_conf"] == {"spark.driver.memory": "6g", "spark.x": "1"}
    bad = CliRunner().invoke(main, [*args, "--spark-conf", "spark.driver.memory"])
    assert bad.exit_code == 1 and "KEY=VALUE" in bad.output
    local = CliRunner().invoke(main, ["dedup", str(data), "--spark-conf", "a=b"])
    assert local.exit_code == 2 and "--spark-conf go with --engine spark" in local.output


def test_check_java(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="install a JRE"):
        check_java({"PATH": str(tmp_path)})
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n", encoding="utf-8")
    check_java({"PATH": str(tmp_path), "JAVA_HOME": str(tmp_path / "jdk")})


def test_no_java_is_one_line_that_says_what_to_install(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "text": "some words here"}) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_GATEWAY_PORT")}
    env["PATH"] = str(tmp_path)  # no java (nor anything else) on PATH
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *(p for p in sys.path if p)])
    proc = subprocess.run(
        [sys.executable, "-m", "neardup", "dedup", "--engine", "spark", str(data), "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Java 17" in lines[0] and "openjdk-17-jre-headless" in lines[0]
