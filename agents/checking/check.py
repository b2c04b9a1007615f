"""`check_run`: one agent run in, one HallucinationReport out.

The claims go through the guardrails' one claim checker (`stages.guardrails.check_answer`: the
same decomposition, deterministic checks, judge, probes and gate as the pipeline's own answers),
with the run's tool results as the evidence. Around it this module adds what only a run has: the
tool calls' verification, which results count as evidence, the run-level diagnosis, and the
composition of the gate's action with them:

- every tool result empty or an error, and an answer anyway: `block` (answered from memory);
- the results had nothing and the agent said so: `emit` (the good case);
- a tool whose last call was rejected: at least `revise`, with the runtime feedback for the call;
- a claim whose judge failed: `block` with the diagnosis `technical_error` (never a finding);
- otherwise the claim checker's action (emit >= 0.85, revise, block < 0.4 on a critical claim),
  after the structural check of claims over JSON results (`structured`): a claim whose every
  element matches a leaf is supported with those leaves' JSON pointers as its spans, one that
  contradicts a leaf is unsupported, naming it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

import agents.checking.answer_framing as answer_framing
import agents.checking.diagnosis as diagnosis
import agents.checking.formats as formats
import agents.checking.run_words as run_words
import agents.checking.structured as structured
import agents.checking.tool_calls as tool_calls
import agents.checking.tool_evidence as evidence
from agents.checking.formats import AgentRun
from stages import guardrails
from stages.common import values
from stages.common.languages import detect_language
from stages.common.text import content_tokens, coverage, strip_markers
from stages.guardrails import gate
from stages.models.settings import LLMSettings

VERSION = "1.9.0"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
PROJECT_GUARDRAILS = PROJECT_ROOT / "configs" / "guardrails.yaml"
FAST_GUARDRAILS = PROJECT_ROOT / "configs" / "guardrails-fast.yaml"
SEVERITY = {"emit": 0, "revise": 1, "block": 2}
# the claim checker's gate, set in `guardrails` (accepted at the top level too)
GATE_KEYS = ("emit_threshold", "revise_threshold", "block_threshold", "aggregate")


class Config(BaseModel):
    """Settings of an agent-run check. The gate is the claim checker's own: `guardrails` holds
    any field of `stages.guardrails.Config` (emit / revise / block lines, `aggregate`,
    judge_threshold, llm…) over the project's configs/guardrails.yaml; nothing here repeats
    them. The gate's keys given at the top level (`emit_threshold: 0.9`, as older configs
    write them) are read as `guardrails` overrides."""

    model_config = ConfigDict(extra="forbid")

    # fast: the LLM judge (the packaged GGUF, or an OpenAI-compatible server configured in
    # guardrails.llm) behind the project's claim-support cross-encoder, with the gate fitted for
    # it (configs/guardrails-fast.yaml under the check's own guardrails settings): 0.1-1.3 s for a
    # six-claim run, the LLM asked only where the cross-encoder is unsure. llm: the LLM judges
    # every claim the deterministic checks leave open (about 8 s a six-claim run). auto: fast
    # when the LLM and the cross-encoder are here, llm without the cross-encoder, else none (the
    # deterministic checks and word overlap). Why fast by default (check 1.2): bench
    # agent_runs_ragtruth, RAGTruth's held-out answers as agent runs, F1 0.568/0.526 (text/JSON
    # results) -> 0.588/0.580, correct answers flagged 0.221/0.246 -> 0.180/0.189, hallucinated
    # ones caught 0.808/0.769 -> 0.769/0.769 (one of 26 fewer in text); the 2 s target.
    judge: Literal["auto", "llm", "fast", "nli", "none"] = "auto"
    # Self-consistency probes of critical claims, with guardrails.llm: the local GGUF or the
    # agent's own model through an OpenAI-compatible endpoint. Off: the report says skipped.
    # On: the answer is checked as an LLM's (its short answers judged, see below).
    probes: bool = False
    consistency_probes: int = Field(2, ge=1, le=5)
    identifier_allowlist: list[str] = Field(default_factory=list)
    # check that a call of a declared tool fits the request (not for free-text tools, named
    # search, lookup, query…, nor for a call passing an identifier the user wrote): a poor fit
    # is a warning; the call is rejected only when nothing the user wrote is in its arguments
    # and a required argument has no source (tool_calls.off_request)
    check_tool_fit: bool = True
    # the fit is semantic: cosine of the tool's name words and description to the request (or
    # one of its sentences) with the packaged all-MiniLM-L6-v2 at least this. 0.275 was chosen
    # on BFCL's choose split (even records; bench agent_runs, bench/results/agent_runs.json
    # tool_calls.fit_rule): most irrelevance calls caught with valid runs flagged <= 0.01. None,
    # or the model unavailable: the lexical rule (the tool shares a content word with the request)
    tool_fit_similarity: float | None = Field(tool_calls.FIT_SIMILARITY, ge=-1, le=1)
    # True: the answer is checked as an LLM's (`check_answer(generated=True)`): a short answer
    # ("Delhi") is judged as the answer to the question even when a result holds it word for
    # word. False: a verbatim short answer is supported. bench agent_runs compares both on
    # HaluEval-built runs 1-50 and chose False (bench/results/agent_runs.json, "choose").
    judge_short_answers: bool = False
    # the project's configs/guardrails.yaml (fitted judge thresholds) under these overrides
    use_project_guardrails: bool = True
    guardrails: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _gate_keys_extend_the_checker(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        moved = {k: data[k] for k in GATE_KEYS if k in data}
        if not moved:
            return data
        rest = {k: v for k, v in data.items() if k not in GATE_KEYS}
        return rest | {"guardrails": {**(data.get("guardrails") or {}), **moved}}

    @model_validator(mode="after")
    def _guardrails_overrides_are_valid(self) -> Config:
        guardrails.Config(**self.guardrails)  # a bad line is refused here, not mid-batch
        return self


def _project_guardrails() -> dict[str, Any]:
    if not PROJECT_GUARDRAILS.is_file():
        return {}
    loaded = yaml.safe_load(PROJECT_GUARDRAILS.read_text(encoding="utf-8")) or {}
    return {k: v for k, v in loaded.items() if k in guardrails.Config.model_fields}


def _fast_judge_settings() -> dict[str, Any]:
    """The opt-in fast judge and the gate fitted with it, as configs/guardrails-fast.yaml
    holds them (fast_judge, answer_threshold, lexical_weight)."""
    if not FAST_GUARDRAILS.is_file():
        raise ValueError(f"judge 'fast' needs {FAST_GUARDRAILS} (its fast_judge settings)")
    loaded = yaml.safe_load(FAST_GUARDRAILS.read_text(encoding="utf-8")) or {}
    return {k: v for k, v in loaded.items() if k in guardrails.Config.model_fields}


def _model_path(llm: dict[str, Any]) -> Path:
    path = Path(llm.get("path") or LLMSettings().path)
    if not path.is_absolute() and not path.exists():
        path = PROJECT_ROOT / path  # the project's own model, from any working directory
    return path


def _fast_judge_available() -> bool:
    """configs/guardrails-fast.yaml and the cross-encoder it names are here."""
    try:
        fast = _fast_judge_settings().get("fast_judge") or {}
    except ValueError:
        return False
    path = Path(str(fast.get("model_path") or ""))
    return bool(fast) and (path if path.is_absolute() else PROJECT_ROOT / path).is_dir()


def guardrails_config(config: Config) -> guardrails.Config:
    """The claim checker's config for this check."""
    base = _project_guardrails() if config.use_project_guardrails else {}
    judge = config.judge
    if judge == "auto":  # what the machine has: the fast judge over the GGUF, the GGUF, nothing
        llm = dict((base | config.guardrails).get("llm") or {})
        if llm.get("backend") == "openai_compatible" or _model_path(llm).is_file():
            judge = "fast" if _fast_judge_available() else "llm"
        else:
            judge = "none"
    values = dict(base)
    if judge == "fast":  # the GGUF decides what the cross-encoder leaves open
        values |= _fast_judge_settings()
        judge = "llm"
    values |= {"judge_cache_dir": None}  # a report's time is its own, not a cache's
    values |= config.guardrails
    llm = dict(values.get("llm") or {})
    if llm.get("backend", "llama_cpp") == "llama_cpp" and (judge == "llm" or config.probes):
        llm["path"] = str(_model_path(llm))
        values["llm"] = llm
    values |= {
        "judge": judge,
        "consistency_probes": config.consistency_probes if config.probes else 0,
        "identifier_allowlist": [
            *values.get("identifier_allowlist", []),
            *config.identifier_allowlist,
        ],
    }
    return guardrails.Config(**values)


