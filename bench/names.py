"""The names check (rerank's `refuse_unwritten_names`) on SQuAD 2.0 articles no eval set uses.

A question naming something its corpus never writes is refused (stages/common/names.py). Here each
group of articles is the corpus (every paragraph and the article titles, as the BM25 index
tokenizes them) and every question of those articles is checked: an answerable question flagged
is a false refusal, an unanswerable one flagged is a near miss caught before any model reads it.
The groups: the ten SQuAD 2.0 train articles, and the dev articles the fits use as their
calibration split (Imperialism, French_and_Indian_War). Never the frozen sets' articles.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import common

NAME = "names"
DESCRIPTION = "names check on SQuAD 2.0 articles no eval set uses: false refusals and catches"
GROUPS = (
    ("train articles 1-10", "train_first10_articles.json", None),
    ("calibration articles", "dev_articles.json", {"Imperialism", "French_and_Indian_War"}),
)
EXAMPLES = 12


def check_group(articles: list[dict]) -> dict[str, Any]:
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


def run(results_dir: Path | None = None, **_: Any) -> dict[str, Any]:
    folder = common.dataset_dir("squad2", tuple(file for _, file, _ in GROUPS))
    groups = {}
    for label, file, titles in GROUPS:
        data = json.loads((folder / file).read_text(encoding="utf-8"))["data"]
        chosen = [a for a in data if titles is None or a["title"] in titles]
        groups[label] = {"articles": [a["title"] for a in chosen], **check_group(chosen)}
    payload = {"status": "ok", "groups": groups}
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        "Each group of articles is its own corpus; every question of it is checked.",
        "",
        "| group | answerable flagged (false refusals) | unanswerable flagged (caught) |",
        "|---|---:|---:|",
    ]
    for label, group in result["groups"].items():
        a, u = group["answerable"], group["unanswerable"]
        lines.append(
            f"| {label} | {a['flagged']} of {a['questions']} | {u['flagged']} of {u['questions']} |"
        )
    return "\n".join(lines)
