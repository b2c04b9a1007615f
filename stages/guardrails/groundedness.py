"""Deterministic per-claim checks against evidence spans, each a small versioned function.

Every check returns a `CheckResult` whose score is 1.0 (pass) or 0.0 (fail), except `lexical`,
which is the share of the claim's content words found in the spans. The guardrail takes the
minimum, so a figure or a name found in no span scores the claim 0 whatever the judge says.

- `figures`     numbers, amounts, percentages and dates must occur in the spans
- `scale`       "million" / "billion" / "thousand" next to a figure must occur in the spans too
- `entities`    capitalised names, acronyms and identifiers must occur in the spans
- `polarity`    negation or direction (more/less, before/after, minimum/maximum…) must match the
                span sentence the claim restates
- `citations`   a cited evidence id must be one of this question's spans (a source not retrieved)
- `injection`   a claim resting on a span that contains an instruction scores 0
- `lexical`     share of content words found; used as a cheap pre-filter before the judge and as
                the support score when no judge is configured
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from spacy.lang.en.stop_words import STOP_WORDS as SPACY_STOP_WORDS

from stages.common.text import (
    STOPWORDS,
    content_tokens,
    coverage,
    critical_values,
    sentence_spans,
    words,
)

CHECKS = {
    "figures": "1.0.0",
    "scale": "1.0.0",
    "entities": "1.1.0",
    "polarity": "1.0.0",
    "citations": "1.0.0",
    "injection": "1.1.0",
    "lexical": "1.0.0",
}

INJECTION_RE = re.compile(
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|all|earlier|any)\b"
    r".{0,20}\b(instructions?|rules?|guidelines?)\b"
    r"|\byou are now\b|\bsystem prompt\b|\bdo not tell the user\b|\bnew instructions?\b"
    r"|\b(assistant|ai|model)s?\b.{0,30}\b(must|should) (now )?(say|tell|answer|respond|reply)\b",
    re.IGNORECASE | re.DOTALL,
)
NAME_RE = re.compile(r"\b[A-Z][a-z]+[A-Z]?[\w&-]*|\b[A-Z]{2,}[a-z]?\b")
# Mixed letters and digits with a separator (INV-2026-042, SKU 12-AB), URLs and e-mail addresses.
IDENTIFIER_RE = re.compile(
    r"https?://[^\s\]\)>,]+|www\.[^\s\]\)>,]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+\b"
)
COMMON_WORDS = frozenset(STOPWORDS | SPACY_STOP_WORDS) | {
    "yes",
    "no",
    "however",
    "therefore",
    "additionally",
    "currently",
    "according",
    "each",
    "every",
    "both",
    "under",
    "overall",
    "note",
    "please",
    "customers",
    "users",
    "employees",
}
NEGATION_RE = re.compile(
    r"\b(not|no|never|none|neither|nor|without|cannot|nothing|nobody|unavailable|excluded?)\b|n't\b",
    re.IGNORECASE,
)
# Each pair: a word and its opposite direction. A claim using one side of a pair while the span
# it restates uses only the other side has changed the meaning.
DIRECTION_PAIRS = (
    (
        {"more", "greater", "higher", "above", "over", "exceeds", "exceed"},
        {"less", "fewer", "lower", "below", "under"},
    ),  # noqa: E501
    (
        {"increase", "increased", "increases", "rise", "rose"},
        {"decrease", "decreased", "decreases", "fall", "fell"},
    ),  # noqa: E501
    ({"before", "earlier", "prior"}, {"after", "later"}),
    ({"minimum", "least"}, {"maximum", "most"}),
    ({"longer", "larger", "bigger"}, {"shorter", "smaller"}),
    ({"first"}, {"last"}),
    ({"included", "includes", "include"}, {"excluded", "excludes", "exclude"}),
)
MIN_POLARITY_TOKENS = 3
FINITE_VERB_RE = re.compile(
    r"\b(is|are|was|were|has|have|had|do|does|did|can|cannot|will|must|may|should|shall|"
    r"\w+(?:ed|es|s))\b|n't\b",
    re.IGNORECASE,
)
# Answer particles carry no content to find in the evidence: "yes" / "no" go to the judge.
ANSWER_PARTICLES = frozenset({"yes", "no"})
SCALE_WORDS = frozenset({"thousand", "million", "billion", "trillion", "k", "m", "bn"})


@dataclass
class CheckResult:
    name: str
    score: float
    reasons: list[str] = field(default_factory=list)
    critical: bool = False  # the check found a critical value (figure, name, identifier)

    @property
    def version(self) -> str:
        return CHECKS[self.name]


def normalize(text: str) -> str:
    """Lower case, unified quotes and dashes, markers and punctuation at the ends dropped."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"\[e\d+\]", " ", text)
    text = text.replace("’", "'").replace("“", '"').replace("”", '"').replace("–", "-")
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" .!?;:,")


