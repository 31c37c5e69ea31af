"""The JSONL field scanner: native (``neardup._native.jsonl``), its numpy twin
(:mod:`.reference`, which takes no line), and the numba kernel it was ported from
(:mod:`.fast`); the reference of every line it takes is ``json.loads``."""
