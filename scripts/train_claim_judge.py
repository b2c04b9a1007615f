"""Train the claim-support cross-encoder: P(the evidence supports this claim), the guardrails'
fast judge (a detection pass <= 1.5 s; the GGUF judge only for the uncertain band).

The model reads exactly what the GGUF judge reads (`stages.guardrails.judge.pair_for`): the
claim with the question it answers, and the evidence sentences that bear on it (`focus`). The
judge's inputs for real answers are recorded by running `check_answer` with a recording judge, so
training sees the claims, lead-ins stripped and focused evidence the runtime builds.

Data (seeded), only from ../shared/datasets:
- RAGTruth QA, the FIT split of bench/ragtruth.py (`split_of`), itself split by question into
  `train` (two thirds) and `calibration` (one third; the cascade's band and calibration are chosen
  there). A claim is unsupported (0) when its characters overlap a labelled hallucinated span.
  The REPORT split is never read.
- Generated from the same fit-train passages: a passage sentence paired with its passages less
  that sentence (0: what the evidence does not say; only when the rest covers under half its
  words), and a supported claim with one number or name swapped for another of the evidence, or
  negated (0).
- HaluEval QA records 1-50 (where bench agent_runs chooses its settings; it reports on 51-100,
  bench halueval on 101-500, agent-runs-v1 holds 451-500): question and right answer (1),
  hallucinated answer (0). The out-of-fold models of the fit (`--holdout 0/1/2`) read 1-100.
- SQuAD 2.0 train articles (training data only; README of ../shared/datasets): a question with its
  gold answer over the paragraph (1), with another answer of the same paragraph or SQuAD's
  plausible answer to an unanswerable question (0).

`data --source train` (claim-judge-minilm-v2) builds the same kinds of rows from RAGTruth QA
TRAIN only (`build_train_data`: the judge inputs `fit_fast_judge.py record --data train
--no-gguf` recorded, all SQuAD train questions), every RAGTruth-derived row carrying its
question's fold of five (`train_fold_of`); the dev set is not read.

Then `train`, `export` and `average` are scripts/train_answerability.py's, at MAX_LENGTH tokens.

Usage:
  python scripts/train_claim_judge.py data [--out .cache/claim-judge]
  python scripts/train_claim_judge.py data --source train --records .cache/fast-judge-train.jsonl \
      --out .cache/cj-train-data
  python scripts/train_claim_judge.py train [--data .cache/claim-judge] [--epochs 1]
  python scripts/train_claim_judge.py export [--checkpoint ...] [--out data/models/...]
  python scripts/train_claim_judge.py evaluate [--model ...]   # AUC on the calibration split
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from scripts import train_answerability as base  # noqa: E402
from stages.common.text import content_tokens, sentence_spans  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
DEFAULT_DATA = ROOT / ".cache" / "claim-judge"
DEFAULT_MODEL = ROOT / "data" / "models" / "claim-judge-minilm-v1"
SEED = 41
MAX_LENGTH = 192
HALUEVAL_FIT = 50  # records 1-50 (see the docstring)
SQUAD_QUESTIONS = 1500


FOLDS = 3
TRAIN_FOLDS = 5  # RAGTruth QA train: 394 questions, grouped 5-fold out-of-fold scores


def train_fold_of(source_id: str) -> int:
    """The fold (0-4) of a RAGTruth QA train question: every answer to it shares its fold."""
    digest = hashlib.sha256(f"claim-judge-train:{source_id}".encode()).hexdigest()
    return int(digest, 16) % TRAIN_FOLDS


def fold_of(source_id: str) -> int:
    """The cross-validation fold (0-2) of a fit-split question (a second, independent hash)."""
    digest = hashlib.sha256(f"claim-judge:{source_id}".encode()).hexdigest()
    return int(digest, 16) % FOLDS


def _part_of_fit(source_id: str, holdout: int | None) -> str:
    """train, or calibration for the questions of the held-out fold (None: all train)."""
    return "calibration" if fold_of(source_id) == holdout else "train"


# ---------------------------------------------------------------- RAGTruth: the judge's own inputs


def recorded_inputs(record: dict) -> list[dict]:
    """(claim, spans, question, part) of every judge call check_answer makes for one answer,
    each labelled by its claim's overlap with the hallucinated spans."""
    from eval import detection_sets as detection
    from stages import guardrails
    from stages.guardrails import judge

    calls: list[tuple[str, list[str], str | None, bool]] = []

    def record_call(claim: str, spans: list[str], question: str | None, part: bool) -> float:
        calls.append((claim, list(spans), question, part))
        return 0.5

    config = detection.guardrails_config({"consistency_probes": 0, "judge_cache_dir": None})
    toolkit = guardrails.Toolkit(config)
    toolkit._judge = judge.Judge("llm", "recorder", record_call, None, config.judge_focus_words)
    report, _, _ = detection.checked_report(record, toolkit)
    gold = {i for start, end in record["spans"] for i in range(start, end)}
    found = report.get("claims") or []
    spans_found = detection.claim_spans(record["answer"], found)
    claims = [(c.get("text") or "", span) for c, span in zip(found, spans_found, strict=True)]
    rows = []
    for text, spans, question, part in calls:
        span = next((s for t, s in claims if s and (text in t or t in text)), None)
        if text.strip() == record["answer"].strip():
            label = int(record["label"] == "correct")
        elif span is None:
            continue
        else:
            label = int(not gold & set(range(*span)))
        rows.append(_row(text, spans, question, part, label, "ragtruth", record["source_id"]))
    return rows


