"""What running a stage or the whole pipeline returns: plain dataclasses shared by the executor,
the revise loop, the Prefect flow and the run reports (a leaf module, so none of them import
each other for a type)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from stages.store import ArtifactRef


@dataclass
class StageResult:
    stage: str
    ref: ArtifactRef
    seconds: float
    rows: dict[str, int] = field(default_factory=dict)
    # per-question stages: how many questions were computed (the others came from batches
    # earlier runs left); `ref.cache_hit` says whether the whole stage artifact already existed
    questions_computed: int | None = None


@dataclass
class PipelineResult:
    results: dict[str, StageResult]
    final_answers: pa.Table
    reports: pa.Table

    @property
    def refs(self) -> dict[str, ArtifactRef]:
        return {name: result.ref for name, result in self.results.items()}

    @property
    def final_ref(self) -> ArtifactRef:
        """The artifact the answers come from: the last revise round's, else guardrails'."""
        return (self.results.get("revise") or self.results["guardrails"]).ref
