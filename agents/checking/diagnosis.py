"""The run-level diagnosis in plain words, and the refusal a blocked run's user sees.

The failure modes people who run agents know:

- `answered_without_evidence`: every tool result was empty or an error, and the agent answered
  anyway (from its own memory);
- `off_topic_result`: the agent answered from a result that does not answer the question;
- `unsupported_claims`: the results are on topic but parts of the answer are not in them;
- `invalid_tool_call`: a call broke its tool's schema or used an identifier nobody gave;
- `technical_error`: a claim could not be checked (its judge failed): not a verdict on the
  answer, which is held back until it can be checked;
- `said_not_found`: the results had nothing and the agent said so (the good case);
- `grounded`: every claim is supported by the tool results;
- `no_tool_results` / `no_answer`: nothing to check the answer against, or no answer at all.

The refusal names the failure mode and reveals no internals: no tool names, scores or evidence.
"""

from __future__ import annotations

import re

from agents.checking.tool_calls import fit_similarity
from stages.common.text import content_tokens, coverage

VERSION = "1.2.0"
REFUSAL_RE = re.compile(
    r"\b(?:i|we)\s+(?:could not|couldn't|cannot|can't|can not|was unable to|am unable to|"
    r"wasn't able to|was not able to|did not|didn't)\s+(?:find|locate|retrieve|get|access|"
    r"determine|verify|confirm|look up)\b"
    r"|\b(?:no|not any)\s+(?:information|results?|records?|data|details|matches|documents?|"
    r"entries)\s+(?:was |were )?(?:found|available|returned)\b"
    r"|\b(?:there (?:is|are|was|were) no|i (?:have|had|found) no)\s+(?:\w+\s+){0,3}"
    r"(?:information|results?|records?|data|details|matches|documents?|mention)\b"
    r"|\b(?:the |my )?(?:search|tools?|lookup|query|results?|sources?|documents?)\s+"
    r"(?:did not|didn't|does not|doesn't|do not|don't)\s+(?:return|contain|mention|say|"
    r"include|show|provide)\b"
    r"|\bi (?:do not|don't) (?:know|have (?:that|this|enough|any) information)\b"
    r"|\b(?:has|have|had|contains?|holds?|returned|gave) no (?:\w+ )?(?:information|records?|"
    r"data|details|results?|mention|answer)\b"
    r"|\b(?:unable|not able) to (?:find|answer|locate|retrieve)\b"
    r"|\bnot (?:found|available) in (?:the )?(?:results?|sources?|documents?|records?)\b",
    re.IGNORECASE,
)
MAX_REFUSAL_SENTENCES = 3  # a longer answer that also says "I couldn't find X" answers something
RELEVANT_SHARE = 0.34  # share of the question's content words the evidence must hold
# ... or the cosine (packaged MiniLM, as the tool fit) of the question to one evidence span: a
# structured result ("amount: 92.3, currency: EUR") shares no word with "How many euros is 100
# dollars?". Chosen on HaluEval QA records 1-200 (each question with its own knowledge and with
# another record's): on-topic results called off topic 0.04 -> 0.0, off-topic called on topic
# 0.005 -> 0.02; records 201-400: 0.02 -> 0.005 and 0.01 -> 0.03.
RELEVANT_SIMILARITY = 0.3
MAX_SPANS_COMPARED = 8

TEXTS = {
    "answered_without_evidence": "The agent answered although every tool result was empty or an "
    "error: the answer comes from the model, not from the tools.",
    "off_topic_result": "The agent answered from a result that does not answer the question.",
    "unsupported_claims": "Parts of the answer are not supported by the tool results.",
    "invalid_tool_call": "A tool call broke its tool's schema or used an identifier nobody gave.",
    "said_not_found": "The tools found nothing and the agent said so (no answer was invented).",
    "grounded": "Every claim of the answer is supported by the tool results.",
    "technical_error": "A claim of the answer could not be checked (the judge failed): this is "
    "a technical error, not a finding that the answer is wrong.",
    "no_tool_results": "The agent answered without any tool result to rest on.",
    "no_answer": "The run ends without a final answer; only its tool calls were checked.",
    "refused_despite_results": "The agent said it could not find an answer although a tool "
    "returned results.",
}
# What the user sees instead of a blocked answer: the failure mode, no internals.
REFUSALS = {
    "answered_without_evidence": "I can't give this answer: the lookups it needed returned "
    "nothing usable, so it could not be checked against any source.",
    "off_topic_result": "I can't give this answer: what was found does not answer your question.",
    "unsupported_claims": "I can't give this answer: parts of it are not supported by what was "
    "found.",
    "invalid_tool_call": "I can't give this answer: it relies on a lookup made with details you "
    "did not provide.",
    "no_tool_results": "I can't give this answer: nothing was looked up to support it.",
    "technical_error": "I can't give this answer right now: it could not be checked because of "
    "a technical problem.",
}
DEFAULT_REFUSAL = "I can't give this answer: it could not be verified."


def is_refusal(answer: str | None) -> bool:
    """The answer says the agent could not find or does not know (and says little else)."""
    if not answer or not answer.strip():
        return False
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", answer.strip()) if s.strip()]
    return len(sentences) <= MAX_REFUSAL_SENTENCES and bool(REFUSAL_RE.search(answer))


def relevance(question: str, texts: list[str]) -> float:
    """Share of the question's content words the evidence holds: low = off topic."""
    wanted = set(content_tokens(question))
    if not wanted:
        return 1.0
    return coverage(wanted, set(content_tokens(" ".join(texts))))


def on_topic(question: str, texts: list[str]) -> bool:
    """The evidence is about the question: it holds enough of its words, or one of its spans is
    close to it in meaning (without the embedding model, the words alone decide)."""
    if relevance(question, texts) >= RELEVANT_SHARE:
        return True
    similarity = fit_similarity(question, texts[:MAX_SPANS_COMPARED])
    return similarity is not None and similarity >= RELEVANT_SIMILARITY


def diagnose(
    *,
    answer: str | None,
    question: str,
    results: int,
    evidence_texts: list[str],
    claims_action: str | None,
    rejected_calls: int,
    claim_errors: int = 0,
) -> str:
    """The failure mode (a key of TEXTS) of one run. `claim_errors`: claims whose check failed
    technically (a judge error): the run's mode is then `technical_error`, never a finding."""
    if answer is None:
        return "invalid_tool_call" if rejected_calls else "no_answer"
    refused = is_refusal(answer)
    if not evidence_texts:
        if refused:
            return "said_not_found"
        return "answered_without_evidence" if results else "no_tool_results"
    if claim_errors:
        return "technical_error"
    if refused and claims_action != "emit":
        return "refused_despite_results"
    if claims_action not in (None, "emit"):
        if not on_topic(question, evidence_texts):
            return "off_topic_result"
        return "unsupported_claims"
    return "invalid_tool_call" if rejected_calls else "grounded"


def refusal_text(mode: str) -> str:
    return REFUSALS.get(mode, DEFAULT_REFUSAL)