def _row(
    claim: str, spans: list[str], question: str | None, part: bool, label: int, source: str, group
) -> dict:
    from stages.guardrails.judge import pair_for

    claim_side, evidence_side = pair_for(claim, spans, question, part)
    return {
        "question": claim_side,
        "passage": evidence_side,
        "label": label,
        "source": source,
        "question_id": f"{source}:{group}",
        "impossible": not label,
    }


# ---------------------------------------------------------------- generated negatives


NUMBER_RE = re.compile(r"\b\d[\d,.]*\b")
NAME_RE = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b")
NEGATABLE_RE = re.compile(r"\b(is|are|was|were|can|will|does|do|has|have)\b")


def swapped(claim: str, evidence: str, rng: random.Random) -> str | None:
    """The claim with one number or name replaced by another the evidence has, or negated."""
    kinds = ["number", "name", "negation"]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind == "number":
            own = NUMBER_RE.findall(claim)
            others = sorted(set(NUMBER_RE.findall(evidence)) - set(own))
            if own and others:
                return claim.replace(rng.choice(own), rng.choice(others), 1)
        elif kind == "name":
            own = [n for n in NAME_RE.findall(claim) if not claim.startswith(n)]
            others = sorted(set(NAME_RE.findall(evidence)) - set(own))
            others = [o for o in others if not evidence.startswith(o)]
            if own and others:
                return claim.replace(rng.choice(own), rng.choice(others), 1)
        else:
            match = NEGATABLE_RE.search(claim)
            if match and " not " not in claim:
                return claim[: match.end()] + " not" + claim[match.end() :]
    return None


def removed_sentence_rows(
    texts: list[str], question: str, group: str, rng: random.Random, per_answer: int = 4
) -> list[dict]:
    """A passage sentence as a claim over its passages less that sentence: unsupported when the
    rest covers under half its words (the extrinsic addition RAGTruth labels "baseless info")."""
    from stages.guardrails.judge import focus

    sentences = [(p, t[b:e]) for p, t in enumerate(texts) for b, e in sentence_spans(t)]
    sentences = [(p, s) for p, s in sentences if 8 <= len(s.split()) <= 40]
    rows = []
    for p, sentence in rng.sample(sentences, min(per_answer, len(sentences))):
        rest = [t.replace(sentence, " ") if i == p else t for i, t in enumerate(texts)]
        wanted = set(content_tokens(sentence))
        known = set(content_tokens(" ".join(rest)))
        if not wanted or len(wanted & known) / len(wanted) >= 0.5:
            continue
        spans = focus(sentence, rest, question)
        rows.append(_row(sentence, spans, question, True, 0, "removed", group))
    return rows


# ---------------------------------------------------------------- HaluEval and SQuAD


def halueval_rows() -> list[dict]:
    from stages.guardrails.judge import focus

    path = DATASETS / "halueval_qa" / "qa_first500.jsonl"
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()[:HALUEVAL_FIT]):
        item = json.loads(line)
        for answer, label in ((item["right_answer"], 1), (item["hallucinated_answer"], 0)):
            spans = focus(answer, [item["knowledge"]], item["question"])
            rows.append(_row(answer, spans, item["question"], False, label, "halueval", number))
    return rows


