"""Freeing what a batch run no longer needs: the embedder is dropped after the last stage that
embeds (flows/executor.py), before generation loads the GGUF, and comes back unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from flows import executor
from flows.registry import STAGES
from stages.models import embeddings

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["How much does the Enterprise plan cost?", "Storage per user: 250 GB. " * 20]


def test_a_released_embedder_loads_again_and_gives_the_same_vectors():
    spec = embeddings.DEFAULT_EMBEDDING_MODEL
    before = embeddings.embed(spec, TEXTS)
    assert embeddings.load_embedder.cache_info().currsize == 1
    embeddings.release()
    assert embeddings.load_embedder.cache_info().currsize == 0
    assert np.array_equal(embeddings.embed(spec, TEXTS), before)


def test_the_embedding_stages_are_stages_in_their_order():
    order = list(STAGES)
    assert all(name in order for name in executor.EMBEDDING_STAGES)
    positions = [order.index(name) for name in executor.EMBEDDING_STAGES]
    assert positions == sorted(positions)


def test_no_stage_after_the_last_embedding_stage_embeds():
    """Every module that calls the embedder belongs to an embedding stage (or is the embedder
    itself): a stage that starts embedding after rerank must be added to EMBEDDING_STAGES."""
    calls = re.compile(r"\bembeddings\.(embed|load_embedder)\(|\bload_embedder\(")
    callers = set()
    for path in (ROOT / "stages").rglob("*.py"):
        if calls.search(path.read_text(encoding="utf-8")):
            callers.add(path.relative_to(ROOT).as_posix())
    allowed = {f"stages/{name}.py" for name in executor.EMBEDDING_STAGES}
    allowed |= {"stages/models/embeddings.py", "stages/models/__init__.py"}  # itself, its docs
    assert callers and callers <= allowed, callers - allowed


def _stage_order(monkeypatch, **options) -> list[str]:
    """The stages a run executes, with "release" where it frees the embedder."""
    seen: list[str] = []
    monkeypatch.setattr(embeddings, "release", lambda: seen.append("release"))

    def runner(store, name, settings, refs, batch_size=None):
        seen.append(name)
        return executor.StageResult(name, refs.get("corpus"), 0.0, {})

    class Stop(Exception):
        pass

    def no_revise(*args, **kwargs):
        raise Stop

    monkeypatch.setattr(executor, "_revise", no_revise)
    # progress listeners another test left registered expect real stage results
    monkeypatch.setattr(executor, "_callbacks", [])
    monkeypatch.setattr(executor, "corpus_snapshot", lambda config: None)
    source = lambda *args: executor.StageResult(args[1], None, 0.0, {})  # noqa: E731
    monkeypatch.setattr(executor, "store_source", source)

    class Config:
        batch_size = 1

        def artifact_store(self):
            return None

        def stage_config(self, name):
            return None

    with pytest.raises(Stop):  # the stages ran; the revise rounds are not this test's
        executor.run_stages(Config(), None, runner, **options)
    return seen


def test_a_run_releases_the_embedder_once_after_the_last_embedding_stage(monkeypatch):
    seen = _stage_order(monkeypatch)
    last = executor.EMBEDDING_STAGES[-1]
    assert seen.count("release") == 1
    assert seen.index("release") == seen.index(last) + 1
    assert seen.index("release") < seen.index("generation")


def test_a_server_answering_keeps_its_embedder(monkeypatch):
    seen = _stage_order(monkeypatch, free_models=False)
    assert "release" not in seen and "generation" in seen


def test_the_llm_slot_hands_freed_memory_back_after_each_request(monkeypatch):
    import threading

    from agents.serving import engine

    trims: list[bool] = []
    monkeypatch.setattr(engine, "trim_heap", lambda: trims.append(True))

    class Limits:
        llm_queue_wait_s = 1.0

    class Agents:
        limits = Limits()

    class Fake:
        agents = Agents()
        _llm = threading.BoundedSemaphore(1)

    with engine.Engine.llm_slot(Fake()):
        assert not trims
    assert trims == [True]
    with pytest.raises(RuntimeError), engine.Engine.llm_slot(Fake()):
        raise RuntimeError("a failed request frees its memory too")
    assert trims == [True, True]
