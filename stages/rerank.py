"""Stage 4, rerank: score candidates, diversify, decide the result state, re-query when weak.

Scorers (config `scorer`):
- `learned` (default, offline): logistic regression over cheap features (MiniLM cosine, query
  coverage, IDF-weighted coverage, title/section match, named-entity match, BM25 and RRF scores
  normalised per question, term proximity). Its weights are data (`configs/ranker.yaml`, trained
  by `scripts/train_ranker.py` on SQuAD 2.0 articles only, never SciFact, the sample questions or
  a frozen eval set's articles), and its output is a probability that the chunk answers the
  question.
- `cross_encoder`: any `sentence_transformers.CrossEncoder` from a local path; its raw score is
  mapped to a probability with `sigmoid(ce_scale * score + ce_shift)` (calibrate for your model).

The best probability yields the state: success (>= high), low_relevance (>= low; the answer
carries a caveat), not_found (< low or nothing retrieved), technical_error (a failure; `is_error`,
the message kept for logs only). On low_relevance the question is rewritten (content words plus
feedback terms from the best chunk's heading) and searched again, at most `max_attempts` in all.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, get_args

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, model_validator

from stages import contracts
from stages.common import names, progress, search
from stages.common.text import NEGATION_RE, STOPWORDS, content_tokens, coverage, stem, words
from stages.models import chat, embeddings, pairs, settings
from stages.models.answerability import (
    AnswerabilityError,
    AnswerabilityJudge,
    AnswerabilitySettings,
    answerability_judge,
)
from stages.models.errors import LLMError

NAME = "rerank"
VERSION = "2.15.1"
INPUTS = ("questions", "eligibility", "candidates", "retrieval_status", "retrieval_queries")
INPUTS += ("chunks", "bm25_postings", "bm25_vocab", "dense.faiss", "embeddings.npy")
OUTPUTS = ("ranked", "rerank_status", "rerank_attempts", "confidence_calls")
PER_QUESTION = True  # cached and batched per question

ENTITY_RE = re.compile(r"\b[A-Z][\w&-]{2,}")
FEATURES = (
    "dense",
    "coverage",
    "idf_coverage",
    "title_coverage",
    "section_coverage",
    "entity_coverage",
    "bm25_norm",
    "rrf_norm",
    "proximity",
)


class RankerModel(BaseModel):
    """Logistic-regression weights over FEATURES (a versioned data file, never a pickle)."""

    model_config = ConfigDict(extra="allow")

    version: str = "hand-set-0"
    features: list[str] = list(FEATURES)
    coef: list[float] = [6.0, 3.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]
    intercept: float = -7.0
    # Platt scaling of the ranker's logit, fitted on a calibration split's top candidates.
    calibration_scale: float = 1.0
    calibration_shift: float = 0.0


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scorer: Literal["learned", "cross_encoder"] = "learned"
    ranker: RankerModel = RankerModel()
    cross_encoder_model: str | None = Field(None, description="local CrossEncoder directory")
    ce_scale: float = 1.0
    ce_shift: float = 0.0
    high_threshold: float = Field(0.75, ge=0, le=1)
    low_threshold: float = Field(0.55, ge=0, le=1)
    top_n: int = Field(8, ge=1, description="chunks passed to evidence extraction")
    per_doc_cap: int = Field(3, ge=1)
    # 1.0 = rank by confidence only; lower trades relevance for diversity (SciFact: 0.9 costs
    # 0.05 nDCG@10, 0.75 costs 0.10), while the per-document cap already spreads evidence.
    mmr_lambda: float = Field(1.0, ge=0, le=1)
    max_attempts: int = Field(2, ge=1, le=2, description="searches per question, re-query included")
    # Optional second opinion from the local LLM for critical query types (slow: opt in).
    llm_check_query_types: list[str] = Field([], description="e.g. [pricing, contract, dates]")
    llm: settings.LLMSettings = settings.LLMSettings()
    # P(evidence answers this exact question) over the top chunks: when set, it reorders them
    # and is the confidence the state thresholds read. `strict` uses `llm`.
    answerability: AnswerabilitySettings = AnswerabilitySettings()
    requery_top_k: int = Field(30, ge=1)
    # A question naming something (a client, a product) that no source the principal may read
    # ever writes is not found, however well the rest of it matches (stages/common/names.py).
    refuse_unwritten_names: bool = True
    # A question about what is not the case ("Which plans do not include SSO?") is not found when
    # none of its top `negation_top_k` chunks states a negation: they could answer it only by
    # inference.
    negated_needs_negation: bool = True
    negation_top_k: int = Field(1, ge=1)
    embedding_model: str = embeddings.DEFAULT_EMBEDDING_MODEL

    @model_validator(mode="before")
    @classmethod
    def _legacy_llm_keys(cls, data: Any) -> Any:
        return settings.fold_legacy_keys(data, ("llm_model_path",))


# ---------------------------------------------------------------- features


def named_entities(question: str) -> set[str]:
    """Capitalised words after the first (e.g. 'Initech', 'Contoso'): the parties asked about."""
    names = {w for w in ENTITY_RE.findall(question)[1:] if not w.isupper()}
    return {stem(w.lower()) for w in names if w.lower() not in STOPWORDS}


def proximity(query_terms: set[str], chunk_terms: list[str]) -> float:
    """matched distinct terms / length of the shortest window holding all of them (0..1)."""
    positions = [(i, t) for i, t in enumerate(chunk_terms) if t in query_terms]
    wanted = {t for _, t in positions}
    if not wanted:
        return 0.0
    best, counts, left = len(chunk_terms), Counter(), 0
    for position, term in positions:
        counts[term] += 1
        while len(counts) == len(wanted):
            best = min(best, position - positions[left][0] + 1)
            counts[positions[left][1]] -= 1
            if counts[positions[left][1]] == 0:
                del counts[positions[left][1]]
            left += 1
    return len(wanted) / best if best else 0.0


class ChunkTokens(NamedTuple):
    """A chunk's content tokens: all of them (heading path and text), in order, and its heading
    words apart: its document `title` and its `section` path ("3. Payment terms"), less the
    title's words. `title_share`: 1 / the number of chunks under the same title. A title that
    many chunks share (every paragraph of a SQuAD article, every chunk of a long document) says
    little about which of them answers; the title of a one-chunk document is that chunk's own
    heading, as a section heading is."""

    all: set[str]
    ordered: list[str]
    title: set[str]
    section: set[str]
    title_share: float


class ChunkView:
    """Per-chunk token sets, computed once per run and shared by every question."""

    def __init__(self, chunks: pa.Table) -> None:
        self.row_of = {cid: i for i, cid in enumerate(chunks.column("chunk_id").to_pylist())}
        titles = chunks.column("title").to_pylist()
        self.titles = titles
        sections = chunks.column("section_path").to_pylist()
        self.texts = chunks.column("text").to_pylist()
        self.sections = sections
        self.headings = [f"{t} {s}" for t, s in zip(titles, sections, strict=True)]
        self._title_chunks = Counter(titles)
        self._cache: dict[int, ChunkTokens] = {}
        self._name_rows: dict[str, list[int]] | None = None

    def written_as_name(self, allowed: np.ndarray) -> Callable[[str], bool]:
        """Whether an `allowed` row (a boolean mask) writes a term as a name (capitalised inside
        a sentence): the name check's typo tolerance lands only on names. The term -> rows map
        is built on first use, over every chunk, once per run: only a typo needs it."""

        def as_name(term: str) -> bool:
            if self._name_rows is None:
                self._name_rows = defaultdict(list)
                for row, text in enumerate(self.texts):
                    for found in names.name_terms(text):  # headings are title case
                        self._name_rows[found].append(row)
            return any(allowed[row] for row in self._name_rows.get(term, ()))

        return as_name

    def tokens(self, row: int) -> ChunkTokens:
        if row not in self._cache:
            body = content_tokens(f"{self.headings[row]} {self.texts[row]}")
            title = set(content_tokens(self.titles[row] or ""))
            section = set(content_tokens(self.sections[row] or "")) - title
            share = 1.0 / self._title_chunks[self.titles[row]]
            self._cache[row] = ChunkTokens(set(body), body, title, section, share)
        return self._cache[row]


def feature_rows(
    query: str,
    query_vector: np.ndarray,
    rows: list[int],
    rrf: list[float],
    view: ChunkView,
    indexes: search.Indexes,
    idf: dict[str, float],
) -> np.ndarray:
    """One row of FEATURES per candidate chunk for one query text."""
    if not rows:
        return np.zeros((0, len(FEATURES)))
    q_tokens = set(content_tokens(query))
    entities = named_entities(query)
    q_idf = sum(idf.get(t, 0.0) for t in q_tokens) or 1.0
    bm25 = indexes.bm25_scores(query)[rows]
    bm25_max = float(bm25.max()) or 1.0
    rrf_max = max(rrf) or 1.0
    dense = np.asarray(indexes.vectors[rows]) @ query_vector
    matrix = np.zeros((len(rows), len(FEATURES)))
    for i, row in enumerate(rows):
        tokens = view.tokens(row)
        matrix[i] = (
            float(dense[i]),
            coverage(q_tokens, tokens.all),
            sum(idf.get(t, 0.0) for t in q_tokens & tokens.all) / q_idf,
            (1.0 - tokens.title_share) * coverage(q_tokens, tokens.title),
            coverage(q_tokens, tokens.section)
            + tokens.title_share * coverage(q_tokens, tokens.title),
            coverage(entities, tokens.all) if entities else 1.0,
            float(bm25[i]) / bm25_max,
            rrf[i] / rrf_max,
            proximity(q_tokens, tokens.ordered),
        )
    return matrix


def learned_probability(matrix: np.ndarray, ranker: RankerModel) -> np.ndarray:
    weights = dict(zip(ranker.features, ranker.coef, strict=True))
    coef = np.array([weights.get(name, 0.0) for name in FEATURES])
    logit = matrix @ coef + ranker.intercept
    return 1.0 / (1.0 + np.exp(-(ranker.calibration_scale * logit + ranker.calibration_shift)))


def state_for(confidence: float | None, config: Config) -> str:
    if confidence is None or confidence < config.low_threshold:
        return "not_found"
    return "success" if confidence >= config.high_threshold else "low_relevance"


def mmr_select(
    confidences: list[float], vectors: np.ndarray, doc_ids: list[str], config: Config
) -> list[int]:
    """Greedy maximal marginal relevance with a per-document cap; returns candidate positions."""
    chosen: list[int] = []
    per_doc: Counter[str] = Counter()
    remaining = list(range(len(confidences)))
    while remaining and len(chosen) < config.top_n:

        def marginal(i: int) -> float:
            redundancy = max((float(vectors[i] @ vectors[j]) for j in chosen), default=0.0)
            return config.mmr_lambda * confidences[i] - (1 - config.mmr_lambda) * redundancy

        best = max(remaining, key=lambda i: (marginal(i), -i))
        remaining.remove(best)
        if per_doc[doc_ids[best]] >= config.per_doc_cap:
            continue
        per_doc[doc_ids[best]] += 1
        chosen.append(best)
    return chosen


# ---------------------------------------------------------------- scoring one question


class Scorer:
    def __init__(self, inputs: dict[str, Any], config: Config) -> None:
        self.config = config
        self.indexes = search.Indexes(inputs)
        self.view = ChunkView(inputs["chunks"])
        vocab = inputs["bm25_vocab"]
        self.idf = dict(
            zip(vocab.column("term").to_pylist(), vocab.column("idf").to_pylist(), strict=True)
        )
        spec = config.cross_encoder_model
        self.pair_scorer = (
            pairs.cross_encoder(spec) if config.scorer == "cross_encoder" and spec else None
        )

    def confidences(
        self, queries: list[str], vectors: np.ndarray, rows: list[int], rrf: list[float]
    ) -> list[float]:
        """P(chunk answers) per row: the best over the question and its parts."""
        if not rows:
            return []
        if self.config.scorer == "cross_encoder":
            return self._cross_encoder(queries, rows)
        best = np.zeros(len(rows))
        for query, vector in zip(queries, vectors, strict=True):
            matrix = feature_rows(query, vector, rows, rrf, self.view, self.indexes, self.idf)
            best = np.maximum(best, learned_probability(matrix, self.config.ranker))
        return _stable(best.tolist())

    def _cross_encoder(self, queries: list[str], rows: list[int]) -> list[float]:
        if self.pair_scorer is None:
            raise ValueError("scorer 'cross_encoder' needs cross_encoder_model (a local path)")
        best = np.full(len(rows), -np.inf)
        for query in queries:
            texts = [(query, f"{self.view.headings[r]}\n{self.view.texts[r]}") for r in rows]
            best = np.maximum(best, self.pair_scorer.score(texts))
        scale, shift = self.config.ce_scale, self.config.ce_shift
        return _stable([1.0 / (1.0 + math.exp(-(scale * s + shift))) for s in best])


def _stable(probabilities: list[float]) -> list[float]:
    """Probabilities to 1e-9: the query embedding's last bits depend on the BLAS thread count
    (a Dask worker process computed 0.6433753125179708 where threads gave ...715), and answers
    must be identical whichever runner computed them."""
    return [round(float(p), 9) for p in probabilities]


def requery_text(question: str, best_heading: str | None) -> str:
    """Content words of the question plus feedback terms from the best chunk's heading."""
    terms = [w for w in words(question) if w not in STOPWORDS and len(w) > 2]
    if best_heading:
        known = {stem(t) for t in terms}
        terms += [w for w in words(best_heading) if w not in STOPWORDS and stem(w) not in known][:4]
    return " ".join(dict.fromkeys(terms))


