"""Frozen eval sets, metrics by axis and the release gate (`grounding eval`).

An eval set lives in `eval/sets/<name>-v<N>/`: `questions.jsonl` (gold answers, gold doc ids and
spans, expected behaviour, principal, query type), `corpus.json` (the corpus snapshot: a path plus
the sha256 of every corpus file; `copied: true` when the corpus is inside the set) and
`manifest.json` (sha256 of every file of the set). `verify_set` refuses a set whose files do not
match, naming the file.

The metrics are pure functions over the run's artifact tables and the gold fields:

- retrieval:   context recall / precision (ragas ID-based), MRR and nDCG@10 (pytrec_eval) of
               the reranked documents against the gold doc ids, plus candidate recall (pre-rerank);
- generation:  with perfect retrieval (evidence built from the gold spans) the share of answers the
               guardrail emits (faithfulness pass rate) and the share containing a gold answer;
- end_to_end:  factuality, attribution, coverage, refusal precision / recall, format compliance,
               permission leaks, calibration (ECE of rerank confidence vs a correct answer);
- guardrail:   share of unsupported pre-guardrail answers blocked, and the false-positive rate;
- cost:        seconds per question by stage, cache hit ratio (reported, never gated).

`--gate` compares with `eval/baseline/<set>.json` using the per-axis tolerances in
`eval/gate.yaml`; `--promote` writes a new baseline after a passing gate.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html
import io
import json
import math
import re
import time
import unicodedata
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import typer
import yaml

ROOT = Path(__file__).resolve().parent.parent
SETS_DIR = ROOT / "eval" / "sets"
BASELINE_DIR = ROOT / "eval" / "baseline"
REPORTS_DIR = ROOT / "eval" / "reports"
GATE_FILE = ROOT / "eval" / "gate.yaml"
DEFAULT_CONFIG = ROOT / "configs" / "pipeline.yaml"
AXES = ("retrieval", "generation", "end_to_end", "guardrail", "cost")
GATED_AXES = ("retrieval", "generation", "end_to_end", "guardrail")
FINAL_STATUSES = ("answered", "refused", "blocked")
MARKER_RE = re.compile(r"\s*\[E\d+\]")
WORST_FAILURES = 15


class EvalSetError(ValueError):
    """The eval set is missing, malformed, or does not match its manifest."""


class GateFailure(RuntimeError):
    """One or more axes regressed beyond tolerance; `axes` names them."""

    def __init__(self, axes: list[str], message: str) -> None:
        super().__init__(message)
        self.axes = axes


# ---------------------------------------------------------------- eval sets


@dataclass
class EvalSet:
    name: str
    path: Path
    set_hash: str
    corpus_dir: Path
    questions: list[dict]
    manifest: dict


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_set(name: str | Path, root: Path = ROOT) -> Path:
    candidate = Path(name)
    if candidate.is_dir():
        return candidate
    path = root / "eval" / "sets" / str(name)
    if not path.is_dir():
        known = sorted(p.name for p in (root / "eval" / "sets").glob("*") if p.is_dir())
        raise EvalSetError(f"eval set {str(name)!r} not found under eval/sets/; known: {known}")
    return path


def verify_set(set_dir: Path, root: Path = ROOT) -> EvalSet:
    """Check every file against manifest.json (and the referenced corpus against corpus.json)."""
    set_dir = Path(set_dir)
    manifest_path = set_dir / "manifest.json"
    if not manifest_path.is_file():
        raise EvalSetError(f"eval set {set_dir}: no manifest.json")
    manifest = json.loads(manifest_path.read_text())
    name = manifest.get("name", set_dir.name)
    files: dict[str, str] = manifest.get("files", {})
    for rel, expected in sorted(files.items()):
        path = set_dir / rel
        if not path.is_file():
            raise EvalSetError(
                f"eval set {name}: file {rel} is listed in manifest.json but missing"
            )
        actual = sha256_file(path)
        if actual != expected:
            raise EvalSetError(
                f"eval set {name}: file {rel} does not match manifest.json "
                f"(sha256 {actual[:12]}…, expected {expected[:12]}…); the set is frozen — "
                f"rebuild it as a new version with scripts/build_eval_sets.py"
            )
    present = {
        p.relative_to(set_dir).as_posix()
        for p in set_dir.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }
    extra = sorted(present - set(files))
    if extra:
        raise EvalSetError(f"eval set {name}: file {extra[0]} is not in manifest.json")
    set_hash = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    if manifest.get("set_hash") and manifest["set_hash"] != set_hash:
        raise EvalSetError(f"eval set {name}: manifest.json set_hash does not match its files")
    if "corpus.json" not in files or "questions.jsonl" not in files:
        raise EvalSetError(f"eval set {name}: needs corpus.json and questions.jsonl")
    corpus = json.loads((set_dir / "corpus.json").read_text())
    corpus_dir = (set_dir if corpus.get("copied") else root) / corpus["path"]
    if not corpus.get("copied"):  # a referenced corpus: check the live files against the snapshot
        for rel, expected in sorted(corpus["files"].items()):
            path = corpus_dir / rel
            if not path.is_file():
                raise EvalSetError(f"eval set {name}: corpus file {corpus['path']}/{rel} missing")
            if sha256_file(path) != expected:
                raise EvalSetError(
                    f"eval set {name}: corpus file {corpus['path']}/{rel} does not match the "
                    f"snapshot in corpus.json"
                )
        live = {p.relative_to(corpus_dir).as_posix() for p in corpus_dir.rglob("*") if p.is_file()}
        extra = sorted(live - set(corpus["files"]))
        if extra:
            raise EvalSetError(
                f"eval set {name}: corpus file {corpus['path']}/{extra[0]} is not in corpus.json"
            )
    questions = [
        json.loads(line)
        for line in (set_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return EvalSet(name, set_dir, set_hash, corpus_dir, questions, manifest)


# ---------------------------------------------------------------- small pure metrics


def normalize_answer(text: str | None) -> str:
    text = MARKER_RE.sub("", unicodedata.normalize("NFKC", text or ""))
    text = text.replace("’", "'").replace("–", "-").replace("—", "-")
    return " ".join(text.casefold().split())


def contains_gold(answer: str | None, golds: list[str]) -> bool:
    """The answer contains at least one gold answer (case- and whitespace-insensitive)."""
    norm = normalize_answer(answer)
    return bool(norm) and any(normalize_answer(g) and normalize_answer(g) in norm for g in golds)


def contains_all(answer: str | None, golds: list[str]) -> bool:
    norm = normalize_answer(answer)
    return bool(norm) and bool(golds) and all(normalize_answer(g) in norm for g in golds)


def expected_calibration_error(
    confidences: list[float], outcomes: list[bool], bins: int = 10
) -> float | None:
    """ECE with equal-width bins: sum over bins of |bin| / n * |mean confidence - accuracy|."""
    pairs = [(float(c), bool(o)) for c, o in zip(confidences, outcomes, strict=True)]
    if not pairs:
        return None
    total = 0.0
    for members in reliability_bins(pairs, bins):
        if members:
            mean_conf = sum(c for c, _ in members) / len(members)
            accuracy = sum(o for _, o in members) / len(members)
            total += len(members) / len(pairs) * abs(mean_conf - accuracy)
    return total


def reliability_bins(pairs: list[tuple[float, bool]], bins: int = 10) -> list[list]:
    grouped: list[list] = [[] for _ in range(bins)]
    for confidence, outcome in pairs:
        index = min(int(max(confidence, 0.0) * bins), bins - 1)
        grouped[index].append((confidence, outcome))
    return grouped


def refusal_precision_recall(
    expected_refuse: list[bool], predicted_refuse: list[bool]
) -> tuple[float | None, float | None]:
    both = sum(e and p for e, p in zip(expected_refuse, predicted_refuse, strict=True))
    predicted, expected = sum(predicted_refuse), sum(expected_refuse)
    return (both / predicted if predicted else None, both / expected if expected else None)


def permission_leaks(
    cited: list[tuple[str, str, list[str]]],
    principals: dict[str, list[str]],
    permissions: dict[str, list[str]],
) -> list[tuple[str, str]]:
    """(question_id, doc_id) for every cited document the principal may not read.

    `cited` holds (question_id, principal, cited doc ids) of answered questions; an unknown
    principal has no groups and an unknown document no permission set, so both count as leaks.
    """
    leaks = []
    for qid, principal, doc_ids in cited:
        groups = set(principals.get(principal, []))
        for doc_id in dict.fromkeys(doc_ids):
            if not groups & set(permissions.get(doc_id, [])):
                leaks.append((qid, doc_id))
    return leaks


def _mean(values: list[float | bool]) -> float | None:
    return sum(float(v) for v in values) / len(values) if values else None


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


# ---------------------------------------------------------------- retrieval metrics


def retrieval_metrics(gold: dict[str, list[str]], ranked: dict[str, list[str]]) -> dict[str, Any]:
    """ID-based context recall / precision (ragas) and MRR / nDCG@10 (pytrec_eval) over the
    questions with gold documents; `ranked` holds each question's documents in rank order."""
    qids = sorted(q for q, docs in gold.items() if docs)
    if not qids:
        return {"context_recall": None, "context_precision": None, "mrr": None, "ndcg_at_10": None}
    recall, precision = _ragas_id_scores([ranked.get(q, []) for q in qids], [gold[q] for q in qids])
    try:
        import pytrec_eval
    except ImportError:  # a partial install: the same figures in plain Python
        return {
            "context_recall": _mean(recall),
            "context_precision": _mean(precision),
            **_rank_metrics({q: gold[q] for q in qids}, ranked),
        }
    qrels = {q: {d: 1 for d in gold[q]} for q in qids}
    run = {
        q: {d: 1.0 / rank for rank, d in enumerate(ranked.get(q) or ["__none__"], 1)} for q in qids
    }
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.10"}).evaluate(run)
    return {
        "context_recall": _mean(recall),
        "context_precision": _mean(precision),
        "mrr": _mean([scores[q]["recip_rank"] for q in qids]),
        "ndcg_at_10": _mean([scores[q]["ndcg_cut_10"] for q in qids]),
    }


