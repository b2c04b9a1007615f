"""The stages in execution order and how artifacts flow between them (a small data catalog).

Each stage module declares its own interface: `INPUTS` (the contract tables and blobs it reads),
`OUTPUTS` (every table and blob it writes), `PER_QUESTION` (whether it is computed, cached and
batched per question) and, for generation, `OPTIONAL_INPUTS`. `WIRING[stage]` maps each input
to the artifact that provides it, built from those declarations: the one earlier stage, or one
of the two sources (`corpus`, `questions`), that outputs it. `check` refuses a catalog with an
input nobody produces, two producers of one artifact, a producer that runs later than its
consumer, or a per-question stage whose tables are not all keyed by question.
"""

from __future__ import annotations

from types import ModuleType

from stages import contracts
from stages.catalog import STAGES

# The artifacts a run starts from: the corpus snapshot and the question set.
SOURCES: dict[str, tuple[str, ...]] = {"corpus": ("corpus_files",), "questions": ("questions",)}
# A revise round re-runs generation with the guardrails' findings as an extra input.
REVISION_INPUT = "revision_requests"


class RegistryError(ValueError):
    """The stages' declared interfaces do not form a valid pipeline."""


def producers(stages: dict[str, ModuleType] = STAGES) -> dict[str, str]:
    """Artifact (table or blob) -> the source or stage that outputs it; exactly one each."""
    found: dict[str, str] = {}
    declared = [*SOURCES.items(), *((name, module.OUTPUTS) for name, module in stages.items())]
    for producer, outputs in declared:
        for output in outputs:
            if output in found:
                raise RegistryError(f"{output!r} is output by both {found[output]} and {producer}")
            found[output] = producer
    return found


def build_wiring(stages: dict[str, ModuleType] = STAGES) -> dict[str, dict[str, str]]:
    made_by = producers(stages)
    wiring = {}
    for name, module in stages.items():
        missing = [i for i in module.INPUTS if i not in made_by]
        if missing:
            raise RegistryError(f"stage {name!r} reads {missing}, which no stage or source outputs")
        wiring[name] = {input_name: made_by[input_name] for input_name in module.INPUTS}
    return wiring


def check(stages: dict[str, ModuleType], wiring: dict[str, dict[str, str]]) -> None:
    """Raise `RegistryError` unless `wiring` is a valid, topologically ordered pipeline."""
    done = set(SOURCES)
    for name, module in stages.items():
        for input_name, producer in wiring[name].items():
            if producer not in done:
                raise RegistryError(
                    f"{name!r} reads {input_name!r} from {producer!r}, not before it"
                )
            known = contracts.SCHEMAS.keys() | contracts.BLOBS.keys()
            if input_name not in known:
                raise RegistryError(f"{name!r} reads {input_name!r}, which has no contract")
        if set(wiring[name]) != set(module.INPUTS):
            raise RegistryError(f"{name!r}: wiring {sorted(wiring[name])} != INPUTS")
        if module.PER_QUESTION and not all(_keyed_by_question(o) for o in module.OUTPUTS):
            raise RegistryError(f"{name!r} is PER_QUESTION but not every output has question_id")
        if module.PER_QUESTION and not any(_keyed_by_question(i) for i in module.INPUTS):
            raise RegistryError(f"{name!r} is PER_QUESTION but reads nothing per question")
        done.add(name)


def _keyed_by_question(name: str) -> bool:
    return name in contracts.SCHEMAS and "question_id" in contracts.schema_of(name).names


WIRING: dict[str, dict[str, str]] = build_wiring()
check(STAGES, WIRING)


def upstream(target: str, wiring: dict[str, dict[str, str]] = WIRING) -> list[str]:
    """The stages `target` reads from, transitively, and `target` itself, in execution order."""
    needed = {target}
    for name in reversed(list(STAGES)):
        if name in needed:
            needed.update(p for p in wiring[name].values() if p in STAGES)
    return [name for name in STAGES if name in needed]


def shared_stages(wiring: dict[str, dict[str, str]] = WIRING) -> list[str]:
    """Stages that do not depend on the questions (ingestion, indexing): one build serves every
    question set."""
    shared: list[str] = []
    for name in STAGES:
        if all(p == "corpus" or p in shared for p in wiring[name].values()):
            shared.append(name)
    return shared