# ---------------------------------------------------------------- optional LLM confidence check

VerdictLabel = Literal["HIGH", "MEDIUM", "LOW", "NOT_RELEVANT"]
VERDICTS: tuple[str, ...] = get_args(VerdictLabel)
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)}},
    "required": ["verdict"],
}
CHECK_PROMPT = (
    "Rate how well the evidence answers the question.\n"
    "HIGH: the evidence explicitly states the answer.\n"
    "MEDIUM: the evidence is on topic and partly answers.\n"
    "LOW: on topic but does not answer.\n"
    "NOT_RELEVANT: about something else.\n"
    'Respond only with JSON like {"verdict": "HIGH"}.'
)


class Verdict(BaseModel):
    verdict: VerdictLabel


def make_check_client(config: Config) -> chat.ChatClient:
    return chat.chat_client(config.llm, max_tokens=16)


def llm_verdict(client: Any, question: str, evidence: str) -> tuple[str, list[dict]]:
    """The model's verdict and one TOOL_CALLS record per attempt; an output that still breaks
    the schema after the bounded retry, or a backend failure, degrades safely to LOW."""
    messages = [
        {"role": "system", "content": CHECK_PROMPT},
        {
            "role": "user",
            "content": f"Evidence: {evidence[:1500]}\n\nQuestion: {question}\n\n"
            "Does the evidence state the answer?",
        },
    ]
    parsed, records = chat.call_validated(
        client, messages, VERDICT_SCHEMA, Verdict.model_validate_json, tool="confidence_check"
    )
    return (parsed.verdict if parsed else "LOW"), records


