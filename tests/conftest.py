"""Shared fixtures. The sample pipeline is built once per session in a temporary store."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

from stages import contracts, indexing

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "data" / "sample" / "docs"
SAMPLE_QUESTIONS = ROOT / "data" / "sample" / "questions.jsonl"

# Prefect's ephemeral database goes to a throwaway home, not the developer's ~/.prefect.
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="prefect-home-"))
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def load_test_config(tmp: Path, **overrides):
    from flows.pipeline_config import load_config

    return load_config(
        ROOT / "configs" / "pipeline.yaml",
        {"store": str(tmp / "artifacts"), "runs_dir": str(tmp / "runs"), **overrides},
    )


@pytest.fixture(scope="session")
def shared_store(tmp_path_factory) -> Path:
    """A store holding the sample corpus snapshot, ingestion and indexing, built once per
    session; tests copy it (`config_on_copy`) so each starts from the same shared stages."""
    from flows.executor import run_shared_stages

    base = tmp_path_factory.mktemp("shared-stages")
    run_shared_stages(load_test_config(base))
    return base


def config_on_copy(shared_store: Path, tmp_path: Path, name: str, **overrides):
    """A test config whose store is a fresh copy of `shared_store` under tmp_path/name."""
    import shutil

    shutil.copytree(shared_store / "artifacts", tmp_path / name / "artifacts")
    return load_test_config(tmp_path / name, **overrides)


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sample")


@pytest.fixture(scope="session")
def sample_config(sample_store):
    return load_test_config(sample_store)


@pytest.fixture(scope="session")
def sample_questions():
    from flows.executor import load_questions

    return load_questions(SAMPLE_QUESTIONS, "employee", "general")


@pytest.fixture(scope="session")
def sample_run(sample_config, sample_questions):
    """The whole pipeline on the sample knowledge base (plain runner, no Prefect)."""
    from flows.executor import run_stages

    return run_stages(sample_config, sample_questions)


# ---------------------------------------------------------------- a four-chunk index

ALL_DOCS = ("hr-salaries", "handbook", "pricing")


def tiny_chunk(doc_id: str, index: int, text: str, permission: list[str]) -> dict:
    return {
        "source_id": f"file:{doc_id}.md",
        "doc_id": doc_id,
        "chunk_id": f"{doc_id}#{index:04d}",
        "chunk_index": index,
        "title": doc_id,
        "section_path": "",
        "text": text,
        "char_start": 0,
        "char_end": len(text),
        "permission_set": permission,
        "trust_tier": "canonical",
        "is_table": False,
    }


@pytest.fixture(scope="session")
def tiny_index(tmp_path_factory):
    chunks = contracts.from_rows(
        [
            tiny_chunk(
                "hr-salaries", 0, "The salary band for level L3 is 56,000 to 72,000 pounds.", ["hr"]
            ),
            tiny_chunk(
                "handbook", 0, "Levels are reviewed every year by the people team.", ["everyone"]
            ),
            tiny_chunk(
                "handbook", 1, "Parental leave is described in the benefits guide.", ["everyone"]
            ),
            tiny_chunk(
                "pricing", 0, "The Enterprise plan costs 49 euros per user per month.", ["everyone"]
            ),
        ],
        "chunks",
    )
    outputs = indexing.run({"chunks": chunks}, indexing.Config())
    folder = tmp_path_factory.mktemp("index")
    for blob in ("dense.faiss", "embeddings.npy"):
        (folder / blob).write_bytes(outputs[blob])
    return {
        "chunks": chunks,
        "bm25_postings": outputs["bm25_postings"],
        "bm25_vocab": outputs["bm25_vocab"],
        "dense.faiss": folder / "dense.faiss",
        "embeddings.npy": folder / "embeddings.npy",
    }


def eligibility_table(question_id: str, decisions: dict[str, str]) -> pa.Table:
    rows = [
        {
            "question_id": question_id,
            "doc_id": doc,
            "eligible": d == "eligible",
            "decision": d,
            "rule": "",
            "reason": "x",
        }
        for doc, d in decisions.items()
    ]
    return contracts.from_rows(rows, "eligibility")


def artifact_digests(store, refs: dict) -> dict[str, str]:
    """sha256 of every table and blob of these artifacts (stage -> ref), tables without
    `indexed_at` (the time a stage assembled them, the one column two equal runs differ in)."""
    import hashlib

    digests = {}
    for stage, ref in refs.items():
        manifest = store.manifest(ref)
        for name in manifest["tables"]:
            table = store.read_table(ref, name)
            if "indexed_at" in table.column_names:
                table = table.drop_columns(["indexed_at"])
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            digests[f"{stage}/{name}"] = hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()
        for name in manifest["blobs"]:
            data = store.blob_path(ref, name).read_bytes()
            digests[f"{stage}/{name}"] = hashlib.sha256(data).hexdigest()
    return digests
