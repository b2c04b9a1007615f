"""The embedding runtimes (stages/models/embeddings.py): the packaged MiniLM on torch, exported to
ONNX (fp32) and quantized to int8, built from its own weights into a cache whose files are
checked against their recorded sha256."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stages import indexing
from stages.models import embeddings, files

MODEL = embeddings.PACKAGED_EMBEDDING_MODEL
TEXTS = [
    "How do glaciers retreat?",
    "Glaciers retreat when summer melt exceeds winter snowfall. " * 3,
    "x",
    "Orchids are pollinated by bees deceived by their petals; " * 60,  # past 256 tokens
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    """A fresh build cache for this module (the export and quantization run once, ~15 s)."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("GROUNDING_ONNX_CACHE", str(folder))
    embeddings.onnx_file.cache_clear()
    embeddings.load_embedder.cache_clear()
    yield folder
    patch.undo()
    embeddings.onnx_file.cache_clear()
    embeddings.load_embedder.cache_clear()


def test_the_runtime_is_a_prefix_of_the_spec():
    assert embeddings.split_runtime(f"onnx-int8:{MODEL}") == ("onnx-int8", MODEL)
    assert embeddings.split_runtime(f"onnx:{MODEL}") == ("onnx", MODEL)
    assert embeddings.split_runtime(MODEL) == ("torch", MODEL)
    assert embeddings.split_runtime("/models/minilm") == ("torch", "/models/minilm")


def test_onnx_vectors_match_torch_and_int8_stays_close(onnx_cache):
    reference = embeddings.embed(MODEL, TEXTS, 16)
    fp32 = embeddings.embed(f"onnx:{MODEL}", TEXTS, 16)
    int8 = embeddings.embed(f"onnx-int8:{MODEL}", TEXTS, 16)
    assert fp32.shape == int8.shape == reference.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(fp32, reference, atol=1e-5)  # same model, same truncation
    np.testing.assert_allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    cosine = (int8 * reference).sum(axis=1)
    assert cosine.min() > 0.97, cosine
    assert np.abs(int8 - reference).max() > 1e-4  # really another model


def test_the_build_is_recorded_and_a_damaged_file_is_refused(onnx_cache):
    path, sha = embeddings.onnx_file(MODEL, "onnx-int8")
    record = json.loads((path.parent / "build.json").read_text())
    assert (
        record["files"]["onnx-int8"]["sha256"] == sha == files.file_sha256(path, use_sidecar=False)
    )
    assert path.is_relative_to(onnx_cache)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    embeddings.onnx_file.cache_clear()
    with pytest.raises(embeddings.EmbeddingModelError, match="delete"):
        embeddings.onnx_file(MODEL, "onnx-int8")
    (path.parent / "build.json").unlink()  # the next use builds it again, to the same bytes
    embeddings.onnx_file.cache_clear()
    assert embeddings.onnx_file(MODEL, "onnx-int8") == (path, sha)


def test_each_runtime_is_its_own_model_in_the_embedding_cache(onnx_cache):
    identities = {spec: indexing.model_identity(spec) for spec in (MODEL, f"onnx:{MODEL}")}
    identities[f"onnx-int8:{MODEL}"] = indexing.model_identity(f"onnx-int8:{MODEL}")
    assert len(set(identities.values())) == 3
    assert identities[MODEL] == files.model_version(MODEL)  # torch's keys are unchanged
    assert "onnx-int8 sha256:" in identities[f"onnx-int8:{MODEL}"]


def test_indexing_runs_on_the_int8_runtime(onnx_cache):
    from stages import contracts
    from tests.conftest import tiny_chunk

    rows = [tiny_chunk("doc", i, text, ["everyone"]) for i, text in enumerate(TEXTS)]
    chunks = contracts.from_rows(rows, "chunks")
    config = indexing.Config(embedding_model=f"onnx-int8:{MODEL}")
    outputs = indexing.run({"chunks": chunks}, config)
    info = json.loads(outputs["index_info.json"])
    assert info["embedding_model"] == f"onnx-int8:{MODEL}"
    assert "onnx-int8" in info["embedding_model_version"]
    assert info["n_chunks"] == chunks.num_rows and info["dimension"] == 384


def test_the_torch_runtime_embeds_on_a_gpu_when_torch_sees_one(monkeypatch):
    """A GPU is used when torch sees one; the variable pins a device either way."""
    import torch

    monkeypatch.delenv("GROUNDING_EMBEDDING_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert embeddings.torch_device() == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert embeddings.torch_device() == "cpu"
    monkeypatch.setenv("GROUNDING_EMBEDDING_DEVICE", "cuda:1")
    assert embeddings.torch_device() == "cuda:1"


def test_onnx_runs_on_cuda_only_where_its_runtime_has_it(monkeypatch):
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert embeddings.onnx_providers() == ["CPUExecutionProvider"]
    gpu_build = ["CUDAExecutionProvider", "AzureExecutionProvider", "CPUExecutionProvider"]
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: gpu_build)
    assert embeddings.onnx_providers() == ["CUDAExecutionProvider", "CPUExecutionProvider"]