def apply_verdict(state: str, verdict: str) -> str:
    if verdict == "HIGH":
        return state
    if verdict == "MEDIUM":
        return "low_relevance" if state == "success" else state
    return "not_found"


# ---------------------------------------------------------------- stage entry point


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    questions = inputs["questions"].to_pylist()
    statuses = {r["question_id"]: r for r in inputs["retrieval_status"].to_pylist()}
    pools: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for candidate in inputs["candidates"].to_pylist():
        pools[(candidate["question_id"], candidate["pool"])].append(candidate)
    parts: dict[str, list[str]] = defaultdict(list)
    for row in inputs["retrieval_queries"].to_pylist():
        if row["rewrite_kind"] == "decomposition":
            parts[row["question_id"]].append(row["query_text"])
    eligible_docs: dict[str, list[str]] = defaultdict(list)
    for row in inputs["eligibility"].select(["question_id", "doc_id", "eligible"]).to_pylist():
        if row["eligible"]:
            eligible_docs[row["question_id"]].append(row["doc_id"])
    ranked, states, attempts, calls = [], [], [], []
    check_client = chat.LazyClient(lambda: make_check_client(config))  # this run's model only
    try:
        scorer = Scorer(inputs, config)
        judge = answerability_judge(config.answerability, config.llm)
        texts = [t for q in questions for t in [q["question"], *parts[q["question_id"]]]]
        vectors = embeddings.embed(config.embedding_model, texts) if texts else np.zeros((0, 1))
    except Exception as exc:  # index or model failure: every question is a technical error
        message = f"{type(exc).__name__}: {exc}"
        states = [
            _state(q["question_id"], "technical_error", None, None, message) for q in questions
        ]
        return _outputs([], states, [], [])
    offset = 0
    for question in progress.track(questions, "reranking"):
        qid = question["question_id"]
        queries = [question["question"], *parts[qid]]
        query_vectors = vectors[offset : offset + len(queries)]
        offset += len(queries)
        status = statuses.get(qid)
        if status is None or status["status"] != "ok":
            error = status["error"] if status else "no retrieval status"
            states.append(_state(qid, "technical_error", None, None, error))
            attempts.append(
                _attempt(qid, 1, question["question"], "technical_error", None, "technical_error")
            )
            continue
        try:
            outcome = _rerank_question(
                qid, queries, query_vectors, pools, eligible_docs[qid], scorer, config
            )
        except Exception as exc:
            states.append(
                _state(qid, "technical_error", None, None, f"{type(exc).__name__}: {exc}")
            )
            continue
        if config.refuse_unwritten_names:
            outcome = _names_checked(outcome, question["question"], eligible_docs[qid], scorer)
        if config.negated_needs_negation:
            outcome = _negation_checked(outcome, question["question"], scorer, config)
        checked = outcome["state"]["unwritten_names"] or outcome["state"]["negation_unstated"]
        judgeable = outcome["ranked"] and not checked
        if judge is not None and judgeable:  # no judge can find what no source writes
            asked = judged_questions(question["question"], parts[qid])
            outcome = _judged(outcome, asked, scorer, judge, config)
        if question["query_type"] in config.llm_check_query_types and judgeable:
            outcome = _checked(outcome, question, scorer, config, check_client)
            calls += [{"question_id": qid, **r} for r in outcome.get("calls", [])]
        ranked.extend(outcome["ranked"])
        states.append(outcome["state"])
        attempts.extend(outcome["attempts"])
    return _outputs(ranked, states, attempts, calls)


