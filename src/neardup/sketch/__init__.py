"""Sketches: compact fingerprints of documents (SimHash, MinHash) and their value types."""
