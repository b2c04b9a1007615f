"""Unit tests for stages/generation.py (extractive backend) and stages/attribution.py."""

from __future__ import annotations

import datetime as dt
import re

from stages import attribution, contracts, generation
from stages.common.text import MARKER_RE

INDEXED_AT = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)


# --- builders ---------------------------------------------------------------------------------


def question(qid: str = "q1", text: str = "How much does the Business plan cost?") -> dict:
    return {"question_id": qid, "question": text, "principal": "employee", "query_type": "pricing"}


def status(qid: str = "q1", state: str = "success", hint=None, error=None, confidence=0.9) -> dict:
    return {
        "question_id": qid,
        "state": state,
        "confidence": confidence,
        "is_error": state == "technical_error",
        "refusal_hint": hint,
        "error": error,
    }


def ev(
    evidence_id: str,
    text: str,
    qid: str = "q1",
    sub_question: int = 0,
    score: float = 0.9,
    is_stale: bool = False,
    **overrides,
) -> dict:
    row = {
        "question_id": qid,
        "evidence_id": evidence_id,
        "sub_question": sub_question,
        "doc_id": f"doc-{evidence_id}",
        "chunk_id": f"chunk-{evidence_id}",
        "char_start": 100,
        "char_end": 100 + len(text),
        "text": text,
        "score": score,
        "title": f"Price List {evidence_id}",
        "section_path": "Plans > Business",
        "page_number": 3,
        "version": "2026.1",
        "published_at": dt.date(2026, 1, 15),
        "indexed_at": INDEXED_AT,
        "is_stale": is_stale,
        "confidence": 0.8,
    }
    row.update(overrides)
    return row


def decomposition(qid: str, index: int, text: str) -> dict:
    return {
        "question_id": qid,
        "query_index": index,
        "query_text": text,
        "rewrite_kind": "decomposition",
    }


def generate(questions, statuses, evidence, queries=(), revisions=None) -> list[dict]:
    inputs = {
        "questions": contracts.from_rows(list(questions), "questions"),
        "rerank_status": contracts.from_rows(list(statuses), "rerank_status"),
        "evidence": contracts.from_rows(list(evidence), "evidence"),
        "retrieval_queries": contracts.from_rows(list(queries), "retrieval_queries"),
    }
    if revisions is not None:
        inputs["revision_requests"] = contracts.from_rows(revisions, "revision_requests")
    out = generation.run(inputs, generation.Config())["generations"]
    assert out.schema == contracts.schema_of("generations")
    return out.to_pylist()


def attribute(generations: list[dict], evidence: list[dict]) -> list[dict]:
    out = attribution.run(
        {
            "generations": contracts.from_rows(generations, "generations"),
            "evidence": contracts.from_rows(evidence, "evidence"),
        },
        attribution.Config(),
    )["attributions"]
    assert out.schema == contracts.schema_of("attributions")
    return out.to_pylist()


def gen_row(answer: str | None, qid: str = "q1", citations=None, caveat=None) -> dict:
    return {
        "question_id": qid,
        "state": "success" if answer is not None else "not_found",
        "answer": answer,
        "caveat": caveat,
        "citations": citations if citations is not None else MARKER_RE.findall(answer or ""),
        "refusal_reason": None if answer is not None else "insufficient_evidence",
        "missing": [],
        "backend": "extractive",
        "model_id": "test",
        "prompt_hash": "x",
        "latency_ms": 0.0,
        "stop_reason": "complete",
    }


def string_values(row: dict) -> list[str]:
    values = []
    for value in row.values():
        if isinstance(value, str):
            values.append(value)
        elif isinstance(value, list):
            values.extend(v for v in value if isinstance(v, str))
    return values


PRICE = "The Business plan costs €29 per user per month."
STORAGE = "The Business plan includes 250 GB of storage per user."
SLA = "The SLA guarantees 99.9% monthly uptime for the Enterprise plan."


# --- generation: success ----------------------------------------------------------------------


