"""datasketch's ``lshensemble_partition`` module: the size-partitioning programme."""

from __future__ import annotations

from neardup.index.lshensemble import optimal_partitions

__all__ = ["optimal_partitions"]