def _rank_metrics(gold: dict[str, list[str]], ranked: dict[str, list[str]]) -> dict[str, float]:
    """MRR and binary nDCG@10 in plain Python (what pytrec_eval computes; a cross-check)."""
    rr, ndcg = [], []
    for qid, docs in gold.items():
        wanted, got = set(docs), ranked.get(qid, [])
        rr.append(next((1.0 / i for i, d in enumerate(got, 1) if d in wanted), 0.0))
        dcg = sum(1.0 / math.log2(i + 1) for i, d in enumerate(got[:10], 1) if d in wanted)
        ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(wanted), 10) + 1))
        ndcg.append(dcg / ideal if ideal else 0.0)
    return {"mrr": _mean(rr), "ndcg_at_10": _mean(ndcg)}


def _ragas_id_scores(
    retrieved: list[list[str]], reference: list[list[str]]
) -> tuple[list[float], list[float]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from ragas.dataset_schema import SingleTurnSample
        from ragas.metrics import IDBasedContextPrecision, IDBasedContextRecall

        recall_metric, precision_metric = IDBasedContextRecall(), IDBasedContextPrecision()
        recall, precision = [], []
        for got, want in zip(retrieved, reference, strict=True):
            if not got:  # ragas divides by the number retrieved
                recall.append(0.0)
                precision.append(0.0)
                continue
            sample = SingleTurnSample(retrieved_context_ids=got, reference_context_ids=want)
            recall.append(float(recall_metric.single_turn_score(sample)))
            precision.append(float(precision_metric.single_turn_score(sample)))
    return recall, precision


# ---------------------------------------------------------------- generation with gold evidence


def gold_evidence(
    questions: list[dict], documents: dict[str, dict], subs: dict[str, list[str]]
) -> list[dict]:
    """Evidence rows from the gold spans: the document sentences that contain a gold answer."""
    from stages.common.text import content_tokens, coverage, sentence_spans

    rows = []
    for question in questions:
        qid = question["question_id"]
        chosen: dict[tuple[str, int], tuple[int, int, dict]] = {}
        for doc_id in question["gold_doc_ids"]:
            doc = documents.get(doc_id)
            if not doc:
                continue
            text = doc["text"]
            folded = text.casefold()
            spans = sentence_spans(text)
            hints = [
                s["char_start"] for s in question.get("gold_spans") or [] if s["doc_id"] == doc_id
            ]
            for answer in question["gold_answers"]:
                needle = answer.casefold()
                starts = (
                    [m.start() for m in re.finditer(re.escape(needle), folded)] if needle else []
                )
                if not starts:
                    continue
                start = min(starts, key=lambda s: min((abs(s - h) for h in hints), default=0))
                end = start + len(needle)
                covering = [(b, e) for b, e in spans if b < end and start < e]
                if covering:
                    begin, finish = covering[0][0], covering[-1][1]
                    chosen.setdefault((doc_id, begin), (begin, finish, doc))
        parts = subs.get(qid) or [question["question"]]
        for number, (_, (begin, finish, doc)) in enumerate(sorted(chosen.items()), start=1):
            sentence = doc["text"][begin:finish]
            tokens = set(content_tokens(sentence))
            part = max(
                range(len(parts)), key=lambda i: coverage(set(content_tokens(parts[i])), tokens)
            )
            rows.append(
                {
                    "question_id": qid,
                    "evidence_id": f"E{number}",
                    "sub_question": part,
                    "doc_id": doc["doc_id"],
                    "chunk_id": f"gold:{doc['doc_id']}:{begin}",
                    "char_start": begin,
                    "char_end": finish,
                    "text": sentence,
                    "score": 1.0,
                    "title": doc["title"],
                    "section_path": "",
                    "page_number": None,
                    "version": doc["version"],
                    "published_at": doc["published_at"],
                    "indexed_at": doc["indexed_at"],
                    "is_stale": False,
                    "confidence": 1.0,
                }
            )
    return rows


def run_with_gold_evidence(
    questions: list[dict], documents: dict[str, dict], queries: pa.Table, config
) -> tuple[pa.Table, list[str]]:
    """Generation → attribution → guardrails with perfect retrieval; returns (final answers, the
    question ids that had a gold span). The stages are pure, so they are called directly."""
    from stages import attribution, contracts, generation, guardrails

    subs: dict[str, list[str]] = defaultdict(list)
    for row in queries.to_pylist():
        if row["rewrite_kind"] == "decomposition":
            subs[row["question_id"]].append(row["query_text"])
    evidence_rows = gold_evidence(questions, documents, subs)
    covered = sorted({r["question_id"] for r in evidence_rows})
    asked = [q for q in questions if q["question_id"] in set(covered)]
    if not asked:
        return contracts.empty("final_answers"), []
    question_table = contracts.from_rows(
        [{k: q[k] for k in ("question_id", "question", "principal", "query_type")} for q in asked],
        "questions",
    )
    status = contracts.from_rows(
        [
            {"question_id": q, "state": "success", "confidence": 1.0, "is_error": False}
            for q in covered
        ],
        "rerank_status",
    )
    evidence = contracts.from_rows(evidence_rows, "evidence")
    ids = pa.array(covered)
    queries = queries.filter(pa.compute.is_in(queries.column("question_id"), value_set=ids))
    generations = generation.run(
        {
            "questions": question_table,
            "rerank_status": status,
            "evidence": evidence,
            "retrieval_queries": queries,
        },
        config.stage_config("generation"),
    )["generations"]
    attributions = attribution.run(
        {"generations": generations, "evidence": evidence}, config.stage_config("attribution")
    )["attributions"]
    final = guardrails.run(
        {
            "questions": question_table,
            "generations": generations,
            "rerank_status": status,
            "evidence": evidence,
            "attributions": attributions,
        },
        config.stage_config("guardrails"),
    )["final_answers"]
    return final, covered


# ---------------------------------------------------------------- format compliance


def format_problems(answer: dict) -> list[str]:
    """Why a final answer breaks the output contract (empty when it complies)."""
    from stages.generation import REFUSAL_REASONS

    problems = []
    status = answer.get("status")
    if status not in FINAL_STATUSES:
        problems.append(f"unknown status {status!r}")
    if answer.get("action") not in ("emit", "revise", "block"):
        problems.append(f"unknown action {answer.get('action')!r}")
    if status == "answered":
        citations = answer.get("citations") or []
        if not (answer.get("answer") or "").strip():
            problems.append("answered without an answer")
        if not citations:
            problems.append("answered without citations")
        cited = {c.get("evidence_id") for c in citations}
        markers = set(re.findall(r"\[(E\d+)\]", answer.get("answer") or ""))
        if markers - cited:
            problems.append(f"markers without a citation: {sorted(markers - cited)}")
        for c in citations:
            if not c.get("doc_id") or c.get("char_start") is None or c.get("char_end") is None:
                problems.append("citation without doc_id or offsets")
            elif c["char_start"] >= c["char_end"]:
                problems.append("citation with an empty span")
    elif status == "refused":
        if answer.get("answer"):
            problems.append("refusal with an answer")
        if answer.get("refusal_reason") not in REFUSAL_REASONS:
            problems.append(f"unknown refusal_reason {answer.get('refusal_reason')!r}")
    elif status == "blocked" and answer.get("answer"):
        problems.append("blocked answer still carries its text")
    return problems


# ---------------------------------------------------------------- all metrics


@dataclass
class EvalResult:
    eval_set: EvalSet
    config: Any
    metrics: dict[str, Any]
    per_question: list[dict]
    stage_results: dict[str, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0


def _ranked_docs(rows: list[dict]) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for row in rows:
        ranked[row["question_id"]].append((row["rank"], row["doc_id"]))
    return {q: list(dict.fromkeys(d for _, d in sorted(items))) for q, items in ranked.items()}


def compute_metrics(eval_set: EvalSet, config, result, store) -> tuple[dict, list[dict]]:
    """Every axis from the run's artifacts (via `store` and `result.refs`) and the gold fields."""
    refs = result.refs
    gold = {q["question_id"]: q for q in eval_set.questions}
    finals = {r["question_id"]: r for r in result.final_answers.to_pylist()}
    reports = {r["question_id"]: r for r in result.reports.to_pylist()}
    generations = {
        r["question_id"]: r for r in store.read_table(refs["generation"], "generations").to_pylist()
    }
    statuses = {
        r["question_id"]: r for r in store.read_table(refs["rerank"], "rerank_status").to_pylist()
    }
    ranked = _ranked_docs(store.read_table(refs["rerank"], "ranked").to_pylist())
    candidates = _ranked_docs(
        [
            r
            for r in store.read_table(refs["retrieval"], "candidates").to_pylist()
            if r["pool"] == "eligible"
        ]
    )
    evidence: dict[str, list[dict]] = defaultdict(list)
    for row in store.read_table(refs["evidence"], "evidence").to_pylist():
        evidence[row["question_id"]].append(row)
    documents = {
        d["doc_id"]: d for d in store.read_table(refs["ingestion"], "documents").to_pylist()
    }
    principals = config.stage_config("source_selection").principals

    rows = []
    for qid, q in gold.items():
        final = finals.get(qid, {})
        status = final.get("status")
        expect_answer = q["expected_behavior"] == "answer"
        cited = [c["doc_id"] for c in final.get("citations") or []]
        gen = generations.get(qid, {})
        pre_answer = gen.get("answer")
        leaks = (
            permission_leaks(
                [(qid, q["principal"], cited)],
                principals,
                {d: v["permission_set"] for d, v in documents.items()},
            )
            if status == "answered"
            else []
        )
        correct = (
            status == "answered"
            and expect_answer
            and contains_gold(final.get("answer"), q["gold_answers"])
        )
        pre_supported = expect_answer and contains_gold(pre_answer, q["gold_answers"])
        gold_docs = q["gold_doc_ids"] if expect_answer else []
        rank_list = ranked.get(qid, [])
        first_gold = next((i for i, d in enumerate(rank_list, 1) if d in gold_docs), None)
        problems = format_problems(final) if final else ["no final answer"]
        rows.append(
            {
                "question_id": qid,
                "question": q["question"],
                "principal": q["principal"],
                "query_type": q["query_type"],
                "category": q.get("category"),
                "expected_behavior": q["expected_behavior"],
                "expected_refusal_reason": q.get("expected_refusal_reason"),
                "gold_answers": list(q["gold_answers"]),
                "gold_doc_ids": list(q["gold_doc_ids"]),
                "status": status,
                "state": final.get("state"),
                "refusal_reason": final.get("refusal_reason"),
                "answer": final.get("answer"),
                "cited_doc_ids": list(dict.fromkeys(cited)),
                "confidence": statuses.get(qid, {}).get("confidence"),
                "ranked_doc_ids": rank_list[:10],
                "first_gold_rank": first_gold,
                "correct": bool(correct),
                "attributed": bool(status == "answered" and set(cited) & set(gold_docs)),
                "complete": bool(
                    status == "answered" and contains_all(final.get("answer"), q["gold_answers"])
                ),
                "outcome_correct": bool(correct if expect_answer else status != "answered"),
                "format_ok": not problems,
                "format_problems": problems,
                "leaked_doc_ids": [d for _, d in leaks],
                "pre_guardrail_answer": pre_answer,
                "pre_guardrail_supported": bool(pre_supported),
                "guardrail_action": reports.get(qid, {}).get("action"),
                "guardrail_reasons": list(reports.get(qid, {}).get("reasons") or []),
                "guardrail_score": reports.get(qid, {}).get("overall_score"),
                "evidence": [
                    f"[{e['evidence_id']}] {e['doc_id']}: {e['text']}" for e in evidence[qid]
                ],
                "gold_evidence_status": None,
                "gold_evidence_correct": None,
            }
        )
    by_id = {r["question_id"]: r for r in rows}

    # generation only: perfect retrieval
    answerable = [q for q in eval_set.questions if q["expected_behavior"] == "answer"]
    answerable = [q for q in answerable if q["gold_doc_ids"] and q["gold_answers"]]
    queries = store.read_table(refs["retrieval"], "retrieval_queries")
    gold_final, covered = run_with_gold_evidence(answerable, documents, queries, config)
    for answer in gold_final.to_pylist():
        row = by_id[answer["question_id"]]
        row["gold_evidence_status"] = answer["status"]
        row["gold_evidence_correct"] = answer["status"] == "answered" and contains_gold(
            answer["answer"], gold[answer["question_id"]]["gold_answers"]
        )
    gen_rows = [by_id[q] for q in covered]

    expected_answer = [r for r in rows if r["expected_behavior"] == "answer"]
    answered = [r for r in rows if r["status"] == "answered"]
    with_gold_docs = [r for r in expected_answer if r["gold_doc_ids"]]
    multi = [r for r in expected_answer if r["category"] == "multi_part"]
    expected_refuse = [r["expected_behavior"] == "refuse" for r in rows]
    predicted_refuse = [r["status"] != "answered" for r in rows]
    refusal_p, refusal_r = refusal_precision_recall(expected_refuse, predicted_refuse)
    refused_ok = [
        r for r in rows if r["expected_behavior"] == "refuse" and r["status"] == "refused"
    ]
    calibrated = [r for r in rows if r["confidence"] is not None]
    pre = [r for r in rows if r["pre_guardrail_answer"]]
    unsupported = [r for r in pre if not r["pre_guardrail_supported"]]
    blocked = [r for r in pre if r["status"] == "blocked"]
    retrieval = retrieval_metrics(
        {r["question_id"]: r["gold_doc_ids"] for r in with_gold_docs}, ranked
    )
    candidate_recall = _mean(
        [
            len(set(r["gold_doc_ids"]) & set(candidates.get(r["question_id"], [])))
            / len(set(r["gold_doc_ids"]))
            for r in with_gold_docs
        ]
    )
    cost = _cost(result, len(rows))
    metrics = {
        "set": eval_set.name,
        "set_hash": eval_set.set_hash,
        "questions": len(rows),
        "axes": {
            "retrieval": {
                **retrieval,
                "candidate_recall": candidate_recall,
                "n": len(with_gold_docs),
            },
            "generation": {
                "faithfulness_pass_rate": _mean(
                    [r["gold_evidence_status"] == "answered" for r in gen_rows]
                ),
                "gold_evidence_factuality": _mean([r["gold_evidence_correct"] for r in gen_rows]),
                "n": len(gen_rows),
                "n_without_gold_span": len(answerable) - len(gen_rows),
            },
            "end_to_end": {
                "factuality": _mean([r["correct"] for r in expected_answer]),
                "answered_precision": _mean(
                    [r["correct"] for r in answered if r["expected_behavior"] == "answer"]
                    + [False for r in answered if r["expected_behavior"] == "refuse"]
                ),
                "attribution": _mean([r["attributed"] for r in answered if r["gold_doc_ids"]]),
                "coverage": _mean([r["complete"] for r in multi]),
                "refusal_precision": refusal_p,
                "refusal_recall": refusal_r,
                "refusal_reason_accuracy": _mean(
                    [r["refusal_reason"] == r["expected_refusal_reason"] for r in refused_ok]
                ),
                "format_compliance": _mean([r["format_ok"] for r in rows]),
                "permission_leaks": sum(len(r["leaked_doc_ids"]) for r in rows),
                "ece": expected_calibration_error(
                    [r["confidence"] for r in calibrated], [r["correct"] for r in calibrated]
                ),
                "answered_rate": _rate(len(answered), len(rows)),
                "outcome_accuracy": _mean([r["outcome_correct"] for r in rows]),
            },
            "guardrail": {
                "efficacy": _rate(
                    sum(r["status"] == "blocked" for r in unsupported), len(unsupported)
                ),
                "false_positive_rate": _rate(
                    sum(r["pre_guardrail_supported"] for r in blocked), len(blocked)
                ),
                "pre_guardrail_answers": len(pre),
                "unsupported": len(unsupported),
                "blocked": len(blocked),
            },
            "cost": cost,
        },
        "counts": {status: sum(r["status"] == status for r in rows) for status in FINAL_STATUSES},
    }
    return metrics, rows


def _cost(result, n_questions: int) -> dict[str, Any]:
    stages = result.results
    per_stage = {name: round(r.seconds / max(n_questions, 1), 6) for name, r in stages.items()}
    return {
        "seconds_per_question": per_stage,
        "total_seconds_per_question": round(sum(per_stage.values()), 6),
        "cache_hit_ratio": _rate(sum(r.ref.cache_hit for r in stages.values()), len(stages)),
    }


def comparable(metrics: dict) -> dict:
    """Metrics without the timing-dependent cost axis (what two identical runs must agree on)."""
    return {
        **{k: v for k, v in metrics.items() if k != "axes"},
        "axes": {a: v for a, v in metrics["axes"].items() if a != "cost"},
    }


# ---------------------------------------------------------------- running an evaluation


def load_eval_config(config_path: Path | str, overrides: dict[str, Any], eval_set: EvalSet, store):
    from flows.config import load_config

    config = load_config(config_path, overrides)
    config.corpus = eval_set.corpus_dir
    if store:
        config.store = Path(store)
    return config


def evaluate(
    set_name: str | Path,
    config_path: Path | str = DEFAULT_CONFIG,
    overrides: dict[str, Any] | None = None,
    store: Path | str | None = None,
    runner=None,
    root: Path = ROOT,
) -> EvalResult:
    """Verify the set, run every stage on it (the artifact store caches) and compute the metrics."""
    from flows.executor import execute_stage, questions_table, run_stages
    from stages.store import ArtifactStore

    eval_set = verify_set(resolve_set(set_name, root), root)
    config = load_eval_config(config_path, overrides or {}, eval_set, store)
    table = questions_table(
        eval_set.questions, config.default_principal, config.default_query_type, eval_set.name
    )
    started = time.perf_counter()
    result = run_stages(config, table, runner or execute_stage)
    metrics, rows = compute_metrics(eval_set, config, result, ArtifactStore(config.store))
    wall = time.perf_counter() - started
    metrics["axes"]["cost"]["wall_seconds"] = round(wall, 2)
    return EvalResult(eval_set, config, metrics, rows, result.results, wall)


# ---------------------------------------------------------------- the gate


def load_gate(path: Path = GATE_FILE) -> dict:
    return yaml.safe_load(Path(path).read_text()) or {}


def baseline_path(set_name: str, root: Path = ROOT) -> Path:
    return root / "eval" / "baseline" / f"{set_name}.json"


def compare(candidate: dict, baseline: dict | None, gate: dict) -> dict:
    """Per-metric deltas, axis verdicts and the failures (axes regressed beyond tolerance)."""
    rows, failures = [], []
    for axis, specs in (gate.get("axes") or {}).items():
        for metric, spec in specs.items():
            value = candidate["axes"].get(axis, {}).get(metric)
            base = (baseline or {}).get("axes", {}).get(axis, {}).get(metric)
            higher = spec.get("direction", "higher") == "higher"
            tolerance = float(spec.get("tolerance", 0.0))
            delta = None if value is None or base is None else value - base
            worse = None if delta is None else (-delta if higher else delta)
            verdict = "n/a" if delta is None else "ok"
            if worse is not None and worse > tolerance + 1e-12:
                verdict = "regressed"
            elif worse is not None and worse < -1e-12:
                verdict = "improved"
            elif worse is not None and worse > 1e-12:
                verdict = "worse within tolerance"
            limit = spec.get("max")
            if value is not None and limit is not None and value > limit:
                verdict = "regressed"
            if verdict == "regressed":
                failures.append(
                    f"axis {axis}: {metric} {_fmt(base)} → {_fmt(value)} "
                    f"(tolerance {tolerance}{'' if limit is None else f', max {limit}'})"
                )
            rows.append(
                {
                    "axis": axis,
                    "metric": metric,
                    "baseline": base,
                    "candidate": value,
                    "delta": delta,
                    "direction": "higher" if higher else "lower",
                    "tolerance": tolerance,
                    "verdict": verdict,
                }
            )
    if baseline and baseline.get("set_hash") != candidate.get("set_hash"):
        failures.insert(
            0,
            "axis eval_set: the baseline was recorded on a different version of the eval set "
            f"({str(baseline.get('set_hash'))[:12]} vs {candidate['set_hash'][:12]})",
        )
    failed_axes = sorted({f.split(":")[0].removeprefix("axis ") for f in failures})
    e2e_better = any(r["axis"] == "end_to_end" and r["verdict"] == "improved" for r in rows)
    gen_worse = any(
        r["axis"] == "generation" and r["verdict"] in ("regressed", "worse within tolerance")
        for r in rows
    )
    notes = []
    if e2e_better and gen_worse:
        notes.append(
            "lucky retrieval: end-to-end improved while generation-only (gold evidence) "
            "regressed — the gain comes from retrieval, and generation got worse"
        )
    return {
        "has_baseline": baseline is not None,
        "rows": rows,
        "failures": failures,
        "failed_axes": failed_axes,
        "passed": not failures,
        "lucky_retrieval": e2e_better and gen_worse,
        "notes": notes,
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def model_identity(config) -> dict[str, str]:
    from stages.common.models import model_version, resolve_model_path

    spec = config.stage_config("indexing").embedding_model
    path = resolve_model_path(spec)
    digest = hashlib.sha256()
    for file in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        if "__pycache__" in file.parts:
            continue
        digest.update(file.relative_to(path).as_posix().encode())
        digest.update(sha256_file(file).encode())
    return {"embedding_model": spec, "version": model_version(spec), "sha256": digest.hexdigest()}


def baseline_record(run: EvalResult, root: Path = ROOT) -> dict:
    from flows.registry import STAGES

    config = run.config
    return {
        "set": run.eval_set.name,
        "set_hash": run.eval_set.set_hash,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "axes": comparable(run.metrics)["axes"],
        "cost": run.metrics["axes"]["cost"],
        "questions": run.metrics["questions"],
        "counts": run.metrics["counts"],
        "stage_versions": {name: module.VERSION for name, module in STAGES.items()},
        "models": model_identity(config),
        "config": {
            "as_of": str(config.as_of) if config.as_of else None,
            "default_principal": config.default_principal,
            "default_query_type": config.default_query_type,
            "stages": {n: c.model_dump(mode="json") for n, c in config.stages.items()},
        },
    }


# ---------------------------------------------------------------- report


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def plots(run: EvalResult) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = run.per_question
    images = {}
    pairs = [(r["confidence"], r["correct"]) for r in rows if r["confidence"] is not None]
    fig, ax = plt.subplots(figsize=(4.5, 4))
    centers, accuracies, sizes = [], [], []
    for index, members in enumerate(reliability_bins(pairs)):
        if members:
            centers.append((index + 0.5) / 10)
            accuracies.append(sum(o for _, o in members) / len(members))
            sizes.append(len(members))
    ax.plot([0, 1], [0, 1], "--", color="grey", label="perfect calibration")
    ax.bar(centers, accuracies, width=0.09, alpha=0.7, label="share correct")
    for x, y, n in zip(centers, accuracies, sizes, strict=True):
        ax.text(x, y + 0.02, str(n), ha="center", fontsize=7)
    ax.set(xlabel="rerank confidence", ylabel="answered correctly", xlim=(0, 1), ylim=(0, 1.1))
    ax.set_title("Reliability diagram (n per bin)")
    ax.legend(fontsize=7)
    images["reliability"] = _png(fig)

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for outcome, colour in ((True, "tab:green"), (False, "tab:red")):
        values = [c for c, o in pairs if o == outcome]
        axes[0].hist(values, bins=20, range=(0, 1), alpha=0.6, color=colour, label=str(outcome))
        scores = [
            r["guardrail_score"]
            for r in rows
            if r["guardrail_score"] is not None and r["pre_guardrail_supported"] == outcome
        ]
        axes[1].hist(scores, bins=20, range=(0, 1), alpha=0.6, color=colour, label=str(outcome))
    axes[0].set(title="Rerank confidence by correctness", xlabel="confidence")
    axes[1].set(title="Guardrail score by pre-guardrail support", xlabel="weakest-claim score")
    axes[0].legend(title="correct", fontsize=7)
    axes[1].legend(title="supported", fontsize=7)
    images["distributions"] = _png(fig)

    seconds = run.metrics["axes"]["cost"]["seconds_per_question"]
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.barh(list(seconds), [v * 1000 for v in seconds.values()], color="tab:blue")
    ax.invert_yaxis()
    ax.set(xlabel="ms per question", title="Time per stage (this run; cache hits are ~0)")
    images["stage_time"] = _png(fig)
    return images


def worst_failures(rows: list[dict], limit: int = WORST_FAILURES) -> list[dict]:
    """Leaks first, then confident wrong answers, then wrong refusals and blocks."""

    def severity(row: dict) -> tuple:
        wrong_answer = row["status"] == "answered" and not row["correct"]
        return (
            -len(row["leaked_doc_ids"]),
            -int(wrong_answer),
            -(row["confidence"] or 0.0),
            row["question_id"],
        )

    failed = [r for r in rows if not r["outcome_correct"] or r["leaked_doc_ids"]]
    return sorted(failed, key=severity)[:limit]


def _colour(row: dict) -> str:
    return {
        "regressed": "#f8d0d0",
        "worse within tolerance": "#fcebc8",
        "improved": "#d4f2d4",
    }.get(row["verdict"], "white")


def render_html(run: EvalResult, comparison: dict, images: dict[str, str]) -> str:
    e = html.escape
    m = run.metrics
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Eval {e(m['set'])}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #ccc;"
        "padding:3px 8px;font-size:13px;vertical-align:top}.pass{color:green}.fail{color:#b00}"
        "</style></head><body>",
        f"<h1>Release eval: {e(m['set'])}</h1>",
        f"<p>{m['questions']} questions · set {m['set_hash'][:12]} · counts {e(str(m['counts']))}"
        f" · wall {m['axes']['cost'].get('wall_seconds')} s</p>",
    ]
    if not comparison["has_baseline"]:
        out.append("<p><b>No baseline yet</b>: this run has nothing to be compared with.</p>")
    elif comparison["passed"]:
        out.append("<p class='pass'><b>Gate: PASS</b></p>")
    else:
        items = "".join(f"<li>{e(f)}</li>" for f in comparison["failures"])
        out.append(f"<p class='fail'><b>Gate: FAIL</b></p><ul>{items}</ul>")
    for note in comparison["notes"]:
        out.append(f"<p class='fail'><b>{e(note)}</b></p>")
    out.append(
        "<h2>Scores by axis vs baseline</h2><table><tr><th>axis</th><th>metric</th>"
        "<th>baseline</th><th>candidate</th><th>delta</th><th>better</th>"
        "<th>tolerance</th><th>verdict</th></tr>"
    )
    for row in comparison["rows"]:
        delta = "" if row["delta"] is None else f"{row['delta']:+.4f}"
        out.append(
            f"<tr style='background:{_colour(row)}'><td>{e(row['axis'])}</td>"
            f"<td>{e(row['metric'])}</td><td>{_fmt(row['baseline'])}</td>"
            f"<td>{_fmt(row['candidate'])}</td><td>{delta}</td><td>{row['direction']}</td>"
            f"<td>{row['tolerance']}</td><td>{e(row['verdict'])}</td></tr>"
        )
    out.append("</table><h2>All metrics</h2><pre>")
    out.append(e(json.dumps(m["axes"], indent=2)))
    out.append("</pre><h2>Plots</h2>")
    for name, data in images.items():
        out.append(f"<img alt='{name}' src='data:image/png;base64,{data}'>")
    out.append(
        "<h2>Worst failures</h2><table><tr><th>question</th><th>expected</th>"
        "<th>got</th><th>answer</th><th>evidence</th><th>guardrail report</th></tr>"
    )
    for row in worst_failures(run.per_question):
        expected = row["expected_behavior"]
        if expected == "answer":
            expected += f": {row['gold_answers']} from {row['gold_doc_ids']}"
        else:
            expected += f" ({row['expected_refusal_reason']})"
        got = f"{row['status']} {row['refusal_reason'] or ''} conf={_fmt(row['confidence'])}"
        if row["leaked_doc_ids"]:
            got += f" LEAK {row['leaked_doc_ids']}"
        evidence = "<br>".join(e(x[:300]) for x in row["evidence"][:5])
        report = e(f"{row['guardrail_action']}: {'; '.join(row['guardrail_reasons'])}")
        answer = e((row["answer"] or row["pre_guardrail_answer"] or "")[:400])
        out.append(
            f"<tr><td><b>{e(row['question_id'])}</b> [{e(str(row['category']))}, "
            f"{e(row['principal'])}] {e(row['question'])}</td><td>{e(expected)}</td>"
            f"<td>{e(got)}</td><td>{answer}</td><td>{evidence}</td><td>{report}</td></tr>"
        )
    out.append("</table></body></html>")
    return "\n".join(out)


def write_report(run: EvalResult, comparison: dict, reports_dir: Path = REPORTS_DIR) -> Path:
    import pyarrow.parquet as pq

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = Path(reports_dir) / stamp
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = Path(reports_dir) / f"{stamp}-{suffix}"
    folder.mkdir(parents=True)
    payload = {**run.metrics, "gate": {k: v for k, v in comparison.items() if k != "rows"}}
    payload["gate"]["rows"] = comparison["rows"]
    (folder / "metrics.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    pq.write_table(pa.Table.from_pylist(run.per_question), folder / "questions.parquet")
    (folder / "report.html").write_text(render_html(run, comparison, plots(run)))
    return folder


def summary_markdown(run: EvalResult, comparison: dict, folder: Path | None) -> str:
    lines = [f"# Release eval `{run.eval_set.name}`", ""]
    verdict = (
        "no baseline"
        if not comparison["has_baseline"]
        else "PASS"
        if comparison["passed"]
        else "FAIL"
    )
    lines += [f"Gate: **{verdict}**", ""]
    lines += [f"- {f}" for f in comparison["failures"]] + [
        f"- **{n}**" for n in comparison["notes"]
    ]
    lines += ["", "| axis | metric | baseline | candidate | verdict |", "|---|---|---|---|---|"]
    for r in comparison["rows"]:
        lines.append(
            f"| {r['axis']} | {r['metric']} | {_fmt(r['baseline'])} | {_fmt(r['candidate'])} "
            f"| {r['verdict']} |"
        )
    if folder:
        lines += ["", f"Report: `{folder}/report.html`"]
    return "\n".join(lines)


def publish_prefect_artifacts(run: EvalResult, comparison: dict, folder: Path | None) -> bool:
    """Markdown summary and the metric table as Prefect artifacts, only inside a flow run."""
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is None:
        return False
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    key = re.sub(r"[^a-z0-9-]", "-", f"release-eval-{run.eval_set.name}".lower())
    create_markdown_artifact(
        markdown=summary_markdown(run, comparison, folder),
        key=key,
        description=f"release gate on {run.eval_set.name}",
    )
    create_table_artifact(
        table=[{k: _fmt(v) for k, v in r.items()} for r in comparison["rows"]],
        key=f"{key}-metrics",
        description="per-axis metrics vs baseline",
    )
    return True


# ---------------------------------------------------------------- gate + promote + flow


@dataclass
class GateOutcome:
    run: EvalResult
    comparison: dict
    report_dir: Path | None
    promoted: Path | None = None


def release_eval(
    set_name: str,
    config_path: Path | str = DEFAULT_CONFIG,
    overrides: dict[str, Any] | None = None,
    store: Path | str | None = None,
    gate: bool = False,
    promote: bool = False,
    reports_dir: Path | None = REPORTS_DIR,
    root: Path = ROOT,
    runner=None,
) -> GateOutcome:
    """Evaluate, write the report, compare with the baseline; raise GateFailure naming the axes
    when `gate` (or `promote`) and something regressed; write the baseline when `promote`."""
    run = evaluate(set_name, config_path, overrides, store, runner, root)
    base_file = baseline_path(run.eval_set.name, root)
    baseline = json.loads(base_file.read_text()) if base_file.is_file() else None
    comparison = compare(run.metrics, baseline, load_gate(root / "eval" / "gate.yaml"))
    folder = write_report(run, comparison, reports_dir) if reports_dir else None
    publish_prefect_artifacts(run, comparison, folder)
    if (gate or promote) and not comparison["passed"]:
        raise GateFailure(
            comparison["failed_axes"],
            "release gate failed on "
            + run.eval_set.name
            + ":\n  "
            + "\n  ".join(comparison["failures"]),
        )
    promoted = None
    if promote:
        base_file.parent.mkdir(parents=True, exist_ok=True)
        base_file.write_text(json.dumps(baseline_record(run, root), indent=2) + "\n")
        promoted = base_file
    return GateOutcome(run, comparison, folder, promoted)


_FLOW = None


def release_eval_flow():
    """The Prefect flow `release-eval` (built on first use so importing this module stays cheap)."""
    global _FLOW
    if _FLOW is None:
        from prefect import flow

        from flows.pipeline import prefect_stage_runner

        @flow(name="release-eval", log_prints=True, validate_parameters=False)
        def _release_eval(
            set_name: str,
            config_path: str,
            overrides: dict,
            store: str | None,
            gate: bool,
            promote: bool,
            reports_dir: str | None,
        ) -> GateOutcome:
            return release_eval(
                set_name,
                config_path,
                overrides,
                store,
                gate,
                promote,
                Path(reports_dir) if reports_dir else None,
                runner=prefect_stage_runner,
            )

        _FLOW = _release_eval
    return _FLOW


# ---------------------------------------------------------------- CLI


def _parse_overrides(items: list[str]) -> dict[str, Any]:
    from flows.config import ConfigError, parse_overrides

    try:
        return parse_overrides(items)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from exc


def evaluation_command(
    set_name: Annotated[str, typer.Option("--set", help="Eval set under eval/sets/ (or a path).")],
    config: Annotated[
        Path, typer.Option("--config", "-c", help="Candidate pipeline config YAML.")
    ] = DEFAULT_CONFIG,
    set_override: Annotated[
        list[str], typer.Option("--set-override", help="Override a setting: stage.field=value.")
    ] = [],  # noqa: B006 - typer needs a literal default
    store: Annotated[
        Path | None, typer.Option(help="Artifact store for eval runs (default: the config's).")
    ] = None,
    gate: Annotated[bool, typer.Option("--gate", help="Fail when an axis regresses.")] = False,
    promote: Annotated[
        bool, typer.Option("--promote", help="Write the baseline after a passing gate.")
    ] = False,
    reports_dir: Annotated[Path, typer.Option(help="Where reports go.")] = REPORTS_DIR,
    prefect: Annotated[bool, typer.Option(help="Run as the Prefect flow release-eval.")] = True,
) -> None:
    """Evaluate the pipeline on a frozen eval set; --gate compares with eval/baseline/<set>.json."""
    from rich.console import Console

    from flows.config import ConfigError
    from flows.executor import QuestionError

    console = Console()
    overrides = _parse_overrides(set_override)
    started = time.perf_counter()
    try:
        verify_set(resolve_set(set_name))  # fail fast, before the Prefect engine starts
        if prefect:
            outcome = release_eval_flow()(
                set_name,
                str(config),
                overrides,
                str(store) if store else None,
                gate,
                promote,
                str(reports_dir),
            )
        else:
            outcome = release_eval(set_name, config, overrides, store, gate, promote, reports_dir)
    except GateFailure as exc:
        console.print(f"[red]{exc}[/red]")
        console.print(f"failed axes: {', '.join(exc.axes)}")
        raise typer.Exit(1) from exc
    except (EvalSetError, ConfigError, QuestionError) as exc:
        console.print(f"[red]eval error:[/red] {exc}")
        raise typer.Exit(2) from exc
    comparison = outcome.comparison
    for row in comparison["rows"]:
        colour = {"regressed": "red", "improved": "green"}.get(row["verdict"], "white")
        console.print(
            f"{row['axis']:<11} {row['metric']:<26} {_fmt(row['baseline']):>8} → "
            f"[{colour}]{_fmt(row['candidate']):>8}[/{colour}]  {row['verdict']}"
        )
    for note in comparison["notes"]:
        console.print(f"[yellow]{note}[/yellow]")
    if not comparison["has_baseline"]:
        console.print("no baseline for this set yet")
    elif gate or promote:
        console.print("[green]gate passed[/green]")
    if outcome.promoted:
        console.print(f"promoted baseline {outcome.promoted}")
    console.print(f"report {outcome.report_dir} ({time.perf_counter() - started:.1f}s)")


__all__ = [
    "EvalSetError",
    "GateFailure",
    "compare",
    "compute_metrics",
    "evaluate",
    "evaluation_command",
    "expected_calibration_error",
    "permission_leaks",
    "refusal_precision_recall",
    "release_eval",
    "verify_set",
]
