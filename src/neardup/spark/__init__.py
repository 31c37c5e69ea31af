"""[spark] Near-duplicate detection on Apache Spark DataFrames, with the local engine's results.

``import neardup.spark`` does not import pyspark; the functions do, and raise
:class:`~neardup.errors.MissingExtraError` (``pip install 'neardup[spark]'``) without it.
See ``docs/spark.md``.
"""

from __future__ import annotations

from neardup.spark.components import connected_components
from neardup.spark.dedup import DEFAULT_MAX_BUCKET, dedup_dataframe, similar_pairs

__all__ = ["DEFAULT_MAX_BUCKET", "connected_components", "dedup_dataframe", "similar_pairs"]
