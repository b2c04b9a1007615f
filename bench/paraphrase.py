"""Paraphrase pairs: does the per-claim verdict tell a faithful paraphrase from a changed fact?

HaluEval's right answers mostly copy the knowledge word for word; an LLM generator paraphrases.
On the pair set of `eval/paraphrase_pairs.py` (SQuAD 2.0 train sentences rewritten by templates;
unsupported = one fact changed, or a sentence of another paragraph; balanced, dev and test split
by article) each claim goes through the stage's own per-claim code (`verify_claim`, `decide`):
deterministic checks, normalised verbatim match, lexical pre-filter, then the judge with the
question and the evidence. "Flagged" = the gate would not emit a one-claim answer.

Reported: balanced accuracy of flagging (configured `judge_threshold`, and the threshold chosen
on the dev split, reported on the test split), the judge's AUC when asked directly on every pair,
how each claim was routed, the pre-filter's effect (what the judge would have said of the claims
it skipped), the seconds per uncached judge call, and the supported claims still flagged.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "paraphrase"
DESCRIPTION = "Paraphrase claim/evidence pairs: balanced accuracy of the verdict, judge AUC, s/call"
TARGET_BALANCED_ACCURACY = 0.75
TARGET_SECONDS_PER_JUDGE_CALL = 1.5


def auc(scores: list[float], labels: list[bool]) -> float | None:
    """Probability that a random positive scores above a random negative (ties count half)."""
    positives = [s for s, y in zip(scores, labels, strict=True) if y]
    negatives = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 4)


def balanced(items: list[dict]) -> dict[str, Any]:
    """Balanced accuracy of `flagged` against `unsupported`, with both rates."""
    bad = [i for i in items if not i["supported"]]
    good = [i for i in items if i["supported"]]
    recall = sum(i["flagged"] for i in bad) / len(bad) if bad else 0.0
    specificity = sum(not i["flagged"] for i in good) / len(good) if good else 0.0
    return {
        "pairs": len(items),
        "balanced_accuracy": round((recall + specificity) / 2, 4),
        "unsupported_flagged": round(recall, 4),
        "supported_flagged": round(1 - specificity, 4),
    }


def check_pair(pair, config, toolkit, direct: bool = True) -> dict:
    """The routed per-claim verdict (timed: an uncached judge call is the cost), then, with
    `direct`, the judge asked on the pair whatever the route (for the AUC)."""
    from stages import guardrails
    from stages.guardrails import groundedness

    raw = config.model_copy(update={"judge_threshold": 1.0})  # support == P(yes)
    calls = toolkit.judge_calls
    started = time.perf_counter()
    scored = guardrails.verify_claim(
        pair.claim, [pair.evidence], raw, toolkit, question=pair.question
    )
    seconds = time.perf_counter() - started
    p_direct = scored.score if scored.route == "judge" else None
    if direct and p_direct is None:
        claim = groundedness.strip_lead_in(pair.claim)
        p_direct = toolkit.judge().judge(claim, [pair.evidence], pair.question).score
    return {
        "pair_id": pair.pair_id,
        "split": pair.split,
        "kind": pair.kind,
        "templates": list(pair.templates),
        "supported": pair.supported,
        "route": scored.route,
        "path": scored.judge,
        "p_yes": scored.score if scored.route == "judge" else None,
        "p_direct": p_direct,
        "judge_seconds": seconds if toolkit.judge_calls > calls else None,  # uncached calls
        "hard_score": scored.score,
        "critical": scored.critical,
        "error": scored.error,
        "reasons": scored.reasons[:3],
        "claim": pair.claim,
    }


def flagged(items: list[dict], config, cutoff: float) -> list[dict]:
    from bench.halueval import flag

    return [{**i, "flagged": flag(i, config, cutoff)} for i in items]


def choose_threshold(items: list[dict], config) -> float:
    """The judge threshold with the best balanced accuracy on `items`; ties: the highest."""
    candidates = [round(0.05 * k, 2) for k in range(1, 21)]
    return max(
        candidates, key=lambda t: (balanced(flagged(items, config, t))["balanced_accuracy"], t)
    )


def prefilter_effect(items: list[dict], cutoff: float) -> dict[str, Any]:
    """What the judge would have said of the claims the lexical pre-filter decided alone."""
    skipped = [i for i in items if i["route"] == "prefilter"]
    would_pass = [i for i in skipped if (i["p_direct"] or 0.0) >= cutoff * 0.85]
    return {
        "skipped": len(skipped),
        "skipped_supported": sum(i["supported"] for i in skipped),
        "judge_would_accept": len(would_pass),
        "judge_would_accept_supported": sum(i["supported"] for i in would_pass),
    }


def by_key(items: list[dict], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict]] = {}
    for i in items:
        groups.setdefault(str(i[key]), []).append(i)
    return {
        k: {"pairs": len(v), "flagged": round(sum(i["flagged"] for i in v) / len(v), 4)}
        for k, v in sorted(groups.items())
    }


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    limit: int | None = None,
    direct: bool = True,
    **_: Any,
) -> dict[str, Any]:
    """`direct=False` asks the judge only about the claims routed to it (AUC on those only)."""
    from eval.paraphrase_pairs import load_pairs
    from stages import guardrails

    by_split = [[p for p in load_pairs() if p.split == s][:limit] for s in ("dev", "test")]
    # interleaved, so that a run cut short (and rerun with --limit from the cache) has both splits
    pairs = [p for two in itertools.zip_longest(*by_split) for p in two if p is not None]
    settings = {**common.pipeline_settings("guardrails"), **(overrides or {}).get("guardrails", {})}
    settings["judge_cache_dir"] = str(common.CACHE / "paraphrase_judge")
    config = guardrails.Config.model_validate(settings)
    if config.judge == "none":
        raise common.Skipped("the paraphrase bench measures the judge: set guardrails.judge")
    toolkit = guardrails.Toolkit(config)
    items = []
    started = time.perf_counter()
    for index, pair in enumerate(pairs, start=1):
        items.append(check_pair(pair, config, toolkit, direct))
        if index % 20 == 0:
            common.console.print(f"paraphrase: {index}/{len(pairs)} pairs")
    total_s = time.perf_counter() - started
    dev = [i for i in items if i["split"] == "dev"]
    test = [i for i in items if i["split"] == "test"]
    chosen = choose_threshold(dev, config)
    configured = flagged(items, config, config.judge_threshold)
    uncached = [i["judge_seconds"] for i in items if i["judge_seconds"] is not None]
    fresh = uncached[1:]  # the first call also loads the model
    routed = [i for i in items if i["route"] == "judge"]
    result = {
        "data": {
            "set": "eval/sets/paraphrase-pairs-v1",
            "pairs": len(items),
            "dev": len(dev),
            "test": len(test),
        },
        "config": {
            "llm_backend": config.llm.backend,
            **{
                k: getattr(config, k)
                for k in (
                    "judge",
                    "emit_threshold",
                    "judge_threshold",
                    "prefilter_lexical",
                    "block_threshold",
                )
            },
        },  # fmt: skip
        "model": getattr(toolkit.judge(), "model_id", None),
        "configured_threshold": {
            "all": balanced(configured),
            "dev": balanced([i for i in configured if i["split"] == "dev"]),
            "test": balanced([i for i in configured if i["split"] == "test"]),
        },
        "chosen_on_dev": {
            "judge_threshold": chosen,
            "dev": balanced(flagged(dev, config, chosen)),
            "test": balanced(flagged(test, config, chosen)),
        },
        "judge_asked_on_every_pair": direct,
        "judge_auc_direct": {
            name: auc(
                [i["p_direct"] for i in group if i["p_direct"] is not None],
                [i["supported"] for i in group if i["p_direct"] is not None],
            )
            for name, group in (("all", items), ("dev", dev), ("test", test))
        },  # fmt: skip
        "judge_auc_routed": auc([i["p_direct"] for i in routed], [i["supported"] for i in routed]),
        "routes": {
            route: {
                "supported": sum(1 for i in items if i["route"] == route and i["supported"]),
                "unsupported": sum(1 for i in items if i["route"] == route and not i["supported"]),
            }
            for route in sorted({i["route"] for i in items})
        },
        "prefilter_effect": prefilter_effect(items, config.judge_threshold),
        "flag_rate_by_kind": by_key(configured, "kind"),
        "judge_calls_uncached": len(uncached),
        "seconds_per_judge_call": common.latency_stats(fresh) if fresh else None,
        "seconds_total": round(total_s, 1),
        "targets": {
            "balanced_accuracy": TARGET_BALANCED_ACCURACY,
            "seconds_per_judge_call": TARGET_SECONDS_PER_JUDGE_CALL,
        },
        "supported_flagged": [
            {
                k: i[k]
                for k in ("pair_id", "split", "route", "p_yes", "templates", "reasons", "claim")
            }  # fmt: skip
            for i in configured
            if i["supported"] and i["flagged"]
        ][:25],
        "unsupported_missed": [
            {k: i[k] for k in ("pair_id", "split", "kind", "route", "p_yes", "claim")}
            for i in configured
            if not i["supported"] and not i["flagged"]
        ][:25],
    }
    common.write_result(NAME, result, results_dir)
    folder_out = Path(results_dir or common.RESULTS)
    (folder_out / f"{NAME}.md").write_text(f"# Paraphrase pairs\n\n{summarize(result)}\n")
    return result


def summarize(result: dict[str, Any]) -> str:
    conf, chosen = result["configured_threshold"], result["chosen_on_dev"]
    latency = result["seconds_per_judge_call"] or {}
    lines = [
        f"{result['data']['pairs']} pairs ({result['data']['dev']} dev / "
        f"{result['data']['test']} test; judge: {result['config']['judge']}, {result['model']}).",
        "",
        "| setting | split | pairs | balanced accuracy | unsupported flagged | "
        "supported flagged |",
        "|---|---|---:|---:|---:|---:|",
        _row(f"configured judge_threshold {result['config']['judge_threshold']}", "dev",
             conf["dev"]),
        _row(f"configured judge_threshold {result['config']['judge_threshold']}", "test",
             conf["test"]),
        _row(f"judge_threshold {chosen['judge_threshold']} (chosen on dev)", "test",
             chosen["test"]),
        "",
        f"Judge AUC ({'every pair' if result['judge_asked_on_every_pair'] else 'the pairs it was'}"
        f" asked about): {result['judge_auc_direct']['all']} "
        f"(dev {result['judge_auc_direct']['dev']}, test {result['judge_auc_direct']['test']}); "
        f"on the claims routed to it: {result['judge_auc_routed']}.",
        f"Routes: {result['routes']}. Pre-filter: {result['prefilter_effect']}.",
        f"Milliseconds per uncached judge call (model load excluded): mean "
        f"{latency.get('mean_ms')}, p50 {latency.get('p50_ms')}, p95 {latency.get('p95_ms')} "
        f"({result['judge_calls_uncached']} calls; target "
        f"{result['targets']['seconds_per_judge_call']} s); a cached verdict costs no model call.",
    ]  # fmt: skip
    return "\n".join(lines)


def _row(label: str, split: str, m: dict[str, Any]) -> str:
    return (
        f"| {label} | {split} | {m['pairs']} | {m['balanced_accuracy']:.3f} | "
        f"{m['unsupported_flagged']:.1%} | {m['supported_flagged']:.1%} |"
    )


if __name__ == "__main__":
    import argparse

    from stages.common import offline

    offline.apply_offline_environment()
    parser = argparse.ArgumentParser(prog="python -m bench.paraphrase", description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N pairs of each split")
    parser.add_argument("--results", type=Path, default=common.RESULTS)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument(
        "--routed-only", action="store_true", help="ask the judge only what is routed to it"
    )
    args = parser.parse_args()
    overrides = common.parse_overrides(args.overrides)
    outcome = run(args.results, overrides, limit=args.limit, direct=not args.routed_only)
    print(summarize(outcome))
