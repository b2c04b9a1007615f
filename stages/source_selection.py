"""Stage 2, source selection: which documents each question may rest on, decided before retrieval.

Rules are data (`configs/sources.yaml`, `configs/principals.yaml`), applied in a fixed order so
the recorded reason is the first rule that excluded a document:

1. permission   the principal shares no group with the document's permission set
2. superseded   a newer version lists this document in `supersedes`
3. min_tier     the document's trust tier is below the query type's minimum
4. freshness    older than the window for (query type, tier); recorded as decision `stale`
5. conflict     documents on one `subject` that compete: the conflict policy keeps one
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from typing import Any, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from stages import contracts

NAME = "source_selection"
VERSION = "1.0.0"
OUTPUTS = ("eligibility",)  # contract tables written
INPUTS = ("documents", "questions")  # contract tables and blobs read
PER_QUESTION = True  # cached and batched per question


class QueryTypePolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_tier: str = "untrusted"
    max_age_days: int | None = Field(None, ge=0, description="freshness window; null = no limit")
    max_age_days_by_tier: dict[str, int] = {}


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    as_of: dt.date | None = Field(None, description="reference date for freshness; null = today")
    trust_tiers: list[str] = ["canonical", "verified", "community", "untrusted"]
    principals: dict[str, list[str]] = {}
    query_types: dict[str, QueryTypePolicy] = {"default": QueryTypePolicy()}
    conflict_policy: Literal["newest", "highest_tier", "override"] = "highest_tier"
    conflict_overrides: dict[str, str] = Field({}, description="subject -> doc_id that wins")


def _policy(config: Config, query_type: str) -> QueryTypePolicy:
    return (
        config.query_types.get(query_type) or config.query_types.get("default") or QueryTypePolicy()
    )


def _tier_rank(config: Config, tier: str) -> int:
    return config.trust_tiers.index(tier) if tier in config.trust_tiers else len(config.trust_tiers)


def _doc_date(doc: dict) -> dt.date | None:
    return doc["last_modified"] or doc["published_at"]


def _first_exclusion(
    doc: dict, groups: set[str], policy: QueryTypePolicy, superseded_by: dict, config: Config, today
) -> tuple[str, str, str] | None:
    """(decision, rule, reason) for the first rule that excludes `doc`, or None."""
    if not groups & set(doc["permission_set"]):
        return "excluded", "permission", "principal has none of the document's permission groups"
    if doc["doc_id"] in superseded_by:
        return "excluded", "superseded", f"superseded by {superseded_by[doc['doc_id']]}"
    if _tier_rank(config, doc["trust_tier"]) > _tier_rank(config, policy.min_tier):
        return "excluded", "min_tier", f"tier {doc['trust_tier']} is below {policy.min_tier}"
    window = policy.max_age_days_by_tier.get(doc["trust_tier"], policy.max_age_days)
    date = _doc_date(doc)
    if window is not None and date is not None and (today - date).days > window:
        age = (today - date).days
        return "stale", "freshness", f"{age} days old, window is {window} days"
    return None


def _conflict_winner(docs: list[dict], subject: str, config: Config) -> dict:
    if config.conflict_policy == "override" and subject in config.conflict_overrides:
        chosen = [d for d in docs if d["doc_id"] == config.conflict_overrides[subject]]
        if chosen:
            return chosen[0]
    newest = sorted(docs, key=lambda d: _doc_date(d) or dt.date.min, reverse=True)
    if config.conflict_policy == "newest":
        return newest[0]
    return min(newest, key=lambda d: _tier_rank(config, d["trust_tier"]))


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    documents = (
        inputs["documents"]
        .select(
            [
                "doc_id",
                "permission_set",
                "trust_tier",
                "published_at",
                "last_modified",
                "subject",
                "supersedes",
            ]
        )
        .to_pylist()
    )
    questions = inputs["questions"].to_pylist()
    today = config.as_of or dt.date.today()
    existing = {d["doc_id"] for d in documents}
    superseded_by = {
        old: d["doc_id"] for d in documents for old in d["supersedes"] or [] if old in existing
    }
    rows = []
    for question in questions:
        groups = set(config.principals.get(question["principal"], []))
        policy = _policy(config, question["query_type"])
        decisions: dict[str, tuple[str, str, str]] = {}
        by_subject: dict[str, list[dict]] = defaultdict(list)
        for doc in documents:
            excluded = _first_exclusion(doc, groups, policy, superseded_by, config, today)
            if excluded:
                decisions[doc["doc_id"]] = excluded
            else:
                decisions[doc["doc_id"]] = ("eligible", "", "passed all rules")
                if doc["subject"]:
                    by_subject[doc["subject"]].append(doc)
        for subject, competing in by_subject.items():
            if len(competing) < 2:
                continue
            winner = _conflict_winner(competing, subject, config)
            for doc in competing:
                if doc is not winner:
                    reason = (
                        f"conflicts with {winner['doc_id']} on {subject!r}; "
                        f"policy {config.conflict_policy}"
                    )
                    decisions[doc["doc_id"]] = ("excluded", "conflict", reason)
        for doc_id, (decision, rule, reason) in decisions.items():
            rows.append(
                {
                    "question_id": question["question_id"],
                    "doc_id": doc_id,
                    "eligible": decision == "eligible",
                    "decision": decision,
                    "rule": rule,
                    "reason": reason,
                }
            )
    return {"eligibility": contracts.table_of("eligibility", rows, stage=NAME)}


# ---------------------------------------------------------------- explaining an empty selection

RULE_WORDS = {
    "permission": "not readable by the asking principal",
    "superseded": "superseded by a newer version",
    "freshness": "outside the freshness window",
    "conflict": "set aside by the conflict policy",
}


def no_eligible_sources(
    eligibility: list[dict],
    documents: list[dict],
    defaulted: set[str] = frozenset(),
    question_ids: list[str] | None = None,
    with_sources: set[str] = frozenset(),
) -> str | None:
    """Why questions had no eligible source at all, in one line; None when every one had some.

    `defaulted` holds the doc ids whose metadata were defaults (no catalog entry), so a user
    learns that the defaults, not the retriever, left nothing to answer from. `with_sources`
    names questions known to have an eligible source whose rows the caller left out.
    """
    rows_by_question: dict[str, list[dict]] = defaultdict(list)
    for row in eligibility:
        rows_by_question[row["question_id"]].append(row)
    asked = question_ids if question_ids is not None else list(rows_by_question)
    empty = [
        q
        for q in asked
        if q not in with_sources and not any(r["eligible"] for r in rows_by_question.get(q, []))
    ]
    if not empty:
        return None
    head = "no eligible sources"
    if len(asked) > 1:
        head += f" for {len(empty)} of {len(asked)} questions"
    if not documents:
        return f"{head}: the corpus has no ingested documents"
    rules: dict[str, Counter] = defaultdict(Counter)
    for question_id in empty:
        for row in rows_by_question.get(question_id, []):
            rules[row["doc_id"]][row["rule"]] += 1
    tiers = {d["doc_id"]: d["trust_tier"] for d in documents}
    causes: Counter = Counter()
    for doc_id, counts in rules.items():
        rule = counts.most_common(1)[0][0]
        if rule == "min_tier":
            how = "defaulted to" if doc_id in defaulted else "at"
            causes[f"{how} tier {tiers.get(doc_id)}, below the query type's minimum tier"] += 1
        else:
            causes[RULE_WORDS.get(rule, rule or "excluded")] += 1
    parts = [f"{n} document{'s' * (n != 1)} {cause}" for cause, n in causes.most_common()]
    return f"{head}: {'; '.join(parts)}"


def accepting_query_types(config: Config, tier: str) -> set[str]:
    """The query types whose minimum tier lets a document of `tier` be cited."""
    return {
        name
        for name, policy in config.query_types.items()
        if _tier_rank(config, tier) <= _tier_rank(config, policy.min_tier)
    }
