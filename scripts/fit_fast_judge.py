"""Fit the fast judge's calibration and band, and the gate over it, on the RAGTruth QA FIT split.

Every fit answer is scored by the cross-encoder of the fold that did NOT train on its question
(scripts/train_claim_judge.py, `--holdout k` -> `--models DIR/f{k}`), so the fit sees out-of-fold
scores only. The REPORT split is never read.

1. `record`: each fit answer through `check_answer` with a cascade whose band is everything, so
   every judged claim gets both the cross-encoder's logit and the GGUF's P(yes) (cached in
   bench/.cache/ragtruth_judge). Written to .cache/fast-judge-fit.jsonl.
2. `fit`: Platt scaling of the logits on the judged claims' labels (a claim is unsupported when it
   overlaps a labelled hallucinated span), then a grid over the band (reject, accept), the word
   share a claim needs before the fast judge may accept it (`accept_min_share`), how the band
   scores (GGUF alone or mean) and the gate's claim_floor / answer_threshold, replaying the
   gate (`stages.guardrails.gate`) on the recorded claims. Chooses the best response-level F1 among
   the settings that flag at least `--min-recall` of the hallucinated answers (and, if given, whose
   median answer asks the GGUF at most `--max-band-claims` times); also writes the frontier.

3. `fit-train` (claim-judge-minilm-v2): the same on RAGTruth QA TRAIN with the fast judge alone
   (no GGUF P(yes) recorded there): Platt scaling on the out-of-fold logits of a GPU run
   (`sweep_claim_judge.py run`), every train answer checked by `check_answer` with a judge
   that reads those scores from a table, once per lexical weight, and the gate's `decide`
   replayed with its recorded arguments at each claim floor and answer line; the choice and
   its grouped 5-fold cross-validated figures. The dev set is not read.

Usage:
  python scripts/fit_fast_judge.py record
  python scripts/fit_fast_judge.py record --data train --no-gguf \
      --records .cache/fast-judge-train.jsonl
  python scripts/fit_fast_judge.py fit-train --results DIR/results.json --claims .gpu/claims.jsonl
  python scripts/fit_fast_judge.py logits --models .cache/cj-models   # f0 f1 f2 inside
  python scripts/fit_fast_judge.py fit [--max-band-claims 1] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RECORDS = ROOT / ".cache" / "fast-judge-fit.jsonl"
DATASETS = ROOT.parent / "shared" / "datasets"


def load_answers(data: str, limit: int = 0) -> list[dict]:
    """The RAGTruth answers a fit reads: `train` (every train answer) or `dev-fit` (the dev
    set's fit split, how claim-judge-minilm-v1 was fitted). Dev's report split never."""
    from bench import ragtruth

    if data == "train":
        folder, file = ragtruth.DATA["train"]
        return ragtruth.load(DATASETS / folder, "all", limit or None, file=file)
    return ragtruth.load(DATASETS / ragtruth.FOLDER, split="fit", limit=limit or None)


def record(
    limit: int = 0,
    data: str = "dev-fit",
    gguf: bool = True,
    out: Path = RECORDS,
    only_folds: list[int] | None = None,
) -> None:
    """`gguf=False`: no GGUF call; each judged claim's `p_yes` is None (a fast-judge-only fit,
    and the judge inputs `train_claim_judge.py data --source train` learns from).
    `only_folds`: the answers of those question folds only (the GGUF costs ~1 s a claim)."""
    from bench import common
    from eval import detection_sets as detection
    from scripts.train_claim_judge import fold_of, train_fold_of
    from stages import guardrails
    from stages.guardrails import judge

    records = load_answers(data, limit)
    path, rows = out, []
    folds = train_fold_of if data == "train" else fold_of
    if only_folds is not None:
        records = [r for r in records if folds(r["source_id"]) in only_folds]
    settings = {"consistency_probes": 0, "judge_cache_dir": str(common.CACHE / "ragtruth_judge")}
    config = detection.guardrails_config(settings)
    if gguf:
        slow = guardrails.make_judge(config.model_copy(update={"fast_judge": None}))
    else:  # a stand-in slow judge: every claim is recorded, no model is loaded
        slow = judge.Judge("llm", "none", lambda *a: 0.5, None, config.judge_focus_words)
    started = time.time()
    for n, item in enumerate(records, start=1):
        fold = folds(item["source_id"])
        seen: list[tuple[int, list[str]]] = []
        cascade = judge.CascadeJudge(lambda *a: 0.5, "fit", slow, -1.0, 2.0)
        cascade.log = []

        def probability(claim_side: str, evidence_side: str, seen=seen, cascade=cascade) -> float:
            # a long claim is read in windows: each pair is the judge call's that logs next
            seen.append((len(cascade.log), [claim_side, evidence_side]))
            return 0.5

        cascade.probability = probability
        toolkit = guardrails.Toolkit(config)
        toolkit._judge = cascade
        report, _, _ = detection.checked_report(item, toolkit)
        judged = {}
        for number, (claim, p_yes, _) in enumerate(cascade.log):
            windows = [pair for call, pair in seen if call == number]
            if not windows:
                continue
            judged[claim] = {
                "claim_side": windows[0][0],
                "evidence_side": windows[0][1],
                **({"windows": windows} if len(windows) > 1 else {}),
                "p_yes": p_yes if gguf else None,
            }
        gold = {i for start, end in item["spans"] for i in range(start, end)}
        claims = []
        found = report.get("claims") or []
        for claim, span in zip(found, detection.claim_spans(item["answer"], found), strict=True):
            text = claim.get("text") or ""
            match = next((v for k, v in judged.items() if k in text or text in k), None)
            claims.append(
                {
                    **{k: claim.get(k) for k in ("text", "score", "critical", "status", "judge")},
                    "reasons": claim.get("reasons") or [],
                    "judged": match,
                    "hallucinated": bool(span and gold & set(range(*span))),
                }
            )
        rows.append(
            {
                "id": item["id"],
                "source_id": item["source_id"],
                "fold": fold,
                "model": item["model"],
                "hallucinated": item["label"] == "hallucinated",
                "action": report["action"],
                "overall": report.get("overall_score"),
                "reasons": report.get("reasons") or [],
                "claims": claims,
            }
        )
        if n % 20 == 0:
            print(f"{n}/{len(records)} {time.time() - started:.0f}s", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {path}: {len(rows)} answers")


def logits(models: Path) -> None:
    """Each judged claim's logit from the model of the fold that did not train on it."""
    from scripts.train_claim_judge import MAX_LENGTH
    from stages.models import onnx_pairs

    answers = [json.loads(line) for line in RECORDS.read_text(encoding="utf-8").splitlines()]
    missing = sorted({a["fold"] for a in answers if not (models / f"f{a['fold']}").is_dir()})
    if missing:
        print(f"no model for folds {missing}: their answers are left out of the fit")
    for answer in answers:
        if answer["fold"] in missing:
            continue
        scorer = onnx_pairs.load(models / f"f{answer['fold']}", max_length=MAX_LENGTH)
        for claim in answer["claims"]:
            if judged := claim.get("judged"):
                pairs = judged.get("windows") or [(judged["claim_side"], judged["evidence_side"])]
                # a windowed claim holds when every window does (CascadeJudge: the minimum)
                judged["logit"] = min(float(x) for x in scorer.score([tuple(w) for w in pairs]))
    RECORDS.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    print(f"scored {RECORDS} with {models}")


