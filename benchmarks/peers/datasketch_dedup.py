"""The script a datasketch user writes instead of `neardup dedup`: regex tokens, 5-shingles,
MinHash, MinHashLSH, union-find; clusters as JSONL on stdout.

Usage: datasketch_dedup.py IN.jsonl T
"""

import json
import re
import sys

from datasketch import MinHash, MinHashLSH

WORD = re.compile(r"\w+")
path, threshold = sys.argv[1], float(sys.argv[2])
ids, sketches = [], []
with open(path, encoding="utf-8") as fh:
    for line in fh:
        rec = json.loads(line)
        toks = WORD.findall(rec["text"].lower())
        shingles = [" ".join(toks[i : i + 5]).encode() for i in range(max(1, len(toks) - 4))]
        m = MinHash(num_perm=128)
        m.update_batch(shingles)
        ids.append(rec["id"])
        sketches.append(m)
lsh = MinHashLSH(threshold=threshold, num_perm=128)
parent = list(range(len(ids)))


def find(x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


for i, m in enumerate(sketches):
    for j in lsh.query(m):
        if m.jaccard(sketches[j]) >= threshold:
            parent[find(i)] = find(j)
    lsh.insert(i, m)
groups = {}
for i in range(len(ids)):
    groups.setdefault(find(i), []).append(ids[i])
for members in groups.values():
    if len(members) > 1:
        print(json.dumps({"members": members}))
