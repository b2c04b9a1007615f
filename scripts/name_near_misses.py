"""Which typo tolerance the names check should have, measured on near misses.

"What is the hotel limit per night in Paris?" passed the names check of a folder that writes
"parking": "paris" is one edit from "parks", whose stem "park" the index holds. This script
counts, per rule, the names that only the one-edit tolerance lets through, on SQuAD 2.0 articles
(each group of articles is its own corpus, as bench/question_checks.py builds it): a name in an
answerable question let through is a typo (or variant) rescued; in an unanswerable question it
is a near miss that the check then cannot catch. Fit (choose) on the train articles 1-10, report
on the dev articles no frozen eval set uses (not Normans, Huguenot).

    .venv/bin/python scripts/name_near_misses.py
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from stages.common import names  # noqa: E402
from stages.common.text import stem  # noqa: E402

DATA = ROOT.parent / "shared" / "datasets" / "squad2"
FROZEN = {"Normans", "Huguenot"}  # squad2-dev-v1 and cross-topic-v1: never fit on them


def edit_matches(name: str, vocabulary: names.Vocabulary) -> list[tuple[str, str]]:
    """(spelling, stem it matched) for the one-edit spellings of `name` the sources write."""
    found = []
    for spelling in names.spellings(name):
        if spelling == name:
            continue
        term = names.fold(stem(spelling))
        if vocabulary.occurs(term):
            found.append((spelling, term))
    return found


RULES = {
    # the earlier rule: any one-edit spelling, stemmed
    "any edit, stemmed": lambda name, matches, vocabulary: bool(matches),
    # the spelling must be a term the sources write as it is (not a stem of an inflected form)
    "edit must be a written stem": lambda name, matches, vocabulary: any(
        s == t for s, t in matches
    ),
    "names of 6+ letters only": lambda name, matches, vocabulary: bool(matches) and len(name) >= 6,
    # the choice: the spelling lands on a word the sources write as a name
    "edit must land on a name": lambda name, matches, vocabulary: any(
        vocabulary.as_name(t) for _, t in matches
    ),
}


def measure(articles: list[dict]) -> dict:
    texts = [
        f"{a['title'].replace('_', ' ')} {p['context']}" for a in articles for p in a["paragraphs"]
    ]
    vocabulary = names.Vocabulary.of_texts(texts)
    counts = {rule: Counter() for rule in RULES}
    examples: list[dict] = []
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                kind = "unanswerable" if qa.get("is_impossible") else "answerable"
                for name in names.asked_names(qa["question"]):
                    matches = edit_matches(name, vocabulary)
                    if not matches and not names.is_written(name, vocabulary):
                        continue
                    if name.isdigit():
                        continue
                    exact = names.is_written(name, _without_edits(vocabulary, name))
                    if exact:
                        continue  # written without the tolerance: no rule changes it
                    if not matches:
                        continue
                    for rule, accepts in RULES.items():
                        through = accepts(name, matches, vocabulary)
                        counts[rule][f"{kind} {'let through' if through else 'refused'}"] += 1
                    named = [t for _, t in matches if vocabulary.as_name(t)]
                    examples.append(
                        {
                            "kind": kind,
                            "name": name,
                            "matches": matches[:3],
                            "named": named[:3],
                            "question": qa["question"],
                        }
                    )
    return {"counts": {r: dict(c) for r, c in counts.items()}, "examples": examples}


def _without_edits(vocabulary: names.Vocabulary, name: str) -> names.Vocabulary:
    """The same vocabulary, but every one-edit spelling of `name` unwritten (the name itself
    and its stem and prefix rules still apply)."""
    blocked = {names.fold(stem(s)) for s in names.spellings(name)} - {names.fold(stem(name))}
    return names.Vocabulary(
        lambda t: t not in blocked and vocabulary.occurs(t), vocabulary.starting, vocabulary.as_name
    )


def main() -> int:
    if not DATA.is_dir():
        print(f"skipped: {DATA} is absent (the SQuAD 2.0 files of ../shared/datasets)")
        return 0
    train = json.loads((DATA / "train_first10_articles.json").read_text())["data"]
    dev = json.loads((DATA / "dev_articles.json").read_text())["data"]
    report = [a for a in dev if a["title"] not in FROZEN]
    for label, articles in (("fit: train 1-10", train), ("report: dev, not frozen", report)):
        result = measure(articles)
        print(f"== {label} ({', '.join(a['title'] for a in articles)})")
        for rule, counts in result["counts"].items():
            print(f"  {rule:30} {counts}")
        for example in result["examples"][:40]:
            print(
                f"    {example['kind']:12} {example['name']:14} {example['matches']} "
                f"named {example['named']} | {example['question'][:60]}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