def test_success_answer_cites_existing_evidence_on_every_sentence():
    evidence = [ev("E1", PRICE, score=0.95), ev("E2", STORAGE, score=0.9)]
    [row] = generate([question()], [status()], evidence)

    assert row["state"] == "success"
    assert row["refusal_reason"] is None
    assert row["answer"]
    known = {e["evidence_id"] for e in evidence}
    sentences = re.split(r"(?<=\])\s+", row["answer"].strip())
    assert len(sentences) == 2
    for sentence in sentences:
        match = re.search(r"\[(E\d+)\]$", sentence)
        assert match, f"sentence without a trailing marker: {sentence!r}"
        assert match.group(1) in known
    assert PRICE in row["answer"]
    assert STORAGE in row["answer"]
    assert set(row["citations"]) == set(MARKER_RE.findall(row["answer"]))
    assert row["missing"] == []
    assert row["caveat"] is None
    assert row["stop_reason"] == "complete"


def test_success_does_not_cite_evidence_of_another_question():
    evidence = [ev("E1", PRICE, qid="q1"), ev("E2", SLA, qid="q2", score=0.99)]
    rows = generate([question("q1")], [status("q1")], evidence)
    assert MARKER_RE.findall(rows[0]["answer"]) == ["E1"]
    assert SLA not in rows[0]["answer"]


def test_a_revise_round_answers_only_the_named_questions_without_the_rejected_claim():
    evidence = [ev("E1", PRICE, score=0.95), ev("E2", STORAGE, score=0.9)]
    evidence += [ev("E3", SLA, qid="q2")]
    revision = {
        "question_id": "q1",
        "round": 1,
        "unsupported_claims": [STORAGE],
        "feedback": ["name not in evidence: X"],
    }
    rows = generate(
        [question("q1"), question("q2")], [status("q1"), status("q2")], evidence, (), [revision]
    )
    assert [r["question_id"] for r in rows] == ["q1"]  # q2 was not sent back
    assert rows[0]["citations"] == ["E1"] and STORAGE not in rows[0]["answer"]
    # when every span behind the answer was rejected, the revision is a refusal
    revision["unsupported_claims"] = [PRICE, STORAGE]
    [refused] = generate([question("q1")], [status("q1")], evidence, (), [revision])
    assert (refused["answer"], refused["refusal_reason"]) == (None, "insufficient_evidence")


def test_weak_second_span_is_dropped():
    # second_sentence_ratio 0.85: a span scoring far below the best one is not used
    evidence = [ev("E1", PRICE, score=0.9), ev("E2", STORAGE, score=0.3)]
    [row] = generate([question()], [status()], evidence)
    assert row["citations"] == ["E1"]
    assert STORAGE not in row["answer"]


def test_stale_evidence_adds_the_stale_caveat():
    [row] = generate([question()], [status()], [ev("E1", PRICE, is_stale=True)])
    assert row["answer"]
    assert row["caveat"] == generation.STALE_CAVEAT


# --- generation: refusals ---------------------------------------------------------------------


def test_not_found_refuses_without_numbers():
    evidence = [ev("E1", PRICE)]  # even if spans leaked through, not_found must not answer
    [row] = generate([question()], [status(state="not_found", confidence=0.1)], evidence)

    assert row["answer"] is None
    assert row["refusal_reason"] == "insufficient_evidence"
    assert row["missing"]
    assert row["citations"] == []
    assert row["stop_reason"] == "refusal"
    for field in ("answer", "caveat"):
        assert not re.search(r"\d", row[field] or ""), field


def test_stale_only_hint_becomes_the_refusal_reason():
    [row] = generate([question()], [status(state="not_found", hint="stale_only")], [])
    assert row["answer"] is None
    assert row["refusal_reason"] == "stale_only"
    assert row["missing"]


def test_technical_error_refuses_without_leaking_the_error():
    secret = "FAISS exploded at /secret/path"
    [row] = generate(
        [question()],
        [status(state="technical_error", error=secret, confidence=None)],
        [ev("E1", PRICE)],
    )

    assert row["state"] == "technical_error"
    assert row["answer"] is None
    assert row["refusal_reason"] == "technical_error"
    for value in string_values(row):
        assert "FAISS" not in value
        assert "/secret/path" not in value