def logits_from_sweep(results: Path, claims: Path, records: Path, key: str) -> None:
    """The out-of-fold logits a GPU run (`sweep_claim_judge.py run`) computed for the rows of
    `claims` (its `prepare` output), written into the recorded answers: a claim read in
    windows gets the minimum of its windows'."""
    rows = [json.loads(line) for line in claims.read_text(encoding="utf-8").splitlines()]
    scores = json.loads(results.read_text(encoding="utf-8"))[key]
    if len(scores) != len(rows):
        raise SystemExit(f"{results}: {len(scores)} {key} for {len(rows)} claims in {claims}")
    best: dict[tuple[str, int], float] = {}
    for row, score in zip(rows, scores, strict=True):
        where = (row["answer"], row["index"])
        best[where] = min(best.get(where, math.inf), float(score))
    answers = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    for answer in answers:
        for index, claim in enumerate(answer["claims"]):
            if judged := claim.get("judged"):
                judged["logit"] = best[(answer["id"], index)]
    records.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    print(f"wrote {key} of {results} into {records}")


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def platt(logits: list[float], labels: list[int]) -> tuple[float, float]:
    """Logistic regression of label on logit (Newton steps, a weak prior toward scale 1)."""
    import numpy as np

    x, y = np.asarray(logits, dtype=float), np.asarray(labels, dtype=float)
    w = np.array([1.0, 0.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(w[0] * x + w[1])))
        grad = np.array([((p - y) * x).sum(), (p - y).sum()]) + 1e-2 * (w - [1.0, 0.0])
        h = p * (1 - p)
        hess = np.array([[(h * x * x).sum(), (h * x).sum()], [(h * x).sum(), h.sum()]])
        w = w - np.linalg.solve(hess + 1e-2 * np.eye(2), grad)
    return float(w[0]), float(w[1])


