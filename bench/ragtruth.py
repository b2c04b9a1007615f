"""RAGTruth QA: do the guardrails let real LLM answers through and stop the invented ones?

`../shared/datasets/ragtruth_qa_dev/` holds RAGTruth's QA responses to 54 test questions (GPT-4,
GPT-3.5, Llama-2 7B/13B/70B, Mistral-7B over three MS MARCO passages, human-labelled spans).
Each response goes through the guardrails' one claim checker (`stages.guardrails.check_answer`,
via `eval.detection_sets.checked_report`, the code the frozen set `ragtruth-qa-v1` gates) with the
three passages as evidence E1..E3 ("Passage N"), the question, and probes off (the answers are
not this project's generator's, so re-asking our model proves nothing about them).

- A response is hallucinated when one of its labels has `implicit_true` and `due_to_null` both
  false (the data set's README rule); flagged = the gate did not emit.
- Questions are split by a stable hash of `source_id` into `fit` (thresholds may be chosen
  there) and `report` (figures only: never tune on it).
- Reported per split and per generating model: response-level precision / recall / F1, the flag
  rate on correct answers, span-level character-overlap P / R / F1 (the flagged claims' spans
  against the labelled spans), seconds per answer (median, p95), judge calls; and the detection
  pass of a typical answer (5-7 claims, 3 passages) with the judge cache off.
- Per-claim rows (claim text, span, score, status, the judge's raw P(yes), overlap with the
  labels) go to `bench/.cache/ragtruth_claims.jsonl`, so thresholds can be fitted from scores
  without calling the judge again.

`python -m bench.ragtruth --split fit --limit 40 --set guardrails.judge_threshold=0.8`;
`--freeze` writes the frozen detection set eval/sets/ragtruth-qa-v1 from the report split.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "ragtruth"
DESCRIPTION = "RAGTruth QA (304 LLM answers): response P/R/F1, correct-answer flag rate, spans, s"
# the headline of the benchmarks page: the pipeline's default guardrails
# (configs/guardrails-fast.yaml) on the report split, not whichever variant (an opt-in judge, a
# fit) was written last
HEADLINE = "ragtruth-report-guardrails-fast"
FOLDER = "ragtruth_qa_dev"
FILES = ("ragtruth_qa_dev.jsonl",)
# `--data train`: RAGTruth QA train responses, for fitting (the dev set is for reporting only)
DATA = {"dev": (FOLDER, FILES[0]), "train": ("ragtruth_qa_train", "ragtruth_qa_train.jsonl")}
SPLITS = ("fit", "report")
# Response-level F1 on RAGTruth QA (RAGTruth paper table 5; LettuceDetect; RAG-HAT).
REFERENCES_F1 = {
    "GPT-4-turbo prompted": 0.456,
    "SelfCheckGPT": 0.437,
    "Llama-2-13B fine-tuned": 0.682,
    "LettuceDetect-large": 0.702,
    "RAG-HAT": 0.748,
}
TARGETS = {"f1": 0.70, "correct_flag_rate": 0.15, "recall": 0.80, "typical_seconds": 1.5}
CLAIM_ROWS = common.CACHE / "ragtruth_claims.jsonl"
PARTIAL_ITEMS = common.CACHE / "ragtruth_items.partial.jsonl"
PASSAGE_RE = re.compile(r"(?im)^[ \t]*passage[ \t]*(\d+)[ \t]*:")
TYPICAL_CLAIMS = (5, 7)  # "a typical answer: 6 claims, 3 passages", give or take one
TYPICAL_ANSWERS = 8


# ---------------------------------------------------------------- the data


def split_of(source_id: str) -> str:
    """fit or report, by a stable hash of the question's source id (never by position)."""
    return SPLITS[int(hashlib.sha256(str(source_id).encode()).hexdigest(), 16) % 2]


def passages(text: str) -> list[str]:
    """The 'passage N:' parts of RAGTruth's passages field, in order (the whole text if none)."""
    marks = list(PASSAGE_RE.finditer(text))
    if not marks:
        return [text.strip()]
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return [text[m.end() : end].strip() for m, end in zip(marks, ends, strict=True)]


def evidence_of(record: dict) -> dict[str, dict]:
    return {
        f"E{i}": {"title": f"Passage {i}", "text": text}
        for i, text in enumerate(passages(record["passages"]), start=1)
    }


