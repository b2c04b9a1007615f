"""Fit the guardrails' `short_answer_signals` and the `short_answer_threshold` that goes with them.

An LLM's short answer ("The Portuguese", "1685") goes to the judge as a proposed answer to its
question (stages/guardrails, route `short_answer`). Alone, the judge's P(yes) tells right short
answers from near misses with AUC 0.83-0.84. stages/guardrails/short_answers.py adds two more
signals, and this script fits their logistic combination:

1. logit of the judge's P(yes) for the short answer, its sentence as the evidence (the
   pipeline's evidence items are sentences);
2. logit of the judge's P(yes) for the whole sentence as the answer to the question;
3. the pair model's logit for (question, sentence) (`onnx_pairs.sentence_logit`).

Pairs: the answerability calibration split, SQuAD 2.0 dev articles Imperialism and
French_and_Indian_War from ../shared/datasets/squad2/dev_articles.json. The pair model never
trained on them, and no frozen eval slice holds them (never the frozen slices' articles, SciFact
or the sample). Right: an answerable question, its first gold answer; wrong: an unanswerable
question, SQuAD's "plausible answer" (written to look like the answer: what an LLM answering it
copies). Answers of at most `short_answer_words` words, as at run time.

The threshold (the gate emits when min(1, p / threshold) >= emit_threshold) is chosen so that
no more wrong short answers pass than pass today, with the judge alone at
`--reference-threshold` (0.8, the threshold these signals replace): the gain goes to right
answers, never to wrong ones (`--criterion balanced` takes the best balanced accuracy instead).

Held out by article: the weights and the threshold are fitted on one article and reported on
the other, both ways, beside the judge alone at the reference threshold. The configuration
written (`--write`) is fitted on both articles; its end-to-end effect is `python -m bench
llm_answers` on the frozen squad2-dev-v1 slice and sample-v1.

Usage:
  python scripts/fit_short_answer_signals.py [--pairs 1000] [--seed 5] [--judge-cache DIR]
      [--criterion no-more-wrong|balanced] [--reference-threshold 0.8] [--write]
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

from scripts.compare_answer_prompts import auc  # noqa: E402
from scripts.fit_short_answer_threshold import CONFIG, GRID, rates  # noqa: E402
from scripts.fit_short_answer_threshold import pairs as short_pairs  # noqa: E402

DEV = ROOT.parent / "shared" / "datasets" / "squad2" / "dev_articles.json"
ARTICLES = ("Imperialism", "French_and_Indian_War")
PAIR_MODEL = "data/models/answerability-minilm-v4"
RESULT = ROOT / "bench" / "results" / "short_answer_signals.json"
FINE_GRID = [round(0.20 + 0.01 * i, 2) for i in range(76)]  # 0.20 … 0.95


def pairs(articles: list[dict], per_kind: int, max_words: int, rng: random.Random) -> list[dict]:
    """Up to `per_kind` right and `per_kind` wrong short answers per article, each with the
    sentence that holds it (the evidence at run time), not its paragraph."""
    items = []
    for article in articles:
        drawn = short_pairs([article], per_kind, max_words, rng)
        items += [{k: v for k, v in i.items() if k != "span"} for i in drawn if i["sentence"]]
    return items


def signals(items: list[dict], judge, scorer) -> list[dict]:
    from stages.models.onnx_pairs import sentence_logit

    for number, item in enumerate(items, start=1):
        started = time.perf_counter()
        sentence, question = item["sentence"], item["question"]
        item["p_answer"] = judge.judge(item["answer"], [sentence], question).score
        item["p_sentence"] = judge.judge(sentence, [sentence], question).score
        title = item["article"].replace("_", " ")
        item["pair_logit"] = sentence_logit(scorer, question, sentence, title)
        item["seconds"] = round(time.perf_counter() - started, 2)
        if number % 25 == 0 or number == len(items):
            print(f"{number}/{len(items)} signals", flush=True)
    return items


def features(item: dict) -> list[float]:
    from stages.guardrails.short_answers import logit

    return [logit(item["p_answer"]), logit(item["p_sentence"]), item["pair_logit"]]


def fit(items: list[dict]) -> dict[str, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit([features(i) for i in items], [i["right"] for i in items])
    weights = [round(float(w), 6) for w in model.coef_[0]]
    return {
        "answer_weight": weights[0],
        "sentence_weight": weights[1],
        "pair_weight": weights[2],
        "bias": round(float(model.intercept_[0]), 6),
    }


def scored(items: list[dict], weights: dict[str, float]) -> list[dict]:
    """Items with "p_yes": their combined probability (the key `rates` reads)."""
    from stages.guardrails.short_answers import ShortAnswerSignals, combined

    signals_ = ShortAnswerSignals(**weights)
    return [
        {**i, "p_yes": combined(signals_, i["p_answer"], i["p_sentence"], i["pair_logit"])}
        for i in items
    ]


def best_threshold(items: list[dict], emit: float) -> float:
    accuracy = {t: rates(items, t, emit)["balanced_accuracy"] for t in GRID}
    return max(GRID, key=lambda t: (accuracy[t], t))  # ties: the stricter threshold


def judge_alone(items: list[dict]) -> list[dict]:
    return [{**i, "p_yes": i["p_answer"]} for i in items]


def threshold_for(
    combined_items: list[dict], items: list[dict], emit: float, criterion: str, reference: float
) -> float:
    """`balanced`: the best balanced accuracy; `no-more-wrong`: the most permissive threshold
    that lets no larger share of wrong answers through than the judge alone at `reference`."""
    if criterion == "balanced":
        return best_threshold(combined_items, emit)
    allowed = rates(judge_alone(items), reference, emit)["wrong_answers_emitted"]
    within = [
        t for t in FINE_GRID if rates(combined_items, t, emit)["wrong_answers_emitted"] <= allowed
    ]
    return min(within, default=FINE_GRID[-1])


def held_out(items: list[dict], emit: float, criterion: str, reference: float) -> dict[str, dict]:
    """Fitted on one article, reported on the other."""
    report = {}
    for test in ARTICLES:
        train = [i for i in items if i["article"] != test]
        tested = [i for i in items if i["article"] == test]
        weights = fit(train)
        threshold = threshold_for(scored(train, weights), train, emit, criterion, reference)
        combined_test = scored(tested, weights)
        report[test] = {
            "pairs": len(tested),
            "fitted_on": sorted({i["article"] for i in train}),
            "weights": weights,
            "threshold": threshold,
            "auc_combined": auc(combined_test, "p_yes"),
            "auc_judge_alone": auc(tested, "p_answer"),
            "auc_sentence_alone": auc(tested, "p_sentence"),
            "auc_pair_alone": auc(tested, "pair_logit"),
            "combined": rates(combined_test, threshold, emit),
            "judge_alone_at_reference": rates(judge_alone(tested), reference, emit),
        }
    return report


def write_config(weights: dict[str, float], threshold: float, note: str) -> None:
    text = CONFIG.read_text()
    block = (
        "short_answer_signals: {"
        + ", ".join(f"{k}: {v}" for k, v in weights.items())
        + f", pair_model_path: {PAIR_MODEL}, pair_model_sha256: {pair_sha256()}}}\n"
    )
    threshold_line = f"short_answer_threshold: {threshold}   # {note}\n"
    for key, line in (("short_answer_threshold", threshold_line), ("short_answer_signals", block)):
        pattern = re.compile(rf"^{key}:.*\n", re.MULTILINE)
        if pattern.search(text):
            text = pattern.sub(lambda _, line=line: line, text)
        elif key == "short_answer_signals":
            text = text.replace(threshold_line, threshold_line + line)
        else:
            raise SystemExit(f"{CONFIG} has no {key} line to update")
    CONFIG.write_text(text)


def pair_sha256() -> str:
    return (ROOT / PAIR_MODEL / "model.onnx.sha256").read_text().split()[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=1000, help="right and wrong per article")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--judge-cache", default=None, help="reuse verdicts (default: uncached)")
    parser.add_argument(
        "--criterion", choices=("no-more-wrong", "balanced"), default="no-more-wrong"
    )
    parser.add_argument("--reference-threshold", type=float, default=0.8)
    parser.add_argument("--write", action="store_true", help="update configs/guardrails.yaml")
    args = parser.parse_args(argv)
    if not DEV.is_file():
        raise SystemExit(f"{DEV} is missing (../shared/datasets)")
    from flows.pipeline_config import load_config
    from stages import guardrails
    from stages.models import onnx_pairs

    config = load_config(ROOT / "configs" / "pipeline.yaml").stage_config("guardrails")
    config = config.model_copy(update={"judge_cache_dir": args.judge_cache})
    judge = guardrails.make_judge(config)
    scorer = onnx_pairs.load(ROOT / PAIR_MODEL)
    articles = [a for a in json.loads(DEV.read_text())["data"] if a["title"] in ARTICLES]
    items = pairs(articles, args.pairs, config.short_answer_words, random.Random(args.seed))
    items = signals(items, judge, scorer)
    emit = config.emit_threshold
    weights = fit(items)
    criterion, reference = args.criterion, args.reference_threshold
    threshold = threshold_for(scored(items, weights), items, emit, criterion, reference)
    report = held_out(items, emit, criterion, reference)
    result = {
        "kind": "combined",
        "articles": list(ARTICLES),
        "pairs": len(items),
        "right": sum(i["right"] for i in items),
        "pair_model": PAIR_MODEL,
        "weights": weights,
        "threshold": threshold,
        "criterion": criterion,
        "reference_threshold": reference,
        "emit_threshold": emit,
        "on_both_articles": rates(scored(items, weights), threshold, emit),
        "judge_alone_at_reference_on_both": rates(judge_alone(items), reference, emit),
        "held_out_by_article": report,
        "seconds_per_pair": round(sum(i["seconds"] for i in items) / max(len(items), 1), 2),
        "seed": args.seed,
        "records": items,
    }
    RESULT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "records"}, indent=1))
    if args.write:
        held = {a: r["combined"]["balanced_accuracy"] for a, r in report.items()}
        write_config(
            weights,
            threshold,
            "of short_answer_signals' combined probability; scripts/fit_short_answer_signals.py "
            f"on SQuAD dev articles {', '.join(ARTICLES)}; held-out balanced accuracy by article "
            + ", ".join(f"{a} {v}" for a, v in held.items()),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