GGUF_ONLY = {"reject": -1.0, "accept": 2.0, "band_score": "judge"}
# FastJudge.accept_min_share: the share of a claim's words the spans must hold before the fast
# judge may accept it alone (0: its P alone)
ACCEPT_MIN_SHARES = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _word_shares(answers: list[dict]) -> None:
    """Each judged claim's share of content words in its answer's evidence (the question's
    count as known), as `judge.CascadeJudge` computes it before accepting a claim."""
    from bench import ragtruth
    from stages.guardrails import groundedness

    records = {r["id"]: r for r in ragtruth.load(DATASETS / ragtruth.FOLDER, split="fit")}
    for answer in answers:
        record = records[answer["id"]]
        spans = [e["text"] for e in record["evidence"].values()]
        for claim in answer["claims"]:
            text = groundedness.strip_lead_in(claim.get("text") or "")
            claim["share"] = groundedness.check_lexical(text, spans, record["question"]).score


def replay(answers: list[dict], setting: dict, base_config, flags: bool = False):
    """Flags and band counts under `setting` (scale, bias, reject, accept, band_score, gate)."""
    from stages.guardrails import gate
    from stages.guardrails.verify import ClaimScore, claim_status

    config = base_config.model_copy(
        update={"claim_floor": setting["claim_floor"], "answer_threshold": setting["answer"]}
    )
    flags_list: list[bool] = []
    bands: list[int] = []
    for answer in answers:
        claims, band = [], 0
        parts = len(answer["claims"]) > 1  # a one-claim answer keeps the GGUF (parts_only)
        for claim in answer["claims"]:
            claim = dict(claim)
            judged = claim.get("judged")
            # a short answer inside a long one is judged whole (not as a part), against its own
            # threshold: its recorded score is not p_yes / judge_threshold, and the GGUF keeps it
            whole = (
                judged
                and abs(min(1.0, judged["p_yes"] / config.judge_threshold) - (claim["score"] or 0))
                > 1e-6
            )
            if judged and claim["judge"] == "llm" and whole:
                band += 1
            elif judged and claim["judge"] == "llm":
                p = _sigmoid(setting["scale"] * judged["logit"] + setting["bias"])
                accepted = p >= setting["accept"] and claim.get("share", 1.0) >= setting.get(
                    "accept_min_share", 0.0
                )
                if not parts or not (accepted or p <= setting["reject"]):
                    band += 1
                    q = judged["p_yes"]
                    p = (p + q) / 2 if setting["band_score"] == "mean" else q
                score = min(1.0, p / config.judge_threshold)
                claim["score"] = score
                claim["status"] = claim_status(
                    ClaimScore(score, bool(claim["critical"]), "x"), config
                )
            claims.append(claim)
        overall = gate.aggregate(claims, config)
        hard = [r for r in answer["reasons"] if not r.startswith(("answer scores", "weakest"))]
        hard = [r for r in hard if "critical claim" not in r and "revisions" not in r]
        action, _, _ = gate.decide(
            claims,
            overall,
            config=config,
            hard_reasons=hard,
            divergent=[],
            rejected_tools=[],
            revise_round=0,
        )
        flags_list.append(action != "emit")
        bands.append(band)
    flags_out = flags_list
    if flags:
        return flags_out
    truth = [a["hallucinated"] for a in answers]
    tp = sum(f and t for f, t in zip(flags_out, truth, strict=True))
    fp = sum(f and not t for f, t in zip(flags_out, truth, strict=True))
    positives, negatives = sum(truth), len(truth) - sum(truth)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / positives if positives else 0.0
    return {
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "precision": precision,
        "recall": recall,
        "correct_flagged": fp / negatives if negatives else 0.0,
        "median_band_claims": statistics.median(bands),
        "mean_band_claims": sum(bands) / len(bands),
    }