def _checked(
    outcome: dict, question: dict, scorer: Scorer, config: Config, client: chat.LazyClient
) -> dict:
    state = outcome["state"]
    if state["state"] not in ("success", "low_relevance"):
        return outcome
    top = scorer.view.row_of[outcome["ranked"][0]["chunk_id"]]
    evidence = f"{scorer.view.headings[top]}\n{scorer.view.texts[top]}"
    try:
        verdict, records = llm_verdict(client.get(), question["question"], evidence)
    except LLMError as exc:  # no model: never more confident than without the check
        args = {"model_path": config.llm.path}
        verdict = "LOW"
        records = [chat.tool_call_record("confidence_check", 1, "error", [str(exc)[:300]], args)]
    checked = {**state, "state": apply_verdict(state["state"], verdict), "llm_verdict": verdict}
    return {**outcome, "state": checked, "calls": records}


def _names_checked(outcome: dict, question: str, eligible_docs: list[str], scorer: Scorer) -> dict:
    """Not found, confidence 0, when the question names something no source this principal may
    read ever writes (`stages.common.names`): no evidence can state its answer."""
    state = outcome["state"]
    allowed = np.zeros(len(scorer.indexes.chunk_ids), dtype=bool)
    allowed[scorer.indexes.rows_for_docs(eligible_docs)] = True
    written = scorer.indexes.bm25.written(allowed)
    vocabulary = dataclasses.replace(written, as_name=scorer.view.written_as_name(allowed))
    unwritten = names.unwritten_names(question, vocabulary)
    if not unwritten:
        return outcome
    checked = {**state, "state": "not_found", "confidence": 0.0, "unwritten_names": unwritten}
    return {**outcome, "state": checked}


