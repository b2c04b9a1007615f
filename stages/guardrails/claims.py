"""Claim decomposition: an answer becomes atomic claims, each with the evidence ids it cites.

Rule-based by default: one claim per sentence, and a sentence that joins independent clauses with
";" or ", and"/", but"/", while" is split further when each side still has a subject and a verb
(a shared "and" inside a noun phrase, "sales and support", stays whole). A bare " and " splits
only before a new subject ("… is €29 and the termination notice is 90 days"): an LLM answering a
two-part question writes both parts in one sentence, and judged whole the pair read as one
uncertain claim (the judge gave right pairs 0.77 and 0.84, under the 0.85 gate). Every piece
keeps the markers of its sentence. The optional LLM decomposer asks a chat client for a JSON list
of claims; its pieces inherit the markers of the sentence they came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from stages.common.text import cited_sentences, words

VERSION = "1.2.0"  # 1.1: a bare "and" before a new subject splits; 1.2: initials

CLAUSE_SPLIT_RE = re.compile(
    r";\s+|,\s+(?i:and|but|while|whereas)\s+"
    # a bare "and" only before what opens a clause: a determiner or pronoun, or a capitalised name
    r"|\s+and\s+(?=(?:the|a|an|its|their|this|these|those|it|they|each|every)\b|[A-Z])"
)
# A clause counts as independent when it has a finite verb; a short list of the commonest ones
# (plus -s/-ed forms) keeps the rule deterministic without a parser.
VERB_RE = re.compile(
    r"\b(is|are|was|were|be|has|have|had|do|does|did|can|cannot|will|must|may|should|shall|"
    r"includes?|costs?|pays?|offers?|provides?|requires?|applies|apply|covers?|\w+ed|\w+s)\b",
    re.IGNORECASE,
)
MIN_CLAUSE_WORDS = 4


@dataclass
class Claim:
    text: str
    evidence_ids: list[str] = field(default_factory=list)
    sentence: int = 0  # index of its sentence in `cited_sentences(answer)`, to re-cite it


def split_clauses(sentence: str) -> list[str]:
    """Independent clauses of one sentence; the sentence itself when a split would break it."""
    parts = [p.strip(" ,;") for p in CLAUSE_SPLIT_RE.split(sentence)]
    if len(parts) < 2:
        return [sentence]
    ok = all(len(words(p)) >= MIN_CLAUSE_WORDS and VERB_RE.search(p) for p in parts)
    return parts if ok else [sentence]


def decompose(answer: str | None) -> list[Claim]:
    """Rule-based: sentences, then independent clauses; markers stay with their sentence."""
    claims = []
    for index, (sentence, ids) in enumerate(cited_sentences(answer or "")):
        if not sentence.strip():
            continue
        for clause in split_clauses(sentence.strip()):
            if words(clause):
                claims.append(Claim(clause, list(ids), index))
    return claims


DECOMPOSE_SCHEMA = {
    "type": "object",
    "properties": {
        "claims": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8}
    },
    "required": ["claims"],
    "additionalProperties": False,
}
DECOMPOSE_PROMPT = (
    "Split the sentence into atomic claims: each claim states exactly one fact, keeps every "
    "number, date and name exactly as written, and adds nothing. Reply with JSON "
    '{"claims": [strings]}.'
)


def decompose_llm(answer: str | None, client: Any) -> list[Claim]:
    """LLM decomposer (any `llm.ChatClient`); a sentence whose reply is unusable stays whole."""
    import json

    claims = []
    for index, (sentence, ids) in enumerate(cited_sentences(answer or "")):
        if not words(sentence):
            continue
        messages = [
            {"role": "system", "content": DECOMPOSE_PROMPT},
            {"role": "user", "content": sentence},
        ]
        try:
            reply = json.loads(client.complete(messages, DECOMPOSE_SCHEMA).text)
            pieces = [p.strip() for p in reply["claims"] if isinstance(p, str) and p.strip()]
        except (ValueError, KeyError, TypeError, RuntimeError):
            pieces = []
        claims.extend(Claim(p, list(ids), index) for p in (pieces or [sentence.strip()]))
    return claims