def hallucinated_spans(record: dict) -> list[tuple[int, int]]:
    """The labelled spans that make a response hallucinated (not implicit_true, not due_to_null)."""
    return [
        (int(label["start"]), int(label["end"]))
        for label in record.get("labels") or []
        if not label.get("implicit_true") and not label.get("due_to_null")
    ]


def detection_record(record: dict) -> dict:
    """One response as a detection record (what eval.detection_sets.check_rag_answer reads)."""
    spans = hallucinated_spans(record)
    return {
        "id": str(record["id"]),
        "source_id": str(record["source_id"]),
        "model": record["model"],
        "label": "hallucinated" if spans else "correct",
        "question": record["question"],
        "answer": record["response"],
        "evidence": evidence_of(record),
        "spans": [list(s) for s in spans],
    }


def load(
    folder: Path, split: str = "all", limit: int | None = None, file: str = FILES[0]
) -> list[dict]:
    """Detection records of `split` (fit | report | all), in file order, at most `limit`."""
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be fit, report or all, not {split!r}")
    out = []
    with (folder / file).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if split != "all" and split_of(record["source_id"]) != split:
                    continue
                out.append(detection_record(record))
            except (ValueError, KeyError, TypeError) as exc:  # one bad line: say so, go on
                common.console.print(f"ragtruth: line {number} skipped: {exc}", markup=False)
    return out[:limit] if limit else out


# ---------------------------------------------------------------- the frozen detection set

FROZEN_SET = "ragtruth-qa-v1"
FROZEN_COUNTS = {"hallucinated": 26, "correct": 34}  # ~60 answers: `make gate` within minutes
NOTICE = """# Notice: RAGTruth material in this detection set

`records.jsonl` holds {n} responses of RAGTruth's QA task (questions from MS MARCO, three
retrieved passages each, answers by GPT-4, GPT-3.5, Llama-2 7B/13B/70B-chat and
Mistral-7B-instruct, with human-labelled hallucinated spans), taken from the `report` split of
`python -m bench ragtruth` (questions whose sha256(source_id) is odd; nothing is fitted on
them): every hallucinated response of that split and correct ones taken in turn from each
generating model (sha256(id) order). Built by `python -m bench.ragtruth --freeze`. A response
is `hallucinated` when one of its labels has `implicit_true` and `due_to_null` both false;
`spans` are those labels.

Source: ParticleMedia/RAGTruth (Niu et al., 2024, "RAGTruth: A Hallucination Corpus for
Developing Trustworthy Retrieval-Augmented Language Models"), test split, as carried by
amazon-science/Query-Conditioned-NLI `data/ragtruth_test.json` @ e255f49. Licence: MIT,
reproduced below.

{license}"""


def _round_robin(records: list[dict], wanted: int) -> list[dict]:
    """`wanted` records taken in turn from each generating model (each model's in sha256(id)
    order): the correct answers of every model family are in the set, so a formatting habit of
    one family cannot pass for detection."""
    pools: dict[str, list[dict]] = {}
    for record in sorted(
        records, key=lambda r: hashlib.sha256(f"{FROZEN_SET}:{r['id']}".encode()).hexdigest()
    ):
        pools.setdefault(record["model"], []).append(record)
    queues = [pools[m] for m in sorted(pools)]
    chosen: list[dict] = []
    while len(chosen) < wanted and any(queues):
        for queue in queues:
            if queue and len(chosen) < wanted:
                chosen.append(queue.pop(0))
    return chosen


def freeze(folder: Path, out_dir: Path, counts: dict[str, int] | None = None) -> dict:
    """Write the frozen detection set from the report split: records, NOTICE and manifest."""
    from eval import detection_sets as detection

    counts = counts or FROZEN_COUNTS
    records = load(folder, "report")
    chosen = []
    for label, wanted in counts.items():
        chosen += _round_robin([r for r in records if r["label"] == label], wanted)
    chosen.sort(key=lambda r: int(r["id"]) if r["id"].isdigit() else r["id"])
    if out_dir.exists():
        raise FileExistsError(f"{out_dir} exists: a frozen set is never rewritten; new version")
    out_dir.mkdir(parents=True)
    with (out_dir / "records.jsonl").open("w", encoding="utf-8") as handle:
        for record in chosen:
            handle.write(json.dumps({**record, "generated": True}, ensure_ascii=False) + "\n")
    license_text = (folder / "LICENSE").read_text(encoding="utf-8").strip()
    (out_dir / "NOTICE.md").write_text(NOTICE.format(n=len(chosen), license=license_text) + "\n")
    tally: dict[str, int] = {}
    for record in chosen:
        key = f"{record['label']}/{record['model']}"
        tally[key] = tally.get(key, 0) + 1
    return detection.write_manifest(
        out_dir,
        {
            "name": out_dir.name,
            "description": f"{len(chosen)} RAGTruth QA responses (report split) for the "
            "guardrails: flagged = not emitted",
            "checker": "eval.detection_sets.check_rag_answer",
            "overrides": {"guardrails": {"consistency_probes": 0}},
            "source": "RAGTruth QA test split (MIT), ../shared/datasets/ragtruth_qa_dev",
            "split": "report (sha256(source_id) odd)",
            "counts": dict(sorted(tally.items())),
        },
    )


