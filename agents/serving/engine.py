"""One question through the stages, in memory, for the serving surfaces.

The corpus's shared stages (ingestion, indexing) are built or found once per process; their
tables stay in memory and every request runs source selection, retrieval, rerank and evidence
(the stages' own pure `run`, in that order) on a one-question table, writing nothing. Requests
run concurrently: the stages share no mutable state, so the extractive path takes no global
lock. The LLM path (/v1/answer, the confidence check on critical query types) is bounded by a
semaphore with a bounded wait (`limits.llm_concurrency`, `llm_queue_wait_s`).

`/v1/answer` runs the whole pipeline as `grounding ask` does (`flows.executor.run_stages`, with
generation, guardrails and revise rounds), so its answer is the batch run's answer.
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from agents.serving import result as results
from agents.serving.settings import AgentsConfig
from flows.config import PipelineConfig
from flows.executor import questions_table, run_shared_stages, run_stages
from flows.registry import STAGES, WIRING, shared_stages, upstream
from stages.formats.anchors import anchor_label

log = logging.getLogger(__name__)
# what a search runs per request: every stage evidence needs, less the corpus's shared ones
SEARCH_STAGES = tuple(name for name in upstream("evidence") if name not in shared_stages())
# their inputs that do not depend on the question: read once, shared by every request
SHARED_INPUTS = tuple(
    dict.fromkeys(
        name
        for stage in SEARCH_STAGES
        for name, producer in WIRING[stage].items()
        if producer in shared_stages()
    )
)


class Busy(RuntimeError):
    """The LLM path's queue did not free up within its bounded wait."""

    def __init__(self, waited_s: float) -> None:
        super().__init__(f"the LLM path is busy; waited {waited_s:.0f} s")
        self.retry_after_s = max(1, int(waited_s) or 1)


