"""Sampled judging: the LLM judge's second opinion on a sampled stream of a run's answers.

Inline, every answer is checked by the guardrails as configured (by default the fast
cross-encoder, with the GGUF asked only for claims it cannot accept). After the run,
`grounding review sample-judge RUN_ID` draws answers from the run's trace: every answer the
fast judge was unsure of (a claim the fast model decided with a score inside `band`) and a
random share `rate` of the others. Each drawn draft is checked again through the claim checker
(`stages.guardrails.checker.check_answer`) with the run's own guardrails settings and the
judge's overrides (by default `fast_judge: null`: the configured LLM judge alone).

Where the two disagree (a claim one supports and the other does not, or the gate's decision on
the answer changes), the answer goes into a review batch of its own (`kind: disagreements`),
listed before the ordinary batches, each item saying why it is there. Every drawn answer
carries its inclusion probability (1 for an unsure one, `rate` for the rest) and weight 1 / p,
so rates computed with the weights estimate the run's, not the sample's.

A judge failure is a technical error: that answer is counted as one and never as a
disagreement or an agreement.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from quality import review
from stages import contracts
from stages.common.text import strip_markers

REPORT_FILE = "sampled_judging.json"
SCORED = ("supported", "weak", "unsupported")  # statuses of a claim that was scored
FAST_JUDGES = ("fast",)  # a claim row's `judge` when the fast model decided it


class SampledJudgingError(ValueError):
    """The sampled judging of a run cannot start; the message says why."""


class SampledJudgingConfig(BaseModel):
    """`sampled_judging` in configs/quality.yaml."""

    model_config = ConfigDict(extra="forbid")

    rate: float = Field(
        0.1, ge=0, le=1, description="share of the answers the fast judge was sure of to re-judge"
    )
    band: tuple[float, float] = Field(
        (0.5, 0.8),
        description="a claim the fast judge decided with a score in [low, high] is unsure: its "
        "answer is always re-judged",
    )
    seed: int = Field(0, description="the draw's seed (recorded with the batch)")
    judge: dict[str, Any] = Field(
        default_factory=lambda: {"fast_judge": None},
        description="guardrails settings of the second opinion over the run's own",
    )

    @model_validator(mode="after")
    def _band_in_order(self) -> SampledJudgingConfig:
        low, high = self.band
        if not 0 <= low <= high <= 1:
            raise ValueError(f"band {list(self.band)}: need 0 <= low <= high <= 1")
        return self


def load_config(path: Path | None, overrides: dict[str, Any] | None = None) -> SampledJudgingConfig:
    """The `sampled_judging` section of a quality YAML file (absent file: the defaults)."""
    import yaml

    data: dict[str, Any] = {}
    if path is not None:
        if not path.is_file():
            raise SampledJudgingError(f"no quality config {path}")
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise SampledJudgingError(f"{path}: not YAML ({exc})") from exc
        if not isinstance(loaded, dict):
            raise SampledJudgingError(f"{path}: expected a mapping")
        data = dict(loaded.get("sampled_judging") or {})
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return SampledJudgingConfig(**data)
    except ValueError as exc:
        raise SampledJudgingError(f"sampled_judging: {exc}") from exc


# ---------------------------------------------------------------- the run's answers


def run_context(run_dir: Path) -> dict[str, dict]:
    """Per question, what the review items leave out: the inline report's action and the
    generator's backend (an LLM's answer is checked as generated)."""
    out = {}
    with open(run_dir / "trace.jsonl", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            trace = json.loads(line)
            report = trace.get("guardrails") or {}
            out[trace["question_id"]] = {
                "action": report.get("action"),
                "backend": (trace.get("generation") or {}).get("backend"),
            }
    return out


def guardrails_config(run_dir: Path, store, fallback):
    """The guardrails settings the run used (from its stage's manifest in the store), else
    `fallback` (the pipeline config's section)."""
    from stages.guardrails import Config

    try:
        summary = json.loads((run_dir / "summary.json").read_text())
        key = (summary.get("stages") or {}).get("guardrails", {}).get("key")
        ref = store.lookup("guardrails", key) if key else None
        if ref is not None:
            recorded = dict(store.manifest(ref)["config"])
            if (recorded.get("llm") or {}).get("api_key"):  # masked in manifests: keep ours
                recorded["llm"] = fallback.llm.model_dump()
            return Config(**recorded), "run"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return fallback, "config"


def unsure_claims(claims: list[dict], band: tuple[float, float]) -> list[int]:
    """Indexes of the claims the fast judge decided with a score inside the band."""
    low, high = band
    return [
        i
        for i, c in enumerate(claims)
        if c.get("judge") in FAST_JUDGES
        and c.get("score") is not None
        and low <= float(c["score"]) <= high
    ]


def _uniform(seed: int, answer_id: str) -> float:
    """A draw in [0, 1) fixed by the seed and the answer: the same answers are drawn again on a
    re-run, whatever else the run holds."""
    digest = hashlib.sha256(f"{seed}:{answer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def draw(items: list[dict], config: SampledJudgingConfig) -> tuple[list[dict], dict[str, int]]:
    """The answers to re-judge, each with why, its inclusion probability and weight; and the
    counts of the frame (answers with a draft; a refusal has nothing to check)."""
    frame = [i for i in items if i.get("draft")]
    drawn = []
    for item in frame:
        claims = json.loads(item["claims_json"])
        unsure = unsure_claims(claims, config.band)
        if unsure:
            probability, why = 1.0, "unsure"
        elif config.rate > 0 and _uniform(config.seed, item["answer_id"]) < config.rate:
            probability, why = config.rate, "rate"
        else:
            continue
        drawn.append(
            {
                **item,
                "sampled_because": why,
                "unsure_claims": unsure,
                "inclusion_probability": probability,
                "weight": 1.0 / probability,
            }
        )
    counts = {
        "run_answers": len(items),
        "with_draft": len(frame),
        "drawn": len(drawn),
        "drawn_unsure": sum(d["sampled_because"] == "unsure" for d in drawn),
        "drawn_rate": sum(d["sampled_because"] == "rate" for d in drawn),
    }
    return drawn, counts


# ---------------------------------------------------------------- the second opinion


def _key(text: str) -> str:
    return " ".join(strip_markers(text or "").split()).lower()


def _emitted(action: str | None) -> bool:
    return action == "emit"


def compare(inline: list[dict], second: dict) -> dict:
    """Claim by claim (matched by their text without citation markers) and for the answer:
    where the inline check and the second opinion disagree."""
    theirs = {_key(c.get("text")): c for c in second.get("claims") or []}
    claims = []
    for index, claim in enumerate(inline):
        if claim.get("status") not in SCORED:
            continue
        other = theirs.get(_key(claim.get("text")))
        if other is None or other.get("status") not in SCORED:
            continue
        before = claim["status"] == "supported"
        after = other["status"] == "supported"
        if before != after:
            claims.append(
                {
                    "index": index,
                    "text": claim.get("text"),
                    "inline": {"status": claim["status"], "score": claim.get("score")},
                    "second": {
                        "status": other["status"],
                        "score": other.get("score"),
                        "judge": other.get("judge"),
                    },
                    "kind": "inline_supported_second_not" if before else "second_supported_only",
                }
            )
    return {"claims": claims}


def judge_failed(report: dict) -> str | None:
    """Why the second opinion is a technical error (None: it is a verdict)."""
    errors = [c for c in report.get("claims") or [] if c.get("status") == "error"]
    if errors:
        reasons = [r for c in errors for r in c.get("reasons") or []]
        return "the judge failed on a claim: " + ("; ".join(reasons[:2]) or "no reason given")
    check = report.get("answer_check") or {}
    if check.get("status") == "error":
        return "the judge failed on the answer check"
    return None


def queue_reason(item: dict, outcome: dict) -> str:
    parts = []
    for claim in outcome["claims"]:
        inline, second = claim["inline"], claim["second"]
        parts.append(
            f"claim {claim['index']}: inline {inline['status']} ({_fmt(inline['score'])}), "
            f"LLM judge {second['status']} ({_fmt(second['score'])})"
        )
    if outcome["answer_changed"]:
        parts.append(f"answer: inline {outcome['inline_action']}, LLM judge {outcome['action']}")
    why = "fast judge unsure" if item["sampled_because"] == "unsure" else "random share"
    return f"drawn: {why} (p={item['inclusion_probability']:g}); " + "; ".join(parts)


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.2f}"


def second_opinions(
    drawn: list[dict],
    context: dict[str, dict],
    judge_config,
    toolkit=None,
) -> list[dict]:
    """Each drawn answer checked again with `judge_config`: its outcome, or a technical error."""
    from stages.guardrails import checker

    toolkit = toolkit or checker.Toolkit(judge_config)
    outcomes = []
    for item in drawn:
        extra = context.get(item["question_id"], {})
        evidence = {e["evidence_id"]: e for e in json.loads(item["evidence_json"])}
        inline_action = extra.get("action")
        try:
            report = checker.check_answer(
                item["draft"],
                evidence,
                question=item["question"],
                config=judge_config,
                toolkit=toolkit,
                generated=extra.get("backend") in checker.LLM_BACKENDS,
            )
            error = judge_failed(report)
        except Exception as exc:  # any failure of the judge is a technical error, not a verdict
            report, error = None, f"{type(exc).__name__}: {exc}"
        if error:
            outcomes.append({"item": item, "error": error})
            continue
        outcome = compare(json.loads(item["claims_json"]), report)
        outcome.update(
            item=item,
            error=None,
            inline_action=inline_action,
            action=report["action"],
            answer_changed=_emitted(inline_action) != _emitted(report["action"]),
            second_claims=[
                {k: c.get(k) for k in ("text", "status", "score", "judge")}
                for c in report["claims"]
            ],
        )
        outcome["disagrees"] = bool(outcome["claims"]) or outcome["answer_changed"]
        outcomes.append(outcome)
    return outcomes


# ---------------------------------------------------------------- results


def summarise(outcomes: list[dict], counts: dict[str, int]) -> dict:
    """Counts, and the weighted (Horvitz-Thompson) estimates of the run's answers whose
    verdict or claims the LLM judge would change, over the answers judged without error."""
    judged = [o for o in outcomes if not o["error"]]
    errors = [o for o in outcomes if o["error"]]
    weight = sum(o["item"]["weight"] for o in judged)

    def share(flag: str) -> float | None:
        if not weight:
            return None
        return round(sum(o["item"]["weight"] for o in judged if o[flag]) / weight, 4)

    kinds: dict[str, int] = {}
    for outcome in judged:
        for claim in outcome["claims"]:
            kinds[claim["kind"]] = kinds.get(claim["kind"], 0) + 1
    return {
        **counts,
        "judged": len(judged),
        "technical_errors": len(errors),
        "disagreeing_answers": sum(o["disagrees"] for o in judged),
        "answer_verdict_changes": sum(o["answer_changed"] for o in judged),
        "claim_disagreements": kinds,
        "weighted_share_disagreeing": share("disagrees"),
        "weighted_share_verdict_changed": share("answer_changed"),
        "errors": [{"answer_id": o["item"]["answer_id"], "error": o["error"]} for o in errors],
    }


BATCH_KEYS = set(contracts.schema_of(review.TABLE).names)


def queue_items(outcomes: list[dict]) -> list[dict]:
    """The disagreements as review items (the run's answer, why it is here, the LLM's view)."""
    items = []
    for outcome in outcomes:
        if outcome["error"] or not outcome["disagrees"]:
            continue
        item = {k: v for k, v in outcome["item"].items() if k in BATCH_KEYS}
        item["low_confidence"] = outcome["item"]["sampled_because"] == "unsure"
        item["queue_reason"] = queue_reason(outcome["item"], outcome)
        item["second_opinion_json"] = json.dumps(
            {
                "action": outcome["action"],
                "inline_action": outcome["inline_action"],
                "claims": outcome["second_claims"],
                "disagreements": outcome["claims"],
            },
            default=str,
        )
        items.append(item)
    return items


def write_report(run_dir: Path, report: dict) -> Path:
    """`runs/<run>/sampled_judging.json`, replaced atomically (a re-run overwrites it whole)."""
    path = run_dir / REPORT_FILE
    tmp = run_dir / f".{REPORT_FILE}.tmp"
    tmp.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def sample_judge(
    run_dir: Path,
    store,
    config: SampledJudgingConfig,
    fallback_guardrails,
    toolkit=None,
) -> dict:
    """Draw, re-judge, queue the disagreements; returns the report (also written to the run
    folder). `toolkit`: the claim checker's Toolkit to judge with (tests pass a stub judge)."""
    items = review.items_from_run(run_dir)
    if not items:
        raise SampledJudgingError(f"run {run_dir.name} has no answers")
    base, source = guardrails_config(run_dir, store, fallback_guardrails)
    try:
        judge_config = base.model_copy(update=config.judge)
        judge_config = type(base)(**judge_config.model_dump())  # validated, not just copied
    except ValueError as exc:
        raise SampledJudgingError(f"sampled_judging.judge: {exc}") from exc
    drawn, counts = draw(items, config)
    outcomes = second_opinions(drawn, run_context(run_dir), judge_config, toolkit)
    queued = queue_items(outcomes)
    batch = None
    if queued:
        ref = review.write_batch(store, queued, config, run_dir.name, kind=review.DISAGREEMENTS)
        batch = ref.key
    report = {
        "run": run_dir.name,
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "settings": config.model_dump(),
        "guardrails_from": source,
        "judge": {"judge": judge_config.judge, "fast_judge": judge_config.fast_judge is not None},
        **summarise(outcomes, counts),
        "batch": batch,
        "answers": [
            {
                "answer_id": o["item"]["answer_id"],
                "sampled_because": o["item"]["sampled_because"],
                "inclusion_probability": o["item"]["inclusion_probability"],
                "weight": o["item"]["weight"],
                "error": o["error"],
                "inline_action": o.get("inline_action"),
                "action": o.get("action"),
                "disagrees": o.get("disagrees"),
                "why": queue_reason(o["item"], o) if o.get("disagrees") else None,
                "claims": o.get("claims"),
            }
            for o in outcomes
        ],
    }
    report["report"] = str(write_report(run_dir, report))
    return report