def test_missing_rerank_status_is_a_technical_error():
    [row] = generate([question()], [], [ev("E1", PRICE)])
    assert row["state"] == "technical_error"
    assert row["answer"] is None
    assert row["refusal_reason"] == "technical_error"


def test_low_relevance_answers_with_a_caveat():
    [row] = generate(
        [question()], [status(state="low_relevance", confidence=0.6)], [ev("E1", PRICE)]
    )
    assert row["answer"] is not None
    assert PRICE in row["answer"]
    assert row["caveat"] == generation.LOW_RELEVANCE_CAVEAT
    assert row["refusal_reason"] is None


def test_success_without_evidence_refuses():
    [row] = generate([question()], [status()], [])
    assert row["answer"] is None
    assert row["refusal_reason"] == "insufficient_evidence"


# --- generation: multi-part -------------------------------------------------------------------


def test_multi_part_question_cites_evidence_for_each_part():
    q = question(text="What does the Business plan cost and how much storage does it include?")
    queries = [
        decomposition("q1", 0, "What does the Business plan cost?"),
        decomposition("q1", 1, "How much storage does the Business plan include?"),
        {
            "question_id": "q1",
            "query_index": 2,
            "query_text": "Business plan",
            "rewrite_kind": "expansion",
        },
    ]
    evidence = [
        ev("E1", PRICE, sub_question=0, score=0.9),
        ev("E2", STORAGE, sub_question=1, score=0.5),
    ]
    [row] = generate([q], [status()], evidence, queries)

    # E2 scores far below E1 but serves another part, so it must still be cited
    assert MARKER_RE.findall(row["answer"]) == ["E1", "E2"]
    assert PRICE in row["answer"] and STORAGE in row["answer"]
    assert row["missing"] == []
    assert row["stop_reason"] == "complete"


def test_part_without_evidence_is_listed_as_missing():
    q = question(text="What does the Business plan cost and what is its SLA?")
    queries = [
        decomposition("q1", 0, "What does the Business plan cost?"),
        decomposition("q1", 1, "What is the Business plan SLA?"),
    ]
    [row] = generate([q], [status()], [ev("E1", PRICE, sub_question=0)], queries)

    assert row["answer"] is not None
    assert MARKER_RE.findall(row["answer"]) == ["E1"]
    assert row["missing"] == ["What is the Business plan SLA?"]
    assert row["stop_reason"] == "partial"


def test_prompt_hash_is_deterministic_and_depends_on_the_evidence():
    a = generate([question()], [status()], [ev("E1", PRICE)])[0]["prompt_hash"]
    b = generate([question()], [status()], [ev("E1", PRICE)])[0]["prompt_hash"]
    c = generate([question()], [status()], [ev("E1", STORAGE)])[0]["prompt_hash"]
    assert a == b
    assert a != c


# --- attribution ------------------------------------------------------------------------------


def test_unknown_marker_blocks_the_answer():
    evidence = [ev("E1", PRICE)]
    [row] = attribute([gen_row(f"{PRICE} [E1] It is cheap. [E9]")], evidence)

    assert row["status"] == "blocked"
    assert "E9" in row["blocked_reason"]
    assert "E9" in row["unresolved_markers"]
    assert row["rendered_answer"] is None


def test_citation_to_evidence_of_another_question_blocks():
    evidence = [ev("E1", PRICE, qid="q1"), ev("E2", SLA, qid="q2")]
    [row] = attribute([gen_row(f"{SLA} [E2]", qid="q1")], evidence)

    assert row["status"] == "blocked"
    assert "E2" in row["blocked_reason"]
    assert row["citations"] == []


def test_declared_citation_not_in_evidence_blocks():
    [row] = attribute([gen_row(f"{PRICE} [E1]", citations=["E1", "E7"])], [ev("E1", PRICE)])
    assert row["status"] == "blocked"
    assert "E7" in row["blocked_reason"]