def is_verbatim(claim: str, spans: list[str]) -> bool:
    """The claim's normalised text occurs inside one span: entailed by definition."""
    target = normalize(claim)
    if not target:
        return False
    pattern = re.compile(rf"(?<!\w){re.escape(target)}(?!\w)")  # "no" is not inside "known"
    return any(pattern.search(normalize(span)) for span in spans)


def _contains_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word.lower())}(?![\w])", text.lower()) is not None


def without_identifiers(text: str) -> str:
    """Identifiers are checked whole (entities), so their digits are not figures, nor names."""
    return IDENTIFIER_RE.sub(" ", text)


def check_figures(claim: str, spans: list[str]) -> CheckResult:
    values = critical_values(without_identifiers(claim))
    missing = sorted(values - critical_values(" ".join(spans)))
    if missing:
        shown = ", ".join(v.removeprefix("date:") for v in missing)
        return CheckResult("figures", 0.0, [f"figure or date not in evidence: {shown}"], True)
    return CheckResult("figures", 1.0, [], bool(values))


def check_scale(claim: str, spans: list[str]) -> CheckResult:
    support = set(words(" ".join(spans)))
    scales = [w for w in words(claim) if w in SCALE_WORDS and w not in support]
    if scales and critical_values(claim):
        return CheckResult("scale", 0.0, [f"magnitude not in evidence: {', '.join(scales)}"], True)
    return CheckResult("scale", 1.0)


def names_in(claim: str) -> list[str]:
    """Capitalised words and acronyms, minus common words that start a sentence."""
    found = []
    for match in NAME_RE.finditer(claim):
        word = match.group(0)
        if word.lower() in COMMON_WORDS:
            continue
        found.append(word)
    return found


def check_entities(claim: str, spans: list[str], allowed: str = "") -> CheckResult:
    """Names and identifiers must occur in the spans (identifiers also in `allowed`)."""
    support = " ".join(spans)
    names = names_in(without_identifiers(claim))
    unknown = sorted({n for n in names if not _contains_word(support, n)})
    identifiers = IDENTIFIER_RE.findall(claim)
    unknown_ids = sorted(
        {i for i in identifiers if i.lower() not in support.lower() and i.lower() not in allowed}
    )
    reasons = []
    if unknown:
        reasons.append(f"name not in evidence: {', '.join(unknown)}")
    if unknown_ids:
        reasons.append(f"identifier not in evidence or allowlist: {', '.join(unknown_ids)}")
    # A capitalised first word is usually just a sentence start: it makes the claim critical only
    # when it is missing from the evidence (then it is a name the answer introduced).
    first = re.match(r"\W*(\w+)", claim)
    named = [n for n in names if not (first and n == first.group(1))]
    critical = bool(named or identifiers or unknown)
    return CheckResult("entities", 0.0 if reasons else 1.0, reasons, critical)


def best_sentence(claim: str, spans: list[str]) -> tuple[str, float]:
    """The span sentence sharing most content words with the claim, and that share."""
    tokens = set(content_tokens(claim))
    best, best_cov = "", 0.0
    for span in spans:
        for start, end in sentence_spans(span):
            sentence = span[start:end]
            cov = coverage(tokens, set(content_tokens(sentence)))
            if cov > best_cov:
                best, best_cov = sentence, cov
    return best, best_cov


