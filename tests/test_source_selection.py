"""Unit tests for stages/source_selection.py: the eligibility rules, their order and conflicts."""

from __future__ import annotations

import datetime as dt

import pytest

from stages import contracts, source_selection
from stages.source_selection import Config, QueryTypePolicy

AS_OF = dt.date(2026, 11, 15)


def doc(doc_id: str, **overrides) -> dict:
    """A documents row that passes every rule for an `employee` asking a `general` question."""
    row = {
        "source_id": "sample",
        "doc_id": doc_id,
        "path": f"docs/{doc_id}.md",
        "title": doc_id.replace("-", " ").title(),
        "version": "1",
        "published_at": AS_OF - dt.timedelta(days=30),
        "last_modified": AS_OF - dt.timedelta(days=30),
        "permission_set": ["everyone"],
        "trust_tier": "canonical",
        "language": "en",
        "subject": None,
        "supersedes": [],
        "doc_type": "md",
        "text": f"Text of {doc_id}.",
        "content_hash": f"hash-{doc_id}",
    }
    row.update(overrides)
    return row


def question(qid: str = "q1", principal: str = "employee", query_type: str = "general") -> dict:
    return {
        "question_id": qid,
        "question": "What does the Business plan cost?",
        "principal": principal,
        "query_type": query_type,
    }


def config(**overrides) -> Config:
    base = {
        "as_of": AS_OF,
        "principals": {"employee": ["everyone"], "hr_manager": ["everyone", "hr"]},
        "query_types": {
            "default": QueryTypePolicy(min_tier="community"),
            "general": QueryTypePolicy(min_tier="community"),
            "pricing": QueryTypePolicy(min_tier="verified", max_age_days=365),
        },
    }
    base.update(overrides)
    return Config(**base)


def select(docs: list[dict], questions: list[dict], cfg: Config) -> dict[tuple[str, str], dict]:
    out = source_selection.run(
        {
            "documents": contracts.from_rows(docs, "documents"),
            "questions": contracts.from_rows(questions, "questions"),
        },
        cfg,
    )["eligibility"]
    assert out.schema == contracts.schema_of("eligibility")
    rows = out.to_pylist()
    by_pair = {(r["question_id"], r["doc_id"]): r for r in rows}
    assert len(by_pair) == len(rows), "duplicate (question, doc) rows"
    return by_pair


# --- permission -------------------------------------------------------------------------------


def test_principal_without_group_is_excluded_by_permission():
    docs = [doc("hr-handbook", permission_set=["hr"]), doc("price-list")]
    result = select(docs, [question(principal="employee")], config())

    hr = result[("q1", "hr-handbook")]
    assert hr["eligible"] is False
    assert hr["decision"] == "excluded"
    assert hr["rule"] == "permission"
    assert result[("q1", "price-list")]["eligible"] is True


def test_principal_with_group_is_eligible():
    docs = [doc("hr-handbook", permission_set=["hr"])]
    result = select(docs, [question(principal="hr_manager")], config())

    row = result[("q1", "hr-handbook")]
    assert row["eligible"] is True
    assert row["decision"] == "eligible"
    assert row["rule"] == ""


def test_unknown_principal_gets_nothing():
    docs = [
        doc("price-list", permission_set=["everyone"]),
        doc("hr-handbook", permission_set=["hr"]),
        doc("no-acl", permission_set=[]),
    ]
    result = select(docs, [question(principal="mallory")], config())

    assert len(result) == 3
    for row in result.values():
        assert row["eligible"] is False
        assert row["decision"] == "excluded"
        assert row["rule"] == "permission"


def test_document_with_empty_permission_set_is_readable_by_nobody():
    result = select(
        [doc("no-acl", permission_set=[])], [question(principal="hr_manager")], config()
    )
    assert result[("q1", "no-acl")]["rule"] == "permission"


# --- superseded -------------------------------------------------------------------------------


def test_superseded_document_is_excluded_when_successor_exists():
    docs = [doc("price-list-2025"), doc("price-list-2026", supersedes=["price-list-2025"])]
    result = select(docs, [question()], config())

    old = result[("q1", "price-list-2025")]
    assert old["eligible"] is False
    assert old["decision"] == "excluded"
    assert old["rule"] == "superseded"
    assert "price-list-2026" in old["reason"]
    assert result[("q1", "price-list-2026")]["eligible"] is True


