"""Stage 1b, indexing: the BM25 and dense (FAISS) indexes over the chunks, as artifacts.

Kept apart from parsing so that changing an index parameter does not re-parse the corpus.

BM25 is stored as a sparse matrix of precomputed per-(chunk, term) weights,
`idf(t) * tf*(k1+1) / (tf + k1*(1 - b + b*dl/avgdl))`, with the exact IDF of
`rank_bm25.BM25Okapi` (negative IDFs floored at `epsilon * mean idf`). A query's score is then one
sparse column-slice and a dot product: identical to rank_bm25, orders of magnitude faster, and it
opens in pandas/DuckDB. We chose this over bm25s because bm25s's IDF and tokenizer differ from
rank_bm25 (top-10 overlap 0.73; docs/operations/offline.md) and scipy is already a dependency.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import faiss
import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from stages import contracts
from stages.common import parts_cache, progress
from stages.common.text import tokenize
from stages.models import embeddings, files

NAME = "indexing"
VERSION = "1.2.0"
INPUTS = ("chunks",)  # contract tables and blobs read
OUTPUTS = ("bm25_postings", "bm25_vocab", "dense.faiss", "embeddings.npy")  # tables and blobs
PER_QUESTION = False


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    epsilon: float = Field(0.25, ge=0)
    embedding_model: str = embeddings.DEFAULT_EMBEDDING_MODEL
    # Attention activations grow with batch x tokens^2: at 64 chunks of 256 tokens they added
    # ~0.6 GB to a run's peak RSS; 16 adds ~0.2 GB and gives the same vectors.
    embedding_batch_size: int = Field(16, ge=1)
    faiss_index: Literal["auto", "flat", "hnsw", "ivf"] = "auto"
    exact_below: int = Field(50_000, ge=0, description="auto: exact (flat) index below this size")
    hnsw_m: int = Field(32, ge=4)
    hnsw_ef_construction: int = Field(80, ge=8)
    ivf_nlist: int | None = Field(None, ge=1, description="IVF lists; null = 4 * sqrt(n)")


def chunk_index_text(title: str, section_path: str, text: str) -> str:
    """What both indexes see for a chunk: its title and section give context to short chunks."""
    heading = " > ".join(part for part in (title, section_path) if part)
    return f"{heading}\n{text}" if heading else text


def bm25_weights(
    corpus: list[list[str]], k1: float, b: float, epsilon: float
) -> tuple[pa.Table, pa.Table]:
    """Postings (row, term_id, weight) and vocabulary (term_id, term, df, idf) for `corpus`."""
    n_docs = len(corpus)
    if n_docs == 0:
        return contracts.empty("bm25_postings"), contracts.empty("bm25_vocab")
    frequencies = [Counter(tokens) for tokens in corpus]
    avgdl = sum(len(tokens) for tokens in corpus) / n_docs
    df: Counter[str] = Counter()
    for counts in frequencies:
        df.update(counts.keys())
    terms = list(df)
    idf = {t: math.log(n_docs - df[t] + 0.5) - math.log(df[t] + 0.5) for t in terms}
    floor = epsilon * (sum(idf.values()) / len(idf)) if idf else 0.0
    idf = {t: (floor if value < 0 else value) for t, value in idf.items()}
    term_ids = {t: i for i, t in enumerate(terms)}
    rows, ids, weights = [], [], []
    for row, (counts, tokens) in enumerate(zip(frequencies, corpus, strict=True)):
        norm = k1 * (1 - b + b * len(tokens) / avgdl) if avgdl else k1
        for term, tf in counts.items():
            rows.append(row)
            ids.append(term_ids[term])
            weights.append(idf[term] * (tf * (k1 + 1) / (tf + norm)))
    postings = {"row": rows, "term_id": ids, "weight": weights}
    vocab = {
        "term_id": list(range(len(terms))),
        "term": terms,
        "df": [df[t] for t in terms],
        "idf": [idf[t] for t in terms],
    }
    return (
        contracts.table_of_columns("bm25_postings", postings, stage=NAME),
        contracts.table_of_columns("bm25_vocab", vocab, stage=NAME),
    )


def index_type(n_vectors: int, config: Config) -> str:
    if config.faiss_index != "auto":
        return config.faiss_index
    return "flat" if n_vectors < config.exact_below else "hnsw"


def build_faiss(vectors: np.ndarray, dimension: int, config: Config) -> Any:
    """Exact inner-product search for small corpora; HNSW or IVF above `exact_below`."""
    kind = index_type(len(vectors), config)
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dimension, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = config.hnsw_ef_construction
    elif kind == "ivf":
        nlist = config.ivf_nlist or max(1, int(4 * math.sqrt(max(len(vectors), 1))))
        index = faiss.IndexIVFFlat(
            faiss.IndexFlatIP(dimension), dimension, nlist, faiss.METRIC_INNER_PRODUCT
        )
        index.train(vectors)
    else:
        index = faiss.IndexFlatIP(dimension)
    if len(vectors):
        index.add(vectors)  # ids are chunk row numbers
    return index


def _serialized(index: Any) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dense.faiss"
        faiss.write_index(index, str(path))
        return path.read_bytes()


def _npy_bytes(vectors: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, vectors.astype(np.float32), allow_pickle=False)
    return buffer.getvalue()


def index_texts(chunks: pa.Table) -> list[str]:
    return [
        chunk_index_text(t, s, x)
        for t, s, x in zip(
            chunks.column("title").to_pylist(),
            chunks.column("section_path").to_pylist(),
            chunks.column("text").to_pylist(),
            strict=True,
        )
    ]


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table | bytes]:
    texts = index_texts(inputs["chunks"])
    # BM25 is rebuilt whole: its IDF and average length follow every chunk, and tokenizing is
    # a small share of the stage (bench `scale` measures it).
    postings, vocab = bm25_weights(
        [tokenize(t) for t in texts], config.k1, config.b, config.epsilon
    )
    vectors = embed_cached(texts, config)
    index = build_faiss(vectors, vectors.shape[1], config)
    info = {
        "embedding_model": config.embedding_model,
        "embedding_model_version": embeddings.model_version(config.embedding_model),
        "dimension": int(vectors.shape[1]),
        "n_chunks": len(texts),
        "faiss_index": type(index).__name__,
    }
    return {
        "bm25_postings": postings,
        "bm25_vocab": vocab,
        "dense.faiss": _serialized(index),
        "embeddings.npy": _npy_bytes(vectors),
        "index_info.json": json.dumps(info, indent=2).encode(),
    }


# Chunk vectors are cached per (index text, embedding model) in the artifact store
# (stages/common/parts_cache.py): a changed corpus embeds only its new chunks.
EMBEDDINGS_NAMESPACE = "indexing.embeddings"
EMBED_PACK = 256  # chunks embedded, then written, together


def model_identity(spec: str) -> str:
    """The embedding model's version and runtime (an ONNX file's sha256), and for a model folder
    the sha256 of its weight files (hashed once, then read from their `.sha256` sidecars)."""
    version = embeddings.model_version(spec)
    _, model = embeddings.split_runtime(spec)
    if model.startswith("package:"):
        return version
    folder = files.resolve_model_path(model)
    weights = sorted(
        p for p in folder.rglob("*") if p.suffix in (".safetensors", ".bin", ".onnx", ".pt")
    )
    digests = [f"{p.relative_to(folder)}={files.file_sha256(p)}" for p in weights]
    return version + "|" + ",".join(digests)


def _vector_keys(texts: list[str], config: Config) -> list[str]:
    identity = model_identity(config.embedding_model)
    return [hashlib.sha256(f"{identity}\0{text}".encode()).hexdigest() for text in texts]


def _missing_packs(keys: list[str], cache: parts_cache.PartsCache) -> list[list[int]]:
    """Rows of the texts to embed (each uncached text once, at its first row), in packs of
    EMBED_PACK. A pack is embedded in one call whoever computes it: a vector depends slightly
    (~1e-7) on the batch it is embedded in, so the same packs give the same vectors."""
    first: dict[str, int] = {}
    for row, key in enumerate(keys):
        if key not in cache:
            first.setdefault(key, row)
    rows = list(first.values())
    return [rows[i : i + EMBED_PACK] for i in range(0, len(rows), EMBED_PACK)]


def _embed_pack(
    cache: parts_cache.PartsCache,
    texts: list[str],
    keys: list[str],
    pack: list[int],
    config: Config,
) -> None:
    vectors = embeddings.embed(
        config.embedding_model, [texts[row] for row in pack], config.embedding_batch_size
    )
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1])
    table = pa.table({"vector": column})
    parts = {
        keys[row]: parts_cache.Part({"vectors": table.slice(i, 1)}) for i, row in enumerate(pack)
    }
    cache.put(parts)


def embed_cached(texts: list[str], config: Config) -> np.ndarray:
    """Vectors for `texts`, in order: cached ones reused, the others embedded and cached."""
    keys = _vector_keys(texts, config)
    cache = parts_cache.open_cache(EMBEDDINGS_NAMESPACE)
    packs = _missing_packs(keys, cache)
    if packs or not keys:
        embedder = embeddings.load_embedder(config.embedding_model)
        dimension = int(embeddings.embedding_dimension(embedder))
    for pack in progress.track(packs, "embedding chunks"):
        _embed_pack(cache, texts, keys, pack, config)
    if not keys:
        return np.zeros((0, dimension), dtype=np.float32)
    gathered = cache.gather("vectors", keys, pa.table({"vector": pa.array([], pa.float32())}))
    column = gathered.column("vector").combine_chunks()
    width = column.type.list_size
    return column.flatten().to_numpy(zero_copy_only=False).reshape(-1, width).astype(np.float32)


# ---------------------------------------------------------------- scale-out partitions


def partitions(inputs: dict[str, Any], config: Config, size: int) -> list[list[list[int]]]:
    """The packs of chunks whose vectors the cache lacks, grouped so that a partition holds
    about `size` chunks (at least one pack): the work a scaled-out run spreads over workers
    (`fill_partition`) before `run` builds the indexes from the then warm cache. The packs are
    those `run` would embed itself, so the vectors are the same."""
    texts = index_texts(inputs["chunks"])
    packs = _missing_packs(
        _vector_keys(texts, config), parts_cache.open_cache(EMBEDDINGS_NAMESPACE)
    )
    per_partition = max(1, size // EMBED_PACK)
    return [packs[i : i + per_partition] for i in range(0, len(packs), per_partition)]


def fill_partition(inputs: dict[str, Any], config: Config, partition: list[list[int]]) -> None:
    """Embed one partition's packs into the embedding cache."""
    texts = index_texts(inputs["chunks"])
    keys = _vector_keys(texts, config)
    cache = parts_cache.open_cache(EMBEDDINGS_NAMESPACE)
    for pack in partition:
        if not all(keys[row] in cache for row in pack):
            _embed_pack(cache, texts, keys, pack, config)