def squad_rows(rng: random.Random, questions: int = SQUAD_QUESTIONS) -> list[dict]:
    """Short answers to SQuAD train questions: gold (1); another answer of the paragraph, or
    the plausible answer of an unanswerable question (0)."""
    from stages.guardrails.judge import focus

    articles = json.loads((DATASETS / "squad2" / "train_first10_articles.json").read_text())
    items = []
    for article in articles["data"]:
        for paragraph in article["paragraphs"]:
            answers = [a["text"] for qa in paragraph["qas"] for a in qa.get("answers", [])[:1]]
            for qa in paragraph["qas"]:
                items.append((paragraph["context"], qa, answers))
    rng.shuffle(items)
    rows = []
    for number, (context, qa, answers) in enumerate(items[:questions]):
        question = qa["question"]
        first = len(rows)
        if number % 3 == 0:  # a sentence of the paragraph the rest does not state
            rows += removed_sentence_rows([context], question, qa["id"], rng, per_answer=1)
        if qa.get("is_impossible"):
            plausible = [a["text"] for a in qa.get("plausible_answers", [])[:1]]
            pairs = [(plausible[0], 0)] if plausible else []
        else:
            gold = qa["answers"][0]["text"]
            others = [a for a in answers if a.lower() not in gold.lower() and gold not in a]
            pairs = [(gold, 1)] + ([(rng.choice(others), 0)] if others else [])
        for answer, label in pairs:
            spans = focus(answer, [context], question)
            rows.append(_row(answer, spans, question, False, label, "squad", qa["id"]))
        for row in rows[first:]:  # the first N questions are the smaller sets of the sweep
            row["rank"] = number
    return rows


# ---------------------------------------------------------------- the data folder


def build_data(
    out: Path, seed: int = SEED, holdout: int | None = 0, squad_questions: int = SQUAD_QUESTIONS
) -> None:
    from bench import ragtruth

    rng = random.Random(seed)
    records = ragtruth.load(DATASETS / ragtruth.FOLDER, split="fit")
    parts: dict[str, list[dict]] = {"train": [], "calibration": []}
    started = time.time()
    for n, record in enumerate(records, start=1):
        part = _part_of_fit(record["source_id"], holdout)
        rows = recorded_inputs(record)
        first = len(parts[part])
        parts[part] += rows
        if part == "train":
            for row in [r for r in rows if r["label"] == 1 and r["source"] == "ragtruth"]:
                claim = row["question"].split(" | ")[0]
                changed = swapped(claim, row["passage"], rng)
                if changed and changed != claim:
                    parts[part].append(
                        {
                            **row,
                            "question": row["question"].replace(claim, changed, 1),
                            "label": 0,
                            "source": "swapped",
                            "impossible": True,
                        }
                    )
            texts = [item["text"] for item in record["evidence"].values()]
            parts[part] += removed_sentence_rows(
                texts, record["question"], record["source_id"], rng, per_answer=6
            )
        for row in parts[part][first:]:  # the fit question's fold: out-of-fold models skip it
            row["fold"] = fold_of(record["source_id"])
        if n % 20 == 0:
            print(f"ragtruth {n}/{len(records)} {time.time() - started:.0f}s", flush=True)
    parts["train"] += halueval_rows()
    parts["train"] += squad_rows(rng, squad_questions)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in parts.items():
        rng.shuffle(rows)
        path = out / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        counts: dict[str, list[int]] = {}
        for row in rows:
            counts.setdefault(row["source"], [0, 0])[row["label"]] += 1
        print(f"{path}: {len(rows)} pairs; per source [unsupported, supported]: {counts}")