def _negation_checked(outcome: dict, question: str, scorer: Scorer, config: Config) -> dict:
    """Not found, confidence 0, when the question asks about what is not the case and none of
    its top `negation_top_k` chunks states a negation: such a passage answers the question only
    by inference ("Which plans do not include SSO?" over "SSO is included in Business and
    Enterprise"), and SQuAD 2.0 writes a quarter of its near misses this way ("Who never
    captured Fort Beausejour?")."""
    state = outcome["state"]
    if not outcome["ranked"] or not NEGATION_RE.search(question):
        return outcome
    rows = [scorer.view.row_of[r["chunk_id"]] for r in outcome["ranked"][: config.negation_top_k]]
    if any(NEGATION_RE.search(f"{scorer.view.headings[r]}\n{scorer.view.texts[r]}") for r in rows):
        return outcome
    checked = {**state, "state": "not_found", "confidence": 0.0, "negation_unstated": True}
    return {**outcome, "state": checked}


def judged_questions(question: str, parts: list[str]) -> list[str]:
    """What the answerability judge is asked: each part of a multi-part question on its own
    (the retrieval stage's decomposition), else the question. No single sentence answers "What
    is the Business plan price and how long is the termination notice?", so judged whole it
    reads as unanswerable; judged part by part, each part finds its own sentence."""
    return [part.rstrip("?. ") + "?" for part in parts] or [question]


