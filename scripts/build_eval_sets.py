"""Build the frozen eval sets under eval/sets/<name>-v<N>/ (deterministic: same inputs, same bytes).

    python scripts/build_eval_sets.py [--squad ../shared/datasets/squad2/dev_articles.json]

- `sample-v2`: the sample question set; the corpus is referenced (`data/sample/docs`) with the
  sha256 of every corpus file, so a changed sample document is caught before a gate runs.
- `sample-v1`: the sample's first 73 questions over its first 17 documents (md, html, txt, pdf,
  docx), frozen with that corpus copied into the set when the sample gained new formats.
- `squad2-dev-v1`: a slice of SQuAD 2.0 dev (CC BY-SA 4.0): every question of the articles in
  `SQUAD_ARTICLES`, about half unanswerable. The corpus (one .txt per paragraph + catalog.yaml) is
  copied into the set, so the gate runs without ../shared.
- `cross-topic-v1`: the same corpus; 150 of its answerable questions and 150 questions about
  `Packet_switching`, an article the corpus does not hold: the latter must all be
  refused, the former must not be over-refused.

Each set gets `manifest.json` with the sha256 of every file in the set folder; the evaluation
refuses to run when a file does not match it (eval/frozen_sets.py `verify_set`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "eval" / "sets"
SAMPLE_DOCS = "data/sample/docs"
SAMPLE_QUESTIONS = ROOT / "data" / "sample" / "questions.jsonl"
SAMPLE_SET = "sample-v2"  # sample-v1 (73 questions, 17 documents) is frozen with its corpus copied
DEFAULT_SQUAD = ROOT.parent / "shared" / "datasets" / "squad2" / "dev_articles.json"
# Chosen so that the slice has >= 500 questions, about half unanswerable, and the gate on it runs
# well inside 10 minutes on 2 cores: 83 paragraphs, 632 questions, 319 unanswerable.
SQUAD_ARTICLES = ("Normans", "Huguenot")
# cross-topic-v1: questions about this article are asked of a corpus that does not hold it. It is
# never trained on (scripts/train_answerability.py excludes it).
CROSS_TOPIC_OUTSIDE = "Packet_switching"
CROSS_TOPIC_PER_SIDE = 150
CROSS_TOPIC_SEED = 14
SQUAD_DATE = "2026-06-01"  # inside every freshness window at the pipeline's as_of (2026-11-15)
QUESTION_FIELDS = (
    "question_id",
    "question",
    "principal",
    "query_type",
    "category",
    "expected_behavior",
    "expected_refusal_reason",
    "gold_answers",
    "gold_doc_ids",
    "gold_spans",
    "notes",
)

SQUAD_NOTICE = """# Notice: SQuAD 2.0 material in this eval set

The questions, answers and paragraphs in this folder (`questions.jsonl`, `corpus/`) are a slice
of the **SQuAD 2.0 development set** (Stanford Question Answering Dataset), articles
{articles}. SQuAD 2.0 is distributed under the
**Creative Commons Attribution-ShareAlike 4.0 International license (CC BY-SA 4.0)**,
https://creativecommons.org/licenses/by-sa/4.0/. The paragraphs come from English Wikipedia
articles (also CC BY-SA), https://en.wikipedia.org/wiki/{wiki_links}.

Attribution:

> Pranav Rajpurkar, Robin Jia, Percy Liang. *Know What You Don't Know: Unanswerable Questions for
> SQuAD.* ACL 2018. https://rajpurkar.github.io/SQuAD-explorer/

Obtained from the official SQuAD 2.0 dev JSON (via chrischute/squad's CS224N half-dev split).

Changes made here (by `scripts/build_eval_sets.py`): only the articles listed above are kept;
each paragraph is written as its own `.txt` document with a `catalog.yaml` entry (metadata
invented for the pipeline: permission `everyone`, tier `canonical`, date {date}); questions are
re-shaped into the project's eval-set JSON lines (gold answers de-duplicated, gold spans as
character offsets into the paragraph file, unanswerable questions marked as expected refusals).
This adapted material is shared under the same license, CC BY-SA 4.0.
"""


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_manifest(set_dir: Path, name: str, description: str) -> dict:
    files = {
        p.relative_to(set_dir).as_posix(): sha256_file(p)
        for p in sorted(set_dir.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }
    set_hash = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    manifest = {"name": name, "description": description, "set_hash": set_hash, "files": files}
    (set_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def write_jsonl(path: Path, records: list[dict]) -> None:
    lines = [json.dumps({k: r[k] for k in QUESTION_FIELDS}, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def fresh_dir(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def _sample_records(root: Path) -> list[dict]:
    records = []
    for line in (root / "data" / "sample" / "questions.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        records.append(
            {
                **{k: raw.get(k) for k in QUESTION_FIELDS},
                "gold_answers": list(raw.get("gold_answers") or []),
                "gold_doc_ids": list(raw.get("gold_doc_ids") or []),
                "gold_spans": [],  # the sample lists gold documents, not character spans
                "notes": raw.get("notes") or "",
            }
        )
    return records


def build_sample(root: Path = ROOT, out: Path = SETS) -> dict:
    """The sample's current questions over its live corpus (referenced by path and sha256)."""
    set_dir = fresh_dir(out / SAMPLE_SET)
    records = _sample_records(root)
    write_jsonl(set_dir / "questions.jsonl", records)
    docs = root / SAMPLE_DOCS
    corpus = {
        "path": SAMPLE_DOCS,
        "copied": False,
        "files": {
            p.relative_to(docs).as_posix(): sha256_file(p)
            for p in sorted(docs.rglob("*"))
            if p.is_file()
        },
    }
    (set_dir / "corpus.json").write_text(json.dumps(corpus, indent=2, sort_keys=True) + "\n")
    return write_manifest(
        set_dir,
        SAMPLE_SET,
        f"Northwind Cloud sample questions (data/sample), {len(records)} questions, every "
        "format the sample holds (md, html, txt, pdf, docx, pptx, xlsx, a scanned pdf, vtt, a "
        "ticket export)",
    )