def fit(max_band: float | None, min_recall: float, out: Path) -> dict:
    from eval import detection_sets as detection

    answers = [json.loads(line) for line in RECORDS.read_text(encoding="utf-8").splitlines()]
    scored = [
        a for a in answers if all("logit" in c["judged"] for c in a["claims"] if c.get("judged"))
    ]
    if len(scored) < len(answers):
        print(f"{len(answers) - len(scored)} answers without out-of-fold logits are left out")
    answers = scored
    _word_shares(answers)
    judged = [
        (c["judged"]["logit"], int(not c["hallucinated"]))
        for a in answers
        for c in a["claims"]
        if c.get("judged")
    ]
    scale, bias = platt([x for x, _ in judged], [y for _, y in judged])
    config = detection.guardrails_config({"consistency_probes": 0})
    # the GGUF alone (everything in the band), as the guardrails are configured today
    baseline = replay(
        answers,
        {
            "scale": scale,
            "bias": bias,
            "reject": -1,
            "accept": 2,
            "band_score": "judge",
            "claim_floor": config.claim_floor,
            "answer": config.answer_threshold,
        },
        config,
    )
    agree = sum(
        (a["action"] != "emit") == f
        for a, f in zip(
            answers,
            replay(
                answers,
                GGUF_ONLY
                | {
                    "scale": scale,
                    "bias": bias,
                    "claim_floor": config.claim_floor,
                    "answer": config.answer_threshold,
                },
                config,
                flags=True,
            ),
            strict=True,
        )
    )
    print(f"replay of the recorded GGUF-only run agrees on {agree} of {len(answers)} answers")
    results = []
    grid = itertools.product(
        [0.0, 0.05, 0.1, 0.2, 0.3, 0.4],
        [0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98, 1.01],
        ["judge", "mean"],
        [0.5, 0.6, 0.7, 0.8],
        [0.6, 0.675, 0.75, 0.85],
        ACCEPT_MIN_SHARES,
    )
    for reject, accept, band_score, floor, line, min_share in grid:
        if reject >= accept:
            continue
        setting = {
            "scale": scale,
            "bias": bias,
            "reject": reject,
            "accept": accept,
            "band_score": band_score,
            "claim_floor": floor,
            "answer": line,
            "accept_min_share": min_share,
        }
        results.append({**setting, **replay(answers, setting, config)})
    # the recall target first (hallucinated answers flagged >= 0.80), then speed
    allowed = [
        r
        for r in results
        if r["recall"] >= min_recall and (max_band is None or r["median_band_claims"] <= max_band)
    ]
    best = max(allowed or results, key=lambda r: (round(r["f1"], 4), -r["mean_band_claims"]))
    report = {
        "answers": len(answers),
        "hallucinated": sum(a["hallucinated"] for a in answers),
        "judged_claims": len(judged),
        "platt": {"scale": scale, "bias": bias},
        "claim_auc_fast": _auc([x for x, _ in judged], [y for _, y in judged]),
        "claim_auc_gguf": _auc(
            [c["judged"]["p_yes"] for a in answers for c in a["claims"] if c.get("judged")],
            [y for _, y in judged],
        ),
        "gguf_only": baseline,
        "max_band_claims": max_band,
        "min_recall": min_recall,
        "frontier": frontier(results),
        "best": best,
        "top": sorted(results, key=lambda r: -r["f1"])[:10],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "top"}, indent=2))
    return report


