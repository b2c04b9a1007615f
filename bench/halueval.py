"""HaluEval QA: does the guardrail emit the right answer and flag the hallucinated one?

For each record (knowledge, question, right_answer, hallucinated_answer) the guardrail checks
both answers with `knowledge` as the only evidence span, through the same per-claim code the
stage uses (`stages.guardrails.verify_claim` and `decide`): deterministic checks first, then the
configured judge asked whether the evidence supports the answer *to the question*. "Flagged"
means the gate did not emit (revise or block). Reported: accuracy, precision, recall and F1 of
"flagged" over all answers, seconds per answer, and how each answer was decided.

Calibration, held out: the judge's P(yes) is recorded raw, the cut-off that maximises accuracy on
records 1-100 is chosen, and the figures on records 101-500 with that cut-off are reported
separately from the figures with the configured `judge_threshold`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "halueval"
DESCRIPTION = "HaluEval QA (500 records): guardrail accuracy / P / R / F1 of flagging, s/answer"
FILES = ("qa_first500.jsonl",)
REFERENCES = {"ChatGPT": 0.626, "Claude 2": 0.698}
TARGET_ACCURACY = 0.85
CALIBRATION_RECORDS = 100


def load(folder: Path, limit: int | None = None) -> list[dict]:
    with (folder / FILES[0]).open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return records[:limit] if limit else records


def metrics(items: list[dict]) -> dict[str, Any]:
    """Accuracy, precision, recall and F1 of `flagged` against `hallucinated`."""
    tp = sum(1 for i in items if i["flagged"] and i["hallucinated"])
    fp = sum(1 for i in items if i["flagged"] and not i["hallucinated"])
    fn = sum(1 for i in items if not i["flagged"] and i["hallucinated"])
    tn = len(items) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "n_answers": len(items),
        "accuracy": round((tp + tn) / len(items), 4) if items else None,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "tp": tp,
        "fp": fp,
        "tn": tn,
        "fn": fn,
        "right_answer_flag_rate": round(fp / (fp + tn), 4) if fp + tn else None,
    }


def check_answer(record: dict, answer: str, config, toolkit) -> dict:
    """One answer through the stage's claim check and gate; the judge's P(yes) kept raw."""
    from stages import guardrails

    raw = config.model_copy(update={"judge_threshold": 1.0})  # support == P(yes)
    started = time.perf_counter()
    scored = guardrails.verify_claim(
        answer, [record["knowledge"]], raw, toolkit, question=record["question"]
    )
    seconds = time.perf_counter() - started
    return {
        "path": scored.judge,  # skipped (deterministic / prefilter) | verbatim | llm | error
        "p_yes": scored.score if scored.judge in ("llm", "nli") else None,
        "hard_score": scored.score,
        "critical": scored.critical,
        "error": scored.error,
        "reasons": scored.reasons[:3],
        "seconds": seconds,
    }


def flag(item: dict, config, cutoff: float) -> bool:
    """The gate's decision for a one-claim answer, with the judge's P(yes) cut at `cutoff`."""
    from stages import guardrails

    score = item["hard_score"]
    if item["p_yes"] is not None:
        score = min(1.0, item["p_yes"] / cutoff) if cutoff > 0 else 1.0
    status = "error" if item["error"] else ("supported" if score >= config.emit_threshold else "x")
    claim = {"text": "", "score": score, "critical": item["critical"], "status": status,
             "reasons": []}  # fmt: skip
    action, _, _ = guardrails.decide(
        [claim], score, config=config, hard_reasons=[], divergent=[], rejected_tools=[],
        revise_round=0,
    )  # fmt: skip
    return action != "emit"


def scored_items(items: list[dict], config, cutoff: float) -> list[dict]:
    return [{**i, "flagged": flag(i, config, cutoff)} for i in items]


def calibrate(items: list[dict], config) -> float:
    """The judge threshold (P(yes) scale) with the best accuracy on `items`; ties: the lowest."""
    candidates = [round(0.05 * k, 2) for k in range(1, 21)]
    return max(candidates, key=lambda t: (metrics(scored_items(items, config, t))["accuracy"], -t))


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    limit: int | None = None,
    **_: Any,
) -> dict[str, Any]:
    from stages import guardrails

    folder = common.dataset_dir("halueval_qa", FILES)  # raises Skipped when absent
    settings = {**common.pipeline_settings("guardrails"), **(overrides or {}).get("guardrails", {})}
    settings["judge_cache_dir"] = str(common.CACHE / "halueval_judge")
    config = guardrails.Config.model_validate(settings)
    toolkit = guardrails.Toolkit(config)
    records = load(folder, limit)
    items = []
    started = time.perf_counter()
    for index, record in enumerate(records):
        for answer, hallucinated in (
            (record["right_answer"], False),
            (record["hallucinated_answer"], True),
        ):
            item = check_answer(record, answer, config, toolkit)
            items.append({"record": index, "hallucinated": hallucinated, **item})
        if (index + 1) % 50 == 0:
            common.console.print(f"halueval: {index + 1}/{len(records)} records")
    total_s = time.perf_counter() - started
    configured = scored_items(items, config, config.judge_threshold)
    calibration = [i for i in items if i["record"] < CALIBRATION_RECORDS]
    held_out = [i for i in items if i["record"] >= CALIBRATION_RECORDS]
    cutoff = calibrate(calibration, config) if calibration else config.judge_threshold
    paths: dict[str, int] = {}
    for i in items:
        paths[i["path"]] = paths.get(i["path"], 0) + 1
    result = {
        "data": {"records": len(records), "answers": len(items), "file": str(folder / FILES[0])},
        "config": {
            "llm_backend": config.llm.backend,
            **{
                k: getattr(config, k)
                for k in (
                    "judge",
                    "emit_threshold",
                    "judge_threshold",
                    "prefilter_lexical",
                    "block_threshold",
                )
            },
        },  # fmt: skip
        "model": getattr(toolkit.judge(), "model_id", None) if config.judge != "none" else None,
        "configured_threshold": metrics(configured),
        "calibration": {
            "records": f"1-{min(CALIBRATION_RECORDS, len(records))}",
            "chosen_judge_threshold": cutoff,
            "on_calibration_records": metrics(scored_items(calibration, config, cutoff)),
            "held_out_records": f"{CALIBRATION_RECORDS + 1}-{len(records)}" if held_out else None,
            "on_held_out_records": metrics(scored_items(held_out, config, cutoff))
            if held_out
            else None,
        },
        "decided_by": paths,
        "judge_calls": toolkit.judge_calls,
        "seconds_per_answer": round(total_s / max(1, len(items)), 3),
        "latency": common.latency_stats([i["seconds"] for i in items]),
        "references_accuracy": REFERENCES,
        "target_accuracy": TARGET_ACCURACY,
        "examples_missed": [
            {k: i[k] for k in ("record", "hallucinated", "path", "p_yes", "reasons")}
            for i in configured
            if i["flagged"] != i["hallucinated"]
        ][:20],
    }
    common.write_result(NAME, result, results_dir)
    folder_out = Path(results_dir or common.RESULTS)
    (folder_out / f"{NAME}.md").write_text(
        f"# HaluEval QA guardrail efficacy\n\n{summarize(result)}\n"
    )
    return result


def summarize(result: dict[str, Any]) -> str:
    c, cal = result["configured_threshold"], result["calibration"]
    lines = [
        f"{result['data']['records']} HaluEval QA records, {result['data']['answers']} answers "
        f"(judge: {result['config']['judge']}, {result['model']}); "
        f"{result['seconds_per_answer']} s per answer, {result['judge_calls']} judge calls.",
        "",
        "| setting | answers | accuracy | precision | recall | F1 | right answers flagged |",
        "|---|---:|---:|---:|---:|---:|---:|",
        _row(f"configured judge_threshold {result['config']['judge_threshold']}", c),
    ]
    if cal.get("on_held_out_records"):
        label = f"threshold {cal['chosen_judge_threshold']} (from {cal['records']}), held out"
        lines.append(_row(label, cal["on_held_out_records"]))
    refs = ", ".join(f"{k} {v:.1%}" for k, v in result["references_accuracy"].items())
    paths = ", ".join(f"{k} {v}" for k, v in sorted(result["decided_by"].items()))
    lines += [
        "",
        f"References (accuracy): {refs}; target {result['target_accuracy']:.0%}.",
        "",
        f"Decided by: {paths} (verbatim = the answer occurs word for word in the knowledge; "
        "skipped = a deterministic check or the lexical pre-filter decided without the judge). "
        "HaluEval QA's right answers are mostly short spans of the knowledge, which the verbatim "
        "rule emits; the LLM references judged without that structure.",
    ]
    return "\n".join(lines)


def _row(label: str, m: dict[str, Any]) -> str:
    return (
        f"| {label} | {m['n_answers']} | {m['accuracy']:.1%} | {m['precision']:.1%} | "
        f"{m['recall']:.1%} | {m['f1']:.3f} | {m['right_answer_flag_rate']:.1%} |"
    )


if __name__ == "__main__":
    import argparse

    from stages.common import offline

    offline.apply_offline_environment()
    parser = argparse.ArgumentParser(prog="python -m bench.halueval", description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N records only")
    parser.add_argument("--results", type=Path, default=common.RESULTS)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    outcome = run(args.results, common.parse_overrides(args.overrides), limit=args.limit)
    print(summarize(outcome))