def freeze_referenced_corpus(set_dir: Path, root: Path = ROOT) -> dict:
    """Copy a set's referenced corpus into the set (`copied: true`), checking every file against
    corpus.json first: how sample-v1 stays answerable from exactly its 17 documents after the
    sample gained documents in new formats. Its questions do not change."""
    corpus = json.loads((set_dir / "corpus.json").read_text())
    if corpus.get("copied"):
        return json.loads((set_dir / "manifest.json").read_text())
    source = root / corpus["path"]
    for rel, expected in sorted(corpus["files"].items()):
        if sha256_file(source / rel) != expected:
            sys.exit(f"{corpus['path']}/{rel} changed since {set_dir.name} was frozen")
        target = set_dir / "corpus" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target)
    frozen = {**corpus, "copied": True, "path": "corpus"}
    (set_dir / "corpus.json").write_text(json.dumps(frozen, indent=2, sort_keys=True) + "\n")
    manifest = json.loads((set_dir / "manifest.json").read_text())
    return write_manifest(set_dir, manifest["name"], manifest["description"])


def _slug(title: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in title.lower()).strip("-")


def _write_squad_corpus(articles: dict, titles: tuple[str, ...], corpus_dir: Path) -> list[dict]:
    """One .txt per paragraph plus catalog.yaml; returns every question as an eval record."""
    catalog, records = [], []
    for title in titles:
        slug = _slug(title)
        (corpus_dir / slug).mkdir(parents=True)
        for number, paragraph in enumerate(articles[title]["paragraphs"]):
            doc_id = f"squad-{slug}-p{number:03d}"
            rel = f"{slug}/p{number:03d}.txt"
            context = paragraph["context"]
            (corpus_dir / rel).write_text(context + "\n", encoding="utf-8")
            catalog.append(
                {
                    "path": rel,
                    "doc_id": doc_id,
                    "title": f"{title.replace('_', ' ')} (paragraph {number + 1})",
                    "version": "1",
                    "published_at": SQUAD_DATE,
                    "last_modified": SQUAD_DATE,
                    "permission_set": ["everyone"],
                    "trust_tier": "canonical",
                    "language": "en",
                    "subject": None,
                }
            )
            for qa in paragraph["qas"]:
                records.append(_squad_record(qa, doc_id, context, title))
    (corpus_dir / "catalog.yaml").write_text(
        "# SQuAD 2.0 dev paragraphs (CC BY-SA 4.0), see ../NOTICE.md\n"
        + yaml.safe_dump({"documents": catalog}, sort_keys=False, allow_unicode=True)
    )
    return records


def finish_set(set_dir: Path, records: list[dict]) -> None:
    """questions.jsonl and corpus.json (every file under corpus/, copied into the set)."""
    write_jsonl(set_dir / "questions.jsonl", records)
    corpus_dir = set_dir / "corpus"
    corpus = {"path": "corpus", "copied": True, "files": {}}
    corpus["files"] = {
        p.relative_to(corpus_dir).as_posix(): sha256_file(p)
        for p in sorted(corpus_dir.rglob("*"))
        if p.is_file()
    }
    (set_dir / "corpus.json").write_text(json.dumps(corpus, indent=2, sort_keys=True) + "\n")


def _finish_squad_set(set_dir: Path, titles: tuple[str, ...], records: list[dict]) -> None:
    finish_set(set_dir, records)
    (set_dir / "NOTICE.md").write_text(
        SQUAD_NOTICE.format(
            articles=", ".join(f"`{t}`" for t in titles),
            wiki_links=" and https://en.wikipedia.org/wiki/".join(titles),
            date=SQUAD_DATE,
        )
    )


def _squad_articles(squad_path: Path, wanted: tuple[str, ...]) -> dict:
    data = json.loads(squad_path.read_text(encoding="utf-8"))
    articles = {a["title"]: a for a in data["data"]}
    missing = [t for t in wanted if t not in articles]
    if missing:
        raise SystemExit(f"{squad_path}: articles not found: {missing}")
    return articles