def frontier(results: list[dict]) -> list[dict]:
    """The best F1 at each median number of GGUF calls per answer (the speed/quality trade)."""
    best: dict[float, dict] = {}
    for r in results:
        key = r["median_band_claims"]
        if key not in best or r["f1"] > best[key]["f1"]:
            best[key] = r
    return [best[k] for k in sorted(best)]


def _auc(scores: list[float], labels: list[int]) -> float:
    from scripts.train_answerability import _auc as auc

    return round(float(auc(scores, labels)), 4)


# ---------------------------------------------------------------- the train fit (v2)

TRAIN_RECORDS = ROOT / ".cache" / "fast-judge-train.jsonl"
TRAIN_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
TRAIN_FLOORS = (0.5, 0.6, 0.7, 0.8)
TRAIN_LINES = tuple(round(0.45 + 0.025 * i, 3) for i in range(15))  # 0.45 … 0.8
# the targets on answers nobody fitted on are recall >= 0.75 and correct flagged <= 0.20; the
# train choice keeps a margin on both
MIN_RECALL, MAX_CORRECT_FLAGGED = 0.80, 0.18


def pair_table(claims: Path, values: list[float]) -> dict[tuple[str, str], float]:
    """(claim side, evidence side) -> value, for the rows of a `sweep_claim_judge.py prepare`
    claims file (one row per judged pair, windows included)."""
    rows = [json.loads(line) for line in claims.read_text(encoding="utf-8").splitlines()]
    if len(rows) != len(values):
        raise SystemExit(f"{claims}: {len(rows)} rows for {len(values)} values")
    return {(r["claim_side"], r["evidence_side"]): v for r, v in zip(rows, values, strict=True)}


def checked_answers(records: list[dict], probability, lexical_weight: float) -> list[dict]:
    """Every answer through `check_answer` with a judge that reads its P from a table (no model
    runs): `probability(claim_side, evidence_side)`. Kept per answer: the claims and every other
    argument the gate's `decide` got, so the gate can be replayed at other lines exactly."""
    from eval import detection_sets as detection
    from stages import guardrails
    from stages.guardrails import checker, gate, judge

    settings = {"consistency_probes": 0, "judge_cache_dir": None, "lexical_weight": lexical_weight}
    config = detection.guardrails_config(settings)
    focus_words = config.judge_focus_words
    cascade = judge.CascadeJudge(probability, "table", None, 0.5, 0.5, focus_words=focus_words)
    toolkit = guardrails.Toolkit(config)
    toolkit._judge = cascade
    seen: dict = {}

    def capture(claims: list[dict], overall: float, **kwargs):
        seen.update(claims=json.loads(json.dumps(claims)), **kwargs)
        return gate.decide(claims, overall, **kwargs)

    out = []
    checker.decide = capture
    try:
        for item in records:
            seen.clear()
            report, _, _ = detection.checked_report(item, toolkit)
            kept = {k: v for k, v in seen.items() if k != "config"}
            out.append(
                {
                    "id": item["id"],
                    "hallucinated": item["label"] == "hallucinated",
                    "action": report["action"],
                    "decide": kept,
                }
            )
    finally:
        checker.decide = gate.decide
    return out