# ---------------------------------------------------------------- metrics


def response_metrics(items: list[dict]) -> dict[str, Any]:
    """HaluEval's confusion counts and P/R/F1 (`bench.halueval.metrics`), in this bench's keys."""
    from bench.halueval import metrics

    counts = metrics(items)
    return {
        "n": counts["n_answers"],
        "hallucinated": counts["tp"] + counts["fn"],
        **{k: counts[k] for k in ("precision", "recall", "f1")},
        "correct_flag_rate": counts["right_answer_flag_rate"],
        **{k: counts[k] for k in ("tp", "fp", "tn", "fn")},
    }


def _chars(spans: list) -> set[int]:
    return {c for start, end in spans for c in range(int(start), int(end))}


def span_metrics(items: list[dict]) -> dict[str, Any]:
    """Character-level overlap of flagged claim spans with labelled spans, summed over answers."""
    predicted = gold = overlap = 0
    for item in items:
        p, g = _chars(item["flagged_spans"]), _chars(item["spans"])
        predicted, gold, overlap = predicted + len(p), gold + len(g), overlap + len(p & g)
    precision = overlap / predicted if predicted else 0.0
    recall = overlap / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "flagged_chars": predicted,
        "labelled_chars": gold,
    }


def summary(items: list[dict]) -> dict[str, Any]:
    seconds = [i["seconds"] for i in items]
    return {
        "response": response_metrics(items),
        "span": span_metrics(items),
        "seconds_median": round(statistics.median(seconds), 3) if seconds else None,
        "seconds_p95": round(_percentile(seconds, 95), 3) if seconds else None,
        "judge_calls": sum(i["judge_calls"] for i in items),
        "claims": sum(i["claims"] for i in items),
    }


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def by_model(items: list[dict]) -> dict[str, dict]:
    models = sorted({i["model"] for i in items})
    return {m: summary([i for i in items if i["model"] == m]) for m in models}


# ---------------------------------------------------------------- running


def guardrails_settings(overrides: dict[str, dict[str, Any]] | None, cache: bool = True) -> dict:
    """Pipeline settings less the probes, a bench judge cache, then the user's `--set`."""
    settings: dict[str, Any] = {"consistency_probes": 0}
    settings["judge_cache_dir"] = str(common.CACHE / "ragtruth_judge") if cache else None
    return {**settings, **(overrides or {}).get("guardrails", {})}


def check_item(record: dict, toolkit: Any, split: str) -> tuple[dict, list[dict]]:
    """One response: its item (flag, spans, time, calls) and its per-claim rows."""
    from eval import detection_sets as detection

    judge = toolkit.judge() if toolkit.config.judge != "none" else None
    if judge is not None:
        judge.log = []
    try:
        report, seconds, calls = detection.checked_report(record, toolkit)
    finally:
        log = judge.log if judge is not None else None
        if judge is not None:
            judge.log = None
    p_of = {claim: p for claim, p, _ in log or []}
    gold = _chars(record["spans"])
    rows = []
    claims = report.get("claims") or []
    for claim, span in zip(claims, detection.claim_spans(record["answer"], claims), strict=True):
        chars = _chars([span]) if span else set()
        rows.append(
            {
                "id": record["id"],
                "split": split,
                "model": record["model"],
                "response_hallucinated": record["label"] == "hallucinated",
                "text": claim.get("text"),
                "span": list(span) if span else None,
                "score": claim.get("score"),
                "status": claim.get("status"),
                "judge": claim.get("judge"),
                "critical": claim.get("critical"),
                "p_yes": claim.get("p_yes", _judged_p(claim.get("text") or "", p_of)),
                "reasons": claim.get("reasons", [])[:3],
                "label_overlap": round(len(chars & gold) / len(chars), 4) if chars else None,
            }
        )
    item = {
        "id": record["id"],
        "split": split,
        "model": record["model"],
        "hallucinated": record["label"] == "hallucinated",
        "flagged": report["action"] != "emit",
        "action": report["action"],
        "seconds": seconds,
        "judge_calls": calls,
        "claims": sum(1 for c in report.get("claims") or [] if c.get("status") != "not_a_claim"),
        "flagged_spans": detection.flagged_spans(record["answer"], report),
        "spans": record["spans"],
        "reasons": (report.get("reasons") or [])[:2],
    }
    return item, rows


