"""Rerank: features, calibrated states, MMR caps, bounded re-query, failures as states."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from stages import contracts, rerank
from tests.conftest import ALL_DOCS, eligibility_table

QUESTION = "What is the salary band for level L3?"


def test_proximity_rewards_terms_close_together():
    close = rerank.proximity({"salary", "band"}, ["the", "salary", "band", "is", "x"])
    far = rerank.proximity({"salary", "band"}, ["salary", "a", "b", "c", "d", "band"])
    assert close == 1.0 and far == pytest.approx(2 / 6)
    assert rerank.proximity({"absent"}, ["salary"]) == 0.0


def test_named_entities_skip_the_first_word_and_acronyms():
    assert rerank.named_entities("What does Initech pay under the MSA?") == {"initech"}


def _view(rows: list[tuple[str, str]]) -> rerank.ChunkView:
    return rerank.ChunkView(
        pa.table(
            {
                "chunk_id": [f"c{i}" for i in range(len(rows))],
                "title": [title for title, _ in rows],
                "section_path": [section for _, section in rows],
                "text": ["Invoices are payable within 45 days."] * len(rows),
            }
        )
    )


def test_a_shared_title_is_title_and_a_section_heading_is_the_chunks_own():
    view = _view(
        [
            ("Acme Supply Agreement", "Acme Supply Agreement > 3. Payment terms"),
            ("Acme Supply Agreement", "Acme Supply Agreement > 4. Delivery"),
            ("Acme Supply Agreement", "Acme Supply Agreement > 5. Termination"),
            ("Acme Supply Agreement", "Acme Supply Agreement > 6. Liability"),
            ("Support Hours Notice", ""),
        ]
    )
    payment = view.tokens(0)
    assert payment.section == {"3", "payment", "term"}  # stemmed; the title's words left out
    assert "agreement" in payment.title and payment.title_share == pytest.approx(0.25)
    notice = view.tokens(4)
    assert notice.section == set() and notice.title_share == 1.0


def test_heading_features_split_shared_title_from_own_heading():
    view = _view(
        [
            ("Acme Supply Agreement", "Acme Supply Agreement > 3. Payment terms"),
            ("Acme Supply Agreement", "Acme Supply Agreement > 4. Delivery"),
            ("Payment Terms Notice", ""),
        ]
    )

    class Indexes:
        vectors = np.zeros((3, 2))

        def bm25_scores(self, query: str) -> np.ndarray:
            return np.ones(3)

    matrix = rerank.feature_rows(
        "What are the payment terms?", np.zeros(2), [0, 1, 2], [1.0, 1.0, 1.0], view, Indexes(), {}
    )
    title = rerank.FEATURES.index("title_coverage")
    section = rerank.FEATURES.index("section_coverage")
    # the section heading "3. Payment terms" is chunk 0's own; chunk 1 shares only the title
    assert matrix[0, section] == pytest.approx(1.0) and matrix[0, title] == 0.0
    assert matrix[1, section] == 0.0
    # a one-chunk document's title is its own heading, never a shared title
    assert matrix[2, section] == pytest.approx(1.0) and matrix[2, title] == 0.0


@pytest.mark.parametrize(
    ("confidence", "state"),
    [
        (None, "not_found"),
        (0.2, "not_found"),
        (0.55, "low_relevance"),
        (0.74, "low_relevance"),
        (0.75, "success"),
    ],
)
def test_thresholds_give_the_states(confidence, state):
    assert rerank.state_for(confidence, rerank.Config()) == state


def test_learned_probability_is_monotone_in_positive_features():
    model = rerank.RankerModel()
    low = np.zeros((1, len(rerank.FEATURES)))
    high = low.copy()
    high[0, rerank.FEATURES.index("dense")] = 0.9
    assert rerank.learned_probability(high, model)[0] > rerank.learned_probability(low, model)[0]


def test_mmr_respects_the_per_document_cap():
    vectors = np.eye(5)
    chosen = rerank.mmr_select(
        [0.9, 0.8, 0.7, 0.6, 0.5],
        vectors,
        ["a", "a", "a", "b", "b"],
        rerank.Config(per_doc_cap=2, top_n=5),
    )
    assert [i for i in chosen] == [0, 1, 3, 4]


def test_mmr_prefers_diverse_chunks():
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    chosen = rerank.mmr_select(
        [0.9, 0.89, 0.8], vectors, ["a", "b", "c"], rerank.Config(top_n=2, mmr_lambda=0.5)
    )
    assert chosen == [0, 2]


def _inputs(tiny_index, candidates: list[dict], question=QUESTION, status="ok"):
    questions = contracts.from_rows(
        [{"question_id": "q1", "question": question, "principal": "p", "query_type": "general"}],
        "questions",
    )
    return {
        **tiny_index,
        "questions": questions,
        "eligibility": eligibility_table("q1", dict.fromkeys(ALL_DOCS, "eligible")),
        "candidates": contracts.from_rows(candidates, "candidates"),
        "retrieval_status": contracts.from_rows(
            [
                {
                    "question_id": "q1",
                    "status": status,
                    "n_eligible_docs": 3,
                    "error": "boom" if status != "ok" else None,
                }
            ],
            "retrieval_status",
        ),
        "retrieval_queries": contracts.empty("retrieval_queries"),
    }


def _candidate(chunk_id: str, doc_id: str, fused: float = 0.03, pool: str = "eligible") -> dict:
    return {
        "question_id": "q1",
        "pool": pool,
        "chunk_id": chunk_id,
        "doc_id": doc_id,
        "fused_score": fused,
        "rank": 1,
    }


def test_a_strong_match_is_success_with_one_attempt(tiny_index):
    out = rerank.run(
        _inputs(tiny_index, [_candidate("hr-salaries#0000", "hr-salaries")]), rerank.Config()
    )
    status = out["rerank_status"].to_pylist()[0]
    assert status["state"] == "success" and status["confidence"] >= 0.75
    assert [a["attempt"] for a in out["rerank_attempts"].to_pylist()] == [1]
    assert out["ranked"].to_pylist()[0]["chunk_id"] == "hr-salaries#0000"


def test_low_relevance_triggers_one_requery_and_records_it(tiny_index):
    config = rerank.Config(high_threshold=0.999, low_threshold=0.01)  # force the middle band
    out = rerank.run(_inputs(tiny_index, [_candidate("handbook#0000", "handbook")]), config)
    attempts = out["rerank_attempts"].to_pylist()
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert attempts[0]["stop_reason"] == "requery"
    assert attempts[1]["stop_reason"] in {"improved", "no_improvement"}
    assert attempts[1]["query_text"] and attempts[1]["query_text"] != QUESTION
    # the re-query searched the eligible documents and found the better chunk
    assert attempts[1]["stop_reason"] == "improved"
    assert out["ranked"].to_pylist()[0]["chunk_id"] == "hr-salaries#0000"


def test_no_requery_when_nothing_relevant_or_on_error(tiny_index):
    nothing = rerank.run(_inputs(tiny_index, []), rerank.Config())
    assert nothing["rerank_status"].to_pylist()[0]["state"] == "not_found"
    assert len(nothing["rerank_attempts"]) == 1
    failed = rerank.run(_inputs(tiny_index, [], status="error"), rerank.Config())
    status = failed["rerank_status"].to_pylist()[0]
    assert status["state"] == "technical_error" and status["is_error"] and status["error"] == "boom"
    assert len(failed["rerank_attempts"]) == 1


def test_stale_pool_that_would_answer_sets_the_stale_hint(tiny_index):
    candidates = [
        _candidate("pricing#0000", "pricing"),
        _candidate("hr-salaries#0000", "hr-salaries", pool="stale"),
    ]
    out = rerank.run(_inputs(tiny_index, candidates), rerank.Config())
    status = out["rerank_status"].to_pylist()[0]
    assert status["state"] != "success" and status["refusal_hint"] == "stale_only"
    assert all(r["doc_id"] != "hr-salaries" for r in out["ranked"].to_pylist())


def test_a_misconfigured_cross_encoder_is_a_technical_error(tiny_index):
    config = rerank.Config(scorer="cross_encoder", cross_encoder_model=None)
    out = rerank.run(_inputs(tiny_index, [_candidate("hr-salaries#0000", "hr-salaries")]), config)
    status = out["rerank_status"].to_pylist()[0]
    assert status["state"] == "technical_error" and "cross_encoder_model" in status["error"]


PRICE = "How much does the Enterprise plan cost per user per month for {}?"


def _price_status(tiny_index, question: str, eligible=ALL_DOCS, **settings) -> dict:
    inputs = _inputs(tiny_index, [_candidate("pricing#0000", "pricing")], question=question)
    decisions = {d: "eligible" if d in eligible else "denied" for d in ALL_DOCS}
    inputs["eligibility"] = eligibility_table("q1", decisions)
    return rerank.run(inputs, rerank.Config(**settings))["rerank_status"].to_pylist()[0]


def test_a_question_naming_what_no_source_writes_is_not_found(tiny_index):
    """A Fabrikam price list is no answer for Initech, however well the rest matches."""
    answered = _price_status(tiny_index, PRICE.format("our staff"))
    assert answered["state"] == "success" and answered["unwritten_names"] is None
    status = _price_status(tiny_index, PRICE.format("Initech"))
    assert status["state"] == "not_found" and status["confidence"] == 0.0
    assert status["unwritten_names"] == ["initech"]
    off = _price_status(tiny_index, PRICE.format("Initech"), refuse_unwritten_names=False)
    assert off["state"] == "success"


def test_a_question_about_a_year_no_source_writes_is_not_found(tiny_index):
    """Answering "in 2019?" from a price list that names no year would invent a past price."""
    status = _price_status(tiny_index, PRICE.format("us in 2019"))
    assert status["state"] == "not_found" and status["unwritten_names"] == ["2019"]


def test_a_typo_in_a_name_the_sources_write_is_still_answered(tiny_index):
    status = _price_status(tiny_index, "How much does the Enterprse plan cost per user per month?")
    assert status["state"] == "success" and status["unwritten_names"] is None


def test_only_sources_the_principal_may_read_count_as_writing_a_name(tiny_index):
    """Only the pricing page writes "Enterprise"; a principal who may not read it gets not found,
    and the check reveals nothing the principal may not see (the name is the question's own)."""
    question = "How much does the Enterprise plan cost per user per month?"
    status = _price_status(tiny_index, question, eligible=("handbook",))
    assert status["state"] == "not_found" and status["unwritten_names"] == ["enterprise"]


def test_a_negated_question_over_evidence_stating_no_negation_is_not_found(tiny_index):
    """ "Which plan does not cost 49 euros?" is answered by no sentence of a price list that
    states no negation: only by inference."""
    question = "Which plan does not cost 49 euros per user per month?"
    status = _price_status(tiny_index, question)
    assert status["state"] == "not_found" and status["negation_unstated"] is True
    assert status["confidence"] == 0.0
    off = _price_status(tiny_index, question, negated_needs_negation=False)
    assert off["state"] == "success" and off["negation_unstated"] is None
    plain = _price_status(tiny_index, "Which plan costs 49 euros per user per month?")
    assert plain["state"] == "success" and plain["negation_unstated"] is None


def test_a_negated_question_is_answered_when_its_top_chunk_states_a_negation():
    from types import SimpleNamespace

    texts = ["Single sign-on is not included in the Starter plan.", "SSO costs 5 euros."]
    view = SimpleNamespace(row_of={"a": 0, "b": 1}, headings=["Plans", "Plans"], texts=texts)
    state = rerank._state("q1", "success", 0.8, None, None)

    def outcome(first: str) -> dict:
        ranked = [{"chunk_id": first}, {"chunk_id": "b" if first == "a" else "a"}]
        return {"ranked": ranked, "state": state}

    question = "Which plan does not include single sign-on?"
    scorer, config = SimpleNamespace(view=view), rerank.Config()
    kept = rerank._negation_checked(outcome("a"), question, scorer, config)
    assert kept["state"]["state"] == "success" and kept["state"]["negation_unstated"] is None
    refused = rerank._negation_checked(outcome("b"), question, scorer, config)  # top_k 1
    assert refused["state"]["state"] == "not_found" and refused["state"]["negation_unstated"]
    wider = rerank._negation_checked(
        outcome("b"), question, scorer, rerank.Config(negation_top_k=2)
    )
    assert wider["state"]["state"] == "success"


def test_no_judge_is_asked_about_a_name_no_source_writes(tiny_index, monkeypatch):
    from stages.models.answerability import AnswerabilitySettings, Judgement

    class CountingJudge:
        model_id, calls = "counting", 0

        def judge(self, question, passages, priors=None):
            self.calls += 1
            return Judgement([1.0] * len(passages))

    judge = CountingJudge()
    monkeypatch.setattr(rerank, "answerability_judge", lambda *_: judge)
    fast = AnswerabilitySettings(kind="fast")
    status = _price_status(tiny_index, PRICE.format("Initech"), answerability=fast)
    assert status["state"] == "not_found" and judge.calls == 0
    assert _price_status(tiny_index, PRICE.format("us"), answerability=fast)["state"] == "success"
    assert judge.calls == 1


class ScriptedClient:
    """Stands in for the chat model to exercise the verdict parsing (the real model: below)."""

    def __init__(self, reply: str) -> None:
        self.reply, self.calls = reply, 0

    def complete(self, messages, schema):
        from stages.models.chat import Completion

        self.calls += 1
        return Completion(text=self.reply)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('{"verdict": "HIGH"}', "HIGH"),
        ('{"verdict": "NOT_RELEVANT"}', "NOT_RELEVANT"),
        ('{"verdict": "CERTAIN"}', "LOW"),
        ("HIGH, definitely", "LOW"),
        ("", "LOW"),
    ],
)
def test_malformed_llm_verdicts_degrade_to_low(reply, verdict):
    client = ScriptedClient(reply)
    found, records = rerank.llm_verdict(client, "q", "evidence")
    assert found == verdict
    # a malformed verdict is fed back once (bounded), and each attempt is recorded
    expected = ["valid"] if verdict != "LOW" else ["invalid", "invalid"]
    assert [r["status"] for r in records] == expected and client.calls == len(expected)
    assert {r["tool"] for r in records} == {"confidence_check"}


