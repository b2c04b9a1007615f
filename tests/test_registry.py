"""The catalog in flows/registry.py is built from, and checked against, each stage's declared
INPUTS / OUTPUTS / PER_QUESTION."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from flows import registry
from stages import contracts


def _stage(inputs, outputs, per_question=False) -> SimpleNamespace:
    return SimpleNamespace(INPUTS=tuple(inputs), OUTPUTS=tuple(outputs), PER_QUESTION=per_question)


def test_every_wired_input_has_a_producer_that_runs_before_its_consumer():
    order = [*registry.SOURCES, *registry.STAGES]
    for name, wiring in registry.WIRING.items():
        assert set(wiring) == set(registry.STAGES[name].INPUTS)
        for input_name, producer in wiring.items():
            outputs = registry.SOURCES.get(producer) or registry.STAGES[producer].OUTPUTS
            assert input_name in outputs
            assert order.index(producer) < order.index(name), (name, input_name, producer)


def test_every_declared_artifact_has_a_contract():
    known = contracts.SCHEMAS.keys() | contracts.BLOBS.keys()
    for module in registry.STAGES.values():
        declared = {*module.INPUTS, *module.OUTPUTS, *getattr(module, "OPTIONAL_INPUTS", ())}
        assert declared <= known, module.NAME


def test_the_index_blobs_are_declared_outputs_of_indexing():
    assert registry.producers()["dense.faiss"] == "indexing"
    assert registry.producers()["embeddings.npy"] == "indexing"


def test_per_question_stages_write_only_tables_keyed_by_question():
    for module in registry.STAGES.values():
        keyed = [registry._keyed_by_question(o) for o in module.OUTPUTS]
        assert (
            all(keyed) and any(map(registry._keyed_by_question, module.INPUTS))
        ) == module.PER_QUESTION


def test_the_revision_input_is_an_optional_input_of_generation_only():
    optional = {n: getattr(m, "OPTIONAL_INPUTS", ()) for n, m in registry.STAGES.items()}
    assert {n for n, inputs in optional.items() if registry.REVISION_INPUT in inputs} == {
        "generation"
    }


def test_an_input_nobody_produces_is_refused():
    stages = {"a": _stage(["corpus_files"], ["chunks"]), "b": _stage(["chunks", "ranked"], [])}
    with pytest.raises(registry.RegistryError, match="no stage or source outputs"):
        registry.build_wiring(stages)


def test_two_producers_of_one_artifact_are_refused():
    stages = {"a": _stage(["corpus_files"], ["chunks"]), "b": _stage(["corpus_files"], ["chunks"])}
    with pytest.raises(registry.RegistryError, match="output by both"):
        registry.build_wiring(stages)


def test_a_consumer_ordered_before_its_producer_is_refused():
    stages = {"b": _stage(["chunks"], ["bm25_vocab"]), "a": _stage(["corpus_files"], ["chunks"])}
    with pytest.raises(registry.RegistryError, match="not before it"):
        registry.check(stages, registry.build_wiring(stages))


def test_a_per_question_stage_must_key_every_output_by_question():
    stages = {
        "a": _stage(["corpus_files"], ["chunks"]),
        "b": _stage(["questions", "chunks"], ["bm25_vocab"], per_question=True),
    }
    with pytest.raises(registry.RegistryError, match="PER_QUESTION"):
        registry.check(stages, registry.build_wiring(stages))