def _judged(
    outcome: dict, asked: list[str], scorer: Scorer, judge: AnswerabilityJudge, config: Config
) -> dict:
    """The top chunks reordered by P(answers this exact question), judged for each of `asked`
    (the question, or each of its parts). A part's confidence is its answering chunk's (its best
    chunk's when the judge found no sentence); the question's is the lowest part's, since an
    answer needs every part, so it decides success / low relevance / not found; the sentence
    the judge found to state each part's answer is marked on its chunk (the first part's when two
    share a chunk) and those chunks lead, in part order. A judge failure is a technical error for
    this question, never an answer."""
    ranked = outcome["ranked"]
    top = ranked[: config.answerability.top_k * len(asked)]  # each part gets top_k's budget
    rows = [scorer.view.row_of[r["chunk_id"]] for r in top]
    passages = [(scorer.view.titles[r], scorer.view.texts[r]) for r in rows]
    qid = outcome["state"]["question_id"]
    try:
        judgements = [judge.judge(text, passages, [r["confidence"] for r in top]) for text in asked]
    except AnswerabilityError as exc:
        state = _state(qid, "technical_error", None, None, f"answerability: {exc}")
        return {**outcome, "ranked": [], "state": state}
    per_part = [_stable(j.probabilities) for j in judgements]
    probabilities = [max(values) for values in zip(*per_part, strict=True)]
    judged = [{**r, "confidence": p} for r, p in zip(top, probabilities, strict=True)]
    leading: list[int] = []
    for judgement in judgements:
        if judgement.answer is not None and judgement.answer[0] not in leading:
            index, start, end = judgement.answer
            judged[index] = {**judged[index], "answer_start": start, "answer_end": end}
            leading.append(index)
    # the chunks holding an answer lead, whatever the others got
    rest = sorted(
        (r for i, r in enumerate(judged) if i not in leading), key=lambda r: -r["confidence"]
    )
    judged = [judged[i] for i in leading] + rest
    reordered = [{**r, "rank": rank} for rank, r in enumerate(judged + ranked[len(top) :], 1)]
    confidence = min(
        values[j.answer[0]] if j.answer is not None else max(values)
        for j, values in zip(judgements, per_part, strict=True)
    )
    state = {
        **outcome["state"],
        "state": state_for(confidence, config),
        "confidence": confidence,
        "answerability": confidence,
        "answerability_model": judge.model_id,
    }
    return {**outcome, "ranked": reordered, "state": state}


def _score_pool(candidates: list[dict], queries, vectors, scorer: Scorer) -> list[float]:
    rows = [scorer.view.row_of[c["chunk_id"]] for c in candidates]
    return scorer.confidences(queries, vectors, rows, [c["fused_score"] for c in candidates])