def judge_label(gconfig: guardrails.Config) -> str:
    """The judge a report names: "fast" for the LLM judge behind the cross-encoder."""
    return "fast" if gconfig.fast_judge and gconfig.judge == "llm" else gconfig.judge


def resolve_config(config: Config | dict | None) -> Config:
    if config is None:
        return Config()
    return config if isinstance(config, Config) else Config(**config)


def make_toolkit(config: Config | dict | None = None) -> guardrails.Toolkit:
    """A judge and chat client to share across the runs of one batch."""
    return guardrails.Toolkit(guardrails_config(resolve_config(config)))


# ---------------------------------------------------------------- one run


def check_run(
    run: AgentRun | dict,
    config: Config | dict | None = None,
    *,
    toolkit: guardrails.Toolkit | None = None,
) -> dict:
    """The HallucinationReport of one agent run (a parsed `AgentRun` or a run in any of the
    four formats). Raises `formats.RunFormatError` for a run that cannot be read."""
    started = time.perf_counter()
    config = resolve_config(config)
    if not isinstance(run, AgentRun):
        run = formats.parse_run(run)
    gconfig = toolkit.config if toolkit is not None else guardrails_config(config)
    toolkit = toolkit or guardrails.Toolkit(gconfig)
    calls_before = toolkit.judge_calls
    spans, kinds = evidence.collect(run)
    failed = {k.call_id for k in kinds if k.kind == "error" and k.call_id}
    allowlist = gconfig.identifier_allowlist
    validations = tool_calls.verify_run(
        run, allowlist, failed, config.check_tool_fit, config.tool_fit_similarity
    )
    rejected = tool_calls.rejected_tools(validations)
    # the claim checker probes only an LLM's answer (generated), which also judges its short
    # answers: probes on means both
    generated = config.judge_short_answers or config.probes
    claims_report = _claims(run, spans, gconfig, toolkit, generated)
    if claims_report:
        evidence_calls = {k.call_id or k.tool for k in kinds if k.kind == "evidence"}
        changed = _framing(run, claims_report)
        changed |= _structural(run, evidence_calls, spans, claims_report, gconfig, toolkit)
        if changed:
            _decide_again(claims_report, gconfig, run.question)
    claims_action = claims_report["action"] if claims_report else None
    mode = diagnosis.diagnose(
        answer=run.answer,
        question=run.question,
        results=len(run.results),
        evidence_texts=[s.text for s in spans],
        claims_action=claims_action,
        rejected_calls=len(rejected),
        claim_errors=_claim_errors(claims_report),
    )
    action, reasons, feedback = _gate(mode, claims_report, rejected)
    by_id = {s.evidence_id: s for s in spans}
    probes = claims_report["consistency_probes"] if claims_report else []
    report = {
        "run_id": run.run_id,
        "format": run.format,
        "question": run.question,
        "answer": run.answer,
        "claims": [_claim(c, by_id) for c in (claims_report or {}).get("claims", [])],
        "tool_call_validations": [v.as_row() for v in validations],
        "tool_results": [k.as_row() for k in kinds],
        "evidence_spans": [s.as_row() for s in spans],
        "consistency_probes": probes,
        "probes": _probe_status(config, probes),
        "overall_score": _overall(mode, claims_report),
        "action": action,
        "reasons": reasons,
        "feedback": feedback if action == "revise" else [],
        "refusal": diagnosis.refusal_text(mode) if action == "block" else None,
        "diagnosis": {"mode": mode, "text": diagnosis.TEXTS[mode]},
        "judge": judge_label(gconfig),
        "judge_calls": toolkit.judge_calls - calls_before,
        "seconds": round(time.perf_counter() - started, 4),
        "check_versions": sorted(
            [
                *(claims_report or {}).get("check_versions", guardrails.check_versions(gconfig)),
                f"agent_runs.evidence@{evidence.VERSION}",
                f"agent_runs.tool_calls@{tool_calls.VERSION}",
                f"agent_runs.diagnosis@{diagnosis.VERSION}",
            ]
        ),
        "version": f"{VERSION}+guardrails@{guardrails.VERSION}",
    }
    return report