def test_verdicts_only_ever_lower_the_state():
    assert rerank.apply_verdict("success", "HIGH") == "success"
    assert rerank.apply_verdict("success", "MEDIUM") == "low_relevance"
    assert rerank.apply_verdict("low_relevance", "MEDIUM") == "low_relevance"
    assert rerank.apply_verdict("success", "LOW") == "not_found"
    assert rerank.apply_verdict("success", "NOT_RELEVANT") == "not_found"


def test_llm_check_runs_only_for_configured_query_types(tiny_index, monkeypatch):
    client = ScriptedClient('{"verdict": "NOT_RELEVANT"}')
    monkeypatch.setattr(rerank, "make_check_client", lambda config: client)
    config = rerank.Config(llm_check_query_types=["pricing"])
    general = rerank.run(
        _inputs(tiny_index, [_candidate("hr-salaries#0000", "hr-salaries")]), config
    )
    assert general["rerank_status"].to_pylist()[0]["state"] == "success" and client.calls == 0
    priced = _inputs(tiny_index, [_candidate("hr-salaries#0000", "hr-salaries")])
    priced["questions"] = contracts.from_rows(
        [{"question_id": "q1", "question": QUESTION, "principal": "p", "query_type": "pricing"}],
        "questions",
    )
    status = rerank.run(priced, config)["rerank_status"].to_pylist()[0]
    assert (status["state"], status["llm_verdict"], client.calls) == (
        "not_found",
        "NOT_RELEVANT",
        1,
    )
    calls = rerank.run(priced, config)["confidence_calls"].to_pylist()
    assert [(c["question_id"], c["tool"], c["status"]) for c in calls] == [
        ("q1", "confidence_check", "valid")
    ]


