"""Rerank's question checks on SQuAD 2.0 articles no eval set uses.

Two checks refuse before any model reads the evidence (stages/rerank.py):
- names (`refuse_unwritten_names`): a question naming something, or a year, that its corpus never
  writes (stages/common/names.py);
- negation (`negated_needs_negation`): a question about what is not the case whose top chunk
  states no negation.

Part 1, the names check alone, per question: each group of articles is the corpus (every
paragraph and the article titles, as the BM25 index tokenizes them); an answerable question
flagged is a false refusal, an unanswerable one flagged is a near miss caught. Groups: the ten
SQuAD 2.0 train articles, and the calibration articles (Imperialism, French_and_Indian_War).

Part 2, end to end: the calibration articles built as an eval set the way
scripts/build_eval_sets.py builds squad2-dev-v1 (one document per paragraph), run through the
whole pipeline (extractive backend, judge none) with both checks off, names only, and both. The
checks' settings (`negation_top_k` 1) were chosen on this split; the frozen sets report them.
Never the frozen sets' articles.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from bench import common

NAME = "question_checks"
DESCRIPTION = "names and negation checks on SQuAD 2.0 articles no eval set uses"
CALIBRATION = ("Imperialism", "French_and_Indian_War")
GROUPS = (
    ("train articles 1-10", "train_first10_articles.json", None),
    ("calibration articles", "dev_articles.json", set(CALIBRATION)),
)
VARIANTS = (
    (
        "checks off",
        {"rerank.refuse_unwritten_names": False, "rerank.negated_needs_negation": False},
    ),
    ("names", {"rerank.negated_needs_negation": False}),
    ("names + negation", {}),
)
AXES = ("truthfulness", "answered_precision", "refusal_recall", "over_refusal_rate", "ece")
EXAMPLES = 12


def check_group(articles: list[dict]) -> dict[str, Any]:
    """Part 1 for one group: flagged questions by kind, and the answerable ones flagged."""
    from stages.common.names import Vocabulary, unwritten_names

    texts = [
        f"{article['title'].replace('_', ' ')} {paragraph['context']}"
        for article in articles
        for paragraph in article["paragraphs"]
    ]
    vocabulary = Vocabulary.of_texts(texts)
    counts = {"answerable": [0, 0], "unanswerable": [0, 0]}
    flagged = []
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                kind = "unanswerable" if qa.get("is_impossible") else "answerable"
                names = unwritten_names(qa["question"], vocabulary)
                counts[kind][0] += 1
                counts[kind][1] += bool(names)
                if names:
                    flagged.append({"kind": kind, "names": names, "question": qa["question"]})
    return {
        kind: {"questions": n, "flagged": k, "rate": round(k / n, 4) if n else None}
        for kind, (n, k) in counts.items()
    } | {"flagged_answerable": [f for f in flagged if f["kind"] == "answerable"][:EXAMPLES]}


def calibration_set(squad_file: Path, target: Path) -> Path:
    """The calibration articles as an eval set, built by the frozen sets' own builder."""
    from scripts import build_eval_sets as builder

    articles = builder._squad_articles(squad_file, CALIBRATION)
    set_dir = builder.fresh_dir(target / "squad2-calibration")
    records = builder._write_squad_corpus(articles, CALIBRATION, set_dir / "corpus")
    builder._finish_squad_set(set_dir, CALIBRATION, records)
    builder.write_manifest(set_dir, "squad2-calibration", f"SQuAD 2.0 dev {list(CALIBRATION)}")
    return set_dir


def end_to_end(squad_file: Path) -> list[dict[str, Any]]:
    """Part 2: the three variants over one artifact store (stages before rerank are shared)."""
    from bench.answerability import measure_with

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-question-checks-") as tmp:
        set_dir = calibration_set(squad_file, Path(tmp))
        for label, overrides in VARIANTS:
            measured = measure_with(set_dir, Path(tmp) / "store", overrides, label)
            rows.append({"variant": label, **{a: measured[a] for a in AXES}, **measured})
    return rows


def run(results_dir: Path | None = None, **_: Any) -> dict[str, Any]:
    folder = common.dataset_dir("squad2", tuple(file for _, file, _ in GROUPS))
    groups = {}
    for label, file, titles in GROUPS:
        data = json.loads((folder / file).read_text(encoding="utf-8"))["data"]
        chosen = [a for a in data if titles is None or a["title"] in titles]
        groups[label] = {"articles": [a["title"] for a in chosen], **check_group(chosen)}
    payload = {"status": "ok", "groups": groups, "end_to_end": end_to_end(folder / GROUPS[1][1])}
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        "Names check alone; each group of articles is its own corpus.",
        "",
        "| group | answerable flagged (false refusals) | unanswerable flagged (caught) |",
        "|---|---:|---:|",
    ]
    for label, group in result["groups"].items():
        a, u = group["answerable"], group["unanswerable"]
        lines.append(
            f"| {label} | {a['flagged']} of {a['questions']} | {u['flagged']} of {u['questions']} |"
        )
    lines += [
        "",
        "End to end on the calibration articles (extractive, judge none):",
        "",
        "| checks | " + " | ".join(AXES) + " |",
        "|---|" + "---:|" * len(AXES),
    ]
    for row in result.get("end_to_end", []):
        cells = " | ".join(f"{row[a]:.3f}" if row[a] is not None else "–" for a in AXES)
        lines.append(f"| {row['variant']} | {cells} |")
    return "\n".join(lines)