def _claims(
    run: AgentRun,
    spans: list[evidence.Span],
    gconfig: guardrails.Config,
    toolkit: guardrails.Toolkit,
    generated: bool = True,
) -> dict | None:
    """The claim checker's report on the answer, against the run's evidence."""
    if run.answer is None:
        return None
    if not spans and diagnosis.is_refusal(run.answer):
        return None  # "I could not find it" over empty results asserts nothing to check
    if not spans:
        # nothing can support a claim: no judge call is worth making
        gconfig = gconfig.model_copy(update={"judge": "none", "consistency_probes": 0})
        toolkit = guardrails.Toolkit(gconfig)
    return guardrails.check_answer(
        for_checking(run.answer),
        evidence.as_checker_evidence(spans),
        question=run.question,
        config=gconfig,
        toolkit=toolkit,
        generated=generated,
    )


# German writes a date's day as an ordinal ("am 8. März 2026"): its period ends no sentence
_DE_MONTHS = (
    r"Januar|Jänner|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember|"
    r"Jan|Feb|Mär|Apr|Jun|Jul|Aug|Sep|Sept|Okt|Nov|Dez"
)
DE_ORDINAL_DATE_RE = re.compile(rf"\b(\d{{1,2}})\.(?=\s+(?:{_DE_MONTHS})\b)")


