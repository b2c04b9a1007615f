"""Fit an answerability judge's Platt calibration on a split no eval set uses.

The strict judge (stages/models/answerability.py, `ChoiceAnswerability`) gives 1 - P(none of
these sentences states the answer); the fast judge (`PairAnswerability`, `--kind fast --model
DIR`) gives sigmoid(pair model logit) of the best sentence. This script turns either into P(the
answer it leads to is right), the confidence rerank compares with its thresholds (0.75 / 0.55):

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
   judge's settings to configs/answerability-choice.yaml (fast: configs/answerability-fast.yaml).
   Use it by including it after configs/answerability.yaml in rerank's `include:`
   (configs/pipeline.yaml).

The judged records are kept (`--records`), so a refit (`--refit`) costs no model call. Figures
printed here are on the fitting sample itself; report the frozen slices with
`python -m bench answerability`.

Usage:
  python scripts/fit_answerability.py [--questions 120] [--seed 7]
  python scripts/fit_answerability.py --kind fast --model data/models/answerability-minilm-v4 \
      --questions 0    # 0: every question of the split (the fast judge costs ~0.1 s each)
  python scripts/fit_answerability.py --refit [--kind fast]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from stages.models.answerability import calibrated, logit, sigmoid  # noqa: E402

CALIBRATION_ARTICLES = ("Imperialism", "French_and_Indian_War")
FROZEN_ARTICLES = ("Normans", "Huguenot", "Packet_switching")
CACHE = ROOT / ".cache" / "answerability-fit"
DEFAULT_RECORDS = {
    "strict": CACHE / "records.jsonl",
    "fast": CACHE / "records-fast.jsonl",
    "combined": CACHE / "records-combined.jsonl",
}
DEFAULT_OUT = {
    "strict": ROOT / "configs" / "answerability-choice.yaml",
    "fast": ROOT / "configs" / "answerability-fast.yaml",
    "combined": ROOT / "configs" / "answerability-combined.yaml",
}
FAST_MODEL = "data/models/answerability-minilm-v4"


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


def uncalibrated_judge(kind: str, model: str, rerank):
    """The judge with its own defaults (top 3 chunks) and no calibration (scale 1, shift 0)."""
    from stages.models.answerability import (
        AnswerabilitySettings,
        ChoiceAnswerability,
        CombinedAnswerability,
        PairAnswerability,
    )
    from stages.models.yesno import yes_no_model

    if kind in ("fast", "combined"):
        from stages.models import onnx_pairs

        settings = AnswerabilitySettings(kind=kind, model_path=model)
        pairs = PairAnswerability(onnx_pairs.load(ROOT / model), settings)
        if kind == "fast":
            return pairs, settings
        return CombinedAnswerability(pairs, yes_no_model(rerank.llm), settings), settings

    settings = AnswerabilitySettings(kind="strict", strict_mode="choice")
    return ChoiceAnswerability(yes_no_model(rerank.llm), settings), settings


def judge_sample(
    set_dir: Path, store: Path, questions: int, seed: int, records: Path, kind: str, model: str
) -> None:
    from flows.pipeline_config import load_config

    config = load_config(ROOT / "configs" / "pipeline.yaml")
    judge, settings = uncalibrated_judge(kind, model, config.stages["rerank"])
    top = ranked_passages(set_dir, store, settings.top_k)
    lines = (set_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    pool = [json.loads(line) for line in lines if line.strip()]
    wanted = len(pool) if questions <= 0 else min(questions, len(pool))
    sample = random.Random(seed).sample(pool, wanted)
    records.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with records.open("w", encoding="utf-8") as out:
        for number, question in enumerate(sample, 1):
            chunks = top.get(question["question_id"], [])
            record = judged_record(judge, question, chunks)
            out.write(json.dumps(record) + "\n")
            out.flush()
            if number % 50 == 0 or number == len(sample):
                elapsed = time.perf_counter() - started
                print(f"{number}/{len(sample)} {elapsed / number:.2f} s/question", file=sys.stderr)


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
    extra = {}
    if hasattr(judge, "signals"):  # combined: the pair logit and the strict P(yes), apart
        scored, answer, p_yes = judge.signals(question["question"], passages)
        if answer is None:
            return record
        raw, extra = sigmoid(dict(scored)[answer]), {"p_yes": p_yes}
    else:
        judgement = judge.judge(question["question"], passages, [c["confidence"] for c in chunks])
        if judgement.answer is None:
            return record
        answer = judgement.answer
        raw = judgement.probabilities[answer[0]]
    passage, start, end = answer
    sentence = passages[passage][1][start:end]
    right = record["answerable"] and any(g in sentence for g in question["gold_answers"])
    prior = chunks[passage]["confidence"]  # the ranker's, for a fit that combines the two
    return {
        **record,
        "raw": raw,
        "prior": prior,
        **extra,
        "right": bool(right),
        "sentence": sentence,
    }


def features(record: dict, with_prior: bool, with_strict: bool = False) -> list[float]:
    values = [logit(record["raw"])]
    if with_prior:
        values.append(logit(record.get("prior", 0.0)))
    if with_strict:
        values.append(logit(record.get("p_yes", 0.5)))
    return values


def calibrated_probability(
    record: dict, scale: float, shift: float, prior_weight: float, strict_weight: float = 0.0
) -> float:
    """The stage's own formula over a record: `raw` is the judge's uncalibrated probability."""
    return calibrated(
        logit(record["raw"]),
        scale,
        shift,
        prior_weight,
        record.get("prior", 0.0),
        strict_weight,
        record.get("p_yes"),
    )


def fit(
    records: list[dict], with_prior: bool = False, with_strict: bool = False
) -> tuple[float, float, float, float]:
    """(scale, shift, prior_weight, strict_weight) of P(right) = sigmoid(scale * logit(raw) +
    prior_weight * logit(ranker confidence) + strict_weight * logit(P(yes)) + shift); a weight is
    0 unless its feature is asked for."""
    from sklearn.linear_model import LogisticRegression

    x = [features(r, with_prior, with_strict) for r in records]
    y = [int(r["right"]) for r in records]
    model = LogisticRegression(C=1e4).fit(x, y)
    weights = [float(w) for w in model.coef_[0]]
    prior_weight = weights[1] if with_prior else 0.0
    strict_weight = weights[-1] if with_strict else 0.0
    return weights[0], float(model.intercept_[0]), prior_weight, strict_weight


def cross_validated(
    records: list[dict], with_prior: bool, with_strict: bool, low: float, seed: int = 0
) -> dict:
    """2-fold cross-validation: each half scored by the fit on the other half, so the AUC and
    truthfulness printed beside the in-sample ones are not flattered by fitting on them."""
    from sklearn.metrics import roc_auc_score

    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    halves = [order[::2], order[1::2]]
    probabilities = [0.0] * len(records)
    for held, used in ((halves[0], halves[1]), (halves[1], halves[0])):
        weights = fit([records[i] for i in used], with_prior, with_strict)
        for i in held:
            probabilities[i] = calibrated_probability(records[i], *weights)
    right = [r["right"] for r in records]
    answered = [r for r, p in zip(records, probabilities, strict=True) if p >= low]
    correct = sum(r["right"] for r in answered)
    return {
        "cv_auc_right": round(roc_auc_score(right, probabilities), 3),
        "cv_answered": len(answered),
        "cv_truthfulness": round((2 * correct - len(answered)) / len(records), 3),
    }


PAIR_INTROS = {
    "fast": (
        "# The fast answerability judge (stages/models/answerability.py, PairAnswerability):\n"
        "# the project's own cross-encoder in {model}\n"
        "# (model card: README.md there). Include this file after configs/answerability.yaml\n"
        "# in rerank's include: to use it.\n"
    ),
    "combined": (
        "# The combined answerability judge (stages/models/answerability.py,\n"
        "# CombinedAnswerability): the pair model in {model} picks the sentence,\n"
        "# rerank's GGUF judges it (one short forward pass per question). Include this file\n"
        "# after configs/answerability.yaml in rerank's include: to use it.\n"
    ),
}
SKIP_GRID = tuple(round(0.05 * i, 2) for i in range(1, 11))


def skip_below(
    records: list[dict], weights: tuple[float, float, float, float], low: float
) -> float:
    """combined: the largest probability-without-the-GGUF under which skipping the GGUF changes
    no answer/refuse decision on these records (at rerank's low threshold); 0 = always ask."""
    scale, shift, prior_weight, strict_weight = weights
    chosen = 0.0
    for value in SKIP_GRID:
        changed = 0
        for record in records:
            without = calibrated_probability(record, scale, shift, prior_weight)
            full = calibrated_probability(record, scale, shift, prior_weight, strict_weight)
            used = full if without >= value else without
            changed += (used >= low) != (full >= low)
        if changed:
            break
        chosen = value
    return chosen


def summary(
    records: list[dict],
    scale: float,
    shift: float,
    low: float,
    prior_weight: float = 0.0,
    strict_weight: float = 0.0,
) -> dict:
    from sklearn.metrics import roc_auc_score

    from eval.metrics import expected_calibration_error

    probabilities = [
        calibrated_probability(r, scale, shift, prior_weight, strict_weight) for r in records
    ]
    right = [r["right"] for r in records]
    answered = [r for r, p in zip(records, probabilities, strict=True) if p >= low]
    strict = {}
    if any("p_yes" in r for r in records):  # combined: the strict judge alone
        p_yes = [r.get("p_yes", 0.0) for r in records]
        strict = {"auc_right_strict": round(roc_auc_score(right, p_yes), 3)}
    correct = sum(r["right"] for r in answered)
    return {
        "questions": len(records),
        "answerable": sum(r["answerable"] for r in records),
        "auc_answerable": round(
            roc_auc_score([r["answerable"] for r in records], [r["raw"] for r in records]), 3
        ),
        "auc_right": round(roc_auc_score(right, [r["raw"] for r in records]), 3),
        **strict,
        "auc_right_calibrated": round(roc_auc_score(right, probabilities), 3),
        "ece_raw": round(expected_calibration_error([r["raw"] for r in records], right), 3),
        "ece_calibrated": round(expected_calibration_error(probabilities, right), 3),
        "answered_at_low_threshold": len(answered),
        "answered_precision": round(correct / max(len(answered), 1), 3),
        "truthfulness": round((2 * correct - len(answered)) / len(records), 3),
    }


def write_settings(
    out: Path,
    scale: float,
    shift: float,
    report: dict,
    args,
    prior_weight: float = 0.0,
    strict_weight: float = 0.0,
    strict_skip_below: float = 0.0,
) -> None:
    import yaml

    if args.kind in ("fast", "combined"):
        from stages.models.files import file_sha256

        digest = file_sha256(ROOT / args.model / "model.onnx", use_sidecar=False)
        settings = {
            "kind": args.kind,
            "model_path": args.model,
            "model_sha256": digest,
            "top_k": 3,
        }
        intro = PAIR_INTROS[args.kind].format(model=args.model)
    else:
        intro = (
            "# The strict choice judge (stages/models/answerability.py): include this file after\n"
            "# configs/answerability.yaml in rerank's include: to use it (one GGUF forward pass\n"
            "# per question; see configs/answerability.yaml for what it measured on a held-out\n"
            "# slice).\n"
        )
        settings = {
            "kind": "strict",
            "strict_mode": "choice",
            "top_k": 3,
            "choice_sentences": 6,
            "choice_match_weight": 4.0,
        }
    header = intro + (
        "# scale/shift (prior_weight: the ranker's confidence, when fitted with --with-prior):\n"
        "# Platt scaling written by scripts/fit_answerability.py on SQuAD 2.0 dev\n"
        f"# articles {list(CALIBRATION_ARTICLES)} ({report['questions']} questions, seed "
        f"{args.seed}); never the frozen eval slices' articles.\n"
        f"# On that sample: {json.dumps(report)}\n"
    )
    calibration = {"scale": round(scale, 6), "shift": round(shift, 6)}
    if prior_weight:
        calibration["prior_weight"] = round(prior_weight, 6)
    if strict_weight:
        calibration["strict_weight"] = round(strict_weight, 6)
    if strict_skip_below:
        calibration["strict_skip_below"] = strict_skip_below
    body = {"answerability": {**settings, **calibration}}
    out.write_text(header + yaml.safe_dump(body, sort_keys=False), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--squad", type=Path, default=ROOT.parent / "shared/datasets/squad2/dev_articles.json"
    )
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kind", choices=("strict", "fast", "combined"), default="strict")
    parser.add_argument("--model", default=FAST_MODEL, help="fast: the pair model's folder")
    parser.add_argument("--records", type=Path, default=None, help="default: per kind")
    parser.add_argument("--out", type=Path, default=None, help="default: per kind")
    parser.add_argument("--refit", action="store_true", help="reuse --records, no model call")
    parser.add_argument(
        "--with-prior",
        action="store_true",
        help="fast, combined: the ranker's confidence as a feature (prior_weight)",
    )
    args = parser.parse_args(argv)
    args.records = args.records or DEFAULT_RECORDS[args.kind]
    args.out = args.out or DEFAULT_OUT[args.kind]
    if not args.refit:
        if not args.squad.is_file():
            print(f"no SQuAD dev articles at {args.squad}", file=sys.stderr)
            return 2
        set_dir = build_split(args.squad, CACHE / "squad2-calibration")
        judge_sample(
            set_dir, CACHE / "store", args.questions, args.seed, args.records, args.kind, args.model
        )
    lines = args.records.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    with_prior = args.with_prior and args.kind != "strict"
    weights = fit(records, with_prior, args.kind == "combined")
    scale, shift, prior_weight, strict_weight = weights
    from flows.pipeline_config import load_config

    low = load_config(ROOT / "configs" / "pipeline.yaml").stages["rerank"].low_threshold
    report = summary(records, scale, shift, low, prior_weight, strict_weight)
    report.update(cross_validated(records, with_prior, args.kind == "combined", low))
    extra = {"prior_weight": prior_weight, "strict_weight": strict_weight}
    if args.kind == "combined":
        extra["strict_skip_below"] = skip_below(records, weights, low)
        asked = [
            r
            for r in records
            if calibrated_probability(r, *weights[:3]) >= extra["strict_skip_below"]
        ]
        report["gguf_asked"] = len(asked)
    print(json.dumps({"scale": scale, "shift": shift, **extra, **report}))
    write_settings(args.out, scale, shift, report, args, **extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
