"""The stages in execution order, by name: the one list every layer above the stages shares.

`flows.registry` wires it (which artifact feeds which input) and the evaluation records each
stage's VERSION in a baseline from it, so the evaluation needs nothing from `flows/`. It is not a
stage: it imports the stages, and no stage imports it.
"""

from __future__ import annotations

from types import ModuleType

from stages import (
    attribution,
    evidence,
    generation,
    guardrails,
    indexing,
    ingestion,
    rerank,
    retrieval,
    source_selection,
)

STAGES: dict[str, ModuleType] = {
    module.NAME: module
    for module in (
        ingestion,
        indexing,
        source_selection,
        retrieval,
        rerank,
        evidence,
        generation,
        attribution,
        guardrails,
    )
}


def stage_versions() -> dict[str, str]:
    """Stage name -> its VERSION, in execution order."""
    return {name: module.VERSION for name, module in STAGES.items()}
