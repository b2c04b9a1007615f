"""One question through the stages, in memory, for the serving surfaces.

The corpus's shared stages (ingestion, indexing) are built or found once per process; their
tables stay in memory and every request runs source selection, retrieval, rerank and evidence
(the stages' own pure `run`, in that order) on a one-question table, writing nothing. Requests
run concurrently: the stages share no mutable state, so the extractive path takes no global
lock. The LLM path (/v1/answer, the confidence check on critical query types) is bounded by a
semaphore with a bounded wait (`limits.llm_concurrency`, `llm_queue_wait_s`).

`/v1/answer` runs the whole pipeline as `grounding ask` does (`flows.executor.run_stages`, with
generation, guardrails and revise rounds), so its answer is the batch run's answer.

The tables form a `Snapshot`; `reindex` builds the next one and swaps it in with one reference
assignment, so a request finishes on the snapshot it began with. A search's `filters` mark
documents ineligible after source selection (they narrow the principal's permissions, never
widen them); `top_k` and a cursor bound to the search page through its sources. A caller's stop
flag reaches the LLM (`stages.models.chat.stop_when`), which stops at its next token or, while
it reads the prompt, at the end of the chunk of prompt tokens it is reading.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import itertools
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from agents.serving import result as results
from agents.serving.agents_config import AgentsConfig
from flows.executor import questions_table, run_shared_stages, run_stages
from flows.pipeline_config import PipelineConfig
from flows.registry import STAGES, WIRING, shared_stages, upstream
from stages.formats.anchors import anchor_label
from stages.models.chat import (
    SERVING_PROMPT_CHUNK,
    Cancelled,
    read_prompts_in_chunks,
    stop_when,
    trim_heap,
    use_cache_root,
)

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


MAX_DEPTH = 40  # sources one search may page through (rerank and evidence keep this many)


class RequestError(ValueError):
    """A request the caller can correct (a cursor of another search…): a 422, said plainly."""


class Filters(BaseModel):
    """Narrow a search to some documents. Applied after the principal's permissions, so a
    filter can only take documents away, never add one the caller may not read."""

    model_config = ConfigDict(extra="forbid")

    doc_types: list[str] | None = Field(None, description="e.g. policy, contract, price_list")
    trust_tiers: list[str] | None = Field(None, description="e.g. authoritative, reference")
    published_after: dt.date | None = Field(None, description="published on or after this day")
    published_before: dt.date | None = Field(None, description="published on or before this day")
    doc_ids: list[str] | None = Field(None, max_length=200, description="only these documents")

    def admits(self, doc: dict[str, Any]) -> bool:
        if self.doc_types is not None and doc["doc_type"] not in self.doc_types:
            return False
        if self.trust_tiers is not None and doc["trust_tier"] not in self.trust_tiers:
            return False
        published = doc["published_at"]
        if self.published_after and (published is None or published < self.published_after):
            return False
        if self.published_before and (published is None or published > self.published_before):
            return False
        return self.doc_ids is None or doc["doc_id"] in self.doc_ids


@dataclass
class Snapshot:
    """One built index: the tables every request reads. A request keeps the snapshot it began
    on; a re-index swaps in a new one for the requests after it."""

    shared: dict[str, Any]
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)  # doc_id -> its metadata
    built_at: float = field(default_factory=time.time)


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
        # the LLM's saved KV states go under the store, never the working directory
        use_cache_root(self.store.local_state_dir())
        # a request past its deadline frees the model within one chunk of its prompt
        read_prompts_in_chunks(SERVING_PROMPT_CHUNK)
        self._reindexing = threading.Lock()
        self.snapshot = self.load_snapshot()
        self.principals = set(config.stage_config("source_selection").principals)
        self._llm = threading.BoundedSemaphore(agents.limits.llm_concurrency)
        self._searching = threading.BoundedSemaphore(agents.limits.search_concurrency)
        self._ids = itertools.count(1)

    @property
    def shared(self) -> dict[str, Any]:
        """The current snapshot's tables."""
        return self.snapshot.shared

    def load_snapshot(self) -> Snapshot:
        """The built index of the corpus as it is now (built here when the store lacks it)."""
        built = run_shared_stages(self.config)
        refs = {name: r.ref for name, r in built.items()}
        shared: dict[str, Any] = {}
        for stage in SEARCH_STAGES:
            for name, producer in WIRING[stage].items():
                if name in SHARED_INPUTS and name not in shared:
                    ref = refs[producer]
                    shared[name] = (
                        self.store.read_table(ref, name)
                        if not name.endswith((".faiss", ".npy"))
                        else self.store.blob_path(ref, name)
                    )
        columns = ["doc_id", "title", "doc_type", "trust_tier", "published_at", "permission_set"]
        docs = {row["doc_id"]: row for row in shared["documents"].select(columns).to_pylist()}
        return Snapshot(shared, docs)

    def reindex(self) -> dict[str, Any]:
        """Build (or find) the index of the corpus as it is now and serve it from the next
        request on; requests in flight finish on the snapshot they began with. One at a time."""
        with self._reindexing:
            before = self.snapshot
            started = time.perf_counter()
            fresh = self.load_snapshot()
            self.snapshot = fresh  # one reference swap: a request sees the old or the new
        return {
            "documents": fresh.shared["documents"].num_rows,
            "chunks": fresh.shared["chunks"].num_rows,
            "changed": fresh.shared["chunks"] is not before.shared["chunks"]
            or fresh.shared["documents"].num_rows != before.shared["documents"].num_rows,
            "seconds": round(time.perf_counter() - started, 3),
        }

    def watch(self, every_s: float, stopped: threading.Event) -> threading.Thread:
        """Re-index every `every_s` seconds until `stopped` is set (a daemon thread): a changed
        corpus is served without a restart. A failed re-index keeps the current snapshot."""

        def loop() -> None:
            while not stopped.wait(every_s):
                try:
                    done = self.reindex()
                except Exception:  # the served snapshot stays; the next round tries again
                    log.exception("re-index failed; still serving the previous snapshot")
                    continue
                if done["changed"]:
                    log.info("serving a new index snapshot: %s documents", done["documents"])

        thread = threading.Thread(target=loop, name="reindex-watch", daemon=True)
        thread.start()
        return thread

    # ---------------------------------------------------------------- documents

    def readable(self, principal: str, doc_id: str, snapshot: Snapshot | None = None) -> bool:
        """Whether `principal` may read `doc_id`: its permission groups meet the document's."""
        doc = (snapshot or self.snapshot).docs.get(doc_id)
        if doc is None:
            return False
        groups = set(self.config.stage_config("source_selection").principals.get(principal, []))
        return bool(groups & set(doc["permission_set"] or []))

    def span(self, principal: str, doc_id: str, start: int, end: int) -> dict[str, Any]:
        """The cited span `doc://{doc_id}#{start}-{end}` with the section around it, for a
        principal who may read the document; `LookupError` otherwise (the same for a document
        that does not exist, so a refusal tells nothing about what exists)."""
        snapshot = self.snapshot
        if not self.readable(principal, doc_id, snapshot):
            raise LookupError(f"no document {doc_id!r} that you may read")
        if start < 0 or end <= start:
            raise RequestError("a span needs 0 <= start < end")
        chunks = snapshot.shared["chunks"]
        rows = [
            row
            for row in chunks.filter(pc.equal(chunks["doc_id"], doc_id))
            .select(["chunk_id", "section_path", "char_start", "char_end", "text"])
            .to_pylist()
            if row["char_start"] < end and row["char_end"] > start
        ]
        if not rows:
            raise LookupError(f"document {doc_id!r} has no text at {start}-{end}")
        rows.sort(key=lambda r: r["char_start"])
        first, last = rows[0]["char_start"], rows[-1]["char_end"]
        section_text = _join_chunks(rows)
        inside = section_text[max(0, start - first) : max(0, min(end, last) - first)]
        doc = snapshot.docs[doc_id]
        return {
            "uri": span_uri(doc_id, start, end),
            "doc_id": doc_id,
            "title": doc["title"],
            "section": rows[0]["section_path"] or None,
            "span": {"char_start": start, "char_end": end, "text": inside},
            "context": {"char_start": first, "char_end": last, "text": section_text},
        }

    # ---------------------------------------------------------------- the LLM path

    @contextmanager
    def llm_slot(self, stop: threading.Event | None = None) -> Iterator[None]:
        """One of `llm_concurrency` slots, waiting at most `llm_queue_wait_s`; else `Busy`.
        A request whose caller gave up (`stop` set) stops waiting (`Cancelled`)."""
        wait = self.agents.limits.llm_queue_wait_s
        deadline = time.monotonic() + wait
        while not self._llm.acquire(timeout=max(0.0, min(0.05, deadline - time.monotonic()))):
            if stop is not None and stop.is_set():
                raise Cancelled("the caller gave up while waiting for the model")
            if time.monotonic() >= deadline:
                raise Busy(wait)
        try:
            yield
        finally:
            self._llm.release()
            trim_heap()  # what the request freed, malloc would otherwise keep

    @contextmanager
    def search_turn(self, stop: threading.Event | None = None) -> Iterator[None]:
        """One of `search_concurrency` turns to run the search stages; a request whose caller
        gave up while it waited stops waiting (`Cancelled`)."""
        while not self._searching.acquire(timeout=0.05):
            if stop is not None and stop.is_set():
                raise Cancelled("the caller gave up while waiting for its turn to search")
        try:
            yield
        finally:
            self._searching.release()

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
        self,
        tables: dict[str, Any],
        stages: tuple[str, ...] = SEARCH_STAGES,
        check: bool = False,
        admits: Any = None,
        depth: int | None = None,
    ) -> dict[str, Any]:
        """The stages' pure `run`, in order, over `tables` (which gains their outputs).
        `admits(doc)`: the request's filters, narrowing what source selection allowed;
        `depth`: how many sources rerank and evidence keep (for paging)."""
        for stage in stages:
            config = self.config.stage_config(stage)
            if stage == "rerank":
                types = list(self.agents.confidence_check_query_types) if check else []
                if check:  # a request that asks for the check on a type the config omits
                    types.append(tables["questions"].column("query_type")[0].as_py())
                update: dict[str, Any] = {"llm_check_query_types": types}
                if depth and depth > config.top_n:
                    update["top_n"] = depth
                config = config.model_copy(update=update)
            if stage == "evidence" and depth and depth > config.max_spans:
                config = config.model_copy(update={"max_spans": depth, "per_doc_cap": depth})
            inputs = {name: tables[name] for name in WIRING[stage]}
            tables.update(STAGES[stage].run(inputs, config))
            if stage == "source_selection" and admits is not None:
                tables["eligibility"] = narrowed(tables["eligibility"], admits)
        return tables

    def search(
        self,
        query: str,
        principal: str,
        query_type: str | None = None,
        confidence_check: bool | None = None,
        *,
        top_k: int | None = None,
        filters: Filters | None = None,
        cursor: str | None = None,
        stop: threading.Event | None = None,
    ) -> results.ToolResult:
        """The grounded tool result for `query` as `principal` may read the knowledge base.
        `top_k` sources from the `cursor`'s offset, among the documents `filters` admits;
        `stop`: set when the caller gave up (the LLM check stops at its next token)."""
        query_type = query_type or self.config.default_query_type
        page = Page.of(query, principal, query_type, top_k, filters, cursor)
        snapshot = self.snapshot
        admits = None
        if filters is not None:
            docs = snapshot.docs

            def admits(doc_id: str) -> bool:
                return doc_id in docs and filters.admits(docs[doc_id])

        try:
            questions = self.question(query, principal, query_type)
            tables = {**snapshot.shared, "questions": questions}
            narrow = {"admits": admits, "depth": page.depth}
            if self.checks(query_type, confidence_check):
                stopping = stop_when(stop) if stop else nullcontext()
                with self.llm_slot(stop), stopping, self.search_turn(stop):
                    tables = self.run_search_stages(tables, check=True, **narrow)
            else:
                with self.search_turn(stop):
                    tables = self.run_search_stages(tables, **narrow)
        except (Busy, Cancelled):
            raise
        except Exception:  # the stages catch their own; this is the serving code failing
            log.exception("search failed")
            return results.technical_error(self.agents, query, "unknown", query_type)
        if stop is not None and stop.is_set():  # nobody waits for it
            return results.technical_error(self.agents, query, "timeout", query_type)
        return self.result_from(tables, query, query_type, page)

    def result_from(
        self,
        tables: dict[str, Any],
        query: str,
        query_type: str | None,
        page: Page | None = None,
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
        next_cursor = None
        if page is not None and page.paged:
            next_cursor = page.next_cursor(len(sources))
            sources = sources[page.offset : page.offset + page.top_k]
        if not sources:
            return results.not_found(self.agents, query, query_type, score=score, attempts=attempts)
        found = results.with_content(
            self.agents,
            state,
            query,
            sources,
            query_type=query_type,
            score=score,
            attempts=attempts,
        )
        found.next_cursor = next_cursor
        return found

    # ---------------------------------------------------------------- answer

    def answer(
        self,
        query: str,
        principal: str,
        query_type: str | None = None,
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:
        """The cited answer or the structured refusal, with its hallucination report: the whole
        pipeline as `grounding ask` runs it (one at a time: it may load the LLM). `stop`: set
        when the caller gave up; the model stops at its next token and frees the slot."""
        record = {
            "question_id": f"ans{next(self._ids)}",
            "question": query,
            "principal": principal,
            "query_type": query_type or self.config.default_query_type,
        }
        with self.llm_slot(stop), stop_when(stop) if stop else nullcontext():
            questions = questions_table([record], principal, self.config.default_query_type)
            outcome = run_stages(self.config, questions, free_models=False)  # searches go on
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


def span_uri(doc_id: str, start: int, end: int) -> str:
    return f"doc://{doc_id}#{start}-{end}"


def narrowed(eligibility: pa.Table, admits: Any) -> pa.Table:
    """Eligibility with the documents a request's filters leave out (`admits(doc_id)` false)
    marked excluded."""
    rows = eligibility.to_pylist()
    for row in rows:
        if row["eligible"] and not admits(row["doc_id"]):
            row.update(eligible=False, decision="excluded", rule="filter")
            row["reason"] = "outside the request's filters"
    return pa.Table.from_pylist(rows, schema=eligibility.schema)


def _join_chunks(rows: list[dict[str, Any]]) -> str:
    """The document text the chunks cover, from the first's start (overlaps counted once)."""
    text, reached = "", rows[0]["char_start"]
    for row in rows:
        skip = max(0, reached - row["char_start"])
        if row["char_start"] > reached:  # a gap between chunks: keep offsets aligned
            text += " " * (row["char_start"] - reached)
        text += row["text"][skip:]
        reached = max(reached, row["char_start"] + len(row["text"]))
    return text


@dataclass
class Page:
    """Which sources of a search a request gets: `top_k` from `offset`, and the cursor of the
    next page, bound to the search (query, type, filters, principal) it came from."""

    top_k: int
    offset: int
    digest: str
    paged: bool

    @property
    def depth(self) -> int | None:
        return min(MAX_DEPTH, self.offset + self.top_k) if self.paged else None

    @classmethod
    def of(
        cls,
        query: str,
        principal: str,
        query_type: str,
        top_k: int | None,
        filters: Filters | None,
        cursor: str | None,
    ) -> Page:
        which = [query, principal, query_type, top_k, filters and filters.model_dump(mode="json")]
        digest = hashlib.sha256(json.dumps(which, default=str).encode()).hexdigest()[:16]
        offset = 0
        if cursor:
            try:
                padded = cursor + "=" * (-len(cursor) % 4)
                decoded = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
                offset, bound = int(decoded["o"]), str(decoded["h"])
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                raise RequestError("cursor is not one this server gave out") from None
            if bound != digest or not 0 < offset < MAX_DEPTH:
                raise RequestError(
                    "cursor belongs to another search; repeat the same query, query_type, "
                    "top_k and filters with it"
                )
        paged = top_k is not None or cursor is not None
        return cls(top_k or 8, offset, digest, paged)

    def next_cursor(self, available: int) -> str | None:
        after = self.offset + self.top_k
        if after >= available or after >= MAX_DEPTH:
            return None
        raw = json.dumps({"o": after, "h": self.digest}).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def source_of(row: dict[str, Any]) -> results.Source:
    return results.Source(
        evidence_id=row["evidence_id"],
        uri=span_uri(row["doc_id"], row["char_start"], row["char_end"]),
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
