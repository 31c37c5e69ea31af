"""neardup.spark: clusters equal to the local engine's, large-star/small-star against union-find,
bad input, bucket caps, and the executor steps without Spark."""

from __future__ import annotations

import itertools
import json
import logging
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

import neardup  # noqa: E402  (after the importorskip guards)
from neardup.cluster import connected_components as union_find_components  # noqa: E402
from neardup.errors import ConfigError, InputError  # noqa: E402
from neardup.io import Document  # noqa: E402
from neardup.methods import make_method  # noqa: E402
from neardup.spark import connected_components, dedup_dataframe, similar_pairs  # noqa: E402
from neardup.spark.blobs import pack, unpack  # noqa: E402
from neardup.spark.cli import run_spark_dedup  # noqa: E402
from neardup.spark.dedup import dest_table  # noqa: E402
from neardup.spark.executor import (  # noqa: E402
    bucket_step,
    forward_step,
    method_kind,
    similarities,
    sketch_arrays,
    sketch_step,
    verify_step,
)
from neardup.spark.routing import (  # noqa: E402
    ACCEPTED,
    DATA,
    DUPLICATE_IDS,
    FORWARD,
    KEYS,
    NEEDS,
    NULL_TEXT,
    PAIRS,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "text"

pytestmark = [
    # pyspark's own modules still use APIs that newer Python / pandas flag as deprecated.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:pyspark.*"),
    pytest.mark.filterwarnings("ignore::FutureWarning:pyspark.*"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] session for the module (about 3 s to start on an idle machine)."""
    for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ[var] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("neardup-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "3")
        .config("spark.default.parallelism", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _corpus(n_base: int = 200, n_edited: int = 100, seed: int = 5) -> list[tuple[str, str]]:
    """Paragraphs of the bundled licence texts plus edited copies (1-6 word edits)."""
    paragraphs: list[str] = []
    for path in sorted(EXAMPLES.glob("*.txt")):
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            words = block.split()
            if len(words) >= 15:
                paragraphs.append(" ".join(words))
    rng = random.Random(seed)
    base = paragraphs[:n_base]
    docs = list(base)
    for _ in range(n_edited):
        words = rng.choice(base).split()
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(words))
            if rng.random() < 0.5:
                words[i] = rng.choice(["foo", "bar", "licence", "software"])
            elif len(words) > 5:
                del words[i]
        docs.append(" ".join(words))
    order = list(range(len(docs)))
    rng.shuffle(order)
    return [(f"doc-{k:04d}", docs[k]) for k in order]


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, str]]:
    return _corpus()


def _groups(rows: list[Any], id_col: str = "id") -> set[frozenset[Any]]:
    out: dict[Any, set[Any]] = {}
    for r in rows:
        out.setdefault(r["cluster"], set()).add(r[id_col])
    for cluster, members in out.items():
        assert cluster == min(members)  # cluster id = the smallest member id
    return {frozenset(m) for m in out.values()}


@pytest.mark.parametrize(
    ("method", "threshold", "limit"),
    [("minhash", 0.7, None), ("minhash", 0.7, 0), ("simhash", 0.9, None), ("simhash", 0.8, 0)],
)
def test_clusters_equal_local_engine(
    spark: Any, corpus: list[tuple[str, str]], method: str, threshold: float, limit: int | None
) -> None:
    """limit 0 forces the large-star / small-star iterations; the default uses one task's
    union-find for a graph this small."""
    local = neardup.dedup(corpus, method=method, threshold=threshold)
    expected = {frozenset(c.members) for c in local.clusters}
    assert len(expected) >= 20  # the corpus really has near-duplicates
    assert any(len(c) > 2 for c in expected)
    df = spark.createDataFrame(corpus, "id string, text string")
    extra = {} if limit is None else {"union_find_limit": limit}
    got = _groups(dedup_dataframe(df, method=method, threshold=threshold, **extra).collect())
    assert got == expected


def test_minhash_pairs_equal_local_engine(spark: Any, corpus: list[tuple[str, str]]) -> None:
    local = neardup.dedup(corpus, method="minhash", threshold=0.6)
    expected = {(p.a, p.b) if p.a < p.b else (p.b, p.a): p.similarity for p in local.pairs}
    df = spark.createDataFrame(corpus, "id string, text string")
    rows = similar_pairs(df, method="minhash", threshold=0.6).collect()
    got = {(r["a"], r["b"]): r["similarity"] for r in rows}
    assert got.keys() == expected.keys()
    assert all(got[k] == pytest.approx(expected[k], abs=1e-12) for k in got)


def test_integer_ids_singletons_and_unverified_minhash(
    spark: Any, corpus: list[tuple[str, str]]
) -> None:
    docs = [(n, text) for n, (_, text) in enumerate(corpus[:150])]
    local = neardup.dedup(
        [(str(i), t) for i, t in docs], method="minhash", threshold=0.7, verify=False
    )
    expected = {frozenset(int(m) for m in c.members) for c in local.clusters}
    df = spark.createDataFrame(docs, "doc long, body string")
    out = dedup_dataframe(
        df,
        id_col="doc",
        text_col="body",
        threshold=0.7,
        verify=False,
        include_singletons=True,
    )
    assert out.schema["doc"].dataType.simpleString() == "bigint"
    assert out.schema["cluster"].dataType.simpleString() == "bigint"
    rows = out.collect()
    assert len(rows) == len(docs)
    groups = _groups(rows, "doc")
    assert {g for g in groups if len(g) > 1} == expected
    assert sum(len(g) == 1 for g in groups) == len(docs) - sum(len(g) for g in expected)


def _random_graphs(seed: int = 11) -> tuple[int, list[tuple[int, int]]]:
    """Disjoint graphs on one id range: a 200-node path (shuffled labels), a star, a cycle,
    sparse random graphs, isolated nodes."""
    rng = random.Random(seed)
    edges: list[tuple[int, int]] = []
    base = 0
    path = list(range(base, base + 200))
    rng.shuffle(path)
    edges += list(itertools.pairwise(path))
    base += 200
    edges += [(base + 37, base + k) for k in range(60) if k != 37]  # star, centre not smallest
    base += 60
    edges += [(base + k, base + (k + 1) % 50) for k in range(50)]  # cycle
    base += 50
    for _ in range(4):
        n = rng.randint(30, 120)
        edges += [(base + rng.randrange(n), base + rng.randrange(n)) for _ in range(n)]
        base += n
    base += 25  # isolated nodes at the end
    rng.shuffle(edges)
    return base, edges


def test_large_small_star_equals_union_find(spark: Any) -> None:
    n, edges = _random_graphs()
    roots = union_find_components(n, edges)
    expected = {
        (i, int(r)) for i, r in enumerate(roots.tolist()) if np.count_nonzero(roots == r) > 1
    }
    df = spark.createDataFrame(edges, "src long, dst long")
    got = {(r["id"], r["component"]) for r in connected_components(df).collect()}
    assert got == expected


def test_components_with_string_ids_use_code_point_order(spark: Any) -> None:
    edges = [("b", "é"), ("é", "Z"), ("x", "y"), ("y", "y")]
    df = spark.createDataFrame(edges, "src string, dst string")
    got = {(r["id"], r["component"]) for r in connected_components(df).collect()}
    assert got == {("b", "Z"), ("é", "Z"), ("Z", "Z"), ("x", "x"), ("y", "x")}


def test_oversized_bucket_is_capped_with_a_warning(
    spark: Any, caplog: pytest.LogCaptureFixture
) -> None:
    text = "the same words in the same order make the same band keys every time"
    docs = [(f"id{k:02d}", text) for k in range(8)] + [("other", "nothing in common here at all")]
    df = spark.createDataFrame(docs, "id string, text string")
    with caplog.at_level(logging.WARNING, logger="neardup.spark.dedup"):
        rows = dedup_dataframe(df, method="simhash", max_bucket=3).collect()
    assert "more than max_bucket=3" in caplog.text
    # each member is still compared with the next two in id order: the chain keeps one cluster
    assert _groups(rows) == {frozenset(f"id{k:02d}" for k in range(8))}
    pairs = similar_pairs(df, method="simhash", max_bucket=3).collect()
    assert len(pairs) == 7 + 6  # (k, k+1) and (k, k+2) only, not all 28


def test_bad_input_fails_before_the_job(spark: Any) -> None:
    df = spark.createDataFrame([("a", "x y z"), ("b", "x y z")], "id string, text string")
    with pytest.raises(InputError, match="no column 'body'"):
        dedup_dataframe(df, text_col="body")
    with pytest.raises(InputError, match="no column 'key'"):
        dedup_dataframe(df, id_col="key")
    with pytest.raises(InputError, match="ids must be strings or integers"):
        dedup_dataframe(spark.createDataFrame([(1.5, "x")], "id double, text string"))
    with pytest.raises(InputError, match="must be a string"):
        dedup_dataframe(spark.createDataFrame([("a", 3)], "id string, text int"))
    with pytest.raises(ConfigError, match="no Spark engine"):
        dedup_dataframe(df, method="ctph")
    with pytest.raises(ConfigError, match="unknown method"):
        dedup_dataframe(df, method="nope")
    with pytest.raises(ConfigError, match="max_bucket"):
        dedup_dataframe(df, max_bucket=1)
    with pytest.raises(ConfigError, match="union_find_limit"):
        dedup_dataframe(df, union_find_limit=-1)
    with pytest.raises(ConfigError, match="partitions"):
        dedup_dataframe(df, partitions=0)
    with pytest.raises(ConfigError, match="on_null"):
        dedup_dataframe(df, on_null="ignore")
    with pytest.raises(ConfigError, match="always verifies"):
        dedup_dataframe(df, method="simhash", verify=False)
    with pytest.raises(ConfigError, match="threshold"):
        dedup_dataframe(df, threshold=1.5)
    with pytest.raises(ConfigError, match="does not take"):
        dedup_dataframe(df, colour="red")


def test_null_and_duplicate_rows(spark: Any) -> None:
    text = "one two three four five six seven eight"
    nulls = spark.createDataFrame([("a", text), ("b", None), ("c", text)], "id string, text string")
    with pytest.raises(InputError, match="1 rows have a null text"):
        dedup_dataframe(nulls)
    rows = dedup_dataframe(nulls, on_null="skip", include_singletons=True).collect()
    assert {(r["id"], r["cluster"]) for r in rows} == {("a", "a"), ("c", "a")}
    null_id = spark.createDataFrame([(None, text), ("b", text)], "id string, text string")
    with pytest.raises(InputError, match="null id"):
        dedup_dataframe(null_id)
    dups = spark.createDataFrame([("a", text), ("a", text + " nine")], "id string, text string")
    with pytest.raises(InputError, match=r"not unique.*'a'"):
        dedup_dataframe(dups)


def test_run_spark_dedup_reads_jsonl_and_writes_parquet(
    spark: Any, corpus: list[tuple[str, str]], tmp_path: Path
) -> None:
    docs = corpus[:120]
    src = tmp_path / "docs.jsonl"
    src.write_text(
        "".join(json.dumps({"key": i, "body": t}) + "\n" for i, t in docs), encoding="utf-8"
    )
    out = tmp_path / "clusters.parquet"
    summary = run_spark_dedup(
        [str(src)],
        method="simhash",
        threshold=0.85,
        id_field="key",
        text_field="body",
        output=str(out),
        collect=True,
    )
    local = neardup.dedup(docs, method="simhash", threshold=0.85)
    assert summary.clusters == local.clusters  # members in input order, the first kept
    assert summary.n_docs == len(docs)
    assert summary.duplicates == local.duplicates
    written = spark.read.parquet(str(out)).collect()
    assert {(r["id"], r["cluster"]) for r in written} == {
        (m, min(c.members)) for c in summary.clusters for m in c.members
    }
    with pytest.raises(InputError, match="cannot tell the format"):
        run_spark_dedup([str(tmp_path / "docs.txt")])
    with pytest.raises(InputError, match="no field 'text'"):
        run_spark_dedup([str(src)], id_field="key")


@pytest.mark.parametrize("keep", ["first", "longest"])
def test_spark_and_local_keep_the_same_representatives(
    spark: Any, corpus: list[tuple[str, str]], tmp_path: Path, keep: str
) -> None:
    """Three inputs, the smallest first: Spark packs file splits largest first, so its own
    row order is not the input order; ids are shuffled, so the smallest id is not the first
    either. Clusters (members, representative, numbering) and the record each --annotate
    duplicate points to are the local engine's."""
    from click.testing import CliRunner

    from neardup.cli import main

    docs = corpus[:150]
    files = []
    for i, part in enumerate((docs[:20], docs[20:60], docs[60:])):
        f = tmp_path / f"part{i}.jsonl"
        f.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in part))
        files.append(str(f))
    args = ["-m", "minhash", "-t", "0.7", "--keep", keep, "-q"]
    local = CliRunner().invoke(
        main, ["dedup", *files, *args, "--annotate", str(tmp_path / "local.jsonl")]
    )
    assert local.exit_code == 0, local.output
    local_clusters = [json.loads(line) for line in local.stdout.splitlines()]
    summary = run_spark_dedup(
        files, method="minhash", threshold=0.7, annotate=str(tmp_path / "spark.jsonl"), keep=keep
    )
    assert [c.to_dict() for c in summary.clusters] == local_clusters
    assert any(c["representative"] != min(c["members"]) for c in local_clusters)

    def kept(name: str) -> dict[str, Any]:
        rows = [json.loads(x) for x in (tmp_path / name).read_text().splitlines()]
        return {r["id"]: (r["is_duplicate"], r["duplicate_of"]) for r in rows}

    assert kept("spark.jsonl") == kept("local.jsonl")