def test_superseded_rule_needs_the_successor_in_the_corpus():
    # Only the old document is present: nothing supersedes it here, so it stays eligible.
    result = select([doc("price-list-2025")], [question()], config())
    assert result[("q1", "price-list-2025")]["eligible"] is True


def test_supersedes_pointing_at_a_missing_document_excludes_nothing():
    docs = [doc("price-list-2026", supersedes=["price-list-2024"])]
    result = select(docs, [question()], config())
    assert list(result) == [("q1", "price-list-2026")]
    assert result[("q1", "price-list-2026")]["eligible"] is True


# --- min_tier ---------------------------------------------------------------------------------


def test_min_tier_depends_on_query_type():
    docs = [doc("forum-post", trust_tier="community"), doc("price-list", trust_tier="verified")]
    questions = [
        question("q-general", query_type="general"),
        question("q-price", query_type="pricing"),
    ]
    result = select(docs, questions, config())

    assert result[("q-general", "forum-post")]["eligible"] is True
    priced = result[("q-price", "forum-post")]
    assert priced["eligible"] is False
    assert priced["decision"] == "excluded"
    assert priced["rule"] == "min_tier"
    assert "community" in priced["reason"] and "verified" in priced["reason"]
    # The minimum itself is acceptable.
    assert result[("q-price", "price-list")]["eligible"] is True


def test_unknown_query_type_falls_back_to_default_policy():
    cfg = config(query_types={"default": QueryTypePolicy(min_tier="canonical")})
    docs = [doc("wiki", trust_tier="verified")]
    result = select(docs, [question(query_type="no-such-type")], cfg)
    assert result[("q1", "wiki")]["rule"] == "min_tier"


def test_unknown_tier_ranks_below_every_known_tier():
    docs = [doc("mystery", trust_tier="rumour")]
    cfg = config(query_types={"default": QueryTypePolicy(min_tier="untrusted")})
    result = select(docs, [question(query_type="default")], cfg)
    assert result[("q1", "mystery")]["rule"] == "min_tier"


# --- freshness --------------------------------------------------------------------------------


def test_document_older_than_window_is_stale():
    old = AS_OF - dt.timedelta(days=400)
    docs = [
        doc("old-prices", trust_tier="verified", published_at=old, last_modified=old),
        doc("new-prices", trust_tier="verified"),
    ]
    result = select(docs, [question(query_type="pricing")], config())

    stale = result[("q1", "old-prices")]
    assert stale["eligible"] is False
    assert stale["decision"] == "stale"
    assert stale["rule"] == "freshness"
    assert "400" in stale["reason"] and "365" in stale["reason"]
    assert result[("q1", "new-prices")]["eligible"] is True


def test_freshness_window_boundary_is_inclusive():
    edge = AS_OF - dt.timedelta(days=365)
    docs = [doc("edge", trust_tier="verified", published_at=edge, last_modified=edge)]
    result = select(docs, [question(query_type="pricing")], config())
    assert result[("q1", "edge")]["eligible"] is True


def test_freshness_uses_last_modified_before_published_at():
    docs = [
        doc(
            "refreshed",
            trust_tier="verified",
            published_at=AS_OF - dt.timedelta(days=1000),
            last_modified=AS_OF - dt.timedelta(days=10),
        )
    ]
    result = select(docs, [question(query_type="pricing")], config())
    assert result[("q1", "refreshed")]["eligible"] is True


def test_no_window_means_no_freshness_rule():
    ancient = AS_OF - dt.timedelta(days=5000)
    docs = [doc("ancient", published_at=ancient, last_modified=ancient)]
    result = select(docs, [question(query_type="general")], config())
    assert result[("q1", "ancient")]["eligible"] is True


def test_max_age_days_by_tier_overrides_the_window():
    age = AS_OF - dt.timedelta(days=500)
    cfg = config(
        query_types={
            "pricing": QueryTypePolicy(
                min_tier="community",
                max_age_days=365,
                max_age_days_by_tier={"canonical": 1000, "community": 30},
            )
        }
    )
    recent = AS_OF - dt.timedelta(days=60)
    docs = [
        doc("canon", trust_tier="canonical", published_at=age, last_modified=age),
        doc("verif", trust_tier="verified", published_at=age, last_modified=age),
        doc("forum", trust_tier="community", published_at=recent, last_modified=recent),
    ]
    result = select(docs, [question(query_type="pricing")], cfg)

    # canonical gets a longer window than the query type's 365 days
    assert result[("q1", "canon")]["eligible"] is True
    # verified has no override and falls back to 365 days
    assert result[("q1", "verif")]["decision"] == "stale"
    # community gets a shorter window: 60 days old is stale against 30
    forum = result[("q1", "forum")]
    assert forum["decision"] == "stale"
    assert forum["rule"] == "freshness"
    assert "30" in forum["reason"]


