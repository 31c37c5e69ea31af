"""Corpus workflows of data teams: safe outputs, annotated records, exact, line-level and
substring deduplication (see ``docs/dedup.md`` and ``docs/formats.md``)."""