_WORDS = [f"w{i}" for i in range(200)]
#: A planted chain m ~ d ~ k (Jaccard 0.80 and 0.81) with m and k apart (0.64 < 0.75), d the
#: longest; an exact pair whose tie ``longest`` breaks by input order; a singleton. The
#: smallest id of the chain (d) is neither its first record nor the id order's pick.
_CHAIN = [
    ("m", " ".join(_WORDS[0:100])),
    ("z", " ".join(f"z{i}" for i in range(60))),
    ("y", " ".join(f"x{i}" for i in range(80))),
    ("d", " ".join(_WORDS[10:112])),
    ("x", " ".join(f"x{i}" for i in range(80))),
    ("k", " ".join(_WORDS[22:120])),
]


@pytest.mark.parametrize("keep", ["first", "longest"])
def test_spark_and_local_remove_the_same_records_of_a_chain(
    spark: Any, tmp_path: Path, keep: str
) -> None:
    """The keep rule of both engines on a chain: --annotate gives the same is_duplicate,
    duplicate_of and similarity, every removed record within the threshold of its kept one;
    with --clustering components, one record per cluster on both."""
    from click.testing import CliRunner

    from neardup.cli import main

    src = tmp_path / "chain.jsonl"
    src.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in _CHAIN))

    def columns(path: Path) -> dict[str, Any]:
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        assert [r["id"] for r in rows] == [k for k, _ in _CHAIN]
        return {r["id"]: (r["is_duplicate"], r["duplicate_of"], r["similarity"]) for r in rows}

    got = {}
    for clustering in (None, "components"):
        name = clustering or "default"
        flags = [] if clustering is None else ["--clustering", clustering]
        local = CliRunner().invoke(
            main,
            [
                "dedup",
                str(src),
                "-m",
                "minhash",
                "-t",
                "0.75",
                "--keep",
                keep,
                *flags,
                "--annotate",
                str(tmp_path / f"local-{name}.jsonl"),
            ],
        )
        assert local.exit_code == 0, local.output
        summary = run_spark_dedup(
            [str(src)],
            method="minhash",
            threshold=0.75,
            annotate=str(tmp_path / f"spark-{name}.jsonl"),
            keep=keep,
            clustering=clustering,
        )
        got[name] = columns(tmp_path / f"spark-{name}.jsonl")
        assert got[name] == columns(tmp_path / f"local-{name}.jsonl"), (keep, clustering)
        assert summary.removed == sum(dup for dup, _, _ in got[name].values())
        assert f"{summary.removed} removed" in local.stderr
    default, components = got["default"], got["components"]
    assert default["x"] == components["x"] == (True, "y", 1.0)  # a tie: the earlier kept
    if keep == "first":  # m keeps d; k is not within the threshold of m: kept
        assert default["d"] == (True, "m", pytest.approx(0.796296, abs=1e-6))
        assert default["k"] == (False, None, None)
        assert components["k"][:2] == (True, "m") and components["k"][2] < 0.75
    else:  # d, the longest, is within the threshold of both
        assert default["m"][:2] == default["k"][:2] == (True, "d")
        assert default == components
    assert sum(not components[k][0] for k in "mdk") == 1  # one record per cluster