def build_train_data(
    records: Path, out: Path, seed: int = SEED, squad_questions: int = 10**6
) -> None:
    """Training pairs from RAGTruth QA TRAIN (no dev answer anywhere): every judge input
    `check_answer` built for each train answer (recorded by `fit_fast_judge.py record --data
    train --no-gguf`: the claim and evidence sides, labelled by the claim's overlap with the
    hallucinated spans), the swapped / negated claims and removed passage sentences of the same
    answers, HaluEval 1-50 and SQuAD train. Every RAGTruth-derived row carries its question's
    fold (`train_fold_of`), so an out-of-fold model skips all of it."""
    from scripts.fit_fast_judge import load_answers

    rng = random.Random(seed)
    recorded = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    answers = {a["id"]: a for a in load_answers("train")}
    rows: list[dict] = []
    for answer in recorded:
        record = answers[answer["id"]]
        fold, group = train_fold_of(record["source_id"]), record["source_id"]
        first = len(rows)
        pairs = {}
        for claim in answer["claims"]:
            judged, label = claim.get("judged"), int(not claim["hallucinated"])
            windows = (judged or {}).get("windows") or [
                (judged["claim_side"], judged["evidence_side"]) if judged else None
            ]
            if not judged or (len(windows) > 1 and not label):
                continue  # a hallucinated long claim: which of its windows is wrong is unknown
            for side in windows:
                pairs[tuple(side)] = min(pairs.get(tuple(side), 1), label)
        for (claim_side, evidence_side), label in pairs.items():
            row = {
                "question": claim_side,
                "passage": evidence_side,
                "label": label,
                "source": "ragtruth",
                "question_id": f"ragtruth:{group}",
                "impossible": not label,
            }
            rows.append(row)
            claim = claim_side.split(" | ")[0]
            changed = swapped(claim, evidence_side, rng) if label else None
            if changed and changed != claim:
                rows.append(
                    {
                        **row,
                        "question": claim_side.replace(claim, changed, 1),
                        "label": 0,
                        "source": "swapped",
                        "impossible": True,
                    }
                )
        texts = [item["text"] for item in record["evidence"].values()]
        rows += removed_sentence_rows(texts, record["question"], group, rng, per_answer=6)
        for row in rows[first:]:
            row["fold"] = fold
    rows += halueval_rows()
    rows += squad_rows(rng, squad_questions)
    out.mkdir(parents=True, exist_ok=True)
    rng.shuffle(rows)
    path = out / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (out / "calibration.jsonl").write_text("", encoding="utf-8")
    counts: dict[str, list[int]] = {}
    for row in rows:
        counts.setdefault(row["source"], [0, 0])[row["label"]] += 1
    print(f"{path}: {len(rows)} pairs; per source [unsupported, supported]: {counts}")


