"""LLM answers end to end: llama_cpp against extractive on the same
questions, and what the guardrails did to the LLM's first answers.

Sets: a stratified sample of the frozen squad2-dev-v1 (article x answerable / unanswerable, seed
12, 100 questions by default) and the whole of sample-v1. Each set runs through
every stage with `grounding eval`'s own scoring, once per generation backend, into one store:
ingestion, retrieval, rerank and evidence are shared, generation onwards differs. The answer and
judge caches live in the bench's temporary folder, so every model call is really made.

Per backend: truthfulness (+1 right / 0 refused / -1 wrong), answered precision, answerable
questions answered correctly, refusal recall, and seconds per question spent in generation,
guardrails and the revise rounds. For llama_cpp, the guardrails on its first answers (round 0):
- a right draft answers an answerable question with a gold answer; the false-positive rate is
  the share of right drafts that did not end as a right answer (blocked, refused, or revised
  into a wrong one);
- a wrong draft answers an unanswerable question, or lacks every gold answer; efficacy is the
  share of wrong drafts that did not end as a wrong answer (blocked, refused, or revised into a
  right one);
- the revise loop: drafts sent back, rounds used, and how those questions ended.

`grounding ask`: wall seconds of one fresh `python -m cli ask` process per question, on the
sample corpus with its index already built and nothing cached for the question (target 15 s),
after `grounding warm` saved the system prompts' KV states as `make setup` does (its seconds
are reported apart: what a first ask would otherwise add).
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import NormalDist, mean, median
from typing import Any

from bench import common
from bench.answerability import rewrite_manifest
from bench.paraphrase import auc

NAME = "llm_answers"
DESCRIPTION = (
    "llama_cpp vs extractive on the same SQuAD / sample questions; guardrail efficacy and "
    "false positives on the LLM's answers; grounding ask wall time"
)
SQUAD_SET = "squad2-dev-v1"
SAMPLE_SET = "sample-v1"
DEFAULT_QUESTIONS = 100
SEED = 12
BACKENDS = ("extractive", "llama_cpp")
END_TO_END = ("truthfulness", "answered_precision", "factuality", "refusal_recall", "ece")
# every round's own stages (generation@r1 …); not `revise`, whose seconds already hold the rounds
TIMED_STAGES = ("generation", "attribution", "guardrails", "revision_requests")
# One-sentence answers in the sample corpus (data/sample), none of them an eval question's text.
ASK_QUESTIONS = (
    "How long is the first response time for a Severity 2 ticket?",
    "How much storage per user does the Starter plan include?",
    "What is the monthly list price of the Business plan per user?",
)
PROBE_COUNTS = (1, 2)  # `consistency_probes` values replayed from round 0's probe answers
TARGETS = {"false_positive_rate": 0.10, "efficacy": 0.60, "ask_wall_s": 15.0}


def stratified_set(target: Path, n: int, source: Path | None = None) -> Path:
    """A copy of squad2-dev-v1 (or of the eval set at `source`) with n questions: equal shares
    of article x behaviour."""
    source = source or common.ROOT / "eval" / "sets" / SQUAD_SET
    shutil.copytree(source, target)
    path = target / "questions.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    strata: dict[tuple[str, str], list[dict]] = collections.defaultdict(list)
    for record in records:
        article = (record.get("notes") or "").split(";")[0]
        strata[(article, record["expected_behavior"])].append(record)
    rng = random.Random(SEED)
    per_stratum = max(1, n // len(strata))
    chosen = [
        r
        for key in sorted(strata)
        for r in rng.sample(strata[key], min(per_stratum, len(strata[key])))
    ]
    chosen.sort(key=records.index)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chosen), "utf-8")
    rewrite_manifest(
        target, f"{source.name}-llm{len(chosen)}", f"{len(chosen)} questions, seed {SEED}"
    )
    return target


def _overrides(backend: str, caches: Path) -> dict[str, Any]:
    return {
        "generation.backend": backend,
        "generation.cache_dir": str(caches / "generation"),
        "guardrails.judge_cache_dir": str(caches / "judge"),
        "generation.llm.kv_cache_dir": str(caches / "kv"),
        "guardrails.llm.kv_cache_dir": str(caches / "kv"),
    }


def evaluate_backend(set_dir: Path, store: Path, backend: str, caches: Path) -> dict[str, Any]:
    from flows.evaluation import evaluate

    started = time.perf_counter()
    with llm_call_timings() as calls:
        run = evaluate(set_dir, overrides=_overrides(backend, caches), store=store)
    axis = run.metrics["axes"]["end_to_end"]
    rows = run.per_question
    answerable = [r for r in rows if r["expected_behavior"] == "answer"]
    seconds = sum(
        result.seconds
        for name, result in run.stage_results.items()
        if name.split("@")[0] in TIMED_STAGES
    )
    summary = {
        "backend": backend,
        "questions": len(rows),
        **{name: _round(axis.get(name)) for name in END_TO_END},
        "answerable_answered_correctly": sum(r["correct"] for r in answerable),
        "answerable": len(answerable),
        "answered": sum(r["status"] == "answered" for r in rows),
        "blocked": sum(r["status"] == "blocked" for r in rows),
        "generation_to_final_s_per_question": round(seconds / max(len(rows), 1), 2),
        "wall_s": round(time.perf_counter() - started, 1),
        # the "cost per claim sent to the judge", on the claims this run really judged
        "judge_calls": judge_cost([c for c in calls if _is_judgement(c)]),
    }
    return {"summary": summary, "rows": rows, "run": run}


class _CallTimings(logging.Handler):
    """Collects llama.cpp's own account of each request (`chat.log_timings`, at DEBUG), with
    the pipeline stage that made it (from the executor's stage events)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.calls: list[dict[str, Any]] = []
        self.stage: str | None = None

    def on_stage(self, event: str, stage: str, result: Any = None) -> None:
        self.stage = stage if event == "start" else None

    def emit(self, record: logging.LogRecord) -> None:
        what = getattr(record, "llm_call", None)
        if what:
            fields = ("reused_tokens", "prompt_tokens", "prompt_s", "generation_s")
            self.calls.append(
                {"llm_call": what, "stage": self.stage}
                | {f: getattr(record, f, None) for f in fields}
            )


@contextlib.contextmanager
def llm_call_timings():
    """The llama.cpp requests made inside the block, with their timings: prompt tokens read
    and reused, seconds reading the prompt and generating, and the stage that asked."""
    from flows.executor import off_stage_event, on_stage_event

    logger = logging.getLogger("stages.models.chat")
    handler, level = _CallTimings(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    on_stage_event(handler.on_stage)
    try:
        yield handler.calls
    finally:
        off_stage_event(handler.on_stage)
        logger.removeHandler(handler)
        logger.setLevel(level)


def _is_judgement(call: dict[str, Any]) -> bool:
    """A guardrails yes/no evaluation, not a generation, probe, prefix priming or another
    stage's yes/no (rerank's strict answerability). The revise rounds run outside the
    executor's stage events, so a call with no stage is one of theirs."""
    stage = call["stage"]
    return call["llm_call"] == "evaluation" and (stage is None or stage.startswith("guardrails"))


def judge_cost(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Seconds per yes/no judgement made (cache hits never reach the model): llama.cpp's prompt
    reading plus generating time, which is nearly all of a judgement's wall time on 2 cores."""
    seconds = sorted(float(c["prompt_s"] or 0) + float(c["generation_s"] or 0) for c in calls)
    if not seconds:
        return {"calls": 0}
    return {
        "calls": len(seconds),
        "mean_s": round(mean(seconds), 3),
        "median_s": round(median(seconds), 3),
        "p95_s": round(seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))], 3),
        "mean_prompt_tokens_read": round(mean(float(c["prompt_tokens"] or 0) for c in calls), 1),
        "mean_prompt_tokens_reused": round(mean(float(c["reused_tokens"] or 0) for c in calls), 1),
    }


