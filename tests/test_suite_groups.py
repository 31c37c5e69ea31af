"""The suite's xdist groups (tests/conftest.py): every listed file exists, and test ids map to
the groups that ``--dist loadgroup`` keeps on one worker."""

from __future__ import annotations

from pathlib import Path

from conftest import ONE_WORKER_FILES, xdist_group_of

TESTS = Path(__file__).parent


def test_every_grouped_file_exists() -> None:
    # a renamed file would silently leave its group and build its fixtures on both workers
    missing = [name for name in ONE_WORKER_FILES if not (TESTS / name).is_file()]
    assert not missing


def test_groups_follow_the_test_id() -> None:
    assert xdist_group_of("tests/spark/test_spark_dedup.py::test_x[a-b]") == "spark"
    assert xdist_group_of("tests/test_cli.py::test_dedup_engine_spark_matches_local") == "spark"
    assert xdist_group_of("tests/embeddings/test_embeddings_local.py::test_a") == "models"
    assert xdist_group_of("tests/embeddings/test_embeddings_dedup.py::test_b") == "models"
    assert xdist_group_of("tests/fuzzy/test_fuzzy_ctph.py::test_c") == "fuzzy_ctph"
    assert xdist_group_of("tests/test_cli.py::test_dedup") is None
    assert xdist_group_of("src/neardup/io.py::neardup.io.Document") is None