def gate_flags(answers: list[dict], base_config, floor: float, line: float) -> list[bool]:
    """Whether the gate stops each answer at this claim floor and answer line: `decide` again
    with the recorded arguments, each claim's status from its score at the new line."""
    from stages.guardrails import gate
    from stages.guardrails.verify import score_status

    config = base_config.model_copy(update={"claim_floor": floor, "answer_threshold": line})
    flags = []
    for answer in answers:
        kwargs = dict(answer["decide"])
        claims = [dict(c) for c in kwargs.pop("claims")]
        long_answer = gate.long_answer_gate(claims, config)
        for claim in claims:
            if claim["status"] in ("supported", "weak", "unsupported"):
                claim["status"] = score_status(claim["score"], config, long_answer=long_answer)
        overall = gate.aggregate(claims, config)
        action, _, _ = gate.decide(claims, overall, config=config, **kwargs)
        flags.append(action != "emit")
    return flags


def figures(flags: list[bool], truth: list[bool]) -> dict:
    tp = sum(f and t for f, t in zip(flags, truth, strict=True))
    fp = sum(f and not t for f, t in zip(flags, truth, strict=True))
    positives, negatives = sum(truth), len(truth) - sum(truth)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / positives if positives else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "answers": len(truth),
        "hallucinated": positives,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "correct_flagged": round(fp / negatives if negatives else 0.0, 4),
    }


def choose(rows: list[dict]) -> dict:
    """The best F1 with recall >= MIN_RECALL and correct flagged <= MAX_CORRECT_FLAGGED (else
    recall alone, else any); ties: fewer correct answers flagged, smaller weight, lower line."""
    for allowed in (
        [
            r
            for r in rows
            if r["recall"] >= MIN_RECALL and r["correct_flagged"] <= MAX_CORRECT_FLAGGED
        ],
        [r for r in rows if r["recall"] >= MIN_RECALL],
        rows,
    ):
        if allowed:
            return max(
                allowed,
                key=lambda r: (r["f1"], -r["correct_flagged"], -r["lexical_weight"], -r["answer"]),
            )
    raise ValueError("no setting")


def grid(checked: dict[float, list[dict]], config, keep: set[str] | None = None) -> list[dict]:
    """Every (weight, floor, line) replayed on the answers whose id is in `keep` (None: all)."""
    rows = []
    for weight, answers in checked.items():
        mine = [a for a in answers if keep is None or a["id"] in keep]
        truth = [a["hallucinated"] for a in mine]
        for floor, line in itertools.product(TRAIN_FLOORS, TRAIN_LINES):
            if line > floor + 0.15:
                continue
            flags = gate_flags(mine, config, floor, line)
            rows.append(
                {"lexical_weight": weight, "claim_floor": floor, "answer": line}
                | figures(flags, truth)
            )
    return rows


def _judged_logits(claims: Path, values: list[float]) -> tuple[list[float], list[int]]:
    """One logit per judged claim (the minimum of its windows') and its label."""
    rows = [json.loads(line) for line in claims.read_text(encoding="utf-8").splitlines()]
    best: dict[tuple[str, int], list] = {}
    for row, value in zip(rows, values, strict=True):
        where = (row["answer"], row["index"])
        best[where] = [min(best.get(where, [math.inf])[0], value), row["label"]]
    return [v[0] for v in best.values()], [v[1] for v in best.values()]