def test_the_local_model_judges_evidence_that_states_the_answer():
    from pathlib import Path

    from stages.models.files import DEFAULT_MODEL_PATH

    if not Path(DEFAULT_MODEL_PATH).is_file():
        pytest.skip(f"{DEFAULT_MODEL_PATH} not assembled: run make setup")
    client = rerank.make_check_client(rerank.Config())
    verdict, _ = rerank.llm_verdict(
        client,
        "How much does the Enterprise plan cost per user per month?",
        "Plan: Enterprise; Monthly list price: €49 per user per month; Minimum seats: 25.",
    )
    assert verdict in ("HIGH", "MEDIUM")


def test_a_local_cross_encoder_is_used_when_configured(tiny_index, tmp_path):
    """Plumbing only: no trained cross-encoder ships on PyPI, so this one has a random head
    (a user drops a real one in by path); what must hold is that it is loaded from disk and
    its scores, through ce_scale/ce_shift, become the confidences."""
    from sentence_transformers import CrossEncoder

    from stages.models import embeddings, files

    base = files.resolve_model_path(embeddings.PACKAGED_EMBEDDING_MODEL)
    CrossEncoder(str(base), num_labels=1, device="cpu").save(str(tmp_path / "ce"))
    candidates = [
        _candidate("hr-salaries#0000", "hr-salaries"),
        _candidate("pricing#0000", "pricing"),
    ]
    config = rerank.Config(
        scorer="cross_encoder", cross_encoder_model=str(tmp_path / "ce"), ce_scale=0.0, ce_shift=5.0
    )
    out = rerank.run(_inputs(tiny_index, candidates), config)
    status = out["rerank_status"].to_pylist()[0]
    expected = 1 / (1 + np.exp(-5.0))  # scale 0: the confidence is the shift alone
    assert status["confidence"] == pytest.approx(expected)
    assert status["state"] == "success"
    assert {r["chunk_id"] for r in out["ranked"].to_pylist()} == {
        "hr-salaries#0000",
        "pricing#0000",
    }


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ({"unwritten_names": ["initech"]}, "no readable source writes: initech"),
        ({"negation_unstated": True}, "negated question, no negation in its evidence"),
        ({}, None),
    ],
)
def test_the_trace_says_which_question_check_refused(status, shown):
    from cli.trace import render_trace

    trace = {
        "question_id": "q1",
        "question": "?",
        "source_selection": [],
        "queries": [],
        "candidates": [],
        "rerank": {"state": "not_found", "confidence": 0.0, **status},
        "evidence": [],
        "generation": {},
        "guardrails": {},
        "final": {"status": "refused", "rendered_answer": ""},
    }
    rerank_line = next(line for line in render_trace(trace).splitlines() if "rerank:" in line)
    assert (shown in rerank_line) if shown else rerank_line.endswith("(confidence 0.0)")