def jsonable(value: Any) -> Any:
    """Arrow rows (dates, timestamps, nested lists) as JSON values."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


class Engine:
    """The knowledge base as a grounded tool: `search` and `answer` for one principal."""

    def __init__(self, config: PipelineConfig, agents: AgentsConfig) -> None:
        self.config = config
        self.agents = agents
        self.store = config.artifact_store()
        built = run_shared_stages(config)  # finds the built index, or builds it once
        refs = {name: r.ref for name, r in built.items()}
        self.shared: dict[str, Any] = {}
        for stage in SEARCH_STAGES:
            for name, producer in WIRING[stage].items():
                if name in SHARED_INPUTS and name not in self.shared:
                    ref = refs[producer]
                    self.shared[name] = (
                        self.store.read_table(ref, name)
                        if not name.endswith((".faiss", ".npy"))
                        else self.store.blob_path(ref, name)
                    )
        self.principals = set(config.stage_config("source_selection").principals)
        self._llm = threading.BoundedSemaphore(agents.limits.llm_concurrency)
        self._ids = itertools.count(1)

    # ---------------------------------------------------------------- the LLM path

    @contextmanager
    def llm_slot(self) -> Iterator[None]:
        """One of `llm_concurrency` slots, waiting at most `llm_queue_wait_s`; else `Busy`."""
        wait = self.agents.limits.llm_queue_wait_s
        if not self._llm.acquire(timeout=wait):
            raise Busy(wait)
        try:
            yield
        finally:
            self._llm.release()

    def checks(self, query_type: str, confidence_check: bool | None) -> bool:
        """Whether this search gets the LLM's confidence check (critical query types)."""
        if confidence_check is not None:
            return confidence_check
        return query_type in self.agents.confidence_check_query_types

    # ---------------------------------------------------------------- search

    def question(self, query: str, principal: str, query_type: str | None) -> pa.Table:
        record = {
            "question_id": f"req{next(self._ids)}",
            "question": query,
            "principal": principal,
            "query_type": query_type or self.config.default_query_type,
        }
        return questions_table([record], principal, self.config.default_query_type)

    def run_search_stages(
        self, tables: dict[str, Any], stages: tuple[str, ...] = SEARCH_STAGES, check: bool = False
    ) -> dict[str, Any]:
        """The stages' pure `run`, in order, over `tables` (which gains their outputs)."""
        for stage in stages:
            config = self.config.stage_config(stage)
            if stage == "rerank":
                types = list(self.agents.confidence_check_query_types) if check else []
                if check:  # a request that asks for the check on a type the config omits
                    types.append(tables["questions"].column("query_type")[0].as_py())
                config = config.model_copy(update={"llm_check_query_types": types})
            inputs = {name: tables[name] for name in WIRING[stage]}
            tables.update(STAGES[stage].run(inputs, config))
        return tables

    def search(
        self,
        query: str,
        principal: str,
        query_type: str | None = None,
        confidence_check: bool | None = None,
    ) -> results.ToolResult:
        """The grounded tool result for `query` as `principal` may read the knowledge base."""
        query_type = query_type or self.config.default_query_type
        try:
            questions = self.question(query, principal, query_type)
            tables = {**self.shared, "questions": questions}
            if self.checks(query_type, confidence_check):
                with self.llm_slot():
                    tables = self.run_search_stages(tables, check=True)
            else:
                tables = self.run_search_stages(tables)
        except Busy:
            raise
        except Exception:  # the stages catch their own; this is the serving code failing
            log.exception("search failed")
            return results.technical_error(self.agents, query, "unknown", query_type)
        return self.result_from(tables, query, query_type)

    def result_from(
        self, tables: dict[str, Any], query: str, query_type: str | None
    ) -> results.ToolResult:
        """The grounded result of one searched question from the stages' output tables."""
        status = tables["rerank_status"].to_pylist()[0]
        attempts = [
            results.Attempt(
                attempt=a["attempt"],
                query=a["query_text"],
                state=a["state"],
                score=a["confidence"],
                stop_reason=a["stop_reason"],
            )
            for a in tables["rerank_attempts"].to_pylist()
        ]
        state, score = status["state"], status["confidence"]
        if state == "technical_error":
            log.warning("technical error: %s", status["error"])  # the log only, never the agent
            return results.technical_error(
                self.agents, query, error_kind(status["error"]), query_type
            )
        if state not in ("success", "low_relevance"):
            unwritten = status["unwritten_names"] or None
            return results.not_found(
                self.agents, query, query_type, score=score, attempts=attempts, unwritten=unwritten
            )
        sources = [source_of(row) for row in tables["evidence"].to_pylist()]
        if not sources:
            return results.not_found(self.agents, query, query_type, score=score, attempts=attempts)
        return results.with_content(
            self.agents,
            state,
            query,
            sources,
            query_type=query_type,
            score=score,
            attempts=attempts,
        )

    # ---------------------------------------------------------------- answer

    def answer(self, query: str, principal: str, query_type: str | None = None) -> dict[str, Any]:
        """The cited answer or the structured refusal, with its hallucination report: the whole
        pipeline as `grounding ask` runs it (one at a time: it may load the LLM)."""
        record = {
            "question_id": f"ans{next(self._ids)}",
            "question": query,
            "principal": principal,
            "query_type": query_type or self.config.default_query_type,
        }
        with self.llm_slot():
            questions = questions_table([record], principal, self.config.default_query_type)
            outcome = run_stages(self.config, questions)
        answer = jsonable(outcome.final_answers.to_pylist()[0])
        report = jsonable(outcome.reports.to_pylist()[0])
        return {"answer": answer, "report": report}


def error_kind(message: str | None) -> str:
    """The technical-error kind of a stage's recorded error message."""
    text = (message or "").lower()
    if "timeout" in text or "timed out" in text:
        return "timeout"
    if "429" in text or "rate limit" in text or "too many requests" in text:
        return "rate_limit"
    if any(w in text for w in ("401", "403", "unauthorized", "forbidden", "api key", "not set")):
        return "auth"
    return "unavailable"  # an index or model that cannot be read or loaded


def source_of(row: dict[str, Any]) -> results.Source:
    return results.Source(
        evidence_id=row["evidence_id"],
        title=row["title"],
        section=row["section_path"] or None,
        anchor=anchor_label(row["anchor"]),
        span=results.Span(
            doc_id=row["doc_id"],
            chunk_id=row["chunk_id"],
            char_start=row["char_start"],
            char_end=row["char_end"],
        ),
        text=row["text"],
        score=row["confidence"] if row["confidence"] is not None else row["score"],
    )