def _rerank_question(
    qid, queries, vectors, pools, eligible_docs, scorer: Scorer, config: Config
) -> dict:
    candidates = pools.get((qid, "eligible"), [])
    confidences = _score_pool(candidates, queries, vectors, scorer)
    best = max(confidences, default=None)
    state = state_for(best, config)
    attempts = [_attempt(qid, 1, queries[0], state, best, None)]
    if state == "low_relevance" and config.max_attempts >= 2:
        heading = scorer.view.headings[
            scorer.view.row_of[candidates[int(np.argmax(confidences))]["chunk_id"]]
        ]
        text = requery_text(queries[0], heading)
        vector = embeddings.embed(config.embedding_model, [text])
        allowed = scorer.indexes.rows_for_docs(eligible_docs)
        params = search.SearchParams(top_k=config.requery_top_k)
        hits = search.hybrid_search(scorer.indexes, [text], vector, allowed, params)
        known = {c["chunk_id"] for c in candidates}
        fresh = [
            {
                "chunk_id": scorer.indexes.chunk_ids[hit.row],
                "doc_id": scorer.indexes.doc_ids[hit.row],
                **hit.scores(),
            }
            for hit in hits
            if scorer.indexes.chunk_ids[hit.row] not in known
        ]
        fresh_conf = _score_pool(fresh, queries, vectors, scorer)
        new_best = max(fresh_conf, default=None)
        improved = new_best is not None and new_best > best
        if improved:
            candidates, confidences = candidates + fresh, confidences + fresh_conf
            best, state = max(confidences), state_for(max(confidences), config)
        attempts[0]["stop_reason"] = "requery"
        attempts.append(
            _attempt(qid, 2, text, state, best, "improved" if improved else "no_improvement")
        )
    else:
        attempts[0]["stop_reason"] = {"success": "success", "not_found": "nothing_relevant"}.get(
            state, "max_attempts"
        )
    chunk_rows = [scorer.view.row_of[c["chunk_id"]] for c in candidates]
    chunk_vectors = (
        np.asarray(scorer.indexes.vectors[chunk_rows]) if chunk_rows else np.zeros((0, 1))
    )
    doc_ids = [c["doc_id"] for c in candidates]
    ranked = [
        {
            "question_id": qid,
            "chunk_id": candidates[i]["chunk_id"],
            "doc_id": doc_ids[i],
            "rank": rank,
            "confidence": confidences[i],
            "answer_start": None,  # set on the chunk the answerability judge finds the answer in
            "answer_end": None,
        }
        for rank, i in enumerate(mmr_select(confidences, chunk_vectors, doc_ids, config), start=1)
    ]
    stale = pools.get((qid, "stale"), [])
    stale_best = max(_score_pool(stale, queries, vectors, scorer), default=None)
    # Only outdated documents would answer: stale evidence is relevant and beats current evidence.
    stale_answers = stale_best is not None and stale_best >= config.low_threshold
    hint = (
        "stale_only" if state != "success" and stale_answers and stale_best > (best or 0) else None
    )
    return {"ranked": ranked, "state": _state(qid, state, best, hint, None), "attempts": attempts}


def _attempt(qid: str, attempt: int, query: str, state: str, confidence, stop_reason) -> dict:
    return {
        "question_id": qid,
        "attempt": attempt,
        "query_text": query,
        "state": state,
        "confidence": confidence,
        "stop_reason": stop_reason,
    }


def _state(
    qid: str, state: str, confidence: float | None, hint: str | None, error: str | None
) -> dict:
    return {
        "question_id": qid,
        "state": state,
        "confidence": confidence,
        "is_error": state == "technical_error",
        "refusal_hint": hint,
        "llm_verdict": None,
        "error": error,
        "answerability": None,
        "answerability_model": None,
        "unwritten_names": None,
        "negation_unstated": None,
    }


def _outputs(
    ranked: list[dict], states: list[dict], attempts: list[dict], calls: list[dict]
) -> dict[str, pa.Table]:
    return {
        "ranked": contracts.table_of("ranked", ranked, stage=NAME),
        "rerank_status": contracts.table_of("rerank_status", states, stage=NAME),
        "rerank_attempts": contracts.table_of("rerank_attempts", attempts, stage=NAME),
        "confidence_calls": contracts.table_of("confidence_calls", calls, stage=NAME),
    }