# --- rule order -------------------------------------------------------------------------------


def test_permission_is_recorded_before_staleness():
    old = AS_OF - dt.timedelta(days=800)
    docs = [
        doc(
            "hr-old",
            permission_set=["hr"],
            trust_tier="community",
            published_at=old,
            last_modified=old,
        )
    ]
    result = select(docs, [question(principal="employee", query_type="pricing")], config())

    row = result[("q1", "hr-old")]
    assert row["rule"] == "permission"
    assert row["decision"] == "excluded"


def test_superseded_is_recorded_before_min_tier_and_staleness():
    old = AS_OF - dt.timedelta(days=800)
    docs = [
        doc("v1", trust_tier="community", published_at=old, last_modified=old),
        doc("v2", trust_tier="verified", supersedes=["v1"]),
    ]
    result = select(docs, [question(query_type="pricing")], config())
    assert result[("q1", "v1")]["rule"] == "superseded"


def test_min_tier_is_recorded_before_staleness():
    old = AS_OF - dt.timedelta(days=800)
    docs = [doc("forum", trust_tier="community", published_at=old, last_modified=old)]
    result = select(docs, [question(query_type="pricing")], config())
    assert result[("q1", "forum")]["rule"] == "min_tier"
    assert result[("q1", "forum")]["decision"] == "excluded"


# --- conflicts --------------------------------------------------------------------------------


def conflicting_docs() -> list[dict]:
    """Three eligible docs on one subject: each policy picks a different winner."""
    return [
        doc(
            "canon-old",
            subject="enterprise-price",
            trust_tier="canonical",
            published_at=AS_OF - dt.timedelta(days=200),
            last_modified=AS_OF - dt.timedelta(days=200),
        ),
        doc(
            "verified-newest",
            subject="enterprise-price",
            trust_tier="verified",
            published_at=AS_OF - dt.timedelta(days=5),
            last_modified=AS_OF - dt.timedelta(days=5),
        ),
        doc(
            "verified-middle",
            subject="enterprise-price",
            trust_tier="verified",
            published_at=AS_OF - dt.timedelta(days=50),
            last_modified=AS_OF - dt.timedelta(days=50),
        ),
        doc("unrelated", subject="sla"),
    ]


def winners(result: dict) -> set[str]:
    return {doc_id for (_, doc_id), row in result.items() if row["eligible"]}


@pytest.mark.parametrize(
    ("policy", "overrides", "winner"),
    [
        ("highest_tier", {}, "canon-old"),
        ("newest", {}, "verified-newest"),
        ("override", {"enterprise-price": "verified-middle"}, "verified-middle"),
    ],
)
def test_conflict_policy_keeps_one_document_per_subject(policy, overrides, winner):
    cfg = config(conflict_policy=policy, conflict_overrides=overrides)
    result = select(conflicting_docs(), [question()], cfg)

    assert winners(result) == {winner, "unrelated"}
    for (_, doc_id), row in result.items():
        if doc_id in {winner, "unrelated"}:
            continue
        assert row["decision"] == "excluded"
        assert row["rule"] == "conflict"
        assert winner in row["reason"]
        assert policy in row["reason"]


def test_override_without_entry_for_subject_falls_back_to_highest_tier():
    cfg = config(conflict_policy="override", conflict_overrides={"other-subject": "x"})
    result = select(conflicting_docs(), [question()], cfg)
    assert winners(result) == {"canon-old", "unrelated"}


def test_highest_tier_tie_is_broken_by_newest():
    docs = [d for d in conflicting_docs() if d["doc_id"] != "canon-old"]
    result = select(docs, [question()], config(conflict_policy="highest_tier"))
    assert winners(result) == {"verified-newest", "unrelated"}


def test_only_eligible_documents_compete():
    # The canonical document is unreadable for the employee, so it cannot win the conflict.
    docs = conflicting_docs()
    docs[0]["permission_set"] = ["hr"]
    result = select(docs, [question()], config(conflict_policy="highest_tier"))
    assert result[("q1", "canon-old")]["rule"] == "permission"
    assert winners(result) == {"verified-newest", "unrelated"}


