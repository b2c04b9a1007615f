"""Review batches and reviewers' verdicts.

A batch is a stratified sample of one run's answers, written to the artifact store like every
artifact (stage `review_batch`, table `review_items`, content-addressed by the run, the answers
drawn and the sampling settings). Strata are the gate's outcomes (emitted, revised, blocked,
refused) crossed with low / other confidence; low-confidence cells are over-sampled and every
item carries its weight (cell size / cell sample), so a rate computed with the weights estimates
the run's rate, not the sample's.

What a reviewer judges is the answer the gate decided on (the draft before any revision), so
"blocked but correct" and "emitted but hallucinated" are both readable from one verdict.

Verdicts live beside the store's artifacts in `<store>/_reviews/<batch key>/<reviewer>.jsonl`:
one JSON object per line, appended with a single write and fsynced, never rewritten. The latest
line of a reviewer for an answer is that reviewer's verdict; a torn last line (a killed write)
is skipped when read.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import math
import os
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, Field

from stages import contracts
from stages.store import ArtifactRef, ArtifactStore, canonical_json

STAGE = "review_batch"
VERSION = "1.0.0"
TABLE = "review_items"
VERDICTS_DIR = "_reviews"
STRATA = ("emitted", "revised", "blocked", "refused")
ANSWER_VERDICTS = ("correct", "hallucinated", "should_have_refused", "wrongly_refused")
CLAIM_VERDICTS = ("supported", "unsupported")
SAMPLE, DISAGREEMENTS = "sample", "disagreements"  # a batch's kind; disagreements are listed first
REVIEWER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ReviewError(ValueError):
    """A run, batch, reviewer or verdict that cannot be used, said in one line."""


class SampleConfig(BaseModel):
    n: int = Field(50, ge=1, description="answers to draw")
    seed: int = Field(0, description="the draw's random seed (recorded in the batch)")
    low_confidence: float = Field(
        0.6, ge=0, le=1, description="below: a low-confidence answer (confidence, else score)"
    )
    low_boost: float = Field(3.0, ge=1, description="how much more often low ones are drawn")


# ---------------------------------------------------------------- runs


def find_run(runs_dir: Path, run_id: str) -> Path:
    """`runs/<run_id>/` (a unique prefix is enough), or a ReviewError naming what exists."""
    exact = runs_dir / run_id
    if (exact / "trace.jsonl").is_file():
        return exact
    found = (
        sorted(p for p in runs_dir.glob(f"{run_id}*") if (p / "trace.jsonl").is_file())
        if runs_dir.is_dir()
        else []
    )
    if len(found) == 1:
        return found[0]
    known = sorted(p.name for p in runs_dir.glob("*") if (p / "trace.jsonl").is_file())
    if found:
        raise ReviewError(f"run id {run_id!r} is ambiguous: {[p.name for p in found]}")
    shown = ", ".join(known[-5:]) or "none"
    raise ReviewError(f"no run {run_id!r} in {runs_dir} (latest runs: {shown})")


def stratum_of(final: dict) -> str:
    if final.get("status") == "refused":
        return "refused"
    if final.get("status") == "blocked":
        return "blocked"
    return "revised" if final.get("action") == "revise" else "emitted"


def _claims_for_review(report: dict | None) -> list[dict]:
    keep = ("text", "char_start", "char_end", "score", "status", "judge", "critical", "reasons")
    claims = []
    for claim in (report or {}).get("claims") or []:
        row = {k: claim.get(k) for k in keep}
        row["evidence_spans"] = claim.get("evidence_spans") or []
        lexical = [c["score"] for c in claim.get("checks") or [] if c.get("name") == "lexical"]
        row["lexical"] = lexical[0] if lexical else None
        claims.append(row)
    return claims


def _evidence_for_review(rows: list[dict]) -> list[dict]:
    keep = ("evidence_id", "doc_id", "title", "section_path", "text", "char_start", "char_end")
    return [{k: row.get(k) for k in keep} for row in rows]


def items_from_run(run_dir: Path) -> list[dict]:
    """One review item per answer of the run, from its trace (the draft the gate judged, its
    first report's claims, the evidence); raises ReviewError on an unreadable trace."""
    run_id = run_dir.name
    items = []
    with open(run_dir / "trace.jsonl", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                trace = json.loads(line)
            except ValueError as exc:
                raise ReviewError(f"{run_dir}/trace.jsonl line {number}: {exc}") from exc
            final = trace.get("final") or {}
            report = trace.get("guardrails") or {}
            attribution = trace.get("attribution") or {}
            generation = trace.get("generation") or {}
            stratum = stratum_of(final)
            draft = None
            if stratum != "refused":
                draft = attribution.get("answer") or generation.get("answer") or final.get("answer")
            confidence = final.get("confidence")
            score = report.get("overall_score")
            items.append(
                {
                    "answer_id": f"{run_id}/{trace['question_id']}",
                    "run_id": run_id,
                    "question_id": trace["question_id"],
                    "question": trace.get("question") or final.get("question") or "",
                    "stratum": stratum,
                    "status": final.get("status"),
                    "action": final.get("action"),
                    "refusal_reason": final.get("refusal_reason"),
                    "draft": draft,
                    "final_answer": final.get("answer"),
                    "confidence": confidence,
                    "overall_score": score,
                    "claims_json": json.dumps(_claims_for_review(report), default=str),
                    "evidence_json": json.dumps(
                        _evidence_for_review(trace.get("evidence") or []), default=str
                    ),
                }
            )
    return items


# ---------------------------------------------------------------- sampling


def is_low(item: dict, line: float) -> bool:
    value = item.get("confidence")
    if value is None:
        value = item.get("overall_score")
    return value is not None and value < line


def allocate(sizes: dict[Any, int], n: int, boost: dict[Any, float]) -> dict[Any, int]:
    """Sample sizes per cell: at least one from every non-empty cell while n allows, the rest in
    proportion to sqrt(size) x boost (a compromise: small strata get enough to estimate, large
    ones still more), never more than a cell holds."""
    cells = [c for c, size in sizes.items() if size > 0]
    take = dict.fromkeys(sizes, 0)
    if n >= sum(sizes.values()):
        return dict(sizes)
    order = sorted(cells, key=lambda c: -math.sqrt(sizes[c]) * boost[c])
    for cell in order[:n]:
        take[cell] = 1
    left = n - sum(take.values())
    while left > 0:
        open_cells = [c for c in cells if take[c] < sizes[c]]
        shares = {c: math.sqrt(sizes[c]) * boost[c] for c in open_cells}
        total = sum(shares.values())
        quota = {c: left * shares[c] / total for c in open_cells}
        granted = 0
        for cell in open_cells:
            extra = min(int(quota[cell]), sizes[cell] - take[cell])
            take[cell] += extra
            granted += extra
        if granted == 0:  # the remainders: largest first
            for cell in sorted(open_cells, key=lambda c: quota[c] - int(quota[c]), reverse=True):
                if left - granted == 0:
                    break
                take[cell] += 1
                granted += 1
        left -= granted
    return take


def draw(items: list[dict], config: SampleConfig) -> list[dict]:
    """The stratified sample, each item with its cell, weight and inclusion probability."""
    cells: dict[tuple[str, bool], list[dict]] = defaultdict(list)
    for item in items:
        cells[(item["stratum"], is_low(item, config.low_confidence))].append(item)
    sizes = {cell: len(rows) for cell, rows in cells.items()}
    boost = {cell: config.low_boost if cell[1] else 1.0 for cell in cells}
    take = allocate(sizes, config.n, boost)
    rng = random.Random(config.seed)
    drawn = []
    for cell in sorted(cells):
        rows = sorted(cells[cell], key=lambda r: r["answer_id"])
        for item in rng.sample(rows, take[cell]):
            probability = take[cell] / sizes[cell]
            drawn.append(
                {
                    **item,
                    "low_confidence": cell[1],
                    "inclusion_probability": probability,
                    "weight": 1.0 / probability,
                }
            )
    return sorted(drawn, key=lambda r: (STRATA.index(r["stratum"]), r["answer_id"]))


# Why a disagreements batch queued an item, and the second judge's view: a stratified sample's
# items have neither, so they are null there, and only there.
DISAGREEMENT_FIELDS = ("queue_reason", "second_opinion_json")


def batch_table(items: list[dict], kind: str = SAMPLE) -> pa.Table:
    """The batch's `review_items` table, built strictly against its contract
    (`stages.contracts`): every item names each field of the contract and no other, each value
    of its field's type, or a `ContractError` names the item and the field. Only a sample's
    items may leave out the disagreement fields, which are null in a sample."""
    if kind not in (SAMPLE, DISAGREEMENTS):
        raise ReviewError(f"unknown batch kind {kind!r}: {SAMPLE} or {DISAGREEMENTS}")
    if kind == SAMPLE:
        items = [{**dict.fromkeys(DISAGREEMENT_FIELDS), **item} for item in items]
    return contracts.table_of(TABLE, items, stage=STAGE)


def write_batch(
    store: ArtifactStore, items: list[dict], config: BaseModel, source: str, kind: str = SAMPLE
) -> ArtifactRef:
    """The batch as a store artifact (atomic; the same draw of the same run is the same key).
    `kind`: a stratified `sample`, or the `disagreements` of two judges (sampled_judging)."""
    table = batch_table(items, kind)
    settings = config.model_dump()
    inputs = {
        "source": source,
        **({"kind": kind} if kind != SAMPLE else {}),
        "answers": hashlib.sha256(
            canonical_json(sorted(i["answer_id"] for i in items)).encode()
        ).hexdigest(),
    }
    key = hashlib.sha256(
        canonical_json({"stage": STAGE, "version": VERSION, "config": settings, **inputs}).encode()
    ).hexdigest()
    if existing := store.lookup(STAGE, key):
        return existing
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        counts[item["stratum"]] += 1
    return store.write(
        STAGE,
        key,
        version=VERSION,
        config=settings,
        input_keys={"run": source},
        outputs={TABLE: table},
        extra={"strata": dict(counts), "kind": kind},
    )


def find_batch(store: ArtifactStore, key: str) -> ArtifactRef:
    refs = [r for r in store.list_refs(STAGE) if r.key.startswith(key)]
    if len(refs) == 1:
        return refs[0]
    if refs:
        raise ReviewError(f"batch {key!r} is ambiguous: {[r.key[:12] for r in refs]}")
    known = ", ".join(r.key[:12] for r in store.list_refs(STAGE)) or "none"
    raise ReviewError(f"no review batch {key!r} in {store.url} (batches: {known})")


def load_items(store: ArtifactStore, ref: ArtifactRef) -> list[dict]:
    return store.read_table(ref, TABLE).to_pylist()


def list_batches(store: ArtifactStore) -> list[dict]:
    """Every batch, the judges' disagreements first (they are what a reviewer should see
    first), then by creation time."""
    out = []
    for ref in store.list_refs(STAGE):
        manifest = store.manifest(ref)
        out.append(
            {
                "key": ref.key,
                "run": manifest.get("input_keys", {}).get("run"),
                "created_at": manifest.get("created_at"),
                "answers": manifest.get("tables", {}).get(TABLE, {}).get("rows"),
                "strata": manifest.get("strata", {}),
                "kind": manifest.get("kind", SAMPLE),
            }
        )
    return sorted(out, key=lambda b: (b["kind"] != DISAGREEMENTS, b["created_at"] or ""))


# ---------------------------------------------------------------- verdicts


def verdicts_dir(store: ArtifactStore, batch_key: str) -> Path:
    if store.remote:
        raise ReviewError("verdicts are kept beside a local store; this store is object storage")
    return Path(store.root) / VERDICTS_DIR / batch_key


def check_reviewer(name: str) -> str:
    if not REVIEWER_RE.match(name or ""):
        raise ReviewError(
            f"reviewer name {name!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit"
        )
    return name


def verdict_problems(row: dict, known: dict[str, dict]) -> list[str]:
    """Why a verdict row cannot be stored (empty: it can)."""
    problems = []
    answer_id = row.get("answer_id")
    item = known.get(answer_id) if isinstance(answer_id, str) else None
    if not answer_id:
        problems.append("no answer_id")
    elif item is None:
        problems.append(f"answer_id {answer_id!r} is not in this batch")
    verdict = row.get("verdict")
    if verdict is not None and verdict not in ANSWER_VERDICTS:
        problems.append(f"verdict {verdict!r} is not one of {', '.join(ANSWER_VERDICTS)}")
    claims = row.get("claims") or {}
    if not isinstance(claims, dict):
        problems.append("claims must map a claim's index to supported / unsupported")
        claims = {}
    n_claims = len(json.loads(item["claims_json"])) if item else None
    for index, value in claims.items():
        if value not in (*CLAIM_VERDICTS, None):
            problems.append(f"claim {index}: {value!r} is not supported / unsupported")
        elif not str(index).isdigit() or (n_claims is not None and int(index) >= n_claims):
            problems.append(f"claim {index!r}: the answer has {n_claims} claims (0-based)")
    if row.get("note") is not None and not isinstance(row.get("note"), str):
        problems.append("note must be text")
    if verdict is None and not claims and not row.get("note"):
        problems.append("empty: no verdict, no claim verdict, no note")
    return problems


def _record(row: dict, reviewer: str, source: str) -> dict:
    return {
        "answer_id": row["answer_id"],
        "reviewer": reviewer,
        "verdict": row.get("verdict"),
        "claims": {str(k): v for k, v in (row.get("claims") or {}).items()},
        "note": row.get("note") or "",
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        "source": source,
    }


def append_verdicts(directory: Path, reviewer: str, records: list[dict]) -> None:
    """All `records` in one append of whole lines, flushed to disk before returning: a killed
    write leaves at most one torn last line, which readers skip."""
    directory.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    fd = os.open(
        directory / f"{check_reviewer(reviewer)}.jsonl",
        os.O_WRONLY | os.O_CREAT | os.O_APPEND,
        0o644,
    )
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def save_verdict(
    store: ArtifactStore,
    batch_key: str,
    items: dict[str, dict],
    reviewer: str,
    row: dict,
    source: str = "page",
) -> dict:
    """Validate and append one verdict; returns the stored record or raises ReviewError."""
    check_reviewer(reviewer)
    if problems := verdict_problems(row, items):
        raise ReviewError("; ".join(problems))
    record = _record(row, reviewer, source)
    append_verdicts(verdicts_dir(store, batch_key), reviewer, [record])
    return record


def read_verdicts(store: ArtifactStore, batch_key: str) -> dict[str, dict[str, dict]]:
    """{reviewer: {answer_id: latest record}} for one batch."""
    directory = verdicts_dir(store, batch_key)
    out: dict[str, dict[str, dict]] = {}
    for path in sorted(directory.glob("*.jsonl")) if directory.is_dir() else []:
        latest: dict[str, dict] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn last line of a killed write
            if isinstance(record, dict) and record.get("answer_id"):
                latest[record["answer_id"]] = record
        out[path.stem] = latest
    return out


# ---------------------------------------------------------------- import


def _parse_claims(value: Any) -> Any:
    if value in (None, ""):
        return {}
    if isinstance(value, str):
        return json.loads(value)
    return value


def read_import_rows(path: Path) -> list[tuple[int, dict | str]]:
    """(line or row number, the row, or why it cannot be read) for a CSV or JSONL file."""
    rows: list[tuple[int, dict | str]] = []
    if path.suffix.lower() == ".csv":
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = {"answer_id", "verdict"} - set(reader.fieldnames or [])
            if missing:
                raise ReviewError(f"{path}: the header lacks {sorted(missing)}")
            for number, raw in enumerate(reader, start=2):
                row: dict[str, Any] = {k: (v if v != "" else None) for k, v in raw.items() if k}
                try:
                    row["claims"] = _parse_claims(row.get("claims"))
                except ValueError:
                    rows.append((number, "claims is not JSON"))
                    continue
                rows.append((number, row))
        return rows
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise ReviewError(f"{path}: expected a .csv or .jsonl file")
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                rows.append((number, f"not JSON ({exc})"))
                continue
            if not isinstance(row, dict):
                rows.append((number, "not a JSON object"))
                continue
            rows.append((number, row))
    return rows


def import_verdicts(
    store: ArtifactStore, batch_key: str, path: Path, reviewer: str | None
) -> tuple[int, list[str]]:
    """Store every row of `path` as a verdict, or none: (rows stored, one error per bad row).
    A row's own `reviewer` column wins over `reviewer`."""
    ref = find_batch(store, batch_key)
    items = {i["answer_id"]: i for i in load_items(store, ref)}
    errors: list[str] = []
    by_reviewer: dict[str, list[dict]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    source = f"import:{path.name}"
    for number, row in read_import_rows(path):
        where = f"{path.name}:{number}"
        if isinstance(row, str):
            errors.append(f"{where}: {row}")
            continue
        who = row.get("reviewer") or reviewer
        if not who:
            errors.append(f"{where}: no reviewer (a reviewer column or --reviewer)")
            continue
        if not REVIEWER_RE.match(str(who)):
            errors.append(f"{where}: reviewer name {who!r} is not allowed")
            continue
        try:
            problems = verdict_problems(row, items)
        except (ValueError, TypeError) as exc:
            problems = [str(exc)]
        if (who, row.get("answer_id")) in seen:
            problems.append(f"answer_id {row.get('answer_id')!r} twice for reviewer {who}")
        seen.add((who, row.get("answer_id")))
        if problems:
            errors.append(f"{where}: " + "; ".join(problems))
            continue
        by_reviewer[str(who)].append(_record(row, str(who), source))
    if errors:
        return 0, errors
    directory = verdicts_dir(store, ref.key)
    for who, records in by_reviewer.items():
        append_verdicts(directory, who, records)
    return sum(len(r) for r in by_reviewer.values()), []