def for_checking(answer: str) -> str:
    """The answer as the claim checker splits it: a German day ordinal's period read as a space
    (same length, so every claim's offsets are the answer's own)."""
    return DE_ORDINAL_DATE_RE.sub(lambda m: m.group(1) + " ", answer)


EMPHASIS_RE = re.compile(r"\*\*|__|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)|`")


def unemphasised(text: str) -> str:
    """The claim without markdown emphasis and code marks: "**48** minutes" is "48 minutes",
    "**status**.acme.io" is "status.acme.io" (a value and its unit, or a name's parts, as one)."""
    return EMPHASIS_RE.sub("", text)


def _tool_names(run: AgentRun) -> set[str]:
    return {c.name for c in run.calls} | {r.name for r in run.results if r.name}


def _framing(run: AgentRun, report: dict) -> bool:
    """An agent's acknowledgements, offers, hedges about the data and lead-ins, in the
    languages agents answer in (answer_framing), are `not_a_claim` like the claim checker's own
    framing. True when a row changed."""
    names = _tool_names(run)
    changed = False
    for row in report["claims"]:
        if row["status"] == "not_a_claim" or row["status"] == "error":
            continue
        if answer_framing.is_framing(strip_markers(row["text"]), names, run.answer or ""):
            row.update(
                score=None,
                critical=False,
                status="not_a_claim",
                judge="none",
                reasons=["framing: states nothing to check"],
            )
            changed = True
    return changed


def _structural(
    run: AgentRun,
    evidence_calls: set[str | None],
    spans: list[evidence.Span],
    report: dict,
    gconfig: guardrails.Config,
    toolkit: guardrails.Toolkit,
) -> None:
    """Each claim matched against the leaves of the run's JSON results: a claim whose every
    element matches a leaf is supported (its spans are those leaves' pointers), one with an
    element contradicting a leaf is unsupported (naming it). A lead-in naming the tool ("Según
    get_invoice:") is set aside first. Claims left open keep the claim checker's verdict. True
    when a row changed (the gate then decides again on the claims as changed)."""
    leaves = structured.run_leaves(run, evidence_calls)
    if not leaves:
        return False
    context = run_words.context_words(run)
    names = _tool_names(run)
    language = detect_language(run.answer or "")
    changed = False
    for row in report["claims"]:
        if row["status"] in ("not_a_claim", "error") or row["score"] is None:
            continue
        text, _ = answer_framing.strip_source_lead(unemphasised(strip_markers(row["text"])), names)
        verdict = structured.check_claim(text, leaves, context, language)
        row["structured"] = verdict.as_row()
        if verdict.status == "open":
            known = _known_words(text, leaves, language)
            changed |= _judge_the_rest(
                row, text, verdict, spans, report, gconfig, toolkit, run.question, known
            )
            continue
        findings = verdict.matched if verdict.status == "supported" else verdict.contradicted
        row["evidence_spans"] = [_leaf_span(f, leaves, spans) for f in findings]
        row["reasons"] = [f"structured: {r}" for r in verdict.reasons()]
        row["judge"] = "structured"
        if verdict.status == "supported":
            row.update(score=1.0, status="supported")
        else:
            row.update(score=0.0, status="unsupported", critical=True)
        changed = True
    return changed


