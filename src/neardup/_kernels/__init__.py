"""The batch engine: documents as one UTF-8 buffer plus offsets, tokenized and hashed in kernels."""
