"""Choose the guardrails' `short_answer_threshold` (or, with `--kind sentence`,
`answer_sentence_threshold`) on SQuAD 2.0 train articles, and report it on others.

An LLM's short answer ("Sybilla of Normandy", "1685") that occurs verbatim in its span goes to the
entailment judge as a proposed answer to the question (stages/guardrails, `short_answer_words`).
The judge's P(yes) in that framing is lower than for whole claims, so it gets its own threshold:
P(yes) at or above it counts as fully supported, and the gate emits at `emit_threshold` (0.85) of
it, as for `judge_threshold`.

Pairs, from ../shared/datasets/squad2/train_first10_articles.json only (training data; no eval
set uses these articles; never the frozen slices, SciFact or the sample):
- right: an answerable question, its first gold answer, its paragraph;
- wrong: an unanswerable question, SQuAD's "plausible answer" (a phrase of the paragraph written
  to look like the answer, which is what an LLM answering it tends to copy), its paragraph.
Only answers of at most `short_answer_words` words, as at run time. The judge is the configured
one (configs/guardrails.yaml), called exactly as the stage calls it, uncached.

`--kind sentence` fits the threshold for an LLM answer that copies a sentence of its evidence
word for word: verbatim, so supported, but is it an answer to *this* question? Right: the
paragraph's sentence holding an answerable question's gold answer; wrong: the sentence holding an
unanswerable question's plausible answer (a sentence that almost answers it, which is what the
LLM copied in the bench's missed wrong answers). Sentences longer than `short_answer_words`.

Split by article: the threshold maximising balanced accuracy (right emitted, wrong not) on
articles 1-5 is chosen; the held-out figure is on articles 6-10. The end-to-end effect is
`python -m bench llm_answers` on the frozen squad2-dev-v1 slice.

Usage:
  python scripts/fit_short_answer_threshold.py [--kind short|sentence] [--pairs 40] [--seed 12]
                                               [--write]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TRAIN = ROOT.parent / "shared" / "datasets" / "squad2" / "train_first10_articles.json"
CONFIG = ROOT / "configs" / "guardrails.yaml"
RESULTS = {
    "short": ROOT / "bench" / "results" / "short_answer_threshold.json",
    "sentence": ROOT / "bench" / "results" / "answer_sentence_threshold.json",
}
CONFIG_KEYS = {"short": "short_answer_threshold", "sentence": "answer_sentence_threshold"}
GRID = [round(0.30 + 0.05 * i, 2) for i in range(14)]  # 0.30 … 0.95


def answer_sentence(context: str, answer: dict) -> str | None:
    """The sentence of `context` that holds the answer's character offset."""
    from stages.common.text import sentence_spans

    start = answer.get("answer_start")
    if start is None:
        return None
    for begin, end in sentence_spans(context):
        if begin <= start < end:
            return context[begin:end].strip()
    return None


def pairs(
    articles: list[dict], per_kind: int, max_words: int, rng: random.Random, kind: str = "short"
) -> list[dict]:
    right, wrong = [], []
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = qa.get("plausible_answers") if qa["is_impossible"] else qa["answers"]
                if not answers:
                    continue
                if kind == "sentence":
                    text = answer_sentence(paragraph["context"], answers[0])
                    if not text or len(text.split()) <= max_words:
                        continue
                elif len(answers[0]["text"].split()) > max_words:
                    continue
                else:
                    text = answers[0]["text"]
                pair = {
                    "article": article["title"],
                    "question": qa["question"],
                    "answer": text,
                    "span": paragraph["context"],
                    "sentence": answer_sentence(paragraph["context"], answers[0]),
                    "right": not qa["is_impossible"],
                }
                (right if pair["right"] else wrong).append(pair)
    return rng.sample(right, min(per_kind, len(right))) + rng.sample(
        wrong, min(per_kind, len(wrong))
    )


