"""Train the rerank stage's learned scorer; writes configs/ranker.yaml (weights as data).

Training data, never SciFact (it is the benchmark):
- the sample knowledge base's questions (positive: a chunk of a gold document containing a gold
  answer; refusal questions have no positive), and
- SQuAD 2.0 dev from ../shared/datasets/squad2 (positive: the question's own paragraph when the
  question is answerable), split by article: even articles train, odd articles are held out.

The ranker is a logistic regression over rerank.FEATURES; a Platt scaling of its logit is fitted
on each training question's top candidate, so the top score reads as P(evidence answers).

Usage: python scripts/train_ranker.py [--squad PATH] [--out configs/ranker.yaml]
"""

from __future__ import annotations

import argparse
import json
import pickle
import tempfile
from pathlib import Path

import numpy as np
import yaml
from sklearn.linear_model import LogisticRegression

from flows.config import load_config
from flows.executor import load_questions, run_stages
from stages import contracts, indexing, rerank, retrieval
from stages.models import embeddings
from stages.store import ArtifactStore

ROOT = Path(__file__).resolve().parent.parent
SQUAD = ROOT.parent / "shared" / "datasets" / "squad2" / "dev_articles.json"


def question_features(scorer, question: str, candidates: list[dict]) -> np.ndarray:
    vector = embeddings.embed(embeddings.DEFAULT_EMBEDDING_MODEL, [question])[0]
    rows = [scorer.view.row_of[c["chunk_id"]] for c in candidates]
    rrf = [c["fused_score"] for c in candidates]
    return rerank.feature_rows(question, vector, rows, rrf, scorer.view, scorer.indexes, scorer.idf)


