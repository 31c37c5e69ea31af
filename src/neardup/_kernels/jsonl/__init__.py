"""The JSONL field scanner: native (``neardup._native.jsonl``), its numpy twin
(:mod:`.reference`, which takes no line); the reference of every line it takes is ``json.loads``."""
