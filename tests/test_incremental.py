"""A changed corpus costs what changed: per-document parsing and per-chunk embeddings
are cached below the stages, the stage artifacts stay a function of their inputs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import faiss
import numpy as np
import pyarrow as pa
import pytest

from flows.executor import corpus_snapshot as executor_snapshot
from flows.executor import execute_stage, fill_partition, stage_partitions, store_source
from stages import contracts, indexing, ingestion, retrieval
from stages.common import parts_cache
from stages.models import embeddings
from stages.store import ArtifactStore
from tests.conftest import artifact_digests, eligibility_table

TOPICS = {
    "alpha.md": ("Alpha glaciers", "Glaciers retreat when summer melt exceeds winter snowfall."),
    "beta.md": ("Beta volcanoes", "Volcanoes erupt when magma pressure exceeds the crust."),
    "gamma.md": ("Gamma orchids", "Orchids are pollinated by bees deceived by their petals."),
    "delta.md": ("Delta tides", "Tides follow the moon and the sun in a fortnightly cycle."),
}


def _write(root: Path, name: str, title: str, body: str) -> None:
    (root / name).write_text(f"# {title}\n\n{body}\n\n{body.replace('.', ' again.')}\n")


@pytest.fixture
def corpus(tmp_path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    for name, (title, body) in TOPICS.items():
        _write(root, name, title, body)
    return root


@pytest.fixture
def counted(monkeypatch):
    """Which files ingestion parses and which texts indexing embeds."""
    calls: dict[str, list[str]] = {"parsed": [], "embedded": []}
    parse, embed = ingestion.parse_document, embeddings.embed

    def counting_parse(path, *args, **kwargs):
        calls["parsed"].append(path)
        return parse(path, *args, **kwargs)

    def counting_embed(spec, texts, *args, **kwargs):
        calls["embedded"].extend(texts)
        return embed(spec, texts, *args, **kwargs)

    monkeypatch.setattr(ingestion.assembly, "parse_document", counting_parse)
    monkeypatch.setattr(embeddings, "embed", counting_embed)

    def take() -> dict[str, list[str]]:
        taken = {k: sorted(v) for k, v in calls.items()}
        for value in calls.values():
            value.clear()
        return taken

    return take


def _build(store: ArtifactStore, root: Path) -> dict:
    corpus = store_source(store, "corpus", ingestion.snapshot_corpus(root), "corpus_files")
    ingested = execute_stage(store, "ingestion", ingestion.Config(), {"corpus": corpus.ref})
    indexed = execute_stage(store, "indexing", indexing.Config(), {"ingestion": ingested.ref})
    return {"ingestion": ingested.ref, "indexing": indexed.ref}


def _tables(store: ArtifactStore, refs: dict) -> dict[str, pa.Table]:
    names = {"ingestion": ingestion.OUTPUTS, "indexing": ("bm25_postings", "bm25_vocab")}
    return {n: store.read_table(refs[s], n) for s, tables in names.items() for n in tables}


def _chunk_texts(store: ArtifactStore, refs: dict, path: str) -> list[str]:
    chunks = store.read_table(refs["ingestion"], "chunks").to_pylist()
    return sorted(
        indexing.chunk_index_text(c["title"], c["section_path"], c["text"])
        for c in chunks
        if c["source_id"] == f"file:{path}"
    )


def test_the_snapshot_holds_paths_and_hashes_not_file_bytes(corpus):
    rows = ingestion.snapshot_corpus(corpus).to_pylist()
    files = [r for r in rows if r["path"] != ingestion.FILE_DATES_PATH]
    assert len(files) == len(TOPICS)
    assert all(r["content"] is None for r in files)
    assert all(Path(os.fsdecode(r["location"])).is_file() for r in files)


def test_add_edit_delete_parse_and_embed_only_what_changed(tmp_path, corpus, counted):
    store = ArtifactStore(tmp_path / "store")
    first = _build(store, corpus)
    done = counted()
    assert done["parsed"] == sorted(TOPICS)
    all_texts = sorted(t for p in TOPICS for t in _chunk_texts(store, first, p))
    assert done["embedded"] == all_texts

    _write(corpus, "epsilon.md", "Epsilon comets", "Comets grow tails of dust near the sun.")
    added = _build(store, corpus)
    done = counted()
    assert done == {"parsed": ["epsilon.md"], "embedded": _chunk_texts(store, added, "epsilon.md")}

    _write(corpus, "beta.md", "Beta volcanoes", "Volcanoes sleep for centuries, then wake.")
    edited = _build(store, corpus)
    done = counted()
    assert done == {"parsed": ["beta.md"], "embedded": _chunk_texts(store, edited, "beta.md")}

    (corpus / "gamma.md").unlink()
    deleted = _build(store, corpus)
    assert counted() == {"parsed": [], "embedded": []}
    _assert_gone(store, deleted, "gamma")


def _assert_gone(store: ArtifactStore, refs: dict, doc_id: str) -> None:
    """No chunk of `doc_id` in the chunks, BM25, FAISS, and none retrieved for its topic."""
    chunks = store.read_table(refs["ingestion"], "chunks")
    assert doc_id not in chunks.column("doc_id").to_pylist()
    postings = store.read_table(refs["indexing"], "bm25_postings")
    vocab = store.read_table(refs["indexing"], "bm25_vocab").column("term").to_pylist()
    assert max(postings.column("row").to_pylist()) == chunks.num_rows - 1
    assert "orchid" not in vocab  # the deleted document's own word
    dense = faiss.read_index(str(store.blob_path(refs["indexing"], "dense.faiss")))
    assert dense.ntotal == chunks.num_rows
    questions = contracts.from_rows(
        [
            {
                "question_id": "q1",
                "question": "How are orchids pollinated?",
                "principal": "p",
                "query_type": "general",
            }
        ],
        "questions",
    )
    docs = set(chunks.column("doc_id").to_pylist())
    found = retrieval.run(
        {
            "chunks": chunks,
            "bm25_postings": postings,
            "bm25_vocab": store.read_table(refs["indexing"], "bm25_vocab"),
            "dense.faiss": store.blob_path(refs["indexing"], "dense.faiss"),
            "embeddings.npy": store.blob_path(refs["indexing"], "embeddings.npy"),
            "questions": questions,
            "eligibility": eligibility_table("q1", dict.fromkeys(docs, "eligible")),
        },
        retrieval.Config(),
    )["candidates"]
    assert found.num_rows and doc_id not in found.column("doc_id").to_pylist()


def test_a_warm_build_equals_a_cold_one(tmp_path, corpus):
    warm_store = ArtifactStore(tmp_path / "warm")
    _build(warm_store, corpus)
    _write(corpus, "epsilon.md", "Epsilon comets", "Comets grow tails of dust near the sun.")
    _write(corpus, "beta.md", "Beta volcanoes", "Volcanoes sleep for centuries, then wake.")
    (corpus / "gamma.md").unlink()
    warm = _build(warm_store, corpus)
    cold_store = ArtifactStore(tmp_path / "cold")
    cold = _build(cold_store, corpus)
    assert warm["indexing"].key == cold["indexing"].key  # same inputs, same keys
    warm_tables, cold_tables = _tables(warm_store, warm), _tables(cold_store, cold)
    for name, table in warm_tables.items():
        # the stage's run time, one value for all rows, is the only column that may differ
        if "indexed_at" in table.column_names:
            assert len(set(table.column("indexed_at").to_pylist())) <= 1
            table = table.drop_columns(["indexed_at"])
            other = cold_tables[name].drop_columns(["indexed_at"])
        else:
            other = cold_tables[name]
        assert table.equals(other), name
        assert _parquet_bytes(table) == _parquet_bytes(other), name
    vectors = [
        np.load(s.blob_path(r["indexing"], "embeddings.npy"))
        for s, r in ((warm_store, warm), (cold_store, cold))
    ]
    # a vector is embedded in another batch when warm; batching moves floats by ~1e-7 at most
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-5)


def _parquet_bytes(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def test_a_file_changed_after_the_snapshot_is_an_error_not_other_content(corpus):
    snapshot = ingestion.snapshot_corpus(corpus)
    (corpus / "alpha.md").write_text("# Alpha\n\nSomething else entirely.\n")
    outputs = ingestion.run({"corpus_files": snapshot}, ingestion.Config())
    errors = {e["path"]: e["error_kind"] for e in outputs["ingestion_errors"].to_pylist()}
    assert errors["alpha.md"] == "changed_since_snapshot"
    assert "alpha" not in outputs["documents"].column("doc_id").to_pylist()


def test_the_parts_a_stage_used_are_kept_with_its_artifact(tmp_path, corpus):
    from flows.ops import referenced_keys

    store = ArtifactStore(tmp_path / "store")
    refs = _build(store, corpus)
    packs = {r.key for r in store.list_refs(ingestion.PARTS_NAMESPACE)}
    packs |= {r.key for r in store.list_refs(indexing.EMBEDDINGS_NAMESPACE)}
    listed = set(store.manifest(refs["ingestion"])["batch_keys"])
    listed |= set(store.manifest(refs["indexing"])["batch_keys"])
    assert packs and listed == packs
    by_key = {store.manifest(r)["key"]: store.manifest(r) for r in store.list_refs()}
    runs = tmp_path / "runs" / "r1"
    runs.mkdir(parents=True)
    summary = {"stages": {s: {"key": r.key} for s, r in refs.items()}}
    (runs / "summary.json").write_text(__import__("json").dumps(summary))
    assert packs <= referenced_keys(tmp_path / "runs", by_key)


def test_outside_a_session_parts_stay_in_memory():
    cache = parts_cache.open_cache("anything")
    table = pa.table({"x": [1, 2]})
    cache.put({"a": parts_cache.Part({"t": table.slice(0, 1)}), "b": parts_cache.Part({})})
    assert "a" in cache and "b" in cache and cache.store is None
    assert cache.gather("t", ["b", "a", "a"], table.slice(0, 0)).column("x").to_pylist() == [1, 1]


# ---------------------------------------------------------------- re-runs trust unchanged stats


@pytest.fixture
def hashed(monkeypatch):
    """The files the snapshot reads and hashes, by name; trusting stats at once (no racy
    window) unless a test restores it."""
    from stages.common import stat_cache

    monkeypatch.setattr(stat_cache, "RACY_WINDOW_NS", 0)
    names: list[str] = []
    original = ingestion.snapshot._file_sha256

    def counting(path):
        names.append(Path(path).name)
        return original(path)

    monkeypatch.setattr(ingestion.snapshot, "_file_sha256", counting)

    def take() -> list[str]:
        taken = sorted(names)
        names.clear()
        return taken

    return take


def _snapshot(root: Path, cache_file: Path) -> pa.Table:
    from stages.common.stat_cache import StatCache

    return ingestion.snapshot_corpus(root, stat_cache=StatCache(cache_file))


def _same_mtime_edit(path: Path, text: str) -> None:
    """Rewrite a file and put its mtime back, as `cp -p` or `rsync -t` would."""
    before = path.stat()
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def test_a_rerun_reads_only_files_whose_stat_changed(tmp_path, corpus, hashed):
    cache_file = tmp_path / "stat.json"
    first = _snapshot(corpus, cache_file)
    assert hashed() == sorted(TOPICS)
    assert _snapshot(corpus, cache_file).equals(first)  # same rows, the same corpus key
    assert hashed() == []  # and not one file read

    # a different size re-hashes even when the mtime was put back
    _same_mtime_edit(corpus / "alpha.md", "# Alpha\n\nShorter.\n")
    # the same size and mtime: the ctime, which nothing can set back, still differs
    beta = corpus / "beta.md"
    _same_mtime_edit(beta, beta.read_text().replace("Volcanoes", "Earthquake"))
    _write(corpus, "epsilon.md", "Epsilon comets", "Comets grow tails of dust near the sun.")
    (corpus / "gamma.md").unlink()
    rows = {r["path"]: r["sha256"] for r in _snapshot(corpus, cache_file).to_pylist()}
    assert hashed() == ["alpha.md", "beta.md", "epsilon.md"]
    for name in ("alpha.md", "beta.md", "epsilon.md", "delta.md"):
        assert rows[name] == hashlib.sha256((corpus / name).read_bytes()).hexdigest(), name
    assert "gamma.md" not in rows


def test_entries_hashed_too_close_to_their_change_are_hashed_again(tmp_path, corpus, hashed):
    """A file written within the racy window of its hashing could change again within the
    same timestamp tick, unseen by its stat: its hash is not trusted next time."""
    from stages.common import stat_cache

    cache_file = tmp_path / "stat.json"
    stat_cache.RACY_WINDOW_NS = 3_600 * 10**9  # every file was written within the hour
    _snapshot(corpus, cache_file)
    _snapshot(corpus, cache_file)
    assert hashed() == sorted([*TOPICS] * 2)


def test_always_hash_corpus_reads_every_file_every_run(tmp_path, corpus, hashed):
    from tests.conftest import load_test_config

    trusting = load_test_config(tmp_path / "a", corpus=str(corpus))
    executor_snapshot(trusting)
    executor_snapshot(trusting)
    assert hashed() == sorted(TOPICS)
    assert list((tmp_path / "a" / "artifacts" / "corpus.stat").glob("*.json"))
    careful = load_test_config(tmp_path / "b", corpus=str(corpus), always_hash_corpus=True)
    executor_snapshot(careful)
    executor_snapshot(careful)
    assert hashed() == sorted([*TOPICS] * 2)
    assert not (tmp_path / "b" / "artifacts" / "corpus.stat").exists()


def test_a_damaged_stat_cache_means_hashing_again(tmp_path, corpus, hashed):
    cache_file = tmp_path / "stat.json"
    _snapshot(corpus, cache_file)
    cache_file.write_text('{"version": 1, "files": {"x": "not an entry"')
    _snapshot(corpus, cache_file)
    assert hashed() == sorted([*TOPICS] * 2)


# ---------------------------------------------------------------- partitions (scale-out)


def test_partitions_filled_one_by_one_give_the_artifacts_of_one_run(
    tmp_path, corpus, counted, monkeypatch
):
    """What a task runner spreads over workers: the stage's missing parts in partitions, each
    filled on its own and in any order; the stage then assembles the very same artifacts."""
    monkeypatch.setattr(indexing, "EMBED_PACK", 3)  # several packs of vectors
    whole_store = ArtifactStore(tmp_path / "whole")
    whole = _build(whole_store, corpus)
    counted()

    store = ArtifactStore(tmp_path / "parts")
    source = store_source(store, "corpus", ingestion.snapshot_corpus(corpus), "corpus_files")
    refs, configs = {"corpus": source.ref}, {"ingestion": ingestion.Config()}
    configs["indexing"] = indexing.Config()
    built = {}
    for name in ("ingestion", "indexing"):
        partitions = stage_partitions(store, name, configs[name], refs, size=3)
        assert len(partitions) >= 2, name
        filled: dict[str, int] = {}
        for partition in reversed(partitions):
            counts = fill_partition(store, name, configs[name], refs, None, partition)
            assert counts["pid"] == os.getpid()
            for namespace, count in counts["parts_computed"].items():
                filled[namespace] = filled.get(namespace, 0) + count
        assert stage_partitions(store, name, configs[name], refs, size=3) == []  # all cached
        done = counted()
        result = execute_stage(store, name, configs[name], refs, parts_filled=filled)
        assert counted() == {"parsed": [], "embedded": []}  # assembled from the parts alone
        refs[name] = built[name] = result.ref
        assert store.manifest(result.ref)["parts_computed"] == filled
        assert done["parsed" if name == "ingestion" else "embedded"]
    assert filled == {indexing.EMBEDDINGS_NAMESPACE: len(done["embedded"])}
    assert {s: r.key for s, r in built.items()} == {s: r.key for s, r in whole.items()}
    assert artifact_digests(store, built) == artifact_digests(whole_store, whole)
    assert stage_partitions(store, "indexing", configs["indexing"], refs) == []  # stored
