"""A paraphrase-versus-unrelated ranking set built from sentences on this machine (no downloads).

How it is made (deterministic, seed 7):

1. Sentences: the benchmark corpus (``corpus.py``: man pages, licences, /usr/share/doc, the
   Python standard library) cut at ``.``/``!``/``?`` followed by whitespace; kept when 8-30
   words long, at least 85% of the words alphabetic, no roff markup (backslashes, a leading dot),
   and not seen before (lower-cased).
2. A paraphrase of an anchor sentence applies, in order: synonym substitution (every word found
   in :data:`SYNONYMS`, a hand-written table of common documentation words, is replaced, at
   most 4; anchors with no substitutable word are skipped); clause reordering (a sentence with
   ", " is rotated at a random comma, the first letter's case moved along); dropping one
   article (``the``/``a``/``an``) at random.
3. Distractors: for each anchor the ``negatives`` sentences of the pool (other sentences, never
   the anchor or an identical text) with the highest word-set Jaccard to the anchor: unrelated
   sentences that share its words, so word overlap alone does not find the paraphrase.
4. The task: rank the paraphrase and the distractors by cosine similarity to the anchor;
   accuracy is the share of anchors whose paraphrase ranks first (also reported: mean
   reciprocal rank).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import numpy as np
from corpus import load_corpus

#: Word -> substitute, common in technical documentation (lower-case keys).
SYNONYMS: dict[str, str] = {
    "use": "utilize",
    "used": "utilized",
    "uses": "utilizes",
    "using": "utilizing",
    "file": "document",
    "files": "documents",
    "show": "display",
    "shows": "displays",
    "shown": "displayed",
    "create": "make",
    "creates": "makes",
    "created": "made",
    "remove": "delete",
    "removes": "deletes",
    "removed": "deleted",
    "error": "failure",
    "errors": "failures",
    "program": "application",
    "programs": "applications",
    "run": "execute",
    "runs": "executes",
    "running": "executing",
    "option": "setting",
    "options": "settings",
    "default": "standard",
    "directory": "folder",
    "directories": "folders",
    "start": "begin",
    "starts": "begins",
    "end": "finish",
    "large": "big",
    "small": "little",
    "change": "modify",
    "changes": "modifies",
    "changed": "modified",
    "get": "obtain",
    "gets": "obtains",
    "need": "require",
    "needs": "requires",
    "needed": "required",
    "help": "assist",
    "allow": "permit",
    "allows": "permits",
    "allowed": "permitted",
    "check": "verify",
    "checks": "verifies",
    "find": "locate",
    "finds": "locates",
    "found": "located",
    "buy": "purchase",
    "begin": "start",
    "fast": "quick",
    "quickly": "rapidly",
    "simple": "easy",
    "example": "instance",
    "examples": "instances",
    "information": "details",
    "problem": "issue",
    "problems": "issues",
    "user": "person",
    "users": "people",
    "value": "amount",
    "values": "amounts",
    "return": "give back",
    "returns": "gives back",
    "send": "transmit",
    "sends": "transmits",
    "receive": "get",
    "receives": "gets",
    "provide": "supply",
    "provides": "supplies",
    "provided": "supplied",
    "try": "attempt",
    "tries": "attempts",
    "possible": "feasible",
    "important": "significant",
    "enough": "sufficient",
    "correct": "right",
    "wrong": "incorrect",
    "old": "previous",
    "new": "fresh",
    "often": "frequently",
    "usually": "normally",
    "also": "additionally",
    "however": "nevertheless",
    "therefore": "thus",
    "because": "since",
    "about": "regarding",
    "many": "numerous",
    "several": "various",
    "each": "every",
    "whole": "entire",
    "copy": "duplicate",
    "copies": "duplicates",
    "write": "store",
    "writes": "stores",
    "written": "stored",
    "read": "load",
    "reads": "loads",
    "print": "output",
    "prints": "outputs",
    "list": "listing",
    "line": "row",
    "lines": "rows",
    "work": "function",
    "works": "functions",
    "software": "program",
    "permission": "authorization",
    "modify": "alter",
    "distribute": "share",
    "free": "gratis",
    "terms": "conditions",
    "license": "licence",
    "warranty": "guarantee",
    "without": "lacking",
    "any": "whatever",
    "must": "has to",
    "may": "might",
    "should": "ought to",
    "following": "next",
    "above": "preceding",
    "below": "subsequent",
    "number": "count",
    "name": "title",
}

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_ARTICLES = ("the", "a", "an")


@dataclass(frozen=True)
class RankingSet:
    """Anchors, their paraphrases, and per anchor the distractor texts."""

    anchors: list[str]
    paraphrases: list[str]
    negatives: list[list[str]]


def sentences(max_mb: float = 6.0) -> list[str]:
    """Clean 8-30 word sentences of the machine corpus, each once."""
    seen: set[str] = set()
    out: list[str] = []
    for doc in load_corpus(max_mb):
        for raw in _SENTENCE.split(doc):
            if "\\" in raw or raw.lstrip().startswith("."):  # roff markup of man pages
                continue
            words = raw.split()
            if not 8 <= len(words) <= 30:
                continue
            alpha = sum(w.strip(".,;:()'\"!?").isalpha() for w in words)
            if alpha < 0.85 * len(words):
                continue
            text = " ".join(words)
            key = text.lower()
            if key not in seen:
                seen.add(key)
                out.append(text)
    return out


def paraphrase(text: str, rng: random.Random) -> str | None:
    """Synonym substitution, clause rotation, an article dropped; None if nothing to substitute."""
    words = text.split()
    spots = [k for k, w in enumerate(words) if w.lower().strip(".,;:()") in SYNONYMS]
    if not spots:
        return None
    for k in sorted(rng.sample(spots, min(4, len(spots)))):
        w = words[k]
        core = w.strip(".,;:()")
        sub = SYNONYMS[core.lower()]
        if core[:1].isupper():
            sub = sub[:1].upper() + sub[1:]
        words[k] = w.replace(core, sub, 1)
    out = " ".join(words)
    commas = [m.start() for m in re.finditer(", ", out)]
    if commas:
        at = rng.choice(commas)
        head, tail = out[:at], out[at + 2 :].rstrip(".!?")
        end = out[-1] if out[-1] in ".!?" else ""
        if head and tail:
            head = head[:1].lower() + head[1:]
            tail = tail[:1].upper() + tail[1:]
            out = f"{tail}, {head}{end}"
    arts = [k for k, w in enumerate(out.split()) if w.lower() in _ARTICLES]
    if arts:
        parts = out.split()
        del parts[rng.choice(arts)]
        out = " ".join(parts)
    return out


def build(count: int = 1000, negatives: int = 9, *, seed: int = 7) -> RankingSet:
    """The ranking set: ``count`` anchors with a paraphrase and ``negatives`` hard distractors."""
    from scipy import sparse

    rng = random.Random(seed)
    pool = sentences()
    order = list(range(len(pool)))
    rng.shuffle(order)
    anchors: list[int] = []
    paras: list[str] = []
    for k in order:
        p = paraphrase(pool[k], rng)
        if p is not None and p != pool[k]:
            anchors.append(k)
            paras.append(p)
            if len(anchors) == count:
                break
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for r, text in enumerate(pool):
        for w in {w.lower().strip(".,;:()'\"!?") for w in text.split()}:
            rows.append(r)
            cols.append(vocab.setdefault(w, len(vocab)))
    x = sparse.csr_matrix(
        (np.ones(len(rows), np.float32), (rows, cols)), shape=(len(pool), len(vocab))
    )
    sizes = np.asarray(x.sum(axis=1)).ravel()
    a = x[anchors]
    inter = (a @ x.T).toarray()
    jac = inter / (sizes[anchors][:, None] + sizes[None, :] - inter)
    lowered = [t.lower() for t in pool]
    neg: list[list[str]] = []
    for r, k in enumerate(anchors):
        jac[r, k] = -1.0
        best = np.argsort(-jac[r], kind="stable")
        picked: list[str] = []
        for c in best.tolist():
            if lowered[c] != lowered[k] and pool[c] != paras[r]:
                picked.append(pool[c])
                if len(picked) == negatives:
                    break
        neg.append(picked)
    return RankingSet([pool[k] for k in anchors], paras, neg)


def score(vectors_of: object, data: RankingSet) -> tuple[float, float]:
    """(top-1 accuracy, mean reciprocal rank) of an ``embed(texts) -> (n, d)`` function."""
    embed = vectors_of  # a callable; typed loosely for the benchmark scripts
    texts: list[str] = []
    for a, p, ns in zip(data.anchors, data.paraphrases, data.negatives, strict=True):
        texts.extend([a, p, *ns])
    v = np.asarray(embed(texts), dtype=np.float64)  # type: ignore[operator]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms == 0, 1.0, norms)
    group = 2 + len(data.negatives[0])
    top1 = 0
    rr = 0.0
    for g in range(len(data.anchors)):
        block = v[g * group : (g + 1) * group]
        sims = block[1:] @ block[0]
        rank = 1 + int(np.sum(sims[1:] >= sims[0]))
        top1 += rank == 1
        rr += 1.0 / rank
    return top1 / len(data.anchors), rr / len(data.anchors)
