"""Replay only the RAGTruth answers a claim-splitting or framing change touches.

A change to `claims` / `framing` alters the verdict of an answer only where it alters the
answer's claims (their text or kind). So a before/after on all answers needs the judge only on
those: dump every answer's claims with each code tree (`kinds`), list the answers that differ
(`diff`), and check just those with each tree (`check`, the bench's own `check_item` with the
bench's config and judge cache). Response-level counts of the full run before, plus the changes
on these answers, give the full run after, without asking the GGUF for 300 answers.

Usage (run each step with PYTHONPATH set to the code tree it measures):
  python scripts/framing_delta.py kinds --out /tmp/kinds-before.json      # old tree
  python scripts/framing_delta.py kinds --out /tmp/kinds-after.json       # new tree
  python scripts/framing_delta.py diff /tmp/kinds-before.json /tmp/kinds-after.json \
      --out /tmp/changed.json
  python scripts/framing_delta.py check --ids /tmp/changed.json --out /tmp/flags-after.json \
      [--guardrails-config configs/guardrails-fast-v2.yaml]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT.parent / "shared" / "datasets"


def _records(data: str) -> list[dict]:
    from bench import ragtruth

    folder, file = ragtruth.DATA[data]
    return ragtruth.load(DATASETS / folder, "all", None, file=file)


def kinds(data: str) -> dict[str, list[list[str]]]:
    from stages.guardrails import claims

    return {
        r["id"]: [[c.text, c.kind] for c in claims.decompose(r["answer"])] for r in _records(data)
    }


def check(data: str, ids: set[str], config_file: Path | None) -> dict[str, dict]:
    from bench import ragtruth
    from stages import guardrails

    overrides = ragtruth.with_config_file(None, config_file)
    config = guardrails.Config.model_validate(
        {**ragtruth._pipeline_guardrails(), **ragtruth.guardrails_settings(overrides)}
    )
    toolkit = guardrails.Toolkit(config)
    out = {}
    for record in _records(data):
        if record["id"] in ids:
            item, _ = ragtruth.check_item(record, toolkit, ragtruth.split_of(record["source_id"]))
            out[record["id"]] = {
                k: item[k] for k in ("hallucinated", "flagged", "action", "reasons", "judge_calls")
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    k = sub.add_parser("kinds", help="every answer's claims (text, kind) with this code tree")
    k.add_argument("--out", type=Path, required=True)
    d = sub.add_parser("diff", help="ids of the answers whose claims differ")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    d.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("check", help="check the listed answers with this code tree")
    c.add_argument("--ids", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--guardrails-config", type=Path, default=None)
    for p in (k, c):
        p.add_argument("--data", choices=("dev", "train"), default="dev")
    args = parser.parse_args()
    if args.command == "kinds":
        args.out.write_text(json.dumps(kinds(args.data)))
    elif args.command == "diff":
        before = json.loads(args.before.read_text())
        after = json.loads(args.after.read_text())
        changed = sorted(i for i in before if before[i] != after.get(i))
        args.out.write_text(json.dumps(changed))
        print(f"{len(changed)} of {len(before)} answers have other claims")
    else:
        ids = set(json.loads(args.ids.read_text()))
        result = check(args.data, ids, args.guardrails_config)
        args.out.write_text(json.dumps(result, indent=1))
        for i, row in result.items():
            print(i, row)


if __name__ == "__main__":
    main()
