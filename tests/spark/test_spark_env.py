"""`neardup dedup --engine spark` in local mode needs no environment variable: the workers run
the CLI's own interpreter (issue 25). A wrong interpreter fails in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

pytestmark = [
    # pyspark's own modules still use APIs that newer Python / pandas flag as deprecated.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:pyspark.*"),
    pytest.mark.filterwarnings("ignore::FutureWarning:pyspark.*"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

TEXT = "the quick brown fox jumps over the lazy dog near the river bank on a sunny day"


@pytest.mark.slow
def test_local_spark_without_pyspark_python(tmp_path: Path) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    # A `python3` first on PATH that is not this interpreter: Spark's default worker command.
    # Without the fix the workers run it and fail; with it they run sys.executable.
    shims = tmp_path / "bin"
    shims.mkdir()
    fake = shims / "python3"
    fake.write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    fake.chmod(0o755)
    data = tmp_path / "docs.jsonl"
    rows = [{"id": "a", "text": TEXT}, {"id": "b", "text": TEXT + "!"}, {"id": "c", "text": "x"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    }
    env["PATH"] = os.pathsep.join(
        [str(shims), str(Path(java).resolve().parent), "/usr/bin", "/bin"]
    )
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run(
        [sys.executable, "-m", "neardup", "dedup", "--engine", "spark", str(data), "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    clusters = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [c["members"] for c in clusters] == [["a", "b"]]


def test_workers_that_cannot_import_neardup_fail_in_one_line(tmp_path: Path) -> None:
    from pyspark.sql import SparkSession

    from neardup.errors import ConfigError
    from neardup.spark.cli import _check_workers

    active = SparkSession.getActiveSession()
    if active is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = active or (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    fake.chmod(0o755)
    sc = spark.sparkContext
    saved = sc.pythonExec
    try:
        _check_workers(spark, local=True)  # this interpreter imports neardup
        sc.pythonExec = str(fake)
        with pytest.raises(ConfigError) as info:
            _check_workers(spark, local=False)
    finally:
        sc.pythonExec = saved
        if active is None:
            spark.stop()
    message = str(info.value)
    assert "\n" not in message and str(fake) in message
    assert "set PYSPARK_PYTHON" in message and "on every executor" in message