def build_squad(squad_path: Path, out: Path = SETS) -> dict:
    articles = _squad_articles(squad_path, SQUAD_ARTICLES)
    set_dir = fresh_dir(out / "squad2-dev-v1")
    records = _write_squad_corpus(articles, SQUAD_ARTICLES, set_dir / "corpus")
    _finish_squad_set(set_dir, SQUAD_ARTICLES, records)
    unanswerable = sum(r["expected_behavior"] == "refuse" for r in records)
    paragraphs = sum(len(articles[t]["paragraphs"]) for t in SQUAD_ARTICLES)
    return write_manifest(
        set_dir,
        "squad2-dev-v1",
        f"SQuAD 2.0 dev slice {list(SQUAD_ARTICLES)}: {len(records)} questions, "
        f"{unanswerable} unanswerable, {paragraphs} paragraphs",
    )


def build_cross_topic(squad_path: Path, out: Path = SETS) -> dict:
    """The corpus holds the squad2-dev-v1 articles; half the questions come from an article that
    is not in it (all must be refused), half are answerable in-corpus questions (must not be
    over-refused). The split is seeded, so the set is the same bytes on every build."""
    articles = _squad_articles(squad_path, SQUAD_ARTICLES + (CROSS_TOPIC_OUTSIDE,))
    set_dir = fresh_dir(out / "cross-topic-v1")
    in_corpus = _write_squad_corpus(articles, SQUAD_ARTICLES, set_dir / "corpus")
    rng = random.Random(CROSS_TOPIC_SEED)
    answerable = [r for r in in_corpus if r["expected_behavior"] == "answer"]
    kept = sorted(rng.sample(answerable, CROSS_TOPIC_PER_SIDE), key=answerable.index)
    outside = [
        _out_of_corpus_record(qa, CROSS_TOPIC_OUTSIDE)
        for paragraph in articles[CROSS_TOPIC_OUTSIDE]["paragraphs"]
        for qa in paragraph["qas"]
    ]
    outside = sorted(rng.sample(outside, CROSS_TOPIC_PER_SIDE), key=outside.index)
    _finish_squad_set(set_dir, SQUAD_ARTICLES + (CROSS_TOPIC_OUTSIDE,), kept + outside)
    return write_manifest(
        set_dir,
        "cross-topic-v1",
        f"corpus {list(SQUAD_ARTICLES)}: {len(kept)} answerable in-corpus questions and "
        f"{len(outside)} questions about {CROSS_TOPIC_OUTSIDE} (not in the corpus)",
    )


def _out_of_corpus_record(qa: dict, title: str) -> dict:
    return {
        "question_id": f"sq-{qa['id']}",
        "question": qa["question"].strip(),
        "principal": "employee",
        "query_type": "general",
        "category": "out_of_corpus",
        "expected_behavior": "refuse",
        "expected_refusal_reason": "insufficient_evidence",
        "gold_answers": [],
        "gold_doc_ids": [],
        "gold_spans": [],
        "notes": f"{title}: not in this set's corpus",
    }


def _squad_record(qa: dict, doc_id: str, context: str, title: str) -> dict:
    impossible = bool(qa.get("is_impossible"))
    answers, spans = [], []
    for answer in qa.get("answers", []):
        text, start = answer["text"], answer["answer_start"]
        if text not in answers:
            answers.append(text)
        span = {"doc_id": doc_id, "char_start": start, "char_end": start + len(text), "text": text}
        if context[start : start + len(text)] == text and span not in spans:
            spans.append(span)
    plausible = sorted({a["text"] for a in qa.get("plausible_answers", [])})
    return {
        "question_id": f"sq-{qa['id']}",
        "question": qa["question"].strip(),
        "principal": "employee",
        "query_type": "general",
        "category": "unanswerable" if impossible else "answerable",
        "expected_behavior": "refuse" if impossible else "answer",
        "expected_refusal_reason": "insufficient_evidence" if impossible else None,
        "gold_answers": [] if impossible else answers,
        "gold_doc_ids": [] if impossible else [doc_id],
        "gold_spans": [] if impossible else spans,
        "notes": f"{title}; plausible (wrong) answers: {plausible}" if impossible else title,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD, help="dev_articles.json")
    parser.add_argument("--out", type=Path, default=SETS)
    args = parser.parse_args(argv)
    built = [freeze_referenced_corpus(args.out / "sample-v1"), build_sample(ROOT, args.out)]
    if args.squad.is_file():
        built.append(build_squad(args.squad, args.out))
        built.append(build_cross_topic(args.squad, args.out))
    else:
        print(f"skipping squad2-dev-v1: {args.squad} not found", file=sys.stderr)
    for manifest in built:
        print(f"{manifest['name']}: {manifest['description']} (set {manifest['set_hash'][:12]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
