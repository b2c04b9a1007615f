"""Guardrail efficacy from human verdicts, every rate with its 95 % interval.

Definitions (the release evaluation's guardrail axis, `eval.metrics.guardrail_axis`, uses the
same ones on its gold labels). A *pre-guardrail answer* is a draft the gate decided on (strata
emitted, revised, blocked); a draft is *bad* when its verdict is hallucinated or
should_have_refused, *good* when correct (or, for a blocked draft, wrongly_refused: the user was
refused an answer that was right).

- efficacy: bad drafts the gate blocked or revised / bad drafts;
- intervention_precision: blocked or revised drafts that were bad / blocked or revised drafts;
- false_positive_rate: good drafts blocked / good drafts (human-validated: "blocked but correct");
- blocked_correct_share: good drafts among the blocked ones (what the release evaluation used
  to call its false-positive rate);
- correct_flagged_rate: good drafts blocked or revised / good drafts (the benches' flag rate on
  correct answers: a revise costs a right answer a round, and may lose it);
- miss_rate: emitted drafts that were bad / emitted drafts ("emitted but hallucinated");
- refusal_correctness: refusals judged correct / refusals judged.

Each rate is a ratio of sampling-weighted sums (each answer counts for the answers of the run it
stands for); its interval is Wilson's at the effective sample size n_eff = (sum w)^2 / sum w^2
(Kish), which is plain Wilson when every weight is equal.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

Z95 = 1.959963984540054
BAD = ("hallucinated", "should_have_refused")


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of successes / n (n may be an effective, non-integer size)."""
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def weighted_rate(pairs: list[tuple[bool, float]]) -> dict[str, Any]:
    """{rate, low, high, n, n_eff} of (outcome, weight) pairs; rate None with no pairs."""
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0:
        return {"rate": None, "low": None, "high": None, "n": len(pairs), "n_eff": 0.0}
    hits = sum(w for hit, w in pairs if hit)
    rate = hits / total
    n_eff = total * total / sum(w * w for _, w in pairs)
    low, high = wilson(rate * n_eff, n_eff)  # type: ignore[misc]
    return {
        "rate": round(rate, 4),
        "low": round(low, 4),
        "high": round(high, 4),
        "n": len(pairs),
        "n_eff": round(n_eff, 2),
    }


