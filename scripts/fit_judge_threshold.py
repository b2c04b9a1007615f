"""Choose the guardrails' `judge_threshold` on two fit splits and report it on their held-out
halves.

The judge's P(yes) counts as full support at `judge_threshold` (support = P / threshold, capped
at 1; the gate emits at `emit_threshold`, 0.85, of it). Two kinds of claim pull it apart:

- HaluEval QA (`../shared/datasets/halueval_qa`): right vs hallucinated answers, mostly copied
  from their knowledge; fit on records 1-100, reported on 101-500 (`bench/halueval.py`);
- the project's paraphrase pairs (`eval/sets/paraphrase-pairs-v1`, built by
  `scripts/build_paraphrase_pairs.py`): supported paraphrases vs unsupported edits; fit on the
  dev split, reported on test (`bench/paraphrase.py`).

Rule, HaluEval first (blocking hallucinated answers is the gate's job; the gate keeps HaluEval at
>= 96 %): among the thresholds (0.50 … 1.00 by 0.05) whose HaluEval 1-100 accuracy is the best
one, the best paraphrase-dev balanced accuracy; ties: the highest. The mean of the two fit
figures is reported beside it (`best_mean`): it trades HaluEval accuracy for paraphrases. The
judge is the configured one with the benches' own caches
(`bench/.cache/{halueval,paraphrase}_judge`), so after `python -m bench halueval paraphrase`
this makes no model call.

Usage: python scripts/fit_judge_threshold.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "bench" / "results" / "judge_threshold.json"
GRID = [round(0.05 * k, 2) for k in range(10, 21)]


def items() -> tuple[list[dict], list[dict], object, object]:
    from bench import common, halueval, paraphrase
    from eval.paraphrase_pairs import load_pairs
    from stages import guardrails

    base = common.pipeline_settings("guardrails")
    configs = {
        name: guardrails.Config.model_validate(
            {**base, "judge_cache_dir": str(common.CACHE / f"{name}_judge")}
        )
        for name in ("paraphrase", "halueval")
    }
    toolkit = guardrails.Toolkit(configs["paraphrase"])
    pairs = [paraphrase.check_pair(p, configs["paraphrase"], toolkit, True) for p in load_pairs()]
    toolkit = guardrails.Toolkit(configs["halueval"])
    answers = []
    folder = common.dataset_dir("halueval_qa", halueval.FILES)
    for index, record in enumerate(halueval.load(folder, None)):
        for answer, hallucinated in ((record["right_answer"], False),
                                     (record["hallucinated_answer"], True)):  # fmt: skip
            item = halueval.check_answer(record, answer, configs["halueval"], toolkit)
            answers.append({"record": index, "hallucinated": hallucinated, **item})
    return pairs, answers, configs["paraphrase"], configs["halueval"]


def main(argv: list[str] | None = None) -> int:
    from bench import halueval, paraphrase

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args(argv)
    pairs, answers, pair_config, halu_config = items()
    fit_records = [a for a in answers if a["record"] < halueval.CALIBRATION_RECORDS]
    held_records = [a for a in answers if a["record"] >= halueval.CALIBRATION_RECORDS]
    rows = []
    for threshold in GRID:

        def pair_figures(split: str, t: float = threshold) -> dict:
            chosen = [p for p in pairs if p["split"] == split]
            return paraphrase.balanced(paraphrase.flagged(chosen, pair_config, t))

        def halu_figures(group: list[dict], t: float = threshold) -> dict:
            return halueval.metrics(halueval.scored_items(group, halu_config, t))

        dev, fit = pair_figures("dev"), halu_figures(fit_records)
        rows.append(
            {
                "threshold": threshold,
                "fit_mean": round((dev["balanced_accuracy"] + fit["accuracy"]) / 2, 4),
                "paraphrase_dev": dev,
                "halueval_1_100": fit,
                "paraphrase_test": pair_figures("test"),
                "halueval_101_500": halu_figures(held_records),
            }
        )
    top = max(r["halueval_1_100"]["accuracy"] for r in rows)
    allowed = [r for r in rows if r["halueval_1_100"]["accuracy"] == top]
    best = max(allowed, key=lambda r: (r["paraphrase_dev"]["balanced_accuracy"], r["threshold"]))
    best_mean = max(rows, key=lambda r: (r["fit_mean"], r["threshold"]))
    result = {
        "chosen": best["threshold"],
        "rule": "among the thresholds with the best HaluEval 1-100 accuracy, the best "
        "paraphrase-dev balanced accuracy; ties: the highest",
        "best_mean": best_mean["threshold"],
        "grid": rows,
    }
    RESULT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for r in rows:
        print(
            f"{r['threshold']:.2f}  fit {r['fit_mean']:.4f}  held out: HaluEval "
            f"{r['halueval_101_500']['accuracy']:.4f}, paraphrase balanced accuracy "
            f"{r['paraphrase_test']['balanced_accuracy']:.4f}"
        )
    print(f"chosen {best['threshold']} (best mean: {best_mean['threshold']}) -> {RESULT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