# ----------------------------------------------------------------- executor steps, no Spark


def test_executor_verification_matches_local_compare(corpus: list[tuple[str, str]]) -> None:
    texts = [t for _, t in corpus[:40]]
    n = len(texts)
    for name, threshold in (("minhash", 0.5), ("simhash", 0.8)):
        m = make_method(name, threshold)
        _, _, data, offsets = sketch_arrays(m, texts)
        a = np.array([i for i in range(n) for j in range(i + 1, n)])
        b = np.array([j for i in range(n) for j in range(i + 1, n)])
        ok, sims = similarities(
            "jaccard" if name == "minhash" else "hamming",
            np.frombuffer(data, np.uint8),
            offsets,
            a,
            b,
            threshold=threshold,
            radius=getattr(m, "radius", 0),
        )
        for k in range(0, len(a), 37):
            da, db = Document("a", texts[a[k]]), Document("b", texts[b[k]])
            sim, _ = m.compare(da, db)
            assert sims[k] == pytest.approx(sim, abs=1e-12)
            assert ok[k] == (sim >= threshold - 1e-12)


def _run_steps(
    docs: list[tuple[Any, str]], method: str, threshold: float, mode: str, tasks: int = 3
) -> list[Any]:
    """The four executor steps without Spark: each row goes to the task of its dest value."""
    table = dest_table(tasks)
    task_of = {d: t for t, d in enumerate(table)}
    m = make_method(method, threshold)
    kind = method_kind(m)
    string_ids = isinstance(docs[0][0], str)
    id_type = pa.string() if string_ids else pa.int64()

    def shuffle(batches: list[Any], kinds: set[int]) -> list[list[Any]]:
        inbox: list[list[Any]] = [[] for _ in range(tasks)]
        for batch in batches:
            for row in batch.to_pylist():
                if row["kind"] in kinds:
                    inbox[task_of[row["dest"]]].append(row)
        return [
            [pa.RecordBatch.from_pylist(rows, schema=batches[0].schema)] if rows else []
            for rows in inbox
        ]

    sketched = []
    for part in range(2):  # two input partitions
        chunk = docs[part::2]
        batch = pa.RecordBatch.from_arrays(
            [pa.array([d[0] for d in chunk], id_type), pa.array([d[1] for d in chunk])],
            names=["id", "text"],
        )
        sketched += list(
            sketch_step(
                iter([batch]),
                method=method,
                threshold=threshold,
                options={},
                dest_table=table,
                drop_empty=kind == "jaccard",
                partition=part,
            )
        )
    pairs = [
        out
        for inbox in shuffle(sketched, {KEYS})
        for out in bucket_step(
            iter(inbox),
            max_bucket=10_000,
            dest_table=table,
            radius=getattr(m, "radius", 0) if kind == "hamming" else -1,
        )
    ]
    fwd_in = shuffle(pairs + sketched, {PAIRS, NEEDS, DATA}) if pairs else []
    rule = {
        "kind": kind,
        "args": {"threshold": threshold, "radius": getattr(m, "radius", 0), "bits": 64},
    }
    fwd = [
        out
        for inbox in fwd_in
        for out in forward_step(iter(inbox), dest_table=table, string_ids=string_ids, rule=rule)
    ]
    sent = {row["kind"] for batch in fwd for row in batch.to_pylist()}
    assert {FORWARD, ACCEPTED, DATA} <= sent  # pairs across tasks and within one task
    ver_in = shuffle(fwd, {FORWARD, DATA, ACCEPTED}) if fwd else []
    return [
        row
        for inbox in ver_in
        for out in verify_step(
            iter(inbox),
            kind=kind,
            threshold=threshold,
            id_type=id_type,
            mode=mode,
            radius=getattr(m, "radius", 0),
        )  # type: ignore[arg-type]
        for row in out.to_pylist()
    ]


