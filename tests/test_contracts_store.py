"""Contracts fail loudly naming the column; the store is content-addressed and atomic."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stages import contracts
from stages.store import ArtifactStore, artifact_key

QUESTION = {
    "question_id": "q1",
    "question": "What?",
    "principal": "employee",
    "query_type": "general",
}


def test_round_trip_keeps_rows_and_types(tmp_path):
    store = ArtifactStore(tmp_path)
    table = contracts.from_rows([QUESTION], "questions")
    ref = store.write(
        "questions", "k1", version="1", config={}, input_keys={}, outputs={"questions": table}
    )
    back = store.read_table(ref, "questions")
    assert back.equals(table)
    assert back.schema == contracts.schema_of("questions")
    manifest = store.manifest(ref)
    assert manifest["tables"]["questions"]["rows"] == 1
    assert manifest["tables"]["questions"]["schema"] == contracts.fingerprint("questions")
    assert {"stage", "version", "config", "input_keys", "created_at", "library_versions"} <= set(
        manifest
    )


def test_missing_column_is_named():
    table = pa.table({"question_id": ["q1"], "question": ["x"], "principal": ["p"]})
    with pytest.raises(contracts.ContractError, match="'query_type'"):
        contracts.conform(table, "questions")


def test_wrong_type_is_named():
    table = contracts.from_rows(
        [{"path": "a", "size_bytes": 1, "sha256": "x", "content": b""}], "corpus_files"
    )
    broken = table.set_column(1, "size_bytes", pa.array(["not a number"]))
    with pytest.raises(contracts.ContractError, match="'size_bytes'"):
        contracts.conform(broken, "corpus_files")


def test_from_rows_rejects_unknown_columns_and_bad_values():
    with pytest.raises(contracts.ContractError, match="unknown columns"):
        contracts.from_rows([{**QUESTION, "surprise": 1}], "questions")
    with pytest.raises(contracts.ContractError, match="'size_bytes'"):
        contracts.from_rows(
            [{"path": "a", "size_bytes": "big", "sha256": "x", "content": b""}], "corpus_files"
        )


def test_reading_a_tampered_artifact_names_the_column(tmp_path):
    store = ArtifactStore(tmp_path)
    ref = store.write(
        "questions",
        "k",
        version="1",
        config={},
        input_keys={},
        outputs={"questions": contracts.from_rows([QUESTION], "questions")},
    )
    pq.write_table(pa.table({"question_id": ["q1"]}), Path(ref.path) / "questions.parquet")
    with pytest.raises(contracts.ContractError, match="missing column 'question'"):
        store.read_table(ref, "questions")


def test_key_depends_on_every_part():
    base = artifact_key("rerank", "1.0.0", {"a": 1}, {"retrieval": "abc"})
    assert base == artifact_key("rerank", "1.0.0", {"a": 1}, {"retrieval": "abc"})
    assert base != artifact_key("rerank", "1.0.1", {"a": 1}, {"retrieval": "abc"})
    assert base != artifact_key("rerank", "1.0.0", {"a": 2}, {"retrieval": "abc"})
    assert base != artifact_key("rerank", "1.0.0", {"a": 1}, {"retrieval": "abd"})
    assert base != artifact_key("evidence", "1.0.0", {"a": 1}, {"retrieval": "abc"})


def test_lookup_hits_only_complete_artifacts(tmp_path):
    store = ArtifactStore(tmp_path)
    assert store.lookup("questions", "k") is None
    table = contracts.from_rows([QUESTION], "questions")
    store.write(
        "questions", "k", version="1", config={}, input_keys={}, outputs={"questions": table}
    )
    hit = store.lookup("questions", "k")
    assert hit is not None and hit.cache_hit


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    store = ArtifactStore(tmp_path)
    table = contracts.from_rows([QUESTION], "questions")
    real_write = pq.write_table
    calls = []

    def write_then_fail(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full (simulated)")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(pq, "write_table", write_then_fail)
    outputs = {"questions": table, "documents": contracts.empty("documents")}
    with pytest.raises(OSError, match="simulated"):
        store.write("mixed", "k", version="1", config={}, input_keys={}, outputs=outputs)
    assert store.lookup("mixed", "k") is None
    assert list((tmp_path / "mixed").iterdir()) == []


def _slow_writer(root: str) -> None:
    import stages.store as store_module

    real = store_module._write_file_synced

    def slow(path, data):
        if path.name == "manifest.json":
            time.sleep(60)  # killed here: tables written, manifest not yet, nothing renamed
        real(path, data)

    store_module._write_file_synced = slow
    table = contracts.from_rows([QUESTION], "questions")
    ArtifactStore(root).write(
        "questions", "k", version="1", config={}, input_keys={}, outputs={"questions": table}
    )


def test_sigkill_during_write_leaves_no_artifact(tmp_path):
    process = multiprocessing.get_context("spawn").Process(
        target=_slow_writer, args=(str(tmp_path),)
    )
    process.start()
    deadline = time.time() + 60
    while time.time() < deadline and not list(tmp_path.glob("questions/.tmp-*/questions.parquet")):
        time.sleep(0.1)
    assert list(tmp_path.glob("questions/.tmp-*/questions.parquet")), "writer never got going"
    os.kill(process.pid, signal.SIGKILL)
    process.join()
    store = ArtifactStore(tmp_path)
    assert store.lookup("questions", "k") is None
    assert not (tmp_path / "questions" / "k").exists()