def _judged_p(text: str, p_of: dict[str, float]) -> float | None:
    """The judge's P(yes) for a claim (the judge sees it without a lead-in or markers)."""
    if text in p_of:
        return p_of[text]
    for judged, p in p_of.items():
        if judged and judged in text:
            return p
    return None


def typical_answer_speed(records: list[dict], items: list[dict], overrides: dict) -> dict:
    """Detection pass of answers with 5-7 claims over 3 passages, judge cache off (median)."""
    from stages import guardrails

    low, high = TYPICAL_CLAIMS
    wanted = {i["id"] for i in items if low <= i["claims"] <= high}
    chosen = [r for r in records if r["id"] in wanted and len(r["evidence"]) == 3]
    chosen = chosen[:TYPICAL_ANSWERS]
    if not chosen:
        return {"answers": 0}
    config = guardrails.Config.model_validate(
        {**_pipeline_guardrails(), **guardrails_settings(overrides, cache=False)}
    )
    toolkit = guardrails.Toolkit(config)
    seconds, calls = [], []
    for record in chosen:
        item, _ = check_item(record, toolkit, split_of(record["source_id"]))
        seconds.append(item["seconds"])
        calls.append(item["judge_calls"])
    return {
        "answers": len(chosen),
        "claims_range": list(TYPICAL_CLAIMS),
        "seconds_median": round(statistics.median(seconds), 3),
        "seconds": [round(s, 3) for s in seconds],
        "judge_calls_median": statistics.median(calls),
        "target_seconds": TARGETS["typical_seconds"],
    }


def compare_prefix(folder: Path, answers: int, results_dir: Path | None = None) -> dict:
    """The judge's two ways of reading an answer's evidence, on the fit split (cache off): each
    claim with its own focused sentences (`focus`), or every claim after the same whole
    evidence, which llama.cpp keeps in its KV cache between the claims (`shared`). Claim-level
    AUC of P(yes) (a claim overlapping a labelled span is unsupported) and seconds per answer.
    Hallucinated answers first (they hold the unsupported claims), then correct ones."""
    from stages import guardrails
    from stages.guardrails import claims as claims_mod
    from stages.guardrails import groundedness
    from stages.guardrails import judge as judge_mod
    from stages.models import yesno

    config = guardrails.Config.model_validate({**_pipeline_guardrails(), "judge_cache_dir": None})
    model = yesno.yes_no_model(config.llm)
    model.p_yes(judge_mod.SYSTEM_PROMPT, "Answer yes.")  # load the model outside the timings
    records = load(folder, "fit")
    records = [r for r in records if r["label"] == "hallucinated"] + [
        r for r in records if r["label"] == "correct"
    ]
    modes: dict[str, dict[str, list]] = {m: {"p": [], "seconds": []} for m in ("focus", "shared")}
    labels: list[bool] = []
    for record in records[:answers]:
        spans = [e["text"] for e in record["evidence"].values()]
        gold = _chars(record["spans"])
        claims, cursor = [], 0
        for claim in claims_mod.decompose(record["answer"]):
            at = record["answer"].find(claim.text, cursor)
            cursor = at + len(claim.text) if at >= 0 else cursor
            chars = set(range(at, at + len(claim.text))) if at >= 0 else set()
            claims.append((groundedness.strip_lead_in(claim.text), bool(chars & gold)))
        labels += [not bad for _, bad in claims]
        for mode, store in modes.items():
            started = time.perf_counter()
            for text, _ in claims:
                chosen = (
                    spans if mode == "shared" else judge_mod.focus(text, spans, record["question"])
                )
                prompt = judge_mod.user_prompt(text, chosen, record["question"], len(claims) > 1)
                store["p"].append(model.p_yes(judge_mod.SYSTEM_PROMPT, prompt))
            store["seconds"].append(time.perf_counter() - started)
    from bench.paraphrase import auc

    result = {
        "answers": min(answers, len(records)),
        "claims": len(labels),
        "unsupported_claims": labels.count(False),
        "split": "fit",
        **{
            mode: {
                "claim_auc": auc(store["p"], labels),
                "seconds_per_answer_median": round(statistics.median(store["seconds"]), 3),
                "seconds_per_answer_mean": round(statistics.fmean(store["seconds"]), 3),
            }
            for mode, store in modes.items()
        },
    }
    common.write_result(f"{NAME}-prefix", result, results_dir)
    return result