def judged(items: list[dict], judge) -> list[dict]:
    for number, item in enumerate(items, start=1):
        started = time.perf_counter()
        item["p_yes"] = judge.judge(item["answer"], [item["span"]], item["question"]).score
        item["seconds"] = round(time.perf_counter() - started, 2)
        print(f"{number}/{len(items)} p={item['p_yes']:.3f} right={item['right']}", flush=True)
    return items


def emitted(item: dict, threshold: float, emit: float) -> bool:
    """The gate's decision for a one-claim answer: support = P(yes) / threshold, capped at 1."""
    return min(1.0, item["p_yes"] / threshold) >= emit


def rates(items: list[dict], threshold: float, emit: float) -> dict[str, float]:
    right = [i for i in items if i["right"]]
    wrong = [i for i in items if not i["right"]]
    right_emitted = sum(emitted(i, threshold, emit) for i in right) / max(len(right), 1)
    wrong_emitted = sum(emitted(i, threshold, emit) for i in wrong) / max(len(wrong), 1)
    return {
        "balanced_accuracy": round((right_emitted + 1 - wrong_emitted) / 2, 4),
        "right_answers_emitted": round(right_emitted, 4),
        "wrong_answers_emitted": round(wrong_emitted, 4),
        "pairs": len(items),
    }


def write_config(key: str, threshold: float, note: str) -> None:
    text = CONFIG.read_text()
    line = f"{key}: {threshold}   # {note}\n"
    pattern = re.compile(rf"^{key}:.*\n", re.MULTILINE)
    if not pattern.search(text):
        raise SystemExit(f"{CONFIG} has no {key} line to update")
    CONFIG.write_text(pattern.sub(line, text))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=40, help="right and wrong pairs per split")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--kind", choices=sorted(RESULTS), default="short")
    parser.add_argument("--write", action="store_true", help="update configs/guardrails.yaml")
    args = parser.parse_args(argv)
    if not TRAIN.is_file():
        raise SystemExit(f"{TRAIN} is missing (../shared/datasets)")
    from flows.pipeline_config import load_config
    from stages import guardrails

    settings = load_config(ROOT / "configs" / "pipeline.yaml")
    config = settings.stage_config("guardrails").model_copy(update={"judge_cache_dir": None})
    judge = guardrails.make_judge(config)
    articles = json.loads(TRAIN.read_text())["data"]
    rng = random.Random(args.seed)
    words = config.short_answer_words
    fit = judged(pairs(articles[:5], args.pairs, words, rng, args.kind), judge)
    held_out = judged(pairs(articles[5:], args.pairs, words, rng, args.kind), judge)
    emit = config.emit_threshold
    scores = {t: rates(fit, t, emit)["balanced_accuracy"] for t in GRID}
    best = max(GRID, key=lambda t: (scores[t], t))  # ties: the stricter threshold
    result = {
        "kind": args.kind,
        "config_key": CONFIG_KEYS[args.kind],
        "chosen_threshold": best,
        "emit_threshold": emit,
        "fit_articles": [a["title"] for a in articles[:5]],
        "held_out_articles": [a["title"] for a in articles[5:]],
        "fit": rates(fit, best, emit),
        "held_out": rates(held_out, best, emit),
        "held_out_at_judge_threshold": rates(held_out, config.judge_threshold, emit),
        "grid_balanced_accuracy_on_fit": {str(t): score for t, score in scores.items()},
        "seconds_per_judgement": round(
            sum(i["seconds"] for i in fit + held_out) / len(fit + held_out), 2
        ),
        "seed": args.seed,
        "records": fit + held_out,
    }
    RESULTS[args.kind].write_text(json.dumps(result, indent=1) + "\n")
    summary = {k: v for k, v in result.items() if k != "records"}
    print(json.dumps(summary, indent=1))
    if args.write:
        held = result["held_out"]["balanced_accuracy"]
        write_config(
            CONFIG_KEYS[args.kind],
            best,
            f"scripts/fit_short_answer_threshold.py --kind {args.kind}: SQuAD train articles "
            f"1-5, held-out balanced accuracy {held} on 6-10",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
