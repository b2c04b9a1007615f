"""The evaluation's metrics: small pure functions, and one function per axis over the per-question
rows `eval/scoring.py` builds from a run.

- retrieval:   context recall / precision (ragas ID-based), MRR and nDCG@10 (pytrec_eval) of
               the reranked documents against the gold doc ids, plus candidate recall (pre-rerank);
- generation:  with perfect retrieval (evidence built from the gold spans) the share of answers the
               guardrail emits (faithfulness pass rate) and the share containing a gold answer;
- end_to_end:  factuality, attribution, coverage, refusal precision / recall, format compliance,
               permission leaks, calibration (ECE of rerank confidence vs a correct answer);
- guardrail:   share of unsupported pre-guardrail answers blocked, and the false-positive rate;
- cost:        seconds per question by stage, cache hit ratio (reported, never gated).
"""

from __future__ import annotations

import math
import unicodedata
import warnings
from typing import Any

from stages.common.text import strip_markers

AXES = ("retrieval", "generation", "end_to_end", "guardrail", "cost")


def normalize_answer(text: str | None) -> str:
    text = strip_markers(unicodedata.normalize("NFKC", text or ""))
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


# ---------------------------------------------------------------- one function per axis


def retrieval_axis(
    rows: list[dict], ranked: dict[str, list[str]], candidates: dict[str, list[str]]
) -> dict[str, Any]:
    """Reranked and candidate documents against the gold doc ids of answerable questions."""
    with_gold_docs = _with_gold_docs(rows)
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
    return {**retrieval, "candidate_recall": candidate_recall, "n": len(with_gold_docs)}


def _with_gold_docs(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["expected_behavior"] == "answer" and r["gold_doc_ids"]]


def generation_axis(gold_evidence_rows: list[dict], n_answerable: int) -> dict[str, Any]:
    """The answers given gold evidence (`gold_evidence_rows`: the questions that had a gold span,
    of the `n_answerable` that could have one)."""
    return {
        "faithfulness_pass_rate": _mean(
            [r["gold_evidence_status"] == "answered" for r in gold_evidence_rows]
        ),
        "gold_evidence_factuality": _mean([r["gold_evidence_correct"] for r in gold_evidence_rows]),
        "n": len(gold_evidence_rows),
        "n_without_gold_span": n_answerable - len(gold_evidence_rows),
    }


def truthfulness(rows: list[dict]) -> float | None:
    """CRAG scoring, mean over questions: +1 a correct answer, 0 no answer (refused or blocked),
    -1 a wrong answer (an answer without a gold answer, or any answer where refusal was expected).
    Unlike accuracy it makes a wrong answer cost more than an honest refusal."""
    scores = [0 if r["status"] != "answered" else (1 if r["correct"] else -1) for r in rows]
    return _mean(scores)


def end_to_end_axis(rows: list[dict]) -> dict[str, Any]:
    """The final answers as a user sees them."""
    expected_answer = [r for r in rows if r["expected_behavior"] == "answer"]
    answered = [r for r in rows if r["status"] == "answered"]
    multi = [r for r in expected_answer if r["category"] == "multi_part"]
    expected_refuse = [r["expected_behavior"] == "refuse" for r in rows]
    predicted_refuse = [r["status"] != "answered" for r in rows]
    refusal_p, refusal_r = refusal_precision_recall(expected_refuse, predicted_refuse)
    refused_ok = [
        r for r in rows if r["expected_behavior"] == "refuse" and r["status"] == "refused"
    ]
    calibrated = [r for r in rows if r["confidence"] is not None]
    return {
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
        "truthfulness": truthfulness(rows),
        # answerable questions left without an answer (refused or blocked): the cost of caution
        "over_refusal_rate": _mean([r["status"] != "answered" for r in expected_answer]),
        # questions about topics absent from the corpus (cross-topic sets) that were not answered
        "out_of_corpus_refused": _mean(
            [r["status"] != "answered" for r in rows if r["category"] == "out_of_corpus"]
        ),
    }


def guardrail_axis(rows: list[dict]) -> dict[str, Any]:
    """What the guardrail did to the generator's answers (the definitions of `grounding review
    report`, quality/efficacy.py, on gold labels): efficacy = unsupported drafts blocked /
    unsupported drafts; false_positive_rate = supported drafts blocked / supported drafts (the
    right answers the gate withheld); blocked_correct_share = supported drafts among the blocked
    ones (what share of the blocks cost a right answer); miss_rate = unsupported drafts emitted /
    drafts emitted."""
    pre = [r for r in rows if r["pre_guardrail_answer"]]
    unsupported = [r for r in pre if not r["pre_guardrail_supported"]]
    supported = [r for r in pre if r["pre_guardrail_supported"]]
    blocked = [r for r in pre if r["status"] == "blocked"]
    emitted = [r for r in pre if r["status"] == "answered"]
    return {
        "efficacy": _rate(sum(r["status"] == "blocked" for r in unsupported), len(unsupported)),
        "false_positive_rate": _rate(
            sum(r["status"] == "blocked" for r in supported), len(supported)
        ),
        "blocked_correct_share": _rate(
            sum(r["pre_guardrail_supported"] for r in blocked), len(blocked)
        ),
        "miss_rate": _rate(sum(not r["pre_guardrail_supported"] for r in emitted), len(emitted)),
        "pre_guardrail_answers": len(pre),
        "unsupported": len(unsupported),
        "supported": len(supported),
        "blocked": len(blocked),
    }


def cost_axis(stage_results: dict[str, Any], n_questions: int) -> dict[str, Any]:
    """Seconds per question by stage and the cache hit ratio (`stage_results`: StageResults)."""
    per_stage = {
        name: round(r.seconds / max(n_questions, 1), 6) for name, r in stage_results.items()
    }
    return {
        "seconds_per_question": per_stage,
        "total_seconds_per_question": round(sum(per_stage.values()), 6),
        "cache_hit_ratio": _rate(
            sum(r.ref.cache_hit for r in stage_results.values()), len(stage_results)
        ),
    }


def comparable(metrics: dict) -> dict:
    """Metrics without the timing-dependent cost axis (what two identical runs must agree on)."""
    return {
        **{k: v for k, v in metrics.items() if k != "axes"},
        "axes": {a: v for a, v in metrics["axes"].items() if a != "cost"},
    }