def _pipeline_guardrails() -> dict[str, Any]:
    settings = common.pipeline_settings("guardrails")
    settings.pop("revise_round", None)
    return settings


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    split: str = "all",
    limit: int | None = None,
    speed: bool = True,
    data: str = "dev",
    config_file: Path | None = None,
    **_: Any,
) -> dict[str, Any]:
    from stages import guardrails

    if data not in DATA:
        raise ValueError(f"data must be one of {', '.join(DATA)}, not {data!r}")
    folder_name, file = DATA[data]
    folder = common.dataset_dir(folder_name, (file,))  # raises Skipped when absent
    overrides = with_config_file(overrides, config_file)
    config = guardrails.Config.model_validate(
        {**_pipeline_guardrails(), **guardrails_settings(overrides)}
    )
    toolkit = guardrails.Toolkit(config)
    records = load(folder, split, limit, file)
    items, claim_rows = [], []
    started = time.perf_counter()
    # each answer's item as it is checked: a long run cut short still has what it measured
    PARTIAL_ITEMS.parent.mkdir(parents=True, exist_ok=True)
    PARTIAL_ITEMS.write_text("", encoding="utf-8")
    for index, record in enumerate(records):
        item, rows = check_item(record, toolkit, split_of(record["source_id"]))
        items.append(item)
        claim_rows += rows
        with PARTIAL_ITEMS.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(item) + "\n")
        if (index + 1) % 25 == 0:
            common.console.print(f"ragtruth: {index + 1}/{len(records)} answers")
    total_s = time.perf_counter() - started
    _write_jsonl(CLAIM_ROWS, claim_rows)
    splits = {s: [i for i in items if i["split"] == s] for s in SPLITS}
    result = {
        "data": {
            "set": data,
            "file": str(folder / file),
            "split": split,
            "answers": len(items),
            "questions": len({r["source_id"] for r in records}),
            "split_rule": "sha256(source_id) even: fit, odd: report",
        },
        "config": {
            "llm_backend": config.llm.backend,
            **{
                k: getattr(config, k)
                for k in (
                    "judge",
                    "emit_threshold",
                    "judge_threshold",
                    "revise_threshold",
                    "block_threshold",
                    "aggregate",
                    "prefilter_lexical",
                    "consistency_probes",
                    "judge_focus_words",
                )  # fmt: skip
            },
            "fast_judge": config.fast_judge.model_dump() if config.fast_judge else None,
            "overrides": overrides or {},
            "check_answer": hasattr(guardrails, "check_answer"),
        },
        "model": getattr(toolkit.judge(), "model_id", None) if config.judge != "none" else None,
        "splits": {s: {**summary(v), "by_model": by_model(v)} for s, v in splits.items() if v},
        "all": summary(items),
        "seconds_total": round(total_s, 1),
        "typical_answer": typical_answer_speed(records, items, overrides or {}) if speed else None,
        "claim_rows": {"file": _shown(CLAIM_ROWS), "rows": len(claim_rows)},
        "references_f1": REFERENCES_F1,
        "targets": TARGETS,
        "examples_flagged_correct": [
            {k: i[k] for k in ("id", "model", "action", "reasons")}
            for i in items
            if i["flagged"] and not i["hallucinated"]
        ][:10],
    }
    name = (
        NAME if split == "all" and not limit else f"{NAME}-{split}" + (f"-{limit}" if limit else "")
    )
    if data != "dev":
        name = f"{name}-{data}"
    if config_file is not None:
        name = f"{name}-{Path(config_file).stem}"
    common.write_result(name, result, results_dir)
    return result


def with_config_file(
    overrides: dict[str, dict[str, Any]] | None, config_file: Path | None
) -> dict[str, dict[str, Any]]:
    """`--set` overrides over a guardrails YAML's keys (e.g. configs/guardrails-fast.yaml, read
    as the pipeline reads an included file: its keys over configs/guardrails.yaml's)."""
    overrides = dict(overrides or {})
    if config_file is None:
        return overrides
    import yaml

    keys = yaml.safe_load(Path(config_file).read_text(encoding="utf-8")) or {}
    if not isinstance(keys, dict):
        raise ValueError(f"{config_file}: expected a mapping of guardrails settings")
    overrides["guardrails"] = {**keys, **overrides.get("guardrails", {})}
    return overrides


