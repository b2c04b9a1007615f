"""The artifact store on object storage: an in-process S3-compatible server (moto) on 127.0.0.1.

The same pipeline runs on an `s3://` store and gives the local store's answers; an artifact is
visible only once its manifest (written last) exists; listing and garbage collection go through
the store, so they work there too.
"""

from __future__ import annotations

import json
import uuid

import pytest

from flows import ops
from flows.executor import load_questions, run_shared_stages, run_stages
from flows.runs import new_run_id, summarize, write_run
from stages import contracts
from stages.store import ArtifactStore
from tests.conftest import SAMPLE_QUESTIONS, load_test_config

moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

QUESTION = {
    "question_id": "q1",
    "question": "What?",
    "principal": "employee",
    "query_type": "general",
}
TIMING_COLUMNS = {"latency_ms"}


@pytest.fixture(scope="module")
def s3(monkeypatch_module):
    """A moto S3 server on a free loopback port and a fresh bucket; credentials are dummies."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch_module.setenv(name, value)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"endpoint_url": f"http://{host}:{port}"}
    fs = s3fs.S3FileSystem(client_kwargs=options)
    fs.mkdir("artifacts-test")
    yield {"options": options, "fs": fs, "bucket": "artifacts-test"}
    server.stop()


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def _url(s3, prefix: str) -> str:
    return f"s3://{s3['bucket']}/{prefix}-{uuid.uuid4().hex[:8]}"


def test_round_trip_blob_download_and_manifest_last(s3, tmp_path):
    store = ArtifactStore(_url(s3, "unit"), s3["options"], blob_cache=tmp_path / "blobs")
    table = contracts.from_rows([QUESTION], "questions")
    ref = store.write(
        "questions",
        "k1",
        version="1",
        config={},
        input_keys={},
        outputs={"questions": table, "blob.bin": b"\x00\x01payload"},
    )
    assert ref.path.startswith("s3://")
    assert store.lookup("questions", "k1").cache_hit
    # a fresh store object (another machine) reads what this one wrote
    other = ArtifactStore(store.url, s3["options"], blob_cache=tmp_path / "other-blobs")
    assert other.read_table(ref, "questions").equals(table)
    assert other.manifest(ref)["tables"]["questions"]["rows"] == 1
    local = other.blob_path(ref, "blob.bin")
    assert local.read_bytes() == b"\x00\x01payload"
    assert str(local).startswith(str(tmp_path / "other-blobs"))
    with pytest.raises(FileNotFoundError):
        other.blob_path(ref, "missing.bin")

    # tables written but no manifest yet (a writer killed before its last PUT): not an artifact
    s3["fs"].pipe_file(f"{store.base}/questions/k2/questions.parquet", b"partial")
    assert store.lookup("questions", "k2") is None
    assert [m["key"] for m in ops.manifests(other)] == ["k1"]

    store.delete(ref.path)
    assert store.lookup("questions", "k1") is None
    assert ops.manifests(other) == []


@pytest.fixture(scope="module")
def local_shared(tmp_path_factory):
    base = tmp_path_factory.mktemp("fsspec-local")
    run_shared_stages(load_test_config(base))
    return base


def test_pipeline_on_s3_gives_the_local_answers_and_gc_works(s3, local_shared, tmp_path):
    questions = load_questions(SAMPLE_QUESTIONS, "employee", "general").slice(0, 6)
    local_config = load_test_config(local_shared, batch_size=4)
    local = run_stages(local_config, questions)

    url = _url(s3, "pipeline")
    # the corpus snapshot, ingestion and indexing, as another machine would have left them
    for stage in ("corpus", "ingestion", "indexing"):
        s3["fs"].put(str(local_shared / "artifacts" / stage), f"{url[5:]}/{stage}", recursive=True)
    remote_config = load_test_config(tmp_path, store=url, store_options=s3["options"], batch_size=4)
    assert remote_config.store == url
    remote = run_stages(remote_config, questions)
    assert remote.results["indexing"].ref.cache_hit  # found on S3, not rebuilt
    assert remote.results["guardrails"].questions_computed == 6

    def answers(result):
        return [
            {k: v for k, v in row.items() if k not in TIMING_COLUMNS}
            for row in result.final_answers.to_pylist()
        ]

    assert answers(remote) == answers(local)
    again = run_stages(remote_config, questions)
    assert all(r.ref.cache_hit for r in again.results.values())

    store = remote_config.artifact_store()
    everything = ops.manifests(store)
    assert {m["stage"] for m in everything} >= {"indexing", "retrieval.batches", "guardrails"}
    runs = tmp_path / "runs"
    write_run(runs, new_run_id(remote), remote, store, summarize(remote, store, 1.0))
    assert ops.garbage(store, runs) == []  # everything belongs to the run (or its batches)
    orphan = store.write(
        "questions",
        "orphan",
        version="1",
        config={},
        input_keys={},
        outputs={"questions": contracts.from_rows([QUESTION], "questions")},
    )
    unused = ops.garbage(store, runs)
    assert [p.name for p in unused] == ["orphan"]
    store.delete(str(unused[0]))
    assert store.lookup("questions", "orphan") is None
    assert json.loads(
        s3["fs"].cat_file(f"{store.base}/revise/{remote.final_ref.key}/manifest.json")
    )
    assert orphan.key == "orphan"