def cohen_kappa(first: list[str], second: list[str]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (None: no items, or no variation
    either could disagree on)."""
    n = len(first)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    left, right = Counter(first), Counter(second)
    expected = sum(left[k] * right[k] for k in left.keys() | right.keys()) / (n * n)
    if expected >= 1:
        return None
    return round((observed - expected) / (1 - expected), 4)


def agreement(verdicts: dict[str, dict[str, dict]]) -> list[dict]:
    """Per pair of reviewers: the answers both judged, their raw agreement and Cohen's kappa."""
    out = []
    for a, b in combinations(sorted(verdicts), 2):
        both = sorted(
            k
            for k in verdicts[a].keys() & verdicts[b].keys()
            if verdicts[a][k].get("verdict") and verdicts[b][k].get("verdict")
        )
        left = [verdicts[a][k]["verdict"] for k in both]
        right = [verdicts[b][k]["verdict"] for k in both]
        same = sum(x == y for x, y in zip(left, right, strict=True))
        out.append(
            {
                "reviewers": [a, b],
                "answers": len(both),
                "agreement": round(same / len(both), 4) if both else None,
                "kappa": cohen_kappa(left, right),
            }
        )
    return out


def resolve(verdicts: dict[str, dict[str, dict]], reviewer: str | None = None) -> dict:
    """One verdict per answer: the chosen reviewer's, else the reviewers' common verdict;
    answers they disagree on are left out (listed), never decided by a tie-break."""
    labels: dict[str, str] = {}
    disagreements = []
    by_answer: dict[str, dict[str, str]] = defaultdict(dict)
    for who, records in verdicts.items():
        if reviewer and who != reviewer:
            continue
        for answer_id, record in records.items():
            if record.get("verdict"):
                by_answer[answer_id][who] = record["verdict"]
    for answer_id, given in sorted(by_answer.items()):
        values = set(given.values())
        if len(values) == 1:
            labels[answer_id] = values.pop()
        else:
            disagreements.append({"answer_id": answer_id, "verdicts": given})
    return {"labels": labels, "disagreements": disagreements}


def is_bad(stratum: str, verdict: str) -> bool | None:
    """Whether a pre-guardrail draft was bad (None: a refusal, or a verdict that does not
    apply to a draft)."""
    if stratum == "refused":
        return None
    if verdict in BAD:
        return True
    if verdict == "correct" or (verdict == "wrongly_refused" and stratum == "blocked"):
        return False
    return None


def rates(items: list[dict], labels: dict[str, str]) -> dict[str, Any]:
    """The efficacy figures (module docstring) over the judged items of one or more batches."""
    drafts = []  # (stratum, bad, weight)
    refusals = []  # (right, weight)
    for item in items:
        verdict = labels.get(item["answer_id"])
        if verdict is None:
            continue
        weight = float(item.get("weight") or 1.0)
        if item["stratum"] == "refused":
            if verdict in ("correct", "wrongly_refused"):
                refusals.append((verdict == "correct", weight))
            continue
        bad = is_bad(item["stratum"], verdict)
        if bad is not None:
            drafts.append((item["stratum"], bad, weight))
    flagged = ("blocked", "revised")
    return {
        "efficacy": weighted_rate([(s in flagged, w) for s, bad, w in drafts if bad]),
        "intervention_precision": weighted_rate([(bad, w) for s, bad, w in drafts if s in flagged]),
        "false_positive_rate": weighted_rate(
            [(s == "blocked", w) for s, bad, w in drafts if not bad]
        ),
        "blocked_correct_share": weighted_rate(
            [(not bad, w) for s, bad, w in drafts if s == "blocked"]
        ),
        "correct_flagged_rate": weighted_rate(
            [(s in flagged, w) for s, bad, w in drafts if not bad]
        ),
        "miss_rate": weighted_rate([(bad, w) for s, bad, w in drafts if s == "emitted"]),
        "refusal_correctness": weighted_rate(refusals),
    }


DESCRIPTIONS = {
    "efficacy": "bad drafts the gate blocked or revised / bad drafts",
    "intervention_precision": "blocked or revised drafts that were bad / blocked or revised",
    "false_positive_rate": "good drafts blocked / good drafts (blocked but correct)",
    "blocked_correct_share": "good drafts among the blocked ones",
    "correct_flagged_rate": "good drafts blocked or revised / good drafts",
    "miss_rate": "emitted drafts that were bad / emitted drafts (emitted but hallucinated)",
    "refusal_correctness": "refusals judged correct / refusals judged",
}


def report(batches: list[dict], reviewer: str | None = None) -> dict[str, Any]:
    """`batches`: [{"key", "run", "items", "verdicts"}]; the report as a JSON-ready dict."""
    items: list[dict] = []
    judged: Counter = Counter()
    per_batch = []
    pairs: list[dict] = []
    all_disagreements: list[dict] = []
    labels: dict[str, str] = {}
    for batch in batches:
        resolved = resolve(batch["verdicts"], reviewer)
        labels.update(resolved["labels"])
        all_disagreements += resolved["disagreements"]
        items += batch["items"]
        for item in batch["items"]:
            if item["answer_id"] in resolved["labels"]:
                judged[item["stratum"]] += 1
        agreement_rows = agreement(batch["verdicts"])
        pairs += [{"batch": batch["key"][:12], **row} for row in agreement_rows]
        per_batch.append(
            {
                "batch": batch["key"],
                "run": batch.get("run"),
                "answers": len(batch["items"]),
                "judged": len(resolved["labels"]),
                "reviewers": sorted(batch["verdicts"]),
            }
        )
    verdict_counts = Counter(labels[i["answer_id"]] for i in items if i["answer_id"] in labels)
    return {
        "batches": per_batch,
        "judged_by_stratum": {s: judged[s] for s in ("emitted", "revised", "blocked", "refused")},
        "verdicts": dict(verdict_counts),
        "rates": rates(items, labels),
        "definitions": DESCRIPTIONS,
        "interval": "95 % Wilson at the Kish effective sample size, sampling weights applied",
        "agreement": pairs,
        "disagreements": all_disagreements,
    }


def _shown(rate: dict) -> str:
    if rate["rate"] is None:
        return "n/a (no judged answers)"
    return f"{rate['rate']:.3f} [{rate['low']:.3f}, {rate['high']:.3f}] (n={rate['n']})"


def markdown(figures: dict[str, Any]) -> str:
    lines = ["# Guardrail efficacy from human verdicts", ""]
    for batch in figures["batches"]:
        lines.append(
            f"- batch `{batch['batch'][:12]}` (run `{batch['run']}`): {batch['judged']} of "
            f"{batch['answers']} answers judged; reviewers: {', '.join(batch['reviewers']) or '-'}"
        )
    strata = ", ".join(f"{k} {v}" for k, v in figures["judged_by_stratum"].items())
    lines += ["", f"Judged answers by stratum: {strata}.", ""]
    lines += ["| figure | value [95 % interval] | definition |", "|---|---|---|"]
    for name, rate in figures["rates"].items():
        lines.append(f"| {name} | {_shown(rate)} | {figures['definitions'][name]} |")
    lines += ["", f"Intervals: {figures['interval']}.", ""]
    if figures["agreement"]:
        lines += [
            "## Reviewer agreement",
            "",
            "| batch | reviewers | answers | agreement | kappa |",
        ]
        lines.append("|---|---|---|---|---|")
        for row in figures["agreement"]:
            lines.append(
                f"| {row['batch']} | {' / '.join(row['reviewers'])} | {row['answers']} | "
                f"{row['agreement']} | {row['kappa']} |"
            )
        lines.append("")
    if figures["disagreements"]:
        lines.append(
            f"{len(figures['disagreements'])} answers where reviewers disagree are left out of "
            "the rates (pass --reviewer to count one reviewer's verdicts)."
        )
    return "\n".join(lines) + "\n"


def write_report(folder: Path, figures: dict[str, Any], text: str) -> None:
    """report.md and report.json in `folder`, each written whole or not at all."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in (("report.md", text), ("report.json", json.dumps(figures, indent=1))):
        tmp = folder / f".{name}.tmp-{os.getpid()}"
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, folder / name)


def publish_prefect(figures: dict[str, Any], text: str) -> bool:
    """The report as Prefect artifacts (a markdown one and the rates as a table), in a flow run
    of its own when called outside one; False when Prefect is not installed."""
    try:
        from prefect import flow
    except ImportError:
        return False
    from flows.observability import publish_tables

    rows = [{"figure": name, **rate} for name, rate in figures["rates"].items()]

    def publish() -> bool:
        return publish_tables("review-efficacy", rows, text, "guardrail efficacy from verdicts")

    from flows.observability import in_flow_run

    if in_flow_run():
        return publish()
    return bool(flow(name="review-report")(publish)())