def check_polarity(claim: str, spans: list[str], min_overlap: float = 0.5) -> CheckResult:
    """Negation or direction flipped against the span sentence the claim restates."""
    if len(content_tokens(claim)) < MIN_POLARITY_TOKENS or not FINITE_VERB_RE.search(claim):
        return CheckResult("polarity", 1.0)  # a bare answer phrase ("6.2 km") states no polarity
    sentence, overlap = best_sentence(claim, spans)
    if overlap < min_overlap:
        return CheckResult("polarity", 1.0)  # restates nothing: the judge decides
    claim_neg = bool(NEGATION_RE.search(claim))
    span_neg = bool(NEGATION_RE.search(sentence))
    if claim_neg != span_neg:
        what = "adds a negation" if claim_neg else "drops the evidence's negation"
        return CheckResult("polarity", 0.0, [f"the claim {what}"], True)
    claim_words, span_words = set(words(claim)), set(words(sentence))
    for side_a, side_b in DIRECTION_PAIRS:
        for mine, other in ((side_a, side_b), (side_b, side_a)):
            claim_flipped = claim_words & mine and not claim_words & other
            if claim_flipped and span_words & other and not span_words & mine:
                flipped = sorted(claim_words & mine)[0]
                return CheckResult(
                    "polarity", 0.0, [f"direction changed: '{flipped}' vs the evidence"], True
                )
    return CheckResult("polarity", 1.0)


def check_citations(cited: list[str], known: set[str]) -> CheckResult:
    unknown = sorted(set(cited) - known)
    if unknown:
        return CheckResult("citations", 0.0, [f"cites a source not retrieved: {unknown}"], True)
    return CheckResult("citations", 1.0)


def check_injection(spans: list[str]) -> CheckResult:
    if any(INJECTION_RE.search(span) for span in spans):
        return CheckResult("injection", 0.0, ["rests on a span that contains an instruction"])
    return CheckResult("injection", 1.0)


def check_lexical(claim: str, spans: list[str], context: str = "") -> CheckResult:
    """Share of the claim's content words in the spans (words of `context` count as known)."""
    tokens = set(content_tokens(claim)) - set(content_tokens(context)) - ANSWER_PARTICLES
    if not tokens:
        return CheckResult("lexical", 1.0)
    score = coverage(tokens, set(content_tokens(" ".join(spans))))
    reasons = [] if score >= 0.999 else [f"{score:.0%} of the claim's words found in evidence"]
    return CheckResult("lexical", score, reasons)


def deterministic_checks(
    claim: str,
    spans: list[str],
    *,
    cited: list[str] | None = None,
    known_ids: set[str] | None = None,
    allowed: str = "",
) -> list[CheckResult]:
    """All deterministic checks of one claim (lexical last)."""
    results = [
        check_figures(claim, spans),
        check_scale(claim, spans),
        check_entities(claim, spans, allowed.lower()),
        check_polarity(claim, spans),
        check_injection(spans),
    ]
    if cited is not None and known_ids is not None:
        results.append(check_citations(cited, known_ids))
    results.append(check_lexical(claim, spans))
    return results


COMMITMENT_RE = re.compile(
    r"\b(guarantee[sd]?|must|shall|will|commit(?:s|ted)?|promise[sd]?|entitled|always|never)\b",
    re.IGNORECASE,
)


def is_critical(claim: str, results: list[CheckResult]) -> bool:
    """Numbers, dates, citations, named entities and commitments make a claim critical."""
    return any(r.critical for r in results) or bool(COMMITMENT_RE.search(claim))


def follows_injection(answer: str, evidence_texts: list[str]) -> bool:
    """The answer repeats or carries out an instruction that a document contained."""
    if INJECTION_RE.search(answer):
        return True
    injected = [t for t in evidence_texts if INJECTION_RE.search(t)]
    answer_tokens = set(content_tokens(answer))
    return any(coverage(set(content_tokens(t)), answer_tokens) >= 0.6 for t in injected)