def sample_examples(store_dir: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    config = load_config(ROOT / "configs" / "pipeline.yaml", {"store": str(store_dir)})
    table = load_questions(config.questions, config.default_principal, config.default_query_type)
    result = run_stages(config, table)
    store = ArtifactStore(config.store)
    inputs = {
        "chunks": store.read_table(result.refs["ingestion"], "chunks"),
        "bm25_postings": store.read_table(result.refs["indexing"], "bm25_postings"),
        "bm25_vocab": store.read_table(result.refs["indexing"], "bm25_vocab"),
        "dense.faiss": store.blob_path(result.refs["indexing"], "dense.faiss"),
        "embeddings.npy": store.blob_path(result.refs["indexing"], "embeddings.npy"),
    }
    scorer = rerank.Scorer(inputs, rerank.Config())
    chunk_text = dict(
        zip(
            inputs["chunks"].column("chunk_id").to_pylist(),
            inputs["chunks"].column("text").to_pylist(),
            strict=True,
        )
    )
    candidates = store.read_table(result.refs["retrieval"], "candidates").to_pylist()
    gold = {
        json.loads(line)["question_id"]: json.loads(line)
        for line in config.questions.read_text().splitlines()
    }
    examples = []
    for qid, question in gold.items():
        pool = [c for c in candidates if c["question_id"] == qid and c["pool"] == "eligible"]
        if not pool:
            continue
        labels = np.array(
            [
                question["expected_behavior"] == "answer"
                and c["doc_id"] in question["gold_doc_ids"]
                and any(
                    g.lower() in chunk_text[c["chunk_id"]].lower() for g in question["gold_answers"]
                )
                for c in pool
            ],
            dtype=float,
        )
        examples.append((question_features(scorer, question["question"], pool), labels))
    return examples


def squad_examples(path: Path, workdir: Path) -> tuple[list, list]:
    articles = json.loads(path.read_text())["data"]
    chunks, questions = [], []
    for a, article in enumerate(articles):
        for p, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"a{a:02d}p{p:03d}"
            chunks.append(
                {
                    "source_id": f"squad:{doc_id}",
                    "doc_id": doc_id,
                    "chunk_id": f"{doc_id}#0000",
                    "chunk_index": 0,
                    "title": article["title"].replace("_", " "),
                    "section_path": "",
                    "text": paragraph["context"],
                    "char_start": 0,
                    "char_end": len(paragraph["context"]),
                    "permission_set": ["everyone"],
                    "trust_tier": "canonical",
                    "is_table": False,
                }
            )
            for qa in paragraph["qas"]:
                questions.append((a, doc_id, qa["question"], not qa.get("is_impossible", False)))
    chunk_table = contracts.from_rows(chunks, "chunks")
    built = indexing.run({"chunks": chunk_table}, indexing.Config())
    for blob in ("dense.faiss", "embeddings.npy"):
        (workdir / blob).write_bytes(built[blob])
    inputs = {
        "chunks": chunk_table,
        "bm25_postings": built["bm25_postings"],
        "bm25_vocab": built["bm25_vocab"],
        "dense.faiss": workdir / "dense.faiss",
        "embeddings.npy": workdir / "embeddings.npy",
    }
    q_table = contracts.from_rows(
        [
            {"question_id": f"s{i}", "question": q, "principal": "p", "query_type": "general"}
            for i, (_, _, q, _) in enumerate(questions)
        ],
        "questions",
    )
    eligibility = contracts.from_rows(
        [
            {
                "question_id": f"s{i}",
                "doc_id": c["doc_id"],
                "eligible": True,
                "decision": "eligible",
                "rule": "",
                "reason": "all",
            }
            for i in range(len(questions))
            for c in chunks
        ],
        "eligibility",
    )
    found = retrieval.run(
        {**inputs, "questions": q_table, "eligibility": eligibility},
        retrieval.Config(decompose=False),
    )
    by_question: dict[str, list[dict]] = {}
    for c in found["candidates"].to_pylist():
        by_question.setdefault(c["question_id"], []).append(c)
    scorer = rerank.Scorer(inputs, rerank.Config())
    train, held_out = [], []
    for i, (article, doc_id, question, answerable) in enumerate(questions):
        pool = by_question.get(f"s{i}", [])
        if not pool:
            continue
        labels = np.array([answerable and c["doc_id"] == doc_id for c in pool], dtype=float)
        (train if article % 2 == 0 else held_out).append(
            (question_features(scorer, question, pool), labels)
        )
    return train, held_out


def top_candidates(model: LogisticRegression, examples: list) -> tuple[np.ndarray, np.ndarray]:
    logits, labels = [], []
    for features, label in examples:
        scores = model.decision_function(features)
        best = int(np.argmax(scores))
        logits.append(scores[best])
        labels.append(label[best])
    return np.array(logits), np.array(labels)


def expected_calibration_error(
    probabilities: np.ndarray, labels: np.ndarray, bins: int = 10
) -> float:
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        mask = (probabilities >= low) & (
            probabilities < high if high < 1 else probabilities <= high
        )
        if mask.any():
            total += mask.mean() * abs(probabilities[mask].mean() - labels[mask].mean())
    return float(total)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--squad", type=Path, default=SQUAD)
    parser.add_argument("--out", type=Path, default=ROOT / "configs" / "ranker.yaml")
    parser.add_argument(
        "--features-cache",
        type=Path,
        default=ROOT / ".cache" / "ranker-features.pkl",
        help="computed features are kept here so refitting takes seconds",
    )
    args = parser.parse_args()
    if args.features_cache.is_file():
        sample, squad_train, squad_held = pickle.loads(args.features_cache.read_bytes())
    else:
        with tempfile.TemporaryDirectory() as tmp:
            sample = sample_examples(Path(tmp) / "store")
            squad_train, squad_held = squad_examples(args.squad, Path(tmp))
        args.features_cache.parent.mkdir(parents=True, exist_ok=True)
        args.features_cache.write_bytes(pickle.dumps((sample, squad_train, squad_held)))
    train = sample + squad_train
    # Each domain weighs the same: SQuAD's near-duplicate paragraphs would otherwise calibrate
    # every corpus to SQuAD's difficulty.
    domain_weight = [len(squad_train) / len(sample)] * len(sample) + [1.0] * len(squad_train)
    features = np.vstack([f for f, _ in train])
    labels = np.concatenate([y for _, y in train])
    weights = np.concatenate([[w] * len(y) for w, (_, y) in zip(domain_weight, train, strict=True)])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(features, labels, sample_weight=weights)
    top_logits, top_labels = top_candidates(model, train)
    platt = LogisticRegression(C=100.0).fit(
        top_logits.reshape(-1, 1), top_labels, sample_weight=np.array(domain_weight)
    )
    scale, shift = float(platt.coef_[0][0]), float(platt.intercept_[0])

    def calibrated(examples):
        logits, ys = top_candidates(model, examples)
        return 1 / (1 + np.exp(-(scale * logits + shift))), ys

    report = {}
    for name, examples in (
        ("sample", sample),
        ("squad_train", squad_train),
        ("squad_held_out", squad_held),
    ):
        probabilities, ys = calibrated(examples)
        report[name] = {
            "questions": len(examples),
            "top1_positive_rate": round(float(ys.mean()), 4),
            "ece": round(expected_calibration_error(probabilities, ys), 4),
            "mean_confidence": round(float(probabilities.mean()), 4),
        }
    ranker = {
        "version": "learned-1",
        "features": list(rerank.FEATURES),
        "coef": [round(float(c), 6) for c in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "calibration_scale": round(scale, 6),
        "calibration_shift": round(shift, 6),
        "trained_on": (
            f"sample questions ({len(sample)}) + SQuAD 2.0 dev even articles ({len(squad_train)}),"
            " each domain weighted equally"
        ),
        "evaluation": report,
    }
    header = (
        "# Learned rerank scorer, written by scripts/train_ranker.py. Weights are data, not code.\n"
    )
    args.out.write_text(header + yaml.safe_dump({"ranker": ranker}, sort_keys=False))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