def fit_train(
    results: Path,
    claims: Path,
    out: Path,
    gguf_records: Path | None,
    key: str = "oof_logits_int8",
    limit: int = 0,
    weights: tuple[float, ...] = TRAIN_WEIGHTS,
) -> dict:
    """Platt scaling, lexical weight, claim floor and answer line of the fast judge alone, on
    RAGTruth QA train with out-of-fold logits (`sweep_claim_judge.py run` on the claims of
    `record --data train --no-gguf`), and the same procedure's grouped cross-validated
    figures (each fold's setting chosen on the other four). With `gguf_records` (the GGUF's
    P(yes) of some folds' answers), the GGUF alone on those answers, its gate fitted on them."""
    from eval import detection_sets as detection
    from scripts.train_claim_judge import TRAIN_FOLDS, train_fold_of

    values = json.loads(results.read_text(encoding="utf-8"))[key]
    table = pair_table(claims, values)
    logits_, labels = _judged_logits(claims, values)
    scale, bias = platt(logits_, labels)
    records = load_answers("train", limit)
    fold = {r["id"]: train_fold_of(r["source_id"]) for r in records}

    def probability(claim_side: str, evidence_side: str) -> float:
        return _sigmoid(scale * table[(claim_side, evidence_side)] + bias)

    config = detection.guardrails_config({"consistency_probes": 0})
    started = time.time()
    checked = {w: checked_answers(records, probability, w) for w in weights}
    seconds = time.time() - started
    print(f"checked {len(records)} answers x {len(weights)} weights, {seconds:.0f}s")
    agree = {
        w: sum(
            (a["action"] != "emit") == f
            for a, f in zip(
                answers,
                gate_flags(answers, config, config.claim_floor, config.answer_threshold),
                strict=True,
            )
        )
        for w, answers in checked.items()
    }
    rows = grid(checked, config)
    best = choose(rows)
    cv_flags: dict[str, bool] = {}
    per_fold = []
    for k in range(TRAIN_FOLDS):
        inner = {i for i, f in fold.items() if f != k}
        chosen = choose(grid(checked, config, inner))
        outer = [a for a in checked[chosen["lexical_weight"]] if fold[a["id"]] == k]
        flags = gate_flags(outer, config, chosen["claim_floor"], chosen["answer"])
        cv_flags.update({a["id"]: f for a, f in zip(outer, flags, strict=True)})
        per_fold.append(
            {k2: chosen[k2] for k2 in ("lexical_weight", "claim_floor", "answer")}
            | {"fold": k, "held_out": figures(flags, [a["hallucinated"] for a in outer])}
        )
    truth = {a["id"]: a["hallucinated"] for a in checked[weights[0]]}
    ids = sorted(cv_flags)
    report: dict = {
        "what": "the fast judge alone (no GGUF call) fitted on RAGTruth QA train, out-of-fold "
        "model logits; the dev set is not read",
        "answers": len(records),
        "hallucinated": sum(truth.values()),
        "judged_claims": len(labels),
        "unsupported_claims": labels.count(0),
        "claim_auc_oof": _auc(logits_, labels),
        "platt": {"scale": scale, "bias": bias},
        "replay_agrees_with_check": {str(w): f"{n}/{len(records)}" for w, n in agree.items()},
        "chosen": best,
        "grouped_cv": figures([cv_flags[i] for i in ids], [truth[i] for i in ids]),
        "grouped_cv_folds": per_fold,
        "rule": f"best F1 with recall >= {MIN_RECALL} and correct flagged <= "
        f"{MAX_CORRECT_FLAGGED} (else recall alone)",
        "top": sorted(rows, key=lambda r: -r["f1"])[:10],
    }
    if gguf_records is not None and gguf_records.is_file():
        report["gguf_comparison"] = compare_gguf(gguf_records, checked, cv_flags, config)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k not in ("top",)}, indent=2))
    return report