def init_from_onnx(model_dir: Path, out: Path) -> None:
    """A torch checkpoint from an int8 ONNX cross-encoder this project exported (the
    answerability model): its weights dequantized, each MatMul weight named by the bias its
    output is added to. Training from a model that already reads (question, passage) pairs,
    instead of the bi-encoder base, is what a few hundred CPU steps can afford."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    graph = onnx.load(str(model_dir / "model.onnx")).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def dequantized(prefix: str) -> np.ndarray:
        q = inits[f"{prefix}_quantized"].astype(np.float32)
        return (q - inits[f"{prefix}_zero_point"].astype(np.float32)) * inits[f"{prefix}_scale"]

    def bias_after(node) -> str | None:
        queue, seen = [node], set()
        while queue:
            current = queue.pop(0)
            for output in current.output:
                for nxt in consumers.get(output, []):
                    if nxt.name in seen:
                        continue
                    seen.add(nxt.name)
                    named = [i for i in nxt.input if i.endswith(".bias") and i in inits]
                    if nxt.op_type == "Add" and named:
                        return named[0][: -len(".bias")]
                    queue.append(nxt)
        return None

    state: dict[str, torch.Tensor] = {}
    for name, value in inits.items():
        if name.startswith(("bert.", "classifier.")) and not name.endswith(
            ("_scale", "_zero_point", "_quantized")
        ):
            state[name] = torch.tensor(value)
    for kind in ("word", "position", "token_type"):
        prefix = f"bert.embeddings.{kind}_embeddings.weight"
        state[prefix] = torch.tensor(dequantized(prefix))
    for module in ("bert.pooler.dense", "classifier"):
        state[f"{module}.weight"] = torch.tensor(dequantized(f"{module}.weight_Transposed").T)
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        weight = node.input[1]
        if not weight.startswith("onnx::MatMul_"):
            continue
        module = bias_after(node)
        if module is None:
            raise ValueError(f"no bias after {weight}")
        state[f"{module}.weight"] = torch.tensor(dequantized(weight[: -len("_quantized")]).T)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(base.base_model_dir()), num_labels=1
    )
    missing = set(model.state_dict()) - set(state)
    missing = {m for m in missing if not m.endswith("position_ids")}
    if missing:
        raise ValueError(f"weights not found in the ONNX graph: {sorted(missing)[:5]}")
    model.load_state_dict({**model.state_dict(), **state}, strict=True)
    base._save(model, AutoTokenizer.from_pretrained(str(base.base_model_dir())), out)
    print(f"wrote {out} from {model_dir / 'model.onnx'}")


def evaluate(model_dir: Path, data: Path) -> dict:
    """AUC of the exported model on the calibration split (RAGTruth fit-calibration claims)."""
    from stages.models.onnx_pairs import OnnxPairScorer

    rows = base._read(data / "calibration.jsonl")
    scorer = OnnxPairScorer(model_dir, max_length=MAX_LENGTH)
    started = time.time()
    scores = scorer.score([(r["question"], r["passage"]) for r in rows])
    labels = [r["label"] for r in rows]
    report = {
        "model": str(model_dir),
        "pairs": len(rows),
        "supported": sum(labels),
        "auc": round(base._auc(scores, labels), 4),
        "seconds_per_pair": round((time.time() - started) / max(len(rows), 1), 4),
    }
    print(json.dumps(report, indent=2))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    data_cmd = sub.add_parser("data", help="build the training and calibration pairs")
    data_cmd.add_argument("--out", type=Path, default=DEFAULT_DATA)
    data_cmd.add_argument("--seed", type=int, default=SEED)
    data_cmd.add_argument(
        "--holdout", default="0", help="fold 0-2 kept out as calibration, or 'none' (all train)"
    )
    data_cmd.add_argument("--squad-questions", type=int, default=None)
    data_cmd.add_argument(
        "--source",
        choices=["dev-fit", "train"],
        default="dev-fit",
        help="train: RAGTruth QA train only (v2); dev-fit: the dev set's fit split (v1)",
    )
    data_cmd.add_argument(
        "--records",
        type=Path,
        default=ROOT / ".cache" / "fast-judge-train.jsonl",
        help="--source train: the judge inputs `fit_fast_judge.py record --data train` wrote",
    )
    train_cmd = sub.add_parser("train", help="fine-tune the packaged MiniLM as a cross-encoder")
    train_cmd.add_argument("--data", type=Path, default=DEFAULT_DATA)
    train_cmd.add_argument("--checkpoint", type=Path, default=DEFAULT_DATA / "checkpoint")
    train_cmd.add_argument("--epochs", type=float, default=1.0)
    train_cmd.add_argument("--batch-size", type=int, default=16)
    train_cmd.add_argument("--lr", type=float, default=5e-5)
    train_cmd.add_argument("--head-lr", type=float, default=None)
    train_cmd.add_argument("--save-every", type=int, default=0)
    train_cmd.add_argument("--init", type=Path, default=None)
    export_cmd = sub.add_parser("export", help="ONNX int8 export with sha256")
    export_cmd.add_argument("--checkpoint", type=Path, default=DEFAULT_DATA / "checkpoint")
    export_cmd.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    export_cmd.add_argument(
        "--per-channel", action="store_true", help="an int8 scale per column (v2; v1 had none)"
    )
    init_cmd = sub.add_parser("init", help="a torch checkpoint from a project ONNX model")
    init_cmd.add_argument("--model", type=Path, default=base.DEFAULT_MODEL)
    init_cmd.add_argument("--out", type=Path, default=ROOT / ".cache" / "claim-judge-init")
    eval_cmd = sub.add_parser("evaluate", help="AUC on the calibration split")
    eval_cmd.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    eval_cmd.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    base.MAX_LENGTH = MAX_LENGTH  # read by base's encoder at call time
    if args.command == "data":
        if args.source == "train":
            squad = 10**6 if args.squad_questions is None else args.squad_questions
            build_train_data(args.records, args.out, args.seed, squad)
        else:
            holdout = None if args.holdout == "none" else int(args.holdout)
            squad = SQUAD_QUESTIONS if args.squad_questions is None else args.squad_questions
            build_data(args.out, args.seed, holdout, squad)
    elif args.command == "train":
        base.train(
            args.data,
            args.checkpoint,
            args.epochs,
            args.batch_size,
            args.lr,
            save_every=args.save_every,
            head_lr=args.head_lr,
            init=args.init,
            seed=SEED,
        )
    elif args.command == "init":
        init_from_onnx(args.model, args.out)
    elif args.command == "export":
        base.export(args.checkpoint, args.out, per_channel=args.per_channel)
    else:
        evaluate(args.model, args.data)


if __name__ == "__main__":
    main()
