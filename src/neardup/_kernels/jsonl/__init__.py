"""The JSONL field scanner (numba); its reference is ``json.loads``."""