def compare_gguf(gguf_records: Path, checked: dict, cv_flags: dict, config) -> dict:
    """The GGUF alone on the answers whose P(yes) is recorded, its weight, floor and line
    chosen on those same answers (in-sample: to its advantage), against the fast judge's
    grouped cross-validated flags of the same answers."""
    answers = [json.loads(line) for line in gguf_records.read_text(encoding="utf-8").splitlines()]
    table: dict[tuple[str, str], float] = {}
    for answer in answers:
        for claim in answer["claims"]:
            if judged := claim.get("judged"):
                windows = judged.get("windows") or [(judged["claim_side"], judged["evidence_side"])]
                for side in windows:
                    table[tuple(side)] = judged["p_yes"]
    ids = {a["id"] for a in answers}
    records = [r for r in load_answers("train") if r["id"] in ids]
    gguf = {w: checked_answers(records, lambda c, e: table[(c, e)], w) for w in checked}
    best = choose(grid(gguf, config))
    mine = sorted(ids & set(cv_flags))
    truth = {a["id"]: a["hallucinated"] for a in next(iter(checked.values()))}
    fast = figures([cv_flags[i] for i in mine], [truth[i] for i in mine])
    return {
        "answers": len(mine),
        "gguf_alone_in_sample": best,
        "fast_alone_grouped_cv": fast,
        "fast_is_default": fast["f1"] >= best["f1"] - 0.02
        and fast["correct_flagged"] <= best["correct_flagged"] + 0.02,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    record_cmd = sub.add_parser("record", help="score the fit split with the out-of-fold models")
    record_cmd.add_argument("--limit", type=int, default=0)
    record_cmd.add_argument("--data", choices=["dev-fit", "train"], default="dev-fit")
    record_cmd.add_argument("--no-gguf", action="store_true", help="record inputs, no GGUF call")
    record_cmd.add_argument("--records", type=Path, default=RECORDS)
    record_cmd.add_argument("--only-folds", type=int, nargs="*", default=None)
    logits_cmd = sub.add_parser("logits", help="score the recorded claims, out of fold")
    logits_cmd.add_argument("--models", type=Path, default=ROOT / ".cache" / "cj-models")
    logits_cmd.add_argument(
        "--from-sweep", type=Path, default=None, help="a GPU run's results.json instead of models"
    )
    logits_cmd.add_argument("--claims", type=Path, default=ROOT / ".gpu" / "claims.jsonl")
    logits_cmd.add_argument("--records", type=Path, default=RECORDS)
    logits_cmd.add_argument("--key", default="oof_logits_int8")
    fit_cmd = sub.add_parser("fit", help="Platt scaling, band and gate on the recorded answers")
    fit_cmd.add_argument("--max-band-claims", type=float, default=None)
    fit_cmd.add_argument("--min-recall", type=float, default=0.8)
    fit_cmd.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "results" / "fast_judge_fit.json"
    )
    train_cmd = sub.add_parser("fit-train", help="the fast judge alone, fitted on RAGTruth train")
    train_cmd.add_argument("--results", type=Path, required=True, help="the GPU run's results.json")
    train_cmd.add_argument("--claims", type=Path, required=True, help="its claims.jsonl")
    train_cmd.add_argument("--key", default="oof_logits_int8")
    train_cmd.add_argument("--limit", type=int, default=0, help="first N answers (a smoke test)")
    train_cmd.add_argument("--weights", type=float, nargs="*", default=list(TRAIN_WEIGHTS))
    train_cmd.add_argument("--gguf-records", type=Path, default=None)
    train_cmd.add_argument(
        "--out",
        type=Path,
        default=ROOT / "bench" / "results" / "ragtruth-train-fast-judge-fit.json",
    )
    args = parser.parse_args()
    if args.command == "fit-train":
        fit_train(
            args.results,
            args.claims,
            args.out,
            args.gguf_records,
            args.key,
            args.limit,
            tuple(args.weights),
        )
        return
    if args.command == "record":
        record(args.limit, args.data, not args.no_gguf, args.records, args.only_folds)
    elif args.command == "logits" and args.from_sweep is not None:
        logits_from_sweep(args.from_sweep, args.claims, args.records, args.key)
    elif args.command == "logits":
        logits(args.models)
    else:
        fit(args.max_band_claims, args.min_recall, args.out)


if __name__ == "__main__":
    main()