@pytest.mark.parametrize(
    ("method", "threshold", "blob_bytes"),
    [("minhash", 0.6, None), ("simhash", 0.85, None), ("minhash", 0.6, 2048)],
)
def test_executor_steps_without_spark_equal_local(
    corpus: list[tuple[str, str]],
    method: str,
    threshold: float,
    blob_bytes: int | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With tiny blobs every step cuts its output into many pieces: same result."""
    if blob_bytes is not None:
        monkeypatch.setattr("neardup.spark.routing.BLOB_BYTES", blob_bytes)
    local = neardup.dedup(corpus, method=method, threshold=threshold)
    rows = _run_steps(corpus, method, threshold, "pairs")
    expected = {(min(p.a, p.b), max(p.a, p.b)): p.similarity for p in local.pairs}
    got = {(r["a"], r["b"]): r["similarity"] for r in rows}
    assert got.keys() == expected.keys() and len(rows) == len(got)
    assert all(got[k] == pytest.approx(expected[k], abs=1e-12) for k in got)
    # edges: a forest per task, with the local components
    edges = _run_steps(corpus, method, threshold, "edges")
    ids = sorted({i for e in edges for i in (e["src"], e["dst"])})
    pos = {x: k for k, x in enumerate(ids)}
    roots = union_find_components(len(ids), [(pos[e["src"]], pos[e["dst"]]) for e in edges])
    groups: dict[int, set[str]] = {}
    for k, r in enumerate(roots.tolist()):
        groups.setdefault(r, set()).add(ids[k])
    assert {frozenset(g) for g in groups.values()} == {frozenset(c.members) for c in local.clusters}
    assert all(e["src"] > e["dst"] for e in edges)


def test_executor_steps_with_integer_ids(corpus: list[tuple[str, str]]) -> None:
    docs = [(10_000 - n, text) for n, (_, text) in enumerate(corpus)]
    local = neardup.dedup([(str(i), t) for i, t in docs], method="minhash", threshold=0.6)
    rows = _run_steps(docs, "minhash", 0.6, "pairs")
    assert {(r["a"], r["b"]) for r in rows} == {
        tuple(sorted((int(p.a), int(p.b)))) for p in local.pairs
    }


def test_sketch_step_drops_empty_sets_and_keeps_ids() -> None:
    batch = pa.RecordBatch.from_arrays(
        [pa.array([7, 8, 9], pa.int64()), pa.array(["a b c d e f g", "", "a b c d e f g"])],
        names=["id", "text"],
    )
    table = dest_table(2)
    (out,) = sketch_step(
        iter([batch]),
        method="minhash",
        threshold=0.8,
        options={},
        dest_table=table,
        drop_empty=True,
        partition=5,
    )
    rows = out.to_pylist()
    keys = [unpack(r["blob"]) for r in rows if r["kind"] == KEYS]
    refs = np.concatenate([k[1] for k in keys])
    assert set(refs.tolist()) == {5 << 32, (5 << 32) | 2}  # the empty document has no keys
    assert all(r["dest"] in table for r in rows)
    (data,) = [unpack(r["blob"]) for r in rows if r["kind"] == DATA]
    assert data[0].tolist() == [5 << 32, (5 << 32) | 1, (5 << 32) | 2]
    assert data[1].tolist() == [7, 8, 9]
    assert np.diff(data[-1]).tolist()[1] == 0 and len(data[2]) == int(data[-1][-1])


def test_blobs_round_trip_and_spark_hash_routing(spark: Any) -> None:
    from pyspark.sql import functions as sf

    arrays = [
        np.arange(5, dtype=np.int64),
        np.array([1, 2**64 - 1], np.uint64),
        np.zeros(3, np.uint8),
        np.array([9], np.uint32),
        np.zeros(0, np.int64),
    ]
    back = unpack(pack(*arrays))
    assert all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(arrays, back, strict=True)
    )
    for tasks in (1, 2, 7):
        table = dest_table(tasks)
        df = spark.createDataFrame([(d,) for d in table], "dest int").repartition(tasks, "dest")
        placed = {
            r["dest"]: r["p"]
            for r in df.select("dest", sf.spark_partition_id().alias("p")).collect()
        }
        assert placed == {d: t for t, d in enumerate(table)}


def test_sketch_step_guards_null_texts() -> None:
    batch = pa.RecordBatch.from_arrays(
        [pa.array(["a", "b", "c"]), pa.array(["one two three four five", None, "six seven"])],
        names=["id", "text"],
    )
    table = dest_table(1)
    with pytest.raises(InputError, match=NULL_TEXT):
        list(
            sketch_step(
                iter([batch]),
                method="simhash",
                threshold=0.9,
                options={},
                dest_table=table,
                partition=0,
            )
        )
    (out,) = sketch_step(
        iter([batch]),
        method="simhash",
        threshold=0.9,
        options={},
        dest_table=table,
        on_null="skip",
        partition=0,
    )
    (data,) = [unpack(r["blob"]) for r in out.to_pylist() if r["kind"] == DATA]
    assert data[0].tolist() == [0, 1]  # two documents kept, numbered in order


@pytest.mark.parametrize(("ids", "twice"), [(["x", "é", "x", "y"], "x"), ([3, 9, 4, 9], 9)])
def test_bucket_step_finds_duplicate_ids(ids: list[Any], twice: Any) -> None:
    table = dest_table(1)
    string_ids = isinstance(ids[0], str)

    def bucket(some: list[Any]) -> list[Any]:
        batch = pa.RecordBatch.from_arrays(
            [pa.array(some), pa.array(["one two three four five six"] * len(some))],
            names=["id", "text"],
        )
        rows = sketch_step(
            iter([batch]),
            method="simhash",
            threshold=0.9,
            options={},
            dest_table=table,
            check_ids=True,
            partition=0,
        )
        return list(bucket_step(rows, max_bucket=10, dest_table=table, string_ids=string_ids))

    with pytest.raises(InputError, match=f"{DUPLICATE_IDS} {twice!r}$"):
        bucket(ids)
    assert bucket(ids[:2])  # distinct ids: the pair goes on


def test_keep_group_orders_by_input_position_and_keeps_the_id_type() -> None:
    """The grouped keep step without Spark: members arrive in any order, integer ids of
    any width; ``longest`` keeps 5 (it has a pair with both), ``first`` keeps 7 and 9 (9 has
    no pair with 7), one per cluster keeps 7 alone (9's similarity left to compare)."""
    from neardup.spark.keep import keep_group

    i32 = pa.int32()
    members = pa.table(
        {
            "cluster": pa.array([5] * 3, i32),
            "id": pa.array([9, 5, 7], i32),
            "file": [0] * 3,
            "path": ["p"] * 3,
            "offset": [0] * 3,
            "row": [2, 1, 0],
            "size": [1, 3, 1],
        }
    )
    pairs = pa.table(
        {
            "cluster": pa.array([5, 5], i32),
            "a": pa.array([5, 5], i32),
            "b": pa.array([7, 9], i32),
            "similarity": [0.9, 0.8],
        }
    )

    def run(keep: str, within: bool) -> list[tuple[int, int | None, float | None]]:
        out = keep_group(members, pairs, keep=keep, within_threshold=within)
        assert out.schema.field("id").type == i32
        return [(r["id"], r["duplicate_of"], r["similarity"]) for r in out.to_pylist()]

    assert run("longest", True) == [(7, 5, 0.9), (5, None, None), (9, 5, 0.8)]
    assert run("first", True) == [(7, None, None), (5, 7, 0.9), (9, None, None)]
    assert run("first", False) == [(7, None, None), (5, 7, 0.9), (9, 7, None)]
