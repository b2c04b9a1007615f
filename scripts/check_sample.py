"""Verify the sample knowledge base in data/sample/.

Usage:  .venv/bin/python scripts/check_sample.py [--counts-only]

Checks catalog <-> files, schema of catalog.yaml and questions.jsonl, that gold
doc ids exist and are readable by the question's principal, and that every gold
answer string literally appears in the text of at least one of its gold docs
(PDF/DOCX: both the generator source strings and the text extracted from the
built file). Exits non-zero on any error and prints category counts.
"""

from __future__ import annotations

import collections
import datetime as dt
import html
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
DOCS = SAMPLE / "docs"
from scripts import make_sample_binaries as gen  # noqa: E402

PRINCIPALS = {
    "employee": {"everyone"},
    "hr_manager": {"everyone", "hr"},
    "sales_rep": {"everyone", "sales"},
    "support_agent": {"everyone", "support"},
    "contractor": set(),
}
GROUPS = {"everyone", "hr", "sales", "support"}
TIERS = {"canonical", "verified", "community", "untrusted"}
QUERY_TYPES = {"general", "pricing", "contract", "policy", "hr", "sla", "support"}
CATEGORIES = {
    "answerable",
    "missing_document",
    "close_but_wrong",
    "stale_only",
    "permission_restricted",
    "permission_granted",
    "conflicting_sources",
    "numbers_dates",
    "multi_part",
    "new_format",  # answered from a pptx, xlsx, scanned pdf, transcript or ticket export
}
REFUSALS = {"insufficient_evidence", "no_permission", "stale_only", "conflicting_sources"}
MIN_COUNTS = {
    "answerable": 20,
    "missing_document": 8,
    "close_but_wrong": 6,
    "stale_only": 3,
    "permission_restricted": 4,
    "permission_granted": 4,
    "conflicting_sources": 3,
    "numbers_dates": 10,
    "multi_part": 6,
    "new_format": 10,
}
CATALOG_KEYS = {
    "path",
    "doc_id",
    "title",
    "version",
    "published_at",
    "last_modified",
    "permission_set",
    "trust_tier",
    "language",
    "doc_type",
}
OPTIONAL_KEYS = {"subject", "supersedes"}
QUESTION_KEYS = [
    "question_id",
    "question",
    "principal",
    "query_type",
    "category",
    "expected_behavior",
    "gold_answers",
    "gold_doc_ids",
    "expected_refusal_reason",
    "notes",
]
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

errors: list[str] = []


def err(msg: str) -> None:
    errors.append(msg)


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def extract_text(path: Path) -> str:
    suf = path.suffix.lower()
    if suf in {".md", ".txt"}:
        return path.read_text(encoding="utf-8")
    if suf == ".html":
        raw = path.read_text(encoding="utf-8")
        raw = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", raw)
        return html.unescape(re.sub(r"<[^>]+>", " ", raw))
    if suf == ".pdf" or suf in {".pptx", ".xlsx", ".csv", ".vtt", ".srt", ".json", ".jsonl"}:
        # the pipeline's own readers: a scanned page has no text but what OCR recognises
        from stages import ingestion
        from stages.formats import ReadOptions, reader_for

        read = reader_for(suf)
        options = ReadOptions(path=path.name, config=ingestion.Config())
        return "\n".join(block.text for block in read(path.read_bytes(), options))
    if suf == ".docx":
        import docx

        d = docx.Document(str(path))
        parts = [p.text for p in d.paragraphs]
        for t in d.tables:
            for row in t.rows:
                parts.append(" | ".join(c.text for c in row.cells))
        return "\n".join(parts)
    raise ValueError(f"unsupported format: {path}")