# --- coverage of the output -------------------------------------------------------------------


def test_every_question_document_pair_gets_exactly_one_row_with_a_reason():
    old = AS_OF - dt.timedelta(days=800)
    docs = [
        *conflicting_docs(),
        doc("hr-handbook", permission_set=["hr"]),
        doc("forum", trust_tier="community"),
        doc("stale", trust_tier="verified", published_at=old, last_modified=old),
        doc("v1"),
        doc("v2", supersedes=["v1"]),
    ]
    questions = [
        question("q-emp", principal="employee", query_type="pricing"),
        question("q-hr", principal="hr_manager", query_type="general"),
        question("q-nobody", principal="ghost", query_type="general"),
    ]
    out = source_selection.run(
        {
            "documents": contracts.from_rows(docs, "documents"),
            "questions": contracts.from_rows(questions, "questions"),
        },
        config(),
    )["eligibility"].to_pylist()

    pairs = [(r["question_id"], r["doc_id"]) for r in out]
    expected = {(q["question_id"], d["doc_id"]) for q in questions for d in docs}
    assert len(pairs) == len(expected)
    assert set(pairs) == expected
    for row in out:
        assert row["reason"], row
        assert row["eligible"] == (row["decision"] == "eligible")
        assert row["decision"] in {"eligible", "excluded", "stale"}
        if row["decision"] == "eligible":
            assert row["rule"] == ""
        else:
            assert row["rule"] in {"permission", "superseded", "min_tier", "freshness", "conflict"}


def test_empty_documents_yield_empty_eligibility():
    out = source_selection.run(
        {
            "documents": contracts.empty("documents"),
            "questions": contracts.from_rows([question()], "questions"),
        },
        config(),
    )["eligibility"]
    assert out.num_rows == 0
    assert out.schema == contracts.schema_of("eligibility")


# --- explaining an empty selection --------------------------------------------------------------


def _explain(docs: list[dict], questions: list[dict], defaulted: set[str] = frozenset()):
    rows = list(select(docs, questions, config()).values())
    return source_selection.no_eligible_sources(rows, docs, defaulted)


def test_no_warning_while_every_question_has_an_eligible_source():
    assert _explain([doc("a")], [question("q1")]) is None


def test_defaulted_untrusted_documents_are_named_as_the_cause():
    docs = [doc(f"d{i}", trust_tier="untrusted") for i in range(3)]
    message = _explain(docs, [question("q1"), question("q2")], {"d0", "d1"})
    assert message == (
        "no eligible sources for 2 of 2 questions: 2 documents defaulted to tier untrusted, "
        "below the query type's minimum tier; 1 document at tier untrusted, below the query "
        "type's minimum tier"
    )


def test_only_the_questions_left_without_sources_are_counted():
    docs = [doc("public"), doc("hr-only", permission_set=["hr"])]
    questions = [question("q1", principal="employee"), question("q2", principal="nobody")]
    message = _explain(docs, questions)
    assert message == (
        "no eligible sources for 1 of 2 questions: 2 documents not readable by the asking principal"
    )


def test_questions_known_to_have_sources_get_no_warning_without_their_rows():
    # `grounding ask` passes only the rows of questions left without sources (none here); it
    # printed "warning: no eligible sources: " with nothing after it for every refusal
    docs = [doc("public")]
    assert source_selection.no_eligible_sources([], docs, set(), ["ask"], {"ask"}) is None
    rows = list(select(docs, [question("q2", principal="nobody")], config()).values())
    message = source_selection.no_eligible_sources(rows, docs, set(), ["ask", "q2"], {"ask"})
    assert message == (
        "no eligible sources for 1 of 2 questions: 1 document not readable by the asking principal"
    )


def test_an_empty_corpus_is_named_as_the_cause():
    message = source_selection.no_eligible_sources([], [], question_ids=["q1"])
    assert message == "no eligible sources: the corpus has no ingested documents"


def test_accepting_query_types_follow_the_minimum_tiers():
    cfg = config()
    assert source_selection.accepting_query_types(cfg, "verified") == {
        "default",
        "general",
        "pricing",
    }
    assert source_selection.accepting_query_types(cfg, "community") == {"default", "general"}
    assert source_selection.accepting_query_types(cfg, "untrusted") == set()