def _judge_the_rest(
    row: dict,
    text: str,
    verdict: structured.Verdict,
    spans: list[evidence.Span],
    report: dict,
    gconfig: guardrails.Config,
    toolkit: guardrails.Toolkit,
    question: str,
    known: str = "",
) -> bool:
    """A claim whose numbers, dates and names all match leaves, with words besides them: those
    words are what the judge decides. The claim is checked again with each matched value
    written as the result writes it ("$1,250.00" as 1250.0, "March 3, 2026" as 2026-03-03), so
    that a value proven equal is not failed for its writing. True when the row changed."""
    if not verdict.matched or verdict.unmatched or row["status"] == "supported":
        return False
    for finding in sorted(verdict.matched, key=lambda f: -f.start):
        if isinstance(finding.value, bool | None) or finding.end <= finding.start:
            continue
        text = text[: finding.start] + str(finding.value) + text[finding.end :]
    items = list(evidence.as_checker_evidence(spans).values())
    claims = report["claims"]
    long_answer = gate.long_answer_gate(claims, gconfig)
    scored = guardrails.verify_claim(
        text,
        [e["text"] for e in items],
        gconfig,
        toolkit,
        question=question or None,
        known_ids={e["evidence_id"] for e in items},
        allowed=" ".join([question, *gconfig.identifier_allowlist]).lower(),
        generated=False,
        headings=f"{guardrails.headings_of(items)} {known}".strip(),
        part=sum(c["status"] != "not_a_claim" for c in claims) > 1,
        long_answer=long_answer,
    )
    status = guardrails.claim_status(scored, gconfig)
    if status == "supported" and not long_answer:
        status = guardrails.score_status(scored.score, gconfig, long_answer=False)
    if status != "supported" and scored.score <= (row["score"] or 0.0):
        return False  # no better for the writing: the claim checker's verdict stands
    row.update(
        score=scored.score,
        status=status,
        judge=scored.judge,
        reasons=[
            *(f"structured: {f.element!r} = {f.pointer}" for f in verdict.matched),
            *scored.reasons,
        ],
        checked_as=text,
    )
    return True


# languages whose capitals mark nouns or a sentence's start more than names, when the answer is
# surely in one ("und", undetermined, is not)
GRAMMAR_CAPITALS = frozenset({"de", "es", "fr", "it", "pt", "nl"})


def _known_words(text: str, leaves: list, language: str) -> str:
    """Words the claim checker's name rule reads as known for a claim whose values all matched:
    the results' keys as a claim writes them ("PID" for `pid`), and, in a claim not in English,
    its capitalised words (a German noun, a Spanish sentence's first word: capitalised by
    grammar, not names), when the answer's `language` is one of GRAMMAR_CAPITALS. The judge
    still decides them."""
    words = {w for leaf in leaves for w in values.key_words(leaf.key)}
    known = {form for w in words for form in (w, w.upper(), w.title())}
    if language in GRAMMAR_CAPITALS:
        known |= {word for word in re.findall(r"[^\W\d_]+", text) if word[:1].isupper()}
    return " ".join(sorted(known))


def _leaf_span(finding: structured.Finding, leaves: list, spans: list[evidence.Span]) -> dict:
    """A claim's span for a leaf: the evidence item that holds it, the leaf's own pointer."""
    leaf = next(x for x in leaves if x.anchor() == finding.pointer)
    holders = [
        s
        for s in spans
        if s.call_id == leaf.call_id
        and s.tool == leaf.tool
        and (leaf.pointer + "/").startswith(s.pointer + "/")
    ]
    holder = max(holders, key=lambda s: len(s.pointer), default=None)
    return {
        "evidence_id": holder.evidence_id if holder else None,
        "doc_id": leaf.call_id or leaf.tool,
        "leaf_pointer": leaf.pointer,
        "value": leaf.value,
        "element": finding.element,
        "relation": finding.relation,
    }


HARD_REASONS = ("answer repeats an instruction", "answer rests on a document", "attribution")
MISCITED_REASON = "the cited evidence lacks it"


