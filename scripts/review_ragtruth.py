"""RAGTruth QA as human verdicts: the review loop's calibration shown on real labels.

`batch`: every response of `../shared/datasets/ragtruth_qa_train/` is checked by the guardrails'
claim checker (`eval.detection_sets.checked_report`, as bench/ragtruth.py does) and written as a
review batch in the store, with a verdicts file (hallucinated when RAGTruth labels a span that
is neither implicit_true nor due_to_null, else correct) for `grounding review import`.
`dev`: the dev set (`ragtruth_qa_dev`, never fitted on) is checked once the same way, and the
gate with the base settings and with the base plus an overlay from `grounding calibrate
--from-reviews` is replayed from its claims (the replay the calibration fits with); the
response-level figures of both are written side by side.

The judge is the fast judge alone (the claim-support cross-encoder, configs/guardrails-fast.yaml,
without the GGUF behind it): the GGUF costs about a second a claim on two cores, about an hour
for the train set. Claims are scored once with judge_threshold 1 and no word share, so each
judged claim's recorded score is the judge's P itself (`p`), which the calibration replays under
any line and weight. Probes are off (the answers are not this project's generator's).

Usage:
  python scripts/review_ragtruth.py batch [--limit N] [--set store=...]   # prints the batch key
  grounding review import bench/.cache/ragtruth_train_verdicts.jsonl --batch KEY --reviewer ragtruth
  grounding calibrate --from-reviews --batch KEY --guardrails configs/guardrails.yaml \
      --guardrails configs/guardrails-fast.yaml --out bench/results/ragtruth-calibrated.yaml
  python scripts/review_ragtruth.py dev --overlay bench/results/ragtruth-calibrated.yaml
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BASE_FILES = (ROOT / "configs" / "guardrails.yaml", ROOT / "configs" / "guardrails-fast.yaml")
VERDICTS = ROOT / "bench" / ".cache" / "ragtruth_train_verdicts.jsonl"
OUT = ROOT / "bench" / "results" / "review-calibration-ragtruth.json"
FEATURE_KEYS = {"judge_threshold": 1.0, "lexical_weight": 0.0, "short_answer_threshold": 1.0}


def base_settings(extra: list[Path] = ()) -> dict:
    import yaml

    merged: dict = {}
    for path in (*BASE_FILES, *extra):
        merged.update(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    merged.update(consistency_probes=0, judge_cache_dir=None)
    return merged


def fast_only_toolkit(settings: dict):
    """A guardrails Toolkit whose judge is the fast cross-encoder with no slow judge behind."""
    from stages import guardrails
    from stages.guardrails import checker

    config = guardrails.Config.model_validate(settings)
    return guardrails.Toolkit(config, _judge=checker.make_fast_judge(config, None))


def records(folder: str, file: str, limit: int | None) -> list[dict]:
    from bench import ragtruth

    path = ROOT.parent / "shared" / "datasets" / folder / file
    if not path.is_file():
        raise SystemExit(f"{path} is absent: this needs ../shared/datasets/{folder}/")
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(ragtruth.detection_record(json.loads(line)))
    return out[:limit] if limit else out


def check_items(found: list[dict], prefix: str) -> tuple[list[dict], dict[str, str]]:
    """Each record checked once (fast judge alone, FEATURE_KEYS) as a review item, and its
    RAGTruth label by answer id."""
    from eval import detection_sets as detection
    from quality import calibrate

    toolkit = fast_only_toolkit({**base_settings(), **FEATURE_KEYS})
    items, labels = [], {}
    started = time.perf_counter()
    for number, record in enumerate(found):
        report, _, _ = detection.checked_report(record, toolkit)
        claims = []
        for claim in report.get("claims") or []:
            lexical = [c["score"] for c in claim.get("checks") or [] if c["name"] == "lexical"]
            row = {k: claim.get(k) for k in ("text", "char_start", "char_end", "score")}
            row.update(
                status=claim["status"],
                judge=claim["judge"],
                critical=claim["critical"],
                reasons=claim.get("reasons") or [],
                evidence_spans=claim.get("evidence_spans") or [],
                lexical=lexical[0] if lexical else None,
                p=claim["score"] if claim["judge"] in calibrate.JUDGED else None,
            )
            claims.append(row)
        evidence = [
            {
                "evidence_id": k,
                "doc_id": k,
                "title": v["title"],
                "section_path": "",
                "text": v["text"],
                "char_start": 0,
                "char_end": len(v["text"]),
            }
            for k, v in record["evidence"].items()
        ]
        items.append(
            {
                "answer_id": f"{prefix}/{record['id']}",
                "run_id": prefix,
                "question_id": record["source_id"],
                "question": record["question"],
                "stratum": "emitted",
                "status": "answered",
                "action": report["action"],
                "refusal_reason": None,
                "draft": record["answer"],
                "final_answer": record["answer"],
                "confidence": None,
                "overall_score": None,
                "weight": 1.0,
                "inclusion_probability": 1.0,
                "low_confidence": False,
                "claims_json": json.dumps(claims, default=str),
                "evidence_json": json.dumps(evidence),
            }
        )
        labels[items[-1]["answer_id"]] = record["label"]
        if number % 50 == 49:
            print(f"{number + 1} checked, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return items, labels


def replayed(items: list[dict], settings: dict) -> dict[str, bool]:
    """Whether the gate under `settings` flags each item, replayed from its claims (an item
    without a scored claim is not flagged)."""
    from quality import calibrate
    from stages.guardrails import Config

    config = Config.model_validate(settings)
    rows = calibrate.examples(items, {i["answer_id"]: "correct" for i in items}, config)
    flagged = calibrate.flagged_one(rows, calibrate.base_settings(config), config)
    return {r["answer_id"]: bool(f) for r, f in zip(rows, flagged, strict=True)}


def batch(args: argparse.Namespace) -> None:
    from flows.pipeline_config import load_config, parse_overrides
    from quality import review

    started = time.perf_counter()
    found = records("ragtruth_qa_train", "ragtruth_qa_train.jsonl", args.limit)
    items, labels = check_items(found, "ragtruth-train")
    flagged = replayed(items, base_settings())  # what the base gate did: the stratum
    for item in items:
        item["stratum"] = "revised" if flagged.get(item["answer_id"]) else "emitted"
    settings = load_config(ROOT / "configs" / "pipeline.yaml", parse_overrides(args.set))
    config = review.SampleConfig(n=len(items), seed=0)
    ref = review.write_batch(settings.artifact_store(), items, config, "ragtruth_qa_train")
    VERDICTS.parent.mkdir(parents=True, exist_ok=True)
    VERDICTS.write_text(
        "".join(
            json.dumps({"answer_id": i["answer_id"], "verdict": labels[i["answer_id"]]}) + "\n"
            for i in items
        )
    )
    print(
        f"{len(items)} answers in {time.perf_counter() - started:.0f} s; batch {ref.key}; "
        f"verdicts {VERDICTS.relative_to(ROOT)}",
        file=sys.stderr,
    )
    print(ref.key)


def dev(args: argparse.Namespace) -> None:
    """Dev figures, base and overlay, replayed from one check of every dev answer (kept in
    bench/.cache so another overlay costs no check)."""
    import yaml

    from bench import ragtruth

    cache = ROOT / "bench" / ".cache" / f"ragtruth_dev_items-{args.limit or 'all'}.json"
    if cache.is_file():
        items, labels = json.loads(cache.read_text(encoding="utf-8"))
    else:
        found = records("ragtruth_qa_dev", "ragtruth_qa_dev.jsonl", args.limit)
        items, labels = check_items(found, "ragtruth-dev")
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps([items, labels]), encoding="utf-8")
    source = {i["answer_id"]: i["question_id"] for i in items}
    overlay = yaml.safe_load(args.overlay.read_text(encoding="utf-8")) if args.overlay else None
    out = {
        "judge": "fast judge alone (no GGUF); the gate replayed from each answer's claims",
        "overlay": str(args.overlay),
        "keys": overlay,
        "answers": len(items),
    }
    runs = [("base", base_settings())]
    if overlay:
        runs.append(("overlay", {**base_settings(), **overlay}))
    for name, settings in runs:
        flagged = replayed(items, settings)
        flags = [
            {
                "hallucinated": labels[k] == "hallucinated",
                "flagged": flagged.get(k, False),
                "split": ragtruth.split_of(source[k]),
            }
            for k in labels
        ]
        out[name] = {
            "all": ragtruth.response_metrics(flags),
            "report_split": ragtruth.response_metrics([f for f in flags if f["split"] == "report"]),
        }
        print(name, json.dumps(out[name]["all"]), file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("batch", help="train answers -> a review batch and verdicts")
    one.add_argument("--limit", type=int)
    one.add_argument("--set", action="append", default=[], help="pipeline setting key=value")
    two = commands.add_parser("dev", help="dev figures with the base settings and the overlay")
    two.add_argument("--overlay", type=Path, help="without: the base figures only")
    two.add_argument("--limit", type=int)
    two.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    batch(args) if args.command == "batch" else dev(args)


if __name__ == "__main__":
    main()