def test_answer_without_markers_is_blocked():
    [row] = attribute([gen_row(PRICE, citations=[])], [ev("E1", PRICE)])
    assert row["status"] == "blocked"
    assert row["blocked_reason"]
    assert row["rendered_answer"] is None
    assert row["unmarked_sentences"] == [PRICE]


def test_good_answer_is_answered_with_full_citations():
    evidence_row = ev(
        "E1",
        PRICE,
        doc_id="price-list-2026",
        chunk_id="price-list-2026#4",
        char_start=1234,
        char_end=1234 + len(PRICE),
        title="Price List 2026",
        section_path="Plans > Business",
        page_number=2,
        version="2026.1",
        published_at=dt.date(2026, 1, 15),
    )
    [row] = attribute([gen_row(f"{PRICE} [E1]")], [evidence_row, ev("E2", STORAGE)])

    assert row["status"] == "answered"
    assert row["blocked_reason"] is None
    assert row["unresolved_markers"] == []
    assert row["unmarked_sentences"] == []
    [citation] = row["citations"]
    assert citation["evidence_id"] == "E1"
    assert citation["doc_id"] == "price-list-2026"
    assert citation["chunk_id"] == "price-list-2026#4"
    assert citation["title"] == "Price List 2026"
    assert citation["section_path"] == "Plans > Business"
    assert citation["page_number"] == 2
    assert citation["version"] == "2026.1"
    assert citation["char_start"] == 1234
    assert citation["char_end"] == 1234 + len(PRICE)
    assert citation["published_at"] == dt.date(2026, 1, 15)
    assert citation["indexed_at"] == INDEXED_AT
    assert citation["is_stale"] is False

    rendered = row["rendered_answer"]
    assert rendered.startswith(f"{PRICE} [E1]")
    source = "[E1] Price List 2026 › Plans › Business, page 2 (version 2026.1, dated 2026-01-15)"
    assert rendered.endswith(f"\n\nSources:\n{source}")


def test_each_sentence_is_rendered_with_its_own_source():
    evidence = [ev("E1", PRICE, title="Price List"), ev("E2", STORAGE, title="Storage Guide")]
    [row] = attribute([gen_row(f"{PRICE} [E1] {STORAGE} [E2]")], evidence)
    assert row["status"] == "answered"
    assert [c["evidence_id"] for c in row["citations"]] == ["E1", "E2"]
    sources = row["rendered_answer"].split("\n\nSources:\n")[1].splitlines()
    assert [line.split(" ›")[0] for line in sources] == ["[E1] Price List", "[E2] Storage Guide"]


def test_caveat_is_prepended_to_the_rendered_answer():
    caveat = generation.LOW_RELEVANCE_CAVEAT
    [row] = attribute([gen_row(f"{PRICE} [E1]", caveat=caveat)], [ev("E1", PRICE)])
    assert row["status"] == "answered"
    assert row["rendered_answer"].startswith(caveat)


def test_sentence_without_marker_is_listed_as_unmarked():
    answer = f"Prices changed this year. {PRICE} [E1]"
    [row] = attribute([gen_row(answer)], [ev("E1", PRICE)])
    assert row["status"] == "answered"
    assert row["unmarked_sentences"] == ["Prices changed this year."]


def test_refused_generation_is_refused_attribution():
    [row] = attribute([gen_row(None)], [ev("E1", PRICE)])
    assert row["status"] == "refused"
    assert row["rendered_answer"] is None
    assert row["citations"] == []


def test_generation_output_passes_attribution():
    """The two stages agree: an extractive success answer attributes cleanly."""
    evidence = [ev("E1", PRICE, score=0.9), ev("E2", STORAGE, score=0.88)]
    generations = generate([question()], [status()], evidence)
    [row] = attribute(generations, evidence)
    assert row["status"] == "answered"
    assert row["unmarked_sentences"] == []
    assert {c["evidence_id"] for c in row["citations"]} == {"E1", "E2"}