def _decide_again(report: dict, gconfig: guardrails.Config, question: str) -> None:
    """The claim checker's gate over claims the structural check changed."""
    claims = report["claims"]
    overall = gate.aggregate(claims, gconfig)
    divergent = [
        p["claim"] for p in report.get("consistency_probes") or [] if p["status"] == "diverge"
    ]
    action, reasons, feedback = gate.decide(
        claims,
        overall,
        config=gconfig,
        hard_reasons=[r for r in report["reasons"] if r.startswith(HARD_REASONS)],
        divergent=divergent,
        rejected_tools=[],
        revise_round=gconfig.revise_round,
        answer_check=report.get("answer_check"),
        question=question,
        miscited=[c["text"] for c in claims if any(MISCITED_REASON in r for r in c["reasons"])],
    )
    report.update(overall_score=overall, action=action, reasons=reasons, feedback=feedback)


def _claim_errors(report: dict | None) -> int:
    """Claims (and the answer-level check) whose judge failed."""
    if not report:
        return 0
    answer_check = report.get("answer_check") or {}
    return sum(c["status"] == "error" for c in report["claims"]) + (
        answer_check.get("status") == "error"
    )


def _gate(
    mode: str, claims_report: dict | None, rejected: list[tool_calls.Validation]
) -> tuple[str, list[str], list[str]]:
    """(action, reasons, feedback): the claim checker's decision composed with the run's."""
    action = claims_report["action"] if claims_report else "emit"
    reasons = list(claims_report["reasons"]) if claims_report else []
    feedback = list(claims_report["feedback"]) if claims_report else []
    if reasons == ["refusal"]:
        reasons = []
    if mode == "answered_without_evidence":
        action = "block"
        reasons.insert(0, diagnosis.TEXTS[mode])
    elif mode == "said_not_found":
        action, reasons, feedback = "emit", [diagnosis.TEXTS[mode]], []
    elif mode == "technical_error":
        # held back, but as an error to retry, never as feedback that the answer is wrong
        reasons = [diagnosis.TEXTS[mode], *(r for r in reasons if r.startswith("technical"))]
        feedback = []
    if rejected:
        if SEVERITY[action] < SEVERITY["revise"]:
            action = "revise"
        tools = sorted({v.tool for v in rejected})
        reasons.append(f"rejected tool call(s) never retried validly: {', '.join(tools)}")
        feedback += [v.feedback for v in rejected]
    return action, reasons, feedback


def _overall(mode: str, claims_report: dict | None) -> float | None:
    if mode == "answered_without_evidence":
        return 0.0
    if mode == "said_not_found":
        return 1.0
    return claims_report["overall_score"] if claims_report else None


def _claim(row: dict, spans: dict[str, evidence.Span]) -> dict:
    """A claim row of the checker, its spans addressed by tool, call id and JSON pointer, and
    `best_span`: the anchor of the span sharing most of its words (what a person reads first)."""
    out = dict(row)
    wanted = set(content_tokens(row.get("text") or ""))
    shares = {
        span["evidence_id"]: coverage(wanted, set(content_tokens(spans[span["evidence_id"]].text)))
        for span in row.get("evidence_spans") or []
        if span.get("evidence_id") in spans and wanted
    }
    best = max(shares, key=lambda i: shares[i], default=None)
    out["best_span"] = spans[best].anchor() if best is not None and shares[best] > 0 else None
    out["evidence_spans"] = [
        {
            **span,
            "tool": spans[span["evidence_id"]].tool,
            "call_id": spans[span["evidence_id"]].call_id,
            "pointer": span.get("leaf_pointer", spans[span["evidence_id"]].pointer),
            "anchor": spans[span["evidence_id"]].anchor(),
        }
        for span in row.get("evidence_spans") or []
        if span.get("evidence_id") in spans
    ]
    for span in out["evidence_spans"]:
        if span.pop("leaf_pointer", None) is not None:  # a leaf: its own pointer is the anchor
            span["anchor"] = f"{span['tool']}#{span['call_id'] or ''}{span['pointer']}"
    return out


def _probe_status(config: Config, probes: list[dict]) -> str:
    if not config.probes:
        return "skipped: no model configured for probes (probes: true uses guardrails.llm)"
    ran = [p for p in probes if p.get("status") in ("agree", "diverge", "error")]
    return f"ran on {len(ran)} critical claim(s)" if ran else "no claim needed a probe"
