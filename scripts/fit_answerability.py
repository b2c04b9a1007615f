"""Fit the strict answerability judge's Platt calibration on a split no eval set uses.

The strict judge (stages/models/answerability.py, `ChoiceAnswerability`) gives 1 - P(none of
these sentences states the answer). This script turns that into P(the answer it leads to is
right), the confidence rerank compares with its thresholds (0.75 / 0.55):

1. the calibration split: SQuAD 2.0 dev articles Imperialism and French_and_Indian_War from
   ../shared/datasets/squad2/dev_articles.json (766 questions, 53 % unanswerable), built as an eval
   set under .cache/ (never frozen, never in the gate; the ranker reports its held-out figures on
   the same two articles and never trains on them). Never the frozen slices' articles (Normans,
   Huguenot, Packet_switching), never SciFact, never the sample;
2. the pipeline runs on it with the judge off, which gives every question's ranked chunks;
3. a seeded sample of its questions (the split's own answerable/unanswerable mix) is judged with
   the calibration off; a judged answer is right when the question is answerable and the sentence
   the judge chose holds a gold answer;
4. a logistic regression of right on logit(raw) gives `scale` and `shift`, written with the
   judge's settings to configs/answerability-choice.yaml. Use it by including it after
   configs/answerability.yaml in rerank's `include:` (configs/pipeline.yaml).

The judged records are kept (`--records`), so a refit (`--refit`) costs no model call. Figures
printed here are on the fitting sample itself; report the frozen slices with
`python -m bench answerability`.

Usage:
  python scripts/fit_answerability.py [--questions 120] [--seed 7]
  python scripts/fit_answerability.py --refit
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CALIBRATION_ARTICLES = ("Imperialism", "French_and_Indian_War")
FROZEN_ARTICLES = ("Normans", "Huguenot", "Packet_switching")
CACHE = ROOT / ".cache" / "answerability-fit"
DEFAULT_RECORDS = CACHE / "records.jsonl"
DEFAULT_OUT = ROOT / "configs" / "answerability-choice.yaml"


def build_split(squad_path: Path, target: Path) -> Path:
    """The calibration split as an eval set (corpus + questions + manifest), built once."""
    from scripts import build_eval_sets as sets

    if (target / "manifest.json").is_file():
        return target
    assert not set(CALIBRATION_ARTICLES) & set(FROZEN_ARTICLES)
    articles = sets._squad_articles(squad_path, CALIBRATION_ARTICLES)
    set_dir = sets.fresh_dir(target)
    records = sets._write_squad_corpus(articles, CALIBRATION_ARTICLES, set_dir / "corpus")
    sets._finish_squad_set(set_dir, CALIBRATION_ARTICLES, records)
    sets.write_manifest(set_dir, target.name, f"calibration split {list(CALIBRATION_ARTICLES)}")
    return set_dir


def ranked_passages(set_dir: Path, store: Path, top_k: int) -> dict[str, list[dict]]:
    """question id -> its top_k ranked chunks (title, text, confidence), judge off."""
    from flows.evaluation import evaluate
    from stages.store import ArtifactStore

    run = evaluate(set_dir, overrides={"rerank.answerability.kind": "none"}, store=store)
    artifacts = ArtifactStore(run.config.store)
    chunks = {
        c["chunk_id"]: c
        for c in artifacts.read_table(run.stage_results["ingestion"].ref, "chunks").to_pylist()
    }
    by_question = defaultdict(list)
    for row in artifacts.read_table(run.stage_results["rerank"].ref, "ranked").to_pylist():
        by_question[row["question_id"]].append(row)
    return {
        qid: [
            {**chunks[r["chunk_id"]], "confidence": r["confidence"]}
            for r in sorted(rows, key=lambda r: r["rank"])[:top_k]
        ]
        for qid, rows in by_question.items()
    }


def judge_sample(set_dir: Path, store: Path, questions: int, seed: int, records: Path) -> None:
    from flows.config import load_config
    from stages.models.answerability import AnswerabilitySettings, ChoiceAnswerability
    from stages.models.yesno import yes_no_model

    config = load_config(ROOT / "configs" / "pipeline.yaml")
    rerank = config.stages["rerank"]
    # the choice judge's own defaults (top 3 chunks, 6 sentences), uncalibrated
    settings = AnswerabilitySettings(kind="strict", strict_mode="choice")
    judge = ChoiceAnswerability(yes_no_model(rerank.llm), settings)
    top = ranked_passages(set_dir, store, settings.top_k)
    lines = (set_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    pool = [json.loads(line) for line in lines if line.strip()]
    sample = random.Random(seed).sample(pool, min(questions, len(pool)))
    records.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with records.open("w", encoding="utf-8") as out:
        for number, question in enumerate(sample, 1):
            chunks = top.get(question["question_id"], [])
            record = judged_record(judge, question, chunks)
            out.write(json.dumps(record) + "\n")
            out.flush()
            elapsed = time.perf_counter() - started
            print(f"{number}/{len(sample)} {elapsed / number:.1f} s/question", file=sys.stderr)


def judged_record(judge, question: dict, chunks: list[dict]) -> dict:
    record = {
        "question_id": question["question_id"],
        "answerable": question["expected_behavior"] == "answer",
        "raw": 0.0,
        "right": False,
        "sentence": None,
    }
    if not chunks:
        return record
    passages = [(c["title"], c["text"]) for c in chunks]
    judgement = judge.judge(question["question"], passages, [c["confidence"] for c in chunks])
    if judgement.answer is None:
        return record
    passage, start, end = judgement.answer
    sentence = passages[passage][1][start:end]
    right = record["answerable"] and any(g in sentence for g in question["gold_answers"])
    raw = judgement.probabilities[passage]
    return {**record, "raw": raw, "right": bool(right), "sentence": sentence}


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def fit(records: list[dict]) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    x = [[_logit(r["raw"])] for r in records]
    y = [int(r["right"]) for r in records]
    model = LogisticRegression(C=1e4).fit(x, y)
    return float(model.coef_[0][0]), float(model.intercept_[0])


def summary(records: list[dict], scale: float, shift: float, low: float) -> dict:
    from sklearn.metrics import roc_auc_score

    from eval.metrics import expected_calibration_error

    calibrated = [1 / (1 + math.exp(-(scale * _logit(r["raw"]) + shift))) for r in records]
    right = [r["right"] for r in records]
    answered = [r for r, p in zip(records, calibrated, strict=True) if p >= low]
    correct = sum(r["right"] for r in answered)
    return {
        "questions": len(records),
        "answerable": sum(r["answerable"] for r in records),
        "auc_answerable": round(
            roc_auc_score([r["answerable"] for r in records], [r["raw"] for r in records]), 3
        ),
        "auc_right": round(roc_auc_score(right, [r["raw"] for r in records]), 3),
        "ece_raw": round(expected_calibration_error([r["raw"] for r in records], right), 3),
        "ece_calibrated": round(expected_calibration_error(calibrated, right), 3),
        "answered_at_low_threshold": len(answered),
        "answered_precision": round(correct / max(len(answered), 1), 3),
        "truthfulness": round((2 * correct - len(answered)) / len(records), 3),
    }


def write_settings(out: Path, scale: float, shift: float, report: dict, args) -> None:
    import yaml

    header = (
        "# The strict choice judge (stages/models/answerability.py): include this file after\n"
        "# configs/answerability.yaml in rerank's include: to use it (one GGUF forward pass per\n"
        "# question; see configs/answerability.yaml for what it measured on a held-out slice).\n"
        "# scale/shift: Platt scaling written by scripts/fit_answerability.py on SQuAD 2.0 dev\n"
        f"# articles {list(CALIBRATION_ARTICLES)} ({report['questions']} questions, seed "
        f"{args.seed}); never the frozen eval slices' articles.\n"
        f"# On that sample: {json.dumps(report)}\n"
    )
    body = {
        "answerability": {
            "kind": "strict",
            "strict_mode": "choice",
            "top_k": 3,
            "choice_sentences": 6,
            "choice_match_weight": 4.0,
            "scale": round(scale, 6),
            "shift": round(shift, 6),
        }
    }
    out.write_text(header + yaml.safe_dump(body, sort_keys=False), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--squad", type=Path, default=ROOT.parent / "shared/datasets/squad2/dev_articles.json"
    )
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--records", type=Path, default=DEFAULT_RECORDS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--refit", action="store_true", help="reuse --records, no model call")
    args = parser.parse_args(argv)
    if not args.refit:
        if not args.squad.is_file():
            print(f"no SQuAD dev articles at {args.squad}", file=sys.stderr)
            return 2
        set_dir = build_split(args.squad, CACHE / "squad2-calibration")
        judge_sample(set_dir, CACHE / "store", args.questions, args.seed, args.records)
    lines = args.records.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    scale, shift = fit(records)
    from flows.config import load_config

    low = load_config(ROOT / "configs" / "pipeline.yaml").stages["rerank"].low_threshold
    report = summary(records, scale, shift, low)
    print(json.dumps({"scale": scale, "shift": shift, **report}, indent=2))
    write_settings(args.out, scale, shift, report, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
