"""Fit `lexical_weight` with the answer line on the RAGTruth QA FIT split.

A judged claim of a floor_mean answer can blend the judge's P(yes) with the share of its content
words the evidence holds (`stages.guardrails.verify`, `Config.lexical_weight`). For each weight,
`python -m bench.ragtruth --split fit` is run in process (judge verdicts cached: no model call
once the cache holds them); the gate is replayed over its claim rows for each answer line (an
answer is flagged when a scored claim is below the line, which is what floor_mean with
claim_floor >= answer_threshold does; the gate's other causes, such as a copied answer that
does not answer, are left out of the replay, so its F1 runs a little above the bench's).
Chosen: the best response-level F1 among the settings that flag at least `--min-recall` of the
hallucinated answers (ties: smaller weight, higher line);
the claim-level AUC of each weight is reported beside it (a claim is unsupported when it overlaps
a labelled hallucinated span). `--report` then measures the chosen setting and the configured one
on the REPORT split, once, and writes both beside the fit. `--base FILE`: every run (the
configured one too) starts from that YAML's guardrails settings, e.g. the opt-in fast judge.

Usage:
  python scripts/fit_lexical_weight.py [--report] [--base configs/guardrails-fast.yaml]
      [--out bench/results/ragtruth-lexical-weight.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
LINES = tuple(round(0.3 + 0.025 * i, 3) for i in range(23))  # 0.3 … 0.85
OUT = ROOT / "bench" / "results" / "ragtruth-lexical-weight.json"


def bench_run(split: str, settings: dict) -> tuple[dict, list[dict]]:
    """One bench run over `split` with these guardrails settings: its response-level figures
    and every claim row."""
    from bench import ragtruth

    with tempfile.TemporaryDirectory() as results:
        outcome = ragtruth.run(Path(results), {"guardrails": settings}, split=split, speed=False)
    with ragtruth.CLAIM_ROWS.open(encoding="utf-8") as rows:
        return outcome["splits"][split]["response"], [json.loads(line) for line in rows]


def replay(rows: list[dict], line: float) -> dict:
    """The bench's response-level figures (`bench.ragtruth.response_metrics`) when an answer is
    flagged for a scored claim below `line`."""
    from bench import ragtruth

    answers: dict[str, list[dict]] = collections.defaultdict(list)
    for row in rows:
        answers[row["id"]].append(row)
    items = []
    for claims in answers.values():
        scores = [
            c["score"] for c in claims if c["score"] is not None and c["status"] != "not_a_claim"
        ]
        flagged = bool(scores) and min(scores) < line
        items.append({"hallucinated": claims[0]["response_hallucinated"], "flagged": flagged})
    return ragtruth.response_metrics(items)


def claim_auc(rows: list[dict]) -> float | None:
    from bench.paraphrase import auc

    judged = [r for r in rows if r["judge"] == "llm" and r["score"] is not None]
    labels = [not (r["label_overlap"] or 0) > 0.3 for r in judged]
    return auc([r["score"] for r in judged], labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-recall", type=float, default=0.8)
    parser.add_argument("--report", action="store_true", help="then measure on the REPORT split")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--base", type=Path, help="YAML of guardrails settings under every run")
    args = parser.parse_args()
    base = {}
    if args.base:
        import yaml

        base = yaml.safe_load(args.base.read_text(encoding="utf-8")) or {}

    sweep, aucs = [], {}
    for weight in WEIGHTS:
        _, rows = bench_run("fit", {**base, "lexical_weight": weight})
        aucs[str(weight)] = claim_auc(rows)
        sweep += [{"weight": weight, "line": line, **replay(rows, line)} for line in LINES]
    allowed = [s for s in sweep if s["recall"] >= args.min_recall]
    best = min(allowed, key=lambda s: (-s["f1"], s["weight"], -s["line"]))
    result: dict = {
        "split": "fit",
        "base": str(args.base) if args.base else None,
        "criterion": f"best F1 with recall >= {args.min_recall}; ties: smaller weight, higher line",
        "claim_auc_by_weight": aucs,
        "chosen": best,
        "judge_alone_best": max(
            (s for s in allowed if s["weight"] == 0.0), key=lambda s: s["f1"], default=None
        ),
        "sweep": sweep,
    }
    if args.report:
        chosen = {"lexical_weight": best["weight"], "answer_threshold": best["line"]}
        report = {}
        for name, settings in (("configured", {}), ("chosen", chosen)):
            # the whole gate, not a replay
            response, rows = bench_run("report", {**base, **settings})
            report[name] = {**settings, **response, "claim_auc": claim_auc(rows)}
        result["report"] = report
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "sweep"}, indent=2))


if __name__ == "__main__":
    main()
