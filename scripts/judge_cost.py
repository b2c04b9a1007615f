"""What one judge call costs, and where the time goes ("cost per claim sent to the
judge").

Asks the configured GGUF judge (configs/guardrails.yaml) the guardrails' own prompt, as the stage
builds it (`judge.focus`, `judge.user_prompt`), on short-answer pairs of SQuAD 2.0 train articles
6-10 (../shared/datasets/squad2/train_first10_articles.json), uncached, one after another, and
reports llama.cpp's own timings per call: prompt tokens read (`prompt_n`), tokens reused from the
cached system prompt (`cache_n`), prompt tokens per second, and wall seconds. Run it on a quiet
machine; it writes bench/results/judge_cost.json.

Each pair's evidence is a whole SQuAD paragraph, so nearly every prompt carries the full
`judge_focus_words` of evidence: the costliest judgement the stage makes. The pipeline's own
evidence spans are shorter (about 30 words on the squad slices); `python -m bench llm_answers`
reports the judgements a real run made (`judge_calls`).

Usage:
  python scripts/judge_cost.py [--calls 30] [--seed 3] [--focus-words N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from scripts.fit_short_answer_threshold import TRAIN, pairs  # noqa: E402

RESULT = ROOT / "bench" / "results" / "judge_cost.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument(
        "--focus-words", type=int, help="evidence words per judgement (default: the config's)"
    )
    args = parser.parse_args(argv)
    from flows.pipeline_config import load_config
    from stages.guardrails import judge
    from stages.models import yesno

    config = load_config(ROOT / "configs" / "pipeline.yaml").stage_config("guardrails")
    if args.focus_words:
        config = config.model_copy(update={"judge_focus_words": args.focus_words})
    model = yesno.yes_no_model(config.llm)
    server = model._ready()
    articles = json.loads(TRAIN.read_text())["data"][5:]
    items = pairs(articles, args.calls, config.short_answer_words, random.Random(args.seed))
    random.Random(args.seed).shuffle(items)
    calls = []
    load_before = os.getloadavg()[0]
    for item in items[: args.calls]:
        spans = judge.focus(
            item["answer"], [item["span"]], item["question"], config.judge_focus_words
        )
        prompt = yesno.chatml(
            judge.SYSTEM_PROMPT, judge.user_prompt(item["answer"], spans, item["question"])
        )
        request = {
            "prompt": prompt,
            "max_tokens": 1,
            "n_probs": yesno.TOP_TOKENS,
            "temperature": 0.0,
            "cache_prompt": True,
        }
        started = time.perf_counter()
        timings = server.handle_completions(request).get("timings", {})
        calls.append(
            {
                "wall_s": round(time.perf_counter() - started, 3),
                "prompt_tokens_read": timings.get("prompt_n"),
                "prompt_tokens_reused": timings.get("cache_n"),
                "prompt_tokens_per_s": round(timings.get("prompt_per_second") or 0.0, 1),
            }
        )
    warm = calls[1:]  # the first call also reads the system prompt
    result = {
        "model": model.model_id,
        "judge_focus_words": config.judge_focus_words,
        "calls": len(calls),
        "first_call_s": calls[0]["wall_s"],
        "mean_s_after_first": round(statistics.mean(c["wall_s"] for c in warm), 3),
        "median_s_after_first": round(statistics.median(c["wall_s"] for c in warm), 3),
        "mean_prompt_tokens_read": round(statistics.mean(c["prompt_tokens_read"] for c in warm), 1),
        "system_prompt_tokens_reused": warm[0]["prompt_tokens_reused"],
        "prompt_tokens_per_s": round(statistics.median(c["prompt_tokens_per_s"] for c in warm), 1),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "cpu_count": os.cpu_count(),
        "per_call": calls,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "per_call"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
