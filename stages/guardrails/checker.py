"""Stage 8, guardrails: per-claim groundedness, probes, PII redaction, the emit/revise/block gate.

A hallucination is a claim that contradicts the evidence, introduces a figure, date, name or
identifier found in no span, restates a span with a meaning-changing modification (negation,
magnitude, time shift), or cites a source that was not retrieved. Each check is a small versioned
module of this package: `claims` (decomposition), `groundedness` (deterministic checks), `judge`
(entailment, over a model from `stages.models`), `consistency` (self-consistency probes), `pii`
(redaction); `answers` renders and schema-checks the final answers; `gate` combines the claims'
scores and decides. This module is the claim checker that the guardrails stage, the agent wing and
the benches call: `check` (one pipeline answer), `check_answer` (an answer written elsewhere) and
the `Toolkit` that holds a run's judge and LLM client.

Per claim, against its cited spans (all of the question's evidence when it cites none):

1. deterministic checks (figures, scale, names/identifiers, negation/direction, citations,
   injection): any failure scores the claim 0, whatever the judge says; a claim over table
   rows ("Plan: Enterprise; Price: €49.") is then compared with the cells of the row it names
   (`table_rows`): a value of that row's cells supports it, a differing or another row's value
   contradicts it (judge and route "table_row", its spans the cells); the rest goes on below;
2. support: a claim contained in a cited span after normalisation (casing, accents, number
   words, date formats, a lead-in such as "According to the source,") is entailed by definition
   (judge "verbatim", no model call); one sharing less than `prefilter_lexical` of its content
   words with the spans is unsupported without asking (judge "skipped"); every other claim
   (a paraphrase) goes to the judge, with the question and the sentences of the spans that bear
   on it (P(yes) of the local LLM, an NLI model, or, with `judge: none`, the lexical share). A
   judge failure is a technical error: the claim is not emitted. The deterministic checks of
   step 1 fail only what they can prove, so a paraphrase reaches the judge. An LLM's
   short answer (`short_answer_words`, e.g. "1685") is judged as an answer to the question even
   when verbatim: finding the words in a span does not prove the span answers with them. With
   `short_answer_signals` the gate reads a probability combining that verdict with the judge's
   on the answer's whole sentence and the pair model's score for it (short_answers.py).
3. critical claims (figures, dates, names, identifiers, commitments) of an LLM generator that
   the judge supported get self-consistency probes; a divergence keeps the answer from being
   emitted. A verbatim claim is not probed ("proven"), nor one the judge already rejected.
4. a claim that fails on its cited spans while another evidence item of its question holds its
   figures, names and words (the LLM cited [E2] for a word of [E1]) is checked again as if it
   cited that item; when it holds there it is re-cited, and the final answer shows the corrected
   markers and sources (`citation_fix`, `recited_attribution`); otherwise a revise round is
   asked to fix the citation.

Claims come from `claims.decompose`: markdown markers, headings and a model's own references
("(Passage 2)", "[1]", "according to passage 3") are lifted out (the references become the
claim's cited evidence, checked first), framing is `not_a_claim` (no score, no judge call, never
blocks) and a refusal is checked against the evidence (`framing`); each claim row carries its
`char_start`/`char_end` in the answer. `check_answer` is the entry point for answers written
elsewhere (benches, agent runs).

Gate (gate.py): overall = min over claims (or a weighted mean, or `floor_mean`: the weighted mean
unless a claim scores below `claim_floor`, for long answers). `emit` when overall >= the emit line
(`answer_threshold` for floor_mean, else emit_threshold), no
critical divergence and no rejected tool output in the final turn; `block` when attribution
blocked, an instruction from a document was followed, a check failed technically, a critical
claim scores below `block_threshold`, or the revise rounds are exhausted; otherwise `revise`,
with feedback naming the unsupported claims (the answer is shown as blocked until a revision
passes). Final answers are schema-checked, then PII is redacted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import stages.guardrails.claims as claims_mod
import stages.guardrails.consistency as consistency
import stages.guardrails.framing as framing
import stages.guardrails.groundedness as groundedness
import stages.guardrails.judge as judge
import stages.guardrails.pii as pii
import stages.guardrails.short_answers as short_answers
import stages.guardrails.table_rows as table_rows
from stages.common import citations
from stages.common.text import strip_markers
from stages.guardrails.config import Config  # the stage's settings (configs/guardrails.yaml)
from stages.guardrails.gate import aggregate, decide, long_answer_gate
from stages.guardrails.groundedness import follows_injection
from stages.guardrails.verify import (
    ClaimScore,
    claim_status,
    score_status,
    verify_claim,
)
from stages.models import chat, onnx_pairs, settings
from stages.models.errors import LLMError

# What the checker finds in an answer, recorded in the reports `check_answer` writes; the
# guardrails stage states its own VERSION and bumps it with this one.
CHECKER_VERSION = "2.18.0"
TOOL_TABLES = ("rewrite_calls", "generation_calls", "confidence_calls")  # each may be absent
LLM_BACKENDS = settings.LLM_BACKENDS
PROJECT_ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------- the judge and the LLM client


@dataclass
class Toolkit:
    """The judge and chat client of one run, each built on first use (most answers need
    neither), never shared with another run."""

    config: Config
    _judge: Any = None
    _client: chat.LazyClient | None = None
    _pair_scorer: Any = None
    judge_calls: int = 0

    def judge(self) -> judge.Judge | None:
        """The configured judge (None for `judge: none`); raises judge.JudgeError."""
        if self.config.judge == "none":
            return None
        if self._judge is None:
            self._judge = make_judge(self.config)
        return self._judge

    def pair_scorer(self) -> Any:
        """The short-answer signals' pair model, loaded and hash-checked on first use; raises
        onnx_pairs.PairModelError."""
        if self._pair_scorer is None:
            signals = self.config.short_answer_signals
            path = signals.pair_model_path if signals else None
            if not path:
                raise onnx_pairs.PairModelError("short_answer_signals has no pair_model_path")
            scorer = onnx_pairs.load(project_path(path))
            if signals.pair_model_sha256 and scorer.sha256 != signals.pair_model_sha256:
                raise onnx_pairs.PairModelError(
                    f"pair model {path} has sha256 {scorer.sha256[:12]}…, the config expects "
                    f"{signals.pair_model_sha256[:12]}…"
                )
            self._pair_scorer = scorer
        return self._pair_scorer

    def client(self) -> chat.ChatClient:
        """A chat client for probes and the LLM decomposer; raises LLMError."""
        if self._client is None:
            self._client = chat.LazyClient(
                lambda: chat.chat_client(self.config.llm, max_tokens=192)
            )
        return self._client.get()


def project_path(path: str) -> str:
    """A model path as configured, or under the project root when relative and not found from
    the working directory (the project's own models, from any directory)."""
    if not Path(path).is_absolute() and not Path(path).exists():
        return str(PROJECT_ROOT / path)
    return path


def make_judge(config: Config) -> judge.Judge:
    slow = _slow_judge(config)
    if config.fast_judge is None:
        return slow
    return make_fast_judge(config, slow)


def make_fast_judge(config: Config, slow: judge.Judge | None) -> judge.Judge:
    """The configured cross-encoder in front of `slow` (None: the cross-encoder alone, whose
    unsure band then stays unsure)."""
    fast = config.fast_judge
    assert fast is not None, "config.fast_judge is not set"
    return judge.fast_judge(
        project_path(fast.model_path),
        slow,
        scale=fast.scale,
        bias=fast.bias,
        reject=fast.reject,
        accept=fast.accept,
        max_length=fast.max_length,
        sha256=fast.model_sha256,
        band_score=fast.band_score,
        focus_words=config.judge_focus_words,
        parts_only=fast.parts_only,
        accept_min_share=fast.accept_min_share,
    )


def _slow_judge(config: Config) -> judge.Judge:
    if config.judge == "nli":
        if not config.nli_model_path:
            raise judge.JudgeError("guardrails.judge 'nli' needs nli_model_path")
        return judge.nli_judge(
            config.nli_model_path,
            config.nli_entailment_label,
            config.judge_cache_dir,
            config.judge_focus_words,
        )
    return judge.llm_judge(config.llm, config.judge_cache_dir, config.judge_focus_words)


# ---------------------------------------------------------------- one answer


def tool_validations(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """The validation records of one question, and the tools whose last attempt was rejected."""
    rows = sorted(rows, key=lambda r: (r["tool"], r["attempt"] or 0))
    last: dict[str, dict] = {}
    for row in rows:
        last[row["tool"]] = row
    rejected = sorted(t for t, r in last.items() if r["status"] != "valid")
    records = [
        {k: r.get(k) for k in ("tool", "attempt", "args", "status")}
        | {"errors": list(r.get("errors") or [])}
        for r in rows
    ]
    return records, rejected


def headings_of(chosen: list[dict]) -> str:
    """The titles, section paths and `about` (an agent tool call's arguments) of the evidence
    items a claim cites: names there are not invented by the answer."""
    return " ".join(
        f"{e.get('title') or ''} {e.get('section_path') or ''} {e.get('about') or ''}"
        for e in chosen
    )


def spans_of(ids: list[str], evidence: dict[str, dict]) -> list[dict]:
    chosen = [evidence[i] for i in ids if i in evidence] or list(evidence.values())
    return chosen


def check(
    attribution: dict,
    generation: dict,
    evidence: dict[str, dict],
    config: Config,
    toolkit: Toolkit | None = None,
    *,
    question: str = "",
    tool_rows: list[dict] | None = None,
    details: bool = False,
) -> dict:
    """The HallucinationReport of one answer (without question_id, redactions and version).
    `details`: each claim a table row decided also carries `table_row` (the rule's findings, with
    the cells' offsets inside their evidence texts), beyond the contract's fields."""
    validations, rejected = tool_validations(tool_rows or [])
    report = {
        "claims": [],
        "tool_call_validations": validations,
        "consistency_probes": [],
        "answer_check": None,
        "overall_score": None,
        "action": "emit",
        "reasons": ["refusal"],
        "feedback": [],
    }
    if attribution["status"] == "refused":
        return report
    toolkit = toolkit or Toolkit(config)
    answer = attribution["answer"] or ""
    texts = [e["text"] for e in evidence.values()]
    allowed = " ".join([question, *config.identifier_allowlist]).lower()
    claims, probes, divergent, routes, miscited = [], [], [], [], []
    generated = generation.get("backend") in LLM_BACKENDS
    decomposed = _decompose(answer, config, toolkit)
    recited: set[int] = set()  # sentences with a re-cited claim
    final_ids: list[tuple[int, list[str]]] = []  # (sentence, ids) of each claim as checked

    # the floor_mean gate will decide this answer (gate.long_answer_gate counts the same claims)
    long_answer = config.aggregate == "floor_mean" and (
        sum(c.kind != "framing" for c in decomposed) >= config.long_answer_claims
    )

    def scored_with(claim: claims_mod.Claim) -> tuple[list[dict], ClaimScore]:
        chosen = spans_of(claim.evidence_ids, evidence)
        if claim.refs:  # a model's own reference is checked first, not alone: citing the
            # wrong retrieved passage is a citation slip, not an invented fact
            chosen += [e for e in evidence.values() if not any(e is c for c in chosen)]
        scored = verify_claim(
            claim.text,
            [e["text"] for e in chosen],
            config,
            toolkit,
            question=question or None,
            cited=claim.evidence_ids,
            known_ids=set(evidence),
            allowed=allowed,
            generated=generated,
            headings=headings_of(chosen),
            part=len(decomposed) > 1,
            title=str(chosen[0].get("title") or "") if chosen else "",
            long_answer=long_answer,
        )
        return chosen, scored

    for claim in decomposed:
        if claim.refs:  # the model's own "(Passage 2)": its cited evidence, checked first
            ids, unknown = claims_mod.resolve_refs(claim.refs, evidence)
            claim = replace(claim, evidence_ids=list(dict.fromkeys(claim.evidence_ids + ids)))
            claim.evidence_ids += unknown  # a passage that was not retrieved fails `citations`
        if claim.kind != "claim":
            claims.append(_framing_row(claim, evidence, config))
            continue
        chosen, scored = scored_with(claim)
        fix = []
        if claim_status(scored, config) != "supported":
            fix = citation_fix(claim, scored, evidence, allowed, question, config.prefilter_lexical)
        markers = " ".join(f"[{i}]" for i in fix)
        if fix:
            # Stated by evidence it did not cite: check it as if the generator had cited that
            # evidence, and re-cite it when it holds there (the generator's words stay, only
            # the markers change; no revise round is spent on a wrong marker).
            fixed_claim = replace(claim, evidence_ids=fix)
            fixed_chosen, fixed = scored_with(fixed_claim)
            if claim_status(fixed, config) == "supported":
                was = " ".join(f"[{i}]" for i in claim.evidence_ids)
                fixed.reasons.append(f"re-cited: {was} lacks it, {markers} states it")
                recited.add(claim.sentence)
                claim, chosen, scored, fix = fixed_claim, fixed_chosen, fixed, []
            elif scored.route != "check":
                fix = []  # only a figure or name proven elsewhere earns a revise over a block
        final_ids.append((claim.sentence, claim.evidence_ids))
        spans = [e["text"] for e in chosen]
        row = _claim_row(claim, chosen, scored, config)
        if details and scored.table is not None:
            row["table_row"] = scored.table.as_row() | {
                "evidence_ids": [e.get("evidence_id") for e in chosen]
            }
        claims.append(row)
        routes.append(scored.route)
        if fix:
            miscited.append(claim.text)
            row["reasons"].append(f"the cited evidence lacks it; cite {markers}, which states it")
        if row["critical"] and not scored.error:
            probe = _probe(claim.text, question, spans, generation, config, toolkit, answer, scored)
            probes.append(probe.as_row())
            if probe.status in ("diverge", "error"):
                divergent.append(claim.text)
    hard = []
    if attribution["status"] == "blocked":
        hard.append(attribution["blocked_reason"] or "attribution blocked the answer")
    if follows_injection(answer, texts) and not _question_is_the_only_instruction(question, texts):
        hard.append("answer repeats an instruction found in a document")
    elif any("instruction" in r for c in claims for r in c["reasons"]):
        hard.append("answer rests on a document that contains an instruction")
    answer_check = None
    # a row's cells prove what the claim says, not that the row is the one the question asks for
    if generated and question and routes and all(r in ("verbatim", "table_row") for r in routes):
        cited = [i for c in claims for i in c["evidence_ids"]]
        spans = [e["text"] for e in spans_of(list(dict.fromkeys(cited)), evidence)]
        answer_check = check_answers_question(answer, spans, question, config, toolkit)
    if config.aggregate == "floor_mean" and not long_answer_gate(claims, config):
        # a one-claim answer keeps the min gate: its claim is supported only at emit_threshold
        for row in claims:
            if row["status"] == "supported":
                row["status"] = score_status(row["score"], config, long_answer=False)
    overall = aggregate(claims, config)
    revise_round = generation.get("revise_round")
    action, reasons, feedback = decide(
        claims,
        overall,
        config=config,
        hard_reasons=hard,
        divergent=divergent,
        rejected_tools=rejected,
        revise_round=config.revise_round if revise_round is None else revise_round,
        answer_check=answer_check,
        question=question,
        miscited=miscited,
    )
    report.update(
        claims=claims,
        consistency_probes=probes,
        answer_check=answer_check,
        overall_score=overall,
        action=action,
        reasons=reasons,
        feedback=feedback,
        recited_answer=_recited(answer, final_ids, recited),
    )
    return report


def _recited(answer: str, final_ids: list[tuple[int, list[str]]], recited: set[int]) -> str | None:
    """The answer with each re-cited sentence citing what its claims were checked against."""
    if not recited:
        return None
    sentence_ids: dict[int, list[str]] = {}
    for sentence, ids in final_ids:
        if sentence in recited:
            known = sentence_ids.setdefault(sentence, [])
            known += [i for i in ids if i not in known]
    return citations.recite(answer, sentence_ids)


def recited_attribution(
    attribution: dict, answer: str, evidence: dict[str, dict], generation: dict
) -> dict:
    """The attribution of a re-cited answer: its markers, citations and rendering."""
    cited = citations.citations_for(answer, evidence)
    rendered = citations.render(answer, cited)
    if generation.get("caveat"):
        rendered = f"{generation['caveat']} {rendered}"
    return {
        **attribution,
        "answer": answer,
        "citations": list(cited.values()),
        "rendered_answer": rendered,
    }


# The checks whose failure another evidence item can answer: what the claim states is there, in
# an item it did not cite (the LLM cited [E2] for a word of E1).
CITABLE_CHECKS = frozenset({"figures", "scale", "entities"})


def citation_fix(
    claim: claims_mod.Claim,
    scored: ClaimScore,
    evidence: dict[str, dict],
    allowed: str,
    question: str,
    min_lexical: float = 1.0,
) -> list[str]:
    """The evidence ids a claim should cite when its cited spans lack a figure or name, or
    (`min_lexical`: the pre-filter's share) most of its words, that another item of its question
    holds (only such checks failed): that item alone, or with the ones it cited. [] when no
    evidence of the question holds it: the claim is simply wrong."""
    if scored.route not in ("check", "prefilter", "lexical") or not claim.evidence_ids:
        return []
    failed = {c.name for c in scored.checks if c.score < 1.0 and c.name != "lexical"}
    if not failed <= CITABLE_CHECKS:
        return []
    cited = [i for i in claim.evidence_ids if i in evidence]

    def holds(ids: list[str]) -> bool:
        chosen = [evidence[i] for i in ids]
        checks = groundedness.deterministic_checks(
            claim.text,
            [e["text"] for e in chosen],
            allowed=allowed,
            context=question,
            headings=headings_of(chosen),
        )
        lexical = next(c.score for c in checks if c.name == "lexical")
        citable = all(c.score == 1.0 for c in checks if c.name in CITABLE_CHECKS)
        return citable and (scored.route == "check" or lexical >= min_lexical)

    for evidence_id in evidence:
        if evidence_id in cited:
            continue
        if holds([evidence_id]):
            return [evidence_id]
        if holds([*cited, evidence_id]):
            return [*cited, evidence_id]
    return []


def check_answers_question(
    answer: str, spans: list[str], question: str, config: Config, toolkit: Toolkit
) -> dict | None:
    """Does an LLM answer copied word for word from its evidence answer the question?

    Each of its sentences is verbatim, so supported; but a sentence that almost answers the
    question ("The Anglo-Norman language became distinct from the Latin language" for "What was
    the Anglo-Norman language's final form?") is the most common wrong answer the squad bench
    saw emitted. One judge call, the whole answer as the proposed answer to the question. None
    when turned off (`answer_sentence_threshold` 0) or without a judge.
    """
    if config.answer_sentence_threshold <= 0 or config.judge == "none":
        return None
    text = groundedness.strip_lead_in(strip_markers(answer)).strip()
    try:
        verdict = toolkit.judge().judge(text, spans, question)
    except judge.JudgeError:
        return {"p_yes": None, "score": 0.0, "status": "error", "judge": "error"}
    if not verdict.cached:
        toolkit.judge_calls += 1
    score = min(1.0, verdict.score / config.answer_sentence_threshold)
    status = "supported" if score >= config.emit_threshold else "unsupported"
    return {"p_yes": verdict.score, "score": score, "status": status, "judge": verdict.backend}


def _decompose(answer: str, config: Config, toolkit: Toolkit) -> list[claims_mod.Claim]:
    if config.decomposer == "llm":
        try:
            return claims_mod.decompose_llm(answer, toolkit.client())
        except LLMError:
            pass  # the rule-based split is always available
    return claims_mod.decompose(answer)


def _framing_row(claim: claims_mod.Claim, evidence: dict[str, dict], config: Config) -> dict:
    """Framing: `not_a_claim`, no score, no judge call. A refusal: a claim about the evidence,
    supported when the evidence lacks what it says is missing (framing.refusal_support)."""
    row = {
        "text": claim.text,
        "evidence_ids": claim.evidence_ids,
        "evidence_spans": [],
        "score": None,
        "critical": False,
        "status": "not_a_claim",
        "judge": "none",
        "checks": [],
        "reasons": ["framing: states nothing to check"],
        "char_start": claim.char_start,
        "char_end": claim.char_end,
    }
    if claim.kind == "refusal":
        score, why = framing.refusal_support(claim.text, [e["text"] for e in evidence.values()])
        scored = ClaimScore(score, False, "none", [], [why], route="refusal")
        row.update(score=score, status=claim_status(scored, config), reasons=[why])
    return row


def _claim_row(claim, chosen: list[dict], scored: ClaimScore, config: Config) -> dict:
    spans = [
        {k: e.get(k) for k in ("evidence_id", "doc_id", "char_start", "char_end")} for e in chosen
    ]
    reasons = scored.reasons
    if scored.table is not None:  # decided by a table row: its spans are the cells
        findings = scored.table.contradicted or scored.table.matched
        spans = [_cell_span(chosen[f.row.span], f.cell) for f in findings]
        spans = list({tuple(s.values()): s for s in spans}.values())
        named = scored.table.reasons([str(e.get("evidence_id")) for e in chosen])
        reasons = named + reasons[len(named) :]  # a re-cite's note stays after them
    return {
        "char_start": claim.char_start,
        "char_end": claim.char_end,
        "text": claim.text,
        "evidence_ids": claim.evidence_ids,
        "evidence_spans": spans,
        "score": scored.score,
        "critical": scored.critical,
        "status": claim_status(scored, config),
        "judge": scored.judge,
        "checks": [{"name": c.name, "version": c.version, "score": c.score} for c in scored.checks],
        "reasons": reasons,
    }


def _cell_span(item: dict, cell: table_rows.Cell) -> dict:
    """A cell's span in its document: the evidence text is the document's text from the item's
    char_start (stages/evidence.py), so the cell's offsets shift by it."""
    start, end = item.get("char_start"), item.get("char_end")
    text = item.get("text") or ""
    if isinstance(start, int) and isinstance(end, int) and end - start == len(text):
        start, end = start + cell.start, start + cell.end
    else:  # an item with no place in a document (a bench's, an agent's): offsets in its text
        start, end = cell.start, cell.end
    return {
        "evidence_id": item.get("evidence_id"),
        "doc_id": item.get("doc_id"),
        "char_start": start,
        "char_end": end,
    }


def _probe(
    text: str,
    question: str,
    spans: list[str],
    generation: dict,
    config: Config,
    toolkit: Toolkit,
    answer: str,
    scored: ClaimScore,
) -> consistency.Probe:
    values = sorted(consistency.key_values(text))
    if generation.get("backend") not in LLM_BACKENDS or config.consistency_probes == 0:
        return consistency.Probe(text, values)  # deterministic generator: not_applicable
    if scored.route in ("verbatim", "table_row"):
        # The cited span states the claim word for word (or the claim's values are the cells of
        # the row it names): re-asking cannot make it truer, and a probe that picks another
        # value of the same span (the annual price for the monthly one) blocked right answers.
        # Probes are for claims only the judge vouched for.
        return consistency.Probe(text, values, status="proven")
    if claim_status(scored, config) != "supported":
        return consistency.Probe(text, values)  # already failed: probing it changes nothing
    if scored.route == "short_answer":
        # The judge just read it as the answer to this question over these spans, which is all
        # a probe re-asks; on the sample, probes picking the annual price from the same span
        # blocked the right "€49 per user per month" again. Recorded as proven by the judge.
        return consistency.Probe(text, values, status="proven")
    try:
        client = toolkit.client()
    except LLMError as exc:
        return consistency.Probe(text, values, [f"error: {exc}"], None, "error")
    return consistency.probe_claim(
        text, question, spans, client, config.consistency_probes, config.min_agreement, answer
    )


def _question_is_the_only_instruction(question: str, texts: list[str]) -> bool:
    """An instruction in the user's own question is data: echoing it blames no document."""
    has_instruction = groundedness.INJECTION_RE.search
    return bool(has_instruction(question)) and not any(has_instruction(t) for t in texts)


def system_prompts(config: Config) -> list[str]:
    """The system prompts this stage sends its LLM (`grounding warm` saves their KV states):
    the yes/no judge's, the probes' and the LLM decomposer's, as far as `config` uses them."""
    prompts = [judge.SYSTEM_PROMPT] if config.judge == "llm" else []
    if config.consistency_probes:
        prompts.append(consistency.PROBE_SYSTEM)
    if config.decomposer == "llm":
        prompts.append(claims_mod.DECOMPOSE_PROMPT)
    return prompts


def check_versions(config: Config) -> list[str]:
    versions = {f"{n}@{v}" for n, v in groundedness.CHECKS.items()}
    versions |= {
        f"claims@{claims_mod.VERSION}",
        f"framing@{framing.VERSION}",
        f"judge@{judge.VERSION}",
        f"consistency@{consistency.VERSION}",
        f"pii@{pii.VERSION}",
        f"table_rows@{table_rows.VERSION}",
    }
    if config.short_answer_signals is not None:
        versions.add(f"short_answers@{short_answers.VERSION}")
    return sorted(versions)


# "about": what an agent's tool result is about (its call's arguments), read like a title
EVIDENCE_KEYS = ("evidence_id", "text", "title", "section_path", "doc_id", "char_start", "char_end")
EVIDENCE_KEYS += ("about",)


def check_answer(
    answer: str,
    evidence: dict[str, dict],
    *,
    question: str = "",
    config: Config | None = None,
    toolkit: Toolkit | None = None,
    generated: bool = True,
    tool_rows: list[dict] | None = None,
) -> dict:
    """The HallucinationReport dict of an answer someone else wrote (an LLM outside this
    pipeline, an agent run, a bench): the public entry point of the ONE claim checker.

    `evidence` maps evidence ids to {"text", "title", "section_path", "doc_id", "char_start",
    "char_end", "about"} (only "text" matters; missing keys are filled; names in the title,
    section and `about` are not invented). `generated`: the answer was
    written by an LLM (its short answers are judged against the question and its critical
    claims may be probed when `config.consistency_probes` > 0). The answer is not redacted:
    `redactions` is empty and `pii_detector` "none"."""
    config = config or Config()
    items = {
        str(key): {k: (value or {}).get(k) for k in EVIDENCE_KEYS}
        | {"evidence_id": str((value or {}).get("evidence_id") or key)}
        | {"text": str((value or {}).get("text") or "")}
        for key, value in evidence.items()
    }
    attribution = {"status": "answered", "answer": answer or "", "blocked_reason": None}
    generation = {"backend": LLM_BACKENDS[0] if generated else "external"}
    report = check(
        attribution,
        generation,
        items,
        config,
        toolkit,
        question=question,
        tool_rows=tool_rows,
        details=True,
    )
    report.pop("recited_answer", None)
    return {
        **report,
        "redactions": [],
        "pii_detector": "none",
        "check_versions": check_versions(config),
        "version": CHECKER_VERSION,
    }
