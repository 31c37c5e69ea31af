"""Embedding value type and semantic_similarity: validation, symmetry, model and size checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.embeddings import Embedding, semantic_similarity
from neardup.errors import IncompatibleSketchError, InputError

finite = st.floats(-100, 100, allow_nan=False, width=32)
vectors = st.integers(1, 16).flatmap(
    lambda n: st.tuples(
        st.lists(finite, min_size=n, max_size=n), st.lists(finite, min_size=n, max_size=n)
    )
)


def test_vector_is_a_read_only_float32_copy() -> None:
    source = np.array([1.0, 2.0, 3.0])
    emb = Embedding(source, model_id="m")
    source[0] = 99.0
    assert emb.vector.dtype == np.float32 and emb.vector.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        emb.vector[0] = 5.0
    with pytest.raises(AttributeError):
        emb.model_id = "other"  # type: ignore[misc]


def test_equality_hash_and_repr() -> None:
    a, b = Embedding([1, 2], model_id="m"), Embedding([1.0, 2.0], model_id="m")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Embedding([1, 2], model_id="n") and a != Embedding([1, 3], model_id="m")
    assert a != "not an embedding"
    assert repr(a) == "Embedding(dimension=2, model_id='m')"


@pytest.mark.parametrize("bad", [[], [[1.0, 2.0]], [1.0, math.nan], [math.inf], ["x"]])
def test_invalid_vectors_are_rejected(bad: object) -> None:
    with pytest.raises(InputError):
        Embedding(bad)  # type: ignore[arg-type]


def test_mismatches_raise() -> None:
    with pytest.raises(IncompatibleSketchError, match="different models"):
        Embedding([1, 0], model_id="a").similarity(Embedding([1, 0], model_id="b"))
    with pytest.raises(IncompatibleSketchError, match="dimensions"):
        semantic_similarity(Embedding([1, 0], model_id="a"), Embedding([1, 0, 0], model_id="a"))
    with pytest.raises(InputError, match="zero vector"):
        semantic_similarity([0.0, 0.0], [1.0, 0.0])
    # an unknown model id is comparable with any model of the same size (txtfp's rule)
    assert semantic_similarity(Embedding([1, 0]), Embedding([1, 0], model_id="a")) == 1.0


@given(vectors)
def test_similarity_properties(pair: tuple[list[float], list[float]]) -> None:
    a, b = (np.array(v, dtype=np.float32) for v in pair)
    if not (np.linalg.norm(a.astype(np.float64)) and np.linalg.norm(b.astype(np.float64))):
        with pytest.raises(InputError):
            semantic_similarity(a, b)
        return
    s = semantic_similarity(a, b)
    assert -1.0 <= s <= 1.0
    assert s == semantic_similarity(b, a)
    assert semantic_similarity(a, a) == pytest.approx(1.0, abs=1e-9)
    expected = float(
        np.dot(a.astype(np.float64), b)
        / (np.linalg.norm(a.astype(np.float64)) * np.linalg.norm(b.astype(np.float64)))
    )
    assert s == pytest.approx(expected, abs=1e-9)
    assert semantic_similarity(a, -a) == pytest.approx(-1.0, abs=1e-9)