def _shown(path: Path) -> str:
    """`path` relative to the project when it is inside it (result files name no home folder)."""
    try:
        return str(path.relative_to(common.ROOT))
    except ValueError:
        return str(path)


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    tmp.replace(path)


def summarize(result: dict[str, Any]) -> str:
    lines = [
        f"{result['data']['answers']} RAGTruth QA answers, {result['data']['questions']} "
        f"questions (judge {result['config']['judge']}, {result['model']}); "
        f"{result['all']['judge_calls']} judge calls, {result['seconds_total']} s.",
        "",
        "| split / model | answers | halluc. | precision | recall | F1 | correct flagged | "
        "span F1 | s median | s p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for split, block in result["splits"].items():
        lines.append(_row(f"**{split}**", block))
        lines += [_row(f"{split} / {m}", b) for m, b in block["by_model"].items()]
    typical = result.get("typical_answer") or {}
    if typical.get("answers"):
        lines += [
            "",
            f"Detection pass of a typical answer ({typical['claims_range'][0]}-"
            f"{typical['claims_range'][1]} claims, 3 passages, judge cache off, "
            f"{typical['answers']} answers): median {typical['seconds_median']} s "
            f"(target {typical['target_seconds']} s).",
        ]
    refs = ", ".join(f"{k} {v:.3f}" for k, v in result["references_f1"].items())
    lines += ["", f"Published response-level F1 on RAGTruth QA: {refs}."]
    return "\n".join(lines)


def _row(label: str, block: dict) -> str:
    r, s = block["response"], block["span"]
    flag = "n/a" if r["correct_flag_rate"] is None else f"{r['correct_flag_rate']:.1%}"
    return (
        f"| {label} | {r['n']} | {r['hallucinated']} | {r['precision']:.3f} | {r['recall']:.3f} "
        f"| {r['f1']:.3f} | {flag} | {s['f1']:.3f} | {block['seconds_median']} | "
        f"{block['seconds_p95']} |"
    )


if __name__ == "__main__":
    import argparse

    from stages.common import offline

    offline.apply_offline_environment()
    parser = argparse.ArgumentParser(
        prog="python -m bench.ragtruth",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--limit", type=int, default=None, help="first N answers of the split")
    parser.add_argument("--results", type=Path, default=common.RESULTS)
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="STAGE.FIELD=VALUE",
        help="e.g. guardrails.judge_threshold=0.8",
    )
    parser.add_argument("--no-speed", action="store_true", help="skip the typical-answer timing")
    parser.add_argument(
        "--data",
        choices=list(DATA),
        default="dev",
        help="dev: report on it only; train: RAGTruth QA train, for fitting",
    )
    parser.add_argument(
        "--guardrails-config",
        type=Path,
        default=None,
        metavar="YAML",
        help="guardrails keys over the pipeline's, e.g. configs/guardrails-fast.yaml",
    )
    parser.add_argument(
        "--freeze",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"write the frozen detection set (e.g. eval/sets/{FROZEN_SET}) and exit",
    )
    parser.add_argument(
        "--compare-prefix",
        type=int,
        default=0,
        metavar="N",
        help="judge N fit-split answers with focused and with shared evidence; AUC and seconds",
    )
    args = parser.parse_args()
    if args.compare_prefix:
        folder = common.dataset_dir(FOLDER, FILES)
        print(json.dumps(compare_prefix(folder, args.compare_prefix, args.results), indent=2))
        raise SystemExit(0)
    if args.freeze:
        try:
            frozen = freeze(common.dataset_dir(FOLDER, FILES), args.freeze)
        except common.Skipped as skipped:
            raise SystemExit(common.skip_message(NAME, str(skipped))) from None
        print(json.dumps(frozen["counts"], indent=2))
        raise SystemExit(0)
    try:
        outcome = run(
            args.results,
            common.parse_overrides(args.overrides),
            split=args.split,
            limit=args.limit,
            speed=not args.no_speed,
            data=args.data,
            config_file=args.guardrails_config,
        )
    except common.Skipped as skipped:
        raise SystemExit(common.skip_message(NAME, str(skipped))) from None
    print(summarize(outcome))
