"""Indexes that find near-duplicate sketches fast (exact Hamming radius, banded LSH)."""