def main() -> int:
    counts_only = "--counts-only" in sys.argv

    # ---------------------------------------------------------- catalog
    catalog = yaml.safe_load((SAMPLE / "docs" / "catalog.yaml").read_text(encoding="utf-8"))
    entries = catalog["documents"]
    by_id: dict[str, dict] = {}
    for e in entries:
        keys = set(e)
        if missing := CATALOG_KEYS - keys:
            err(f"catalog {e.get('doc_id')}: missing keys {sorted(missing)}")
        if extra := keys - CATALOG_KEYS - OPTIONAL_KEYS:
            err(f"catalog {e.get('doc_id')}: unknown keys {sorted(extra)}")
        did = e["doc_id"]
        if did in by_id:
            err(f"duplicate doc_id {did}")
        by_id[did] = e
        if not KEBAB.match(did):
            err(f"doc_id not kebab-case: {did}")
        if not isinstance(e["version"], str):
            err(f"{did}: version must be a string")
        for k in ("published_at", "last_modified"):
            if not isinstance(e[k], dt.date):
                err(f"{did}: {k} is not an ISO date")
        if e["last_modified"] < e["published_at"]:
            err(f"{did}: last_modified before published_at")
        if not set(e["permission_set"]) <= GROUPS:
            err(f"{did}: unknown group in {e['permission_set']}")
        if e["trust_tier"] not in TIERS:
            err(f"{did}: bad trust_tier {e['trust_tier']}")
        if not (DOCS / e["path"]).is_file():
            err(f"{did}: path does not exist: {e['path']}")
    for e in entries:
        for s in e.get("supersedes", []) or []:
            if s not in by_id:
                err(f"{e['doc_id']}: supersedes unknown doc_id {s}")

    files = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*") if p.is_file()}
    cat_paths = {e["path"] for e in entries}
    for f in sorted(files - cat_paths - {"catalog.yaml"}):
        err(f"file not in catalog: {f}")

    fmt_counts = collections.Counter(Path(p).suffix.lstrip(".") for p in cat_paths)
    for fmt in ("md", "html", "txt", "pdf", "docx"):
        if fmt_counts[fmt] < 2:
            err(f"format {fmt} appears {fmt_counts[fmt]} times (< 2)")
    if not 20 <= len(entries) <= 24:
        err(f"{len(entries)} documents (expected 20-24)")

    # ---------------------------------------------------------- texts
    texts: dict[str, str] = {}
    sources: dict[str, str] = {}
    for e in entries:
        p = DOCS / e["path"]
        if not p.is_file():
            continue
        texts[e["doc_id"]] = norm(extract_text(p))
        if e["path"] in gen.ALL_SOURCES:
            sources[e["doc_id"]] = norm(" ".join(gen.block_texts(gen.ALL_SOURCES[e["path"]][1])))
        words = len(texts[e["doc_id"]].split())
        if not 150 <= words <= 600 and not counts_only:
            print(f"warning: {e['doc_id']} has {words} words (target 150-600)")

    # ---------------------------------------------------------- questions
    questions = []
    q_lines = (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(q_lines, 1):
        if not line.strip():
            continue
        try:
            questions.append(json.loads(line))
        except json.JSONDecodeError as exc:
            err(f"questions.jsonl line {n}: {exc}")
    seen = set()
    for q in questions:
        qid = q.get("question_id")
        if list(q) != QUESTION_KEYS:
            err(f"{qid}: keys {list(q)} != {QUESTION_KEYS}")
            continue
        if qid in seen:
            err(f"duplicate question_id {qid}")
        seen.add(qid)
        if q["principal"] not in PRINCIPALS:
            err(f"{qid}: unknown principal {q['principal']}")
            continue
        if q["query_type"] not in QUERY_TYPES:
            err(f"{qid}: bad query_type {q['query_type']}")
        if q["category"] not in CATEGORIES:
            err(f"{qid}: bad category {q['category']}")
        groups = PRINCIPALS[q["principal"]]
        for d in q["gold_doc_ids"]:
            if d not in by_id:
                err(f"{qid}: unknown gold_doc_id {d}")
        if q["expected_behavior"] == "answer":
            if q["expected_refusal_reason"] is not None:
                err(f"{qid}: answer with a refusal reason")
            if not q["gold_answers"] or not q["gold_doc_ids"]:
                err(f"{qid}: answer without gold answers / gold docs")
            for d in q["gold_doc_ids"]:
                if d in by_id and not groups & set(by_id[d]["permission_set"]):
                    err(f"{qid}: principal {q['principal']} cannot read gold doc {d}")
            for ans in q["gold_answers"]:
                a = norm(ans)
                hit_text = any(a in texts.get(d, "") for d in q["gold_doc_ids"])
                hit_src = any(a in sources.get(d, texts.get(d, "")) for d in q["gold_doc_ids"])
                if not (hit_text and hit_src):
                    err(
                        f"{qid}: gold answer {ans!r} not found in {q['gold_doc_ids']} "
                        f"(extracted={hit_text}, source={hit_src})"
                    )
        elif q["expected_behavior"] == "refuse":
            if q["expected_refusal_reason"] not in REFUSALS:
                err(f"{qid}: bad refusal reason {q['expected_refusal_reason']}")
            if q["gold_answers"]:
                err(f"{qid}: refusal with gold answers")
        else:
            err(f"{qid}: bad expected_behavior {q['expected_behavior']}")
        if q["category"] == "permission_restricted":
            # the principal must not be able to read any document that holds the answer
            for d in q["gold_doc_ids"]:
                if groups & set(by_id[d]["permission_set"]):
                    err(f"{qid}: restricted question but {q['principal']} can read {d}")
        if q["category"] == "stale_only" and q["expected_refusal_reason"] != "stale_only":
            err(f"{qid}: stale_only question should refuse with stale_only")
        if q["category"] == "missing_document" and q["gold_doc_ids"]:
            err(f"{qid}: missing_document question with gold docs")

    cats = collections.Counter(q.get("category") for q in questions)
    for c, m in MIN_COUNTS.items():
        if cats[c] < m:
            err(f"category {c}: {cats[c]} questions (< {m})")

    beh = collections.Counter(q.get("expected_behavior") for q in questions)
    reasons = collections.Counter(
        q.get("expected_refusal_reason")
        for q in questions
        if q.get("expected_behavior") == "refuse"
    )
    print(f"documents: {len(entries)}  formats: {dict(sorted(fmt_counts.items()))}")
    print(f"questions: {len(questions)}  behaviour: {dict(beh)}  refusal reasons: {dict(reasons)}")
    print("| category | count |")
    print("|---|---|")
    for c in sorted(CATEGORIES, key=lambda c: list(MIN_COUNTS).index(c)):
        print(f"| {c} | {cats[c]} |")
    if errors:
        print(f"\n{len(errors)} error(s):")
        for e in errors:
            print("  -", e)
        return 1
    print("\nOK: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
