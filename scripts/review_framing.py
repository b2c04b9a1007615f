"""Which claims of CORRECT RAGTruth QA train answers fail the deterministic checks, and why.

Reads only the train split (`../shared/datasets/ragtruth_qa_train/`): every answer labelled
correct (no hallucinated span) is decomposed (`claims.decompose`), framing and refusals told
apart (`framing.kind_of`), and every claim run through the deterministic checks against all of
its answer's passages, with the question as context. No model judge is called. Writes one row
per failing claim (answer id, claim, kind, failing checks with reasons) and a count per check.

Usage:
  python scripts/review_framing.py [--out .cache/framing-review.jsonl] [--limit N]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT.parent / "shared" / "datasets"


def review(limit: int = 0) -> tuple[list[dict], dict]:
    from bench import ragtruth
    from stages.guardrails import claims, framing, groundedness

    folder, file = ragtruth.DATA["train"]
    records = ragtruth.load(DATASETS / folder, "all", limit or None, file=file)
    rows: list[dict] = []
    counts: collections.Counter = collections.Counter()
    for record in records:
        if record["label"] != "correct":
            continue
        counts["correct answers"] += 1
        spans = [e["text"] for e in record["evidence"].values()]
        for claim in claims.decompose(record["answer"]):
            kind = framing.kind_of(claim.text) if claim.kind == "claim" else claim.kind
            counts[f"kind {kind}"] += 1
            if kind != "claim":
                continue
            results = groundedness.deterministic_checks(
                claim.text, spans, context=record["question"]
            )
            failed = [r for r in results if r.score < 0.999 and r.name != "lexical"]
            lexical = next(r.score for r in results if r.name == "lexical")
            if not failed and lexical >= 0.5:
                continue
            for r in failed:
                counts[f"fails {r.name}"] += 1
            if lexical < 0.5:
                counts["lexical < 0.5"] += 1
            rows.append(
                {
                    "id": record["id"],
                    "question": record["question"],
                    "claim": claim.text,
                    "lexical": round(lexical, 2),
                    "failed": {r.name: r.reasons for r in failed},
                }
            )
    return rows, dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "framing-review.jsonl")
    parser.add_argument("--limit", type=int, default=0, help="first N train answers only")
    args = parser.parse_args()
    rows, counts = review(args.limit)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(json.dumps(counts, indent=1))
    print(f"{len(rows)} failing claims written to {args.out}")


if __name__ == "__main__":
    main()