def _round(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def draft_outcomes(
    rows: list[dict],
    first_actions: dict[str, str],
    rounds: dict[str, int],
    probes: dict[str, list[dict]] | None = None,
    scores: dict[str, float | None] | None = None,
):
    """Per LLM first answer (round 0): right or wrong, what the guardrails did (and the overall
    score it read), how it ended, and its self-consistency probes."""
    from stages import guardrails

    probes, scores = probes or {}, scores or {}
    short = guardrails.Config()  # short_answer_words: the stage's own rule for a short answer
    cases = []
    for r in rows:
        draft = r["pre_guardrail_answer"]
        if not draft:
            continue  # the LLM refused at once: nothing for the guardrails to judge
        right = bool(r["pre_guardrail_supported"])
        ended = "refused" if r["status"] != "answered" else ("right" if r["correct"] else "wrong")
        cases.append(
            {
                "question_id": r["question_id"],
                "question": r["question"],
                "expected_behavior": r["expected_behavior"],
                "gold_answers": r["gold_answers"][:3],
                "draft": draft,
                "draft_right": right,
                # a bare answer ("Texas [E1]") is judged as an answer to the question, a
                # longer one claim by claim: they fail in different ways
                "draft_kind": "short" if guardrails.is_short_answer(draft, short) else "longer",
                "first_action": first_actions.get(r["question_id"]),
                "gate_score": scores.get(r["question_id"]),
                "rounds": rounds.get(r["question_id"], 0),
                "ended": ended,
                "final_status": r["status"],
                "answer": r["answer"],
                "guardrail_reasons": r["guardrail_reasons"],
                "probes": [probe_outcome(p, draft) for p in probes.get(r["question_id"], [])],
            }
        )
    return cases


def probe_outcome(row: dict, draft: str, min_agreement: float = 0.5) -> dict[str, Any]:
    """A round-0 probe record, and what fewer probes would have decided from the same answers.

    Probes run their templates in a fixed order and stop once the vote is decided, so the
    answers recorded with N probes are the ones `consistency_probes: k` (k < N) would have
    got: replaying the vote over them gives k's decision and calls exactly (round 0 only)."""
    from stages.guardrails import consistency

    answers = [a for a in row.get("probe_answers") or [] if not a.startswith("error:")]
    outcome: dict[str, Any] = {"status": row["status"], "claim": row["claim"], "answers": answers}
    if row["status"] not in ("agree", "diverge") or not answers:
        return outcome
    original = consistency.key_values(row["claim"])
    context = consistency.key_values(draft)
    for k in PROBE_COUNTS:
        used: list[str] = []
        for answer in answers:
            if not consistency.vote_needs_more(original, used, k, min_agreement, context):
                break
            used.append(answer)
        if consistency.vote_needs_more(original, used, k, min_agreement, context):
            continue  # the record is too short to replay k probes
        _, diverged = consistency.majority(original, used, min_agreement, context)
        outcome[f"with_{k}"] = {"status": "diverge" if diverged else "agree", "calls": len(used)}
    return outcome


def gate_auc_needed(
    false_positive_rate: float = TARGETS["false_positive_rate"],
    efficacy: float = TARGETS["efficacy"],
) -> float:
    """The AUC (right vs wrong drafts) a one-threshold gate needs to meet both targets, with
    both classes' scores normal and of equal spread: d' = z(1 - fp) + z(efficacy)."""
    normal = NormalDist()
    separation = normal.inv_cdf(1 - false_positive_rate) + normal.inv_cdf(efficacy)
    return round(normal.cdf(separation / 2**0.5), 4)


def gate_discrimination(cases: list[dict]) -> dict[str, Any]:
    """How well round 0's overall score tells right drafts from wrong ones (revise and block
    both read it), against what the targets need: the gate's limit, whatever its thresholds."""
    scored = [c for c in cases if c.get("gate_score") is not None]
    return {
        "drafts_scored": len(scored),
        "gate_score_auc": auc(
            [c["gate_score"] for c in scored], [c["draft_right"] for c in scored]
        ),
        "auc_needed_for_targets": gate_auc_needed(),
    }


def guardrail_figures(cases: list[dict]) -> dict[str, Any]:
    figures = _gate_figures(cases)
    figures["discrimination"] = gate_discrimination(cases)
    figures["by_draft_kind"] = {
        kind: _gate_figures(members, revise=False)
        for kind in ("short", "longer")
        if (members := [c for c in cases if c.get("draft_kind") == kind])
    }
    return figures


def _gate_figures(cases: list[dict], revise: bool = True) -> dict[str, Any]:
    right = [c for c in cases if c["draft_right"]]
    wrong = [c for c in cases if not c["draft_right"]]
    revised = [c for c in cases if c["first_action"] == "revise"]
    figures = {
        "drafts": len(cases),
        "right_drafts": len(right),
        "wrong_drafts": len(wrong),
        "false_positive_rate": _share(sum(c["ended"] != "right" for c in right), len(right)),
        "right_drafts_blocked_or_refused": sum(c["ended"] == "refused" for c in right),
        "right_drafts_revised_into_wrong": sum(c["ended"] == "wrong" for c in right),
        "efficacy": _share(sum(c["ended"] != "wrong" for c in wrong), len(wrong)),
        "wrong_drafts_first_action": dict(collections.Counter(c["first_action"] for c in wrong)),
        "right_drafts_first_action": dict(collections.Counter(c["first_action"] for c in right)),
    }
    if not revise:
        return figures
    probed = [
        (c, p)
        for c in cases
        for p in c.get("probes", [])
        if p["status"] in ("agree", "diverge") and p["answers"]
    ]
    return figures | {
        "revise_loop": {
            "sent_to_revise": len(revised),
            "rounds_used": dict(collections.Counter(str(c["rounds"]) for c in revised)),
            "ended": dict(collections.Counter(c["ended"] for c in revised)),
            "wrong_drafts_saved": sum(
                1 for c in revised if not c["draft_right"] and c["ended"] != "wrong"
            ),
            "right_drafts_lost": sum(
                1 for c in revised if c["draft_right"] and c["ended"] != "right"
            ),
        },
        "probes": {
            "claims_probed": len(probed),
            "probe_calls": sum(len(p["answers"]) for _, p in probed),
            "diverged_on_right_drafts": sum(
                p["status"] == "diverge" for c, p in probed if c["draft_right"]
            ),
            "diverged_on_wrong_drafts": sum(
                p["status"] == "diverge" for c, p in probed if not c["draft_right"]
            ),
            "with_fewer_probes": {
                str(k): {
                    "same_decision": sum(p[f"with_{k}"]["status"] == p["status"] for p in fewer),
                    "of": len(fewer),
                    "calls": sum(p[f"with_{k}"]["calls"] for p in fewer),
                }
                for k in PROBE_COUNTS
                if (fewer := [p for _, p in probed if f"with_{k}" in p])
            },
        },
    }


def _share(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def first_round(
    run: Any, store: Path
) -> tuple[dict[str, str], dict[str, int], dict[str, list[dict]], dict[str, float | None]]:
    """Round 0's guardrail action, the number of revise rounds used, round 0's probe records
    and its overall score, per question."""
    from stages.store import ArtifactStore

    artifacts = ArtifactStore(store)
    refs = {name: result.ref for name, result in run.stage_results.items()}
    reports = artifacts.read_table(refs["guardrails"], "hallucination_reports").to_pylist()
    log = artifacts.read_table(refs["revise"], "revision_log").to_pylist()
    rounds: dict[str, int] = {}
    for row in log:
        rounds[row["question_id"]] = max(rounds.get(row["question_id"], 0), row["round"])
    actions = {r["question_id"]: r["action"] for r in reports}
    probes = {r["question_id"]: r.get("consistency_probes") or [] for r in reports}
    scores = {r["question_id"]: r.get("overall_score") for r in reports}
    return actions, rounds, probes, scores


def compare_set(set_dir: Path, store: Path, caches: Path) -> dict[str, Any]:
    results = {b: evaluate_backend(set_dir, store, b, caches) for b in BACKENDS}
    llm = results["llama_cpp"]
    actions, rounds, probes, scores = first_round(llm["run"], store)
    cases = draft_outcomes(llm["rows"], actions, rounds, probes, scores)
    figures = guardrail_figures(cases)
    extractive, generated = results["extractive"]["summary"], llm["summary"]
    return {
        "backends": [results[b]["summary"] for b in BACKENDS],
        "llama_cpp_truthfulness_at_least_extractive": (generated["truthfulness"] or 0)
        >= (extractive["truthfulness"] or 0),
        "guardrails_on_llm_drafts": figures,
        "false_positives": [c for c in cases if c["draft_right"] and c["ended"] != "right"],
        "missed_wrong_answers": [
            c for c in cases if not c["draft_right"] and c["ended"] == "wrong"
        ],
    }


STAGE_DONE_RE = re.compile(r"stage=([\w@]+)\] stage done in ([\d.]+)s")
LOADED_RE = re.compile(r"llama\.cpp loaded \S+ in ([\d.]+)s")
LLM_CALL_RE = re.compile(
    r"stage=([\w@]+)\] llama\.cpp ([\w ]+): read (\d+) prompt tokens in ([\d.]+)s "
    r"\((\d+) reused\), generated (\d+) in ([\d.]+)s"
)


def ask_breakdown(log_text: str, wall_s: float) -> dict[str, Any]:
    """Where one ask's seconds went, from its DEBUG log: each stage, the model load, and each
    llama.cpp request (prompt tokens read and reused, tokens generated); the rest of the wall
    time is the interpreter, imports and the CLI."""
    stages = {m[1]: float(m[2]) for m in STAGE_DONE_RE.finditer(log_text)}
    calls = [
        {
            "stage": m[1],
            "call": m[2],
            "prompt_tokens": int(m[3]),
            "prompt_s": float(m[4]),
            "reused_tokens": int(m[5]),
            "generated_tokens": int(m[6]),
            "generation_s": float(m[7]),
        }
        for m in LLM_CALL_RE.finditer(log_text)
    ]
    loads = [float(m[1]) for m in LOADED_RE.finditer(log_text)]
    return {
        "stages_s": stages,
        "model_load_s": round(sum(loads), 2),
        "llm_calls": calls,
        "prompt_tokens_read": sum(c["prompt_tokens"] for c in calls),
        "prompt_read_s": round(sum(c["prompt_s"] for c in calls), 2),
        "tokens_generated": sum(c["generated_tokens"] for c in calls),
        "generating_s": round(sum(c["generation_s"] for c in calls), 2),
        "outside_stages_s": round(wall_s - sum(stages.values()), 2),
    }


def time_asks(folder: Path, caches: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`grounding warm` as `make setup` runs it (timed apart), then one fresh `ask` process per
    question; the index is built first and not timed."""
    store = folder / "ask-store"
    settings = [
        "--set", f"store={store}",
        "--set", "generation.backend=llama_cpp",
        "--set", f"generation.cache_dir={caches / 'ask-generation'}",
        "--set", f"guardrails.judge_cache_dir={caches / 'ask-judge'}",
        # system prompts' KV states: saved by `grounding warm` below, as `make setup` does
        "--set", f"generation.llm.kv_cache_dir={caches / 'ask-kv'}",
        "--set", f"guardrails.llm.kv_cache_dir={caches / 'ask-kv'}",
    ]  # fmt: skip
    command = [sys.executable, "-m", "cli"]
    env = {**os.environ, "PYTHONPATH": str(common.ROOT)}
    built = subprocess.run(
        [*command, "ingest", *settings], cwd=common.ROOT, env=env, capture_output=True, text=True
    )
    if built.returncode != 0:
        return {}, [{"error": f"grounding ingest failed: {built.stderr.strip()[-500:]}"}]
    started = time.perf_counter()
    warmed = subprocess.run(
        [*command, "warm", *settings], cwd=common.ROOT, env=env, capture_output=True, text=True
    )
    warm = {"exit_code": warmed.returncode, "wall_s": round(time.perf_counter() - started, 2)}
    if warmed.returncode != 0:
        warm["error"] = warmed.stderr.strip()[-500:] or warmed.stdout.strip()[-500:]
    timings: list[dict[str, Any]] = []
    for question in ASK_QUESTIONS:
        started = time.perf_counter()
        done = subprocess.run(  # DEBUG: per-stage seconds and llama.cpp's own per-call timings
            [*command, "--log-level", "DEBUG", "ask", question, *settings],
            cwd=common.ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        wall_s = round(time.perf_counter() - started, 2)
        timings.append(
            {
                "question": question,
                "wall_s": wall_s,
                "exit_code": done.returncode,
                "printed": done.stdout.strip().splitlines()[:4],
                "breakdown": ask_breakdown(done.stderr, wall_s),
            }
        )
    return warm, timings


PARTS = ("squad", "sample", "ask")


def run(
    results_dir: Path | None = None,
    questions: int = DEFAULT_QUESTIONS,
    overrides: dict[str, Any] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """`--set llm_answers.parts=[squad]` runs some parts only, into llm_answers-squad.json.

    `--set llm_answers.squad_set=DIR` samples the squad part from another SQuAD eval set, for
    example the answerability calibration split that scripts/fit_answerability.py builds
    (.cache/answerability-fit/squad2-calibration: dev articles no model trains on and no frozen
    slice holds), and `--set llm_answers.questions=N` sizes it; the result file is then named
    after that set (llm_answers-squad2-calibration.json)."""
    from stages.models.files import DEFAULT_MODEL_PATH

    if not (common.ROOT / DEFAULT_MODEL_PATH).is_file():
        raise common.Skipped(f"{DEFAULT_MODEL_PATH} is not assembled (make setup)")
    settings = (overrides or {}).get(NAME, {})
    parts = tuple(settings.get("parts") or PARTS)
    questions = int(settings.get("questions") or questions)
    squad_source = Path(settings["squad_set"]) if settings.get("squad_set") else None
    if squad_source is not None and not (squad_source / "questions.jsonl").is_file():
        raise ValueError(f"llm_answers.squad_set: {squad_source} holds no questions.jsonl")
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"llm_answers.parts: unknown {sorted(unknown)}; choose from {PARTS}")
    name = NAME if set(parts) == set(PARTS) else "-".join([NAME, *parts])
    if squad_source is not None:
        name = f"{NAME}-{squad_source.name}"
    started = time.perf_counter()
    payload: dict[str, Any] = {
        "parts": list(parts),
        "status": "partial",  # written after each part: a 40-minute run never loses them all
        "seed": SEED,
        "sets": {},
        "grounding_warm": {},
        "grounding_ask": [],
        "targets": TARGETS,
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
    }

    def save(**update: Any) -> None:
        payload.update(update, runtime_s=round(time.perf_counter() - started, 1))
        payload["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        common.write_result(name, payload, results_dir)

    with tempfile.TemporaryDirectory(prefix="bench-llm-answers-") as tmp:
        folder = Path(tmp)
        caches = folder / "caches"
        sets = {}
        if "squad" in parts:
            squad_dir = stratified_set(folder / "squad", questions, squad_source)
            label = squad_source.name if squad_source else SQUAD_SET
            sets[f"{label} (stratified {questions})"] = squad_dir
        if "sample" in parts:
            sets[SAMPLE_SET] = common.ROOT / "eval" / "sets" / SAMPLE_SET
        for set_name, set_dir in sets.items():
            payload["sets"][set_name] = compare_set(set_dir, folder / "store", caches)
            save()
        warm, asks = time_asks(folder, caches) if "ask" in parts else ({}, [])
        save(grounding_warm=warm, grounding_ask=asks, status="ok")
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = []
    for name, figures in result["sets"].items():
        lines += [
            f"**{name}**",
            "",
            "| backend | " + " | ".join(END_TO_END) + " | answerable right | s/question |",
            "|---|" + "---:|" * (len(END_TO_END) + 2),
        ]
        for b in figures["backends"]:
            cells = ["–" if b[m] is None else f"{b[m]:.3f}" for m in END_TO_END]
            right = f"{b['answerable_answered_correctly']}/{b['answerable']}"
            per_question = b["generation_to_final_s_per_question"]
            lines.append(
                f"| {b['backend']} | " + " | ".join(cells) + f" | {right} | {per_question} |"
            )
        g = figures["guardrails_on_llm_drafts"]
        lines += [
            "",
            f"Guardrails on {g['drafts']} LLM drafts: "
            f"false-positive rate {g['false_positive_rate']} "
            f"({g['right_drafts']} right drafts; target <= {TARGETS['false_positive_rate']}), "
            f"efficacy {g['efficacy']} ({g['wrong_drafts']} wrong drafts; target >= "
            f"{TARGETS['efficacy']}). Revise loop: {g['revise_loop']}.",
            "",
        ]
        if d := g.get("discrimination"):
            lines += [
                f"Round 0's overall score tells right drafts from wrong ones with AUC "
                f"{d['gate_score_auc']} ({d['drafts_scored']} drafts); meeting both targets "
                f"with one threshold needs about {d['auc_needed_for_targets']}.",
                "",
            ]
    if not result["grounding_ask"]:
        return "\n".join(lines)
    asks = ", ".join(
        f"{a['wall_s']} s" if "wall_s" in a else a["error"] for a in result["grounding_ask"]
    )
    warm = result.get("grounding_warm") or {}
    after = (
        f"after `grounding warm` took {warm['wall_s']} s"
        if "wall_s" in warm
        else "no `grounding warm` timed in this run"
    )
    lines.append(f"`grounding ask` (llama_cpp, fresh process, {after}): {asks} (target <= 15 s).")
    for a in result["grounding_ask"]:
        b = a.get("breakdown")
        if b:
            lines.append(
                f"- {a['wall_s']} s = model load {b['model_load_s']} s, prompt tokens read "
                f"{b['prompt_tokens_read']} in {b['prompt_read_s']} s, tokens generated "
                f"{b['tokens_generated']} in {b['generating_s']} s over "
                f"{len(b['llm_calls'])} llama.cpp calls, outside the stages "
                f"{b['outside_stages_s']} s"
            )
    return "\n".join(lines)
