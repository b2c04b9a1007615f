"""Answerability judges end to end: none vs strict (the packaged GGUF, P(yes)), or
none vs fast (the project's own cross-encoder) with `--set rerank.answerability.kind=fast`, or
none vs fast vs combined with `--set rerank.answerability.kind=combined`.

A seeded sample of the frozen squad2-dev-v1 questions (half answerable, half unanswerable) is
run through the whole pipeline twice with `grounding eval`'s own scoring: once with rerank's
answerability judge off, once with `strict`. Reported per judge: truthfulness (+1 / 0 / -1),
answered precision, refusal recall, factuality, ECE, and the rerank seconds per question; for
strict, the added seconds per answered question (target <= 1.5 s). No threshold is fitted here:
the judge's P(yes) meets rerank's default thresholds as it is. The sample is small because the
strict judge costs about 1-2 s per passage on 2 cores; `--questions` makes it larger.

The fast judge is cheap, so it runs on whole frozen sets (squad2-dev-v1, cross-topic-v1,
sample-v1, sample-v2), with its model and Platt calibration from
configs/answerability-fast.yaml (fitted by scripts/fit_answerability.py on SQuAD dev articles no
eval set uses), and writes
answerability-fast.json. The combined judge (fast picks the sentence, the GGUF judges that one
sentence; configs/answerability-combined.yaml) runs on seeded balanced samples (COMBINED_SETS) and
writes answerability-combined.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "answerability"
DESCRIPTION = "squad2-dev-v1 sample end to end: answerability judge none vs strict (GGUF)"
SOURCE_SET = "squad2-dev-v1"
DEFAULT_QUESTIONS = 60
SEED = 14
TARGET_ADDED_S_PER_ANSWERED = 1.5
FAST_CONFIG = common.ROOT / "configs" / "answerability-fast.yaml"
FAST_SETS = ("squad2-dev-v1", "cross-topic-v1", "sample-v1", "sample-v2")
COMBINED_CONFIG = common.ROOT / "configs" / "answerability-combined.yaml"
# The combined judge costs one GGUF pass per question: seeded, balanced samples of the larger
# sets (the squad one is the strict run's own sample), the sample set whole.
COMBINED_SETS = {"squad2-dev-v1": DEFAULT_QUESTIONS, "cross-topic-v1": 100, "sample-v1": 0}
END_TO_END = (
    "truthfulness",
    "answered_precision",
    "refusal_recall",
    "refusal_precision",
    "factuality",
    "over_refusal_rate",
    "ece",
    "answered_rate",
    "out_of_corpus_refused",
)


def sample_set(target: Path, n: int, source_set: str = SOURCE_SET) -> Path:
    """A copy of the frozen set holding a seeded, balanced sample of its questions."""
    source = common.ROOT / "eval" / "sets" / source_set
    shutil.copytree(source, target)
    lines = (source / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    rng = random.Random(SEED)
    chosen = []
    for behaviour in ("answer", "refuse"):
        pool = [r for r in records if r["expected_behavior"] == behaviour]
        chosen += rng.sample(pool, min(n // 2, len(pool)))
    chosen.sort(key=records.index)
    (target / "questions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chosen), encoding="utf-8"
    )
    description = f"{len(chosen)} questions sampled from {source_set} (seed {SEED})"
    rewrite_manifest(target, f"{source_set}-sample{len(chosen)}", description)
    return target


def rewrite_manifest(target: Path, name: str, description: str) -> None:
    """A copied set whose questions were sampled: its manifest hashes the files it now has."""
    files = {
        p.relative_to(target).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(target.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }
    manifest = json.loads((target / "manifest.json").read_text())
    manifest.update(
        name=name,
        description=description,
        files=files,
        set_hash=hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest(),
    )
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def measure(
    set_dir: Path | str, store: Path, kind: str, strict_mode: str | None = None
) -> dict[str, Any]:
    overrides = {"rerank.answerability.kind": kind}
    if strict_mode and kind == "strict":
        overrides["rerank.answerability.strict_mode"] = strict_mode
    label = kind if kind == "none" or not strict_mode else f"{kind}-{strict_mode}"
    return measure_with(set_dir, store, overrides, label)


def measure_with(
    set_dir: Path | str, store: Path, overrides: dict[str, Any], label: str
) -> dict[str, Any]:
    from flows.evaluation import evaluate

    started = time.perf_counter()
    run = evaluate(set_dir, overrides=overrides, store=store)
    axis = run.metrics["axes"]["end_to_end"]
    rerank_seconds = run.stage_results["rerank"].seconds
    answered = run.metrics["counts"].get("answered", 0)
    return {
        "judge": label,
        **{name: _round(axis.get(name)) for name in END_TO_END},
        "counts": run.metrics["counts"],
        "answered": answered,
        "rerank_s": round(rerank_seconds, 2),
        "rerank_s_per_question": round(rerank_seconds / max(run.metrics["questions"], 1), 3),
        "wall_s": round(time.perf_counter() - started, 1),
    }


def fast_overrides(path: Path = FAST_CONFIG) -> dict[str, Any]:
    """The fast judge's settings (model, sha256, Platt scale/shift) as rerank overrides."""
    import yaml

    settings = yaml.safe_load(path.read_text(encoding="utf-8"))["answerability"]
    return {f"rerank.answerability.{key}": value for key, value in settings.items()}


def run_fast(results_dir: Path | None) -> dict[str, Any]:
    """none vs fast on whole frozen sets, in one artifact store (judge-off stages are shared)."""
    if not FAST_CONFIG.is_file():
        raise common.Skipped(f"no {FAST_CONFIG.name}: run scripts/fit_answerability.py --kind fast")
    started = time.perf_counter()
    overrides = fast_overrides()
    per_set = []
    with tempfile.TemporaryDirectory(prefix="bench-answerability-fast-") as tmp:
        store = Path(tmp) / "store"
        for name in FAST_SETS:
            judges = [
                measure_with(name, store, {"rerank.answerability.kind": "none"}, "none"),
                measure_with(name, store, overrides, "fast"),
            ]
            added = (judges[1]["rerank_s"] - judges[0]["rerank_s"]) / max(
                sum(judges[1]["counts"].values()), 1
            )
            per_set.append({"set": name, "judges": judges, "fast_added_s_per_question": added})
    payload = _sets_payload(overrides, per_set, started)
    common.write_result(f"{NAME}-fast", payload, results_dir)
    return payload


def _sets_payload(
    overrides: dict[str, Any], per_set: list[dict], started: float, **extra: Any
) -> dict[str, Any]:
    return {
        "status": "ok",
        "judge_settings": {k.rsplit(".", 1)[1]: v for k, v in overrides.items()},
        "sets": per_set,
        **extra,
        "cpu_count": os.cpu_count(),
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
        "runtime_s": round(time.perf_counter() - started, 1),
    }


def run_combined(results_dir: Path | None) -> dict[str, Any]:
    """none vs fast vs combined (fast picks the sentence, the GGUF judges it) per set; the
    combined judge's added rerank seconds per question against fast's."""
    if not COMBINED_CONFIG.is_file():
        raise common.Skipped(
            f"no {COMBINED_CONFIG.name}: run scripts/fit_answerability.py --kind combined"
        )
    started = time.perf_counter()
    combined, fast = fast_overrides(COMBINED_CONFIG), fast_overrides(FAST_CONFIG)
    per_set = []
    with tempfile.TemporaryDirectory(prefix="bench-answerability-combined-") as tmp:
        store = Path(tmp) / "store"
        for name, size in COMBINED_SETS.items():
            set_dir = sample_set(Path(tmp) / name, size, name) if size else name
            judges = [
                measure_with(set_dir, store, {"rerank.answerability.kind": "none"}, "none"),
                measure_with(set_dir, store, fast, "fast"),
                measure_with(set_dir, store, combined, "combined"),
            ]
            questions = max(sum(judges[2]["counts"].values()), 1)
            added = (judges[2]["rerank_s"] - judges[1]["rerank_s"]) / questions
            answered = max(judges[2]["answered"], 1)
            per_set.append(
                {
                    "set": name if not size else f"{name} (seeded sample of {size})",
                    "judges": judges,
                    "combined_added_s_per_question": round(added, 3),
                    "combined_added_s_per_answered": round(
                        (judges[2]["rerank_s"] - judges[0]["rerank_s"]) / answered, 2
                    ),
                }
            )
    payload = _sets_payload(
        combined, per_set, started, target_added_s_per_answered=TARGET_ADDED_S_PER_ANSWERED
    )
    common.write_result(f"{NAME}-combined", payload, results_dir)
    return payload


def _round(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def run(
    results_dir: Path | None = None,
    questions: int = DEFAULT_QUESTIONS,
    overrides: dict[str, Any] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """`--set rerank.answerability.strict_mode=choice` measures the choice judge; that run is
    written as answerability-choice.json beside the default run's answerability.json."""
    rerank_overrides = (overrides or {}).get("rerank", {})  # `--set rerank.answerability.X=...`
    if rerank_overrides.get("answerability.kind") == "fast":
        return run_fast(results_dir)
    if rerank_overrides.get("answerability.kind") == "combined":
        return run_combined(results_dir)
    strict_mode = rerank_overrides.get("answerability.strict_mode")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-answerability-") as tmp:
        set_dir = sample_set(Path(tmp) / "set", questions)
        store = Path(tmp) / "store"
        results = [measure(set_dir, store, kind, strict_mode) for kind in ("none", "strict")]
    none, strict = results
    added = (strict["rerank_s"] - none["rerank_s"]) / max(strict["answered"], 1)
    payload = {
        "status": "ok",
        "source_set": SOURCE_SET,
        "questions": questions,
        "seed": SEED,
        "judges": results,
        "strict_added_s_per_answered": round(added, 2),
        "target_added_s_per_answered": TARGET_ADDED_S_PER_ANSWERED,
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
        "runtime_s": round(time.perf_counter() - started, 1),
    }
    common.write_result(NAME if strict_mode != "choice" else f"{NAME}-choice", payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    if "sets" in result:
        return "\n\n".join(_set_summary(entry) for entry in result["sets"])
    return (
        _table(result["judges"])
        + f"\n{result['questions']} questions sampled from {result['source_set']} (seed "
        f"{result['seed']}). Strict judge's added cost: {result['strict_added_s_per_answered']} s "
        f"per answered question (target <= {result['target_added_s_per_answered']} s)."
    )


def _set_summary(entry: dict[str, Any]) -> str:
    if "combined_added_s_per_question" in entry:
        cost = (
            f"combined added {entry['combined_added_s_per_question']:.2f} s per question to "
            f"fast, {entry['combined_added_s_per_answered']:.2f} s per answered question to none"
        )
    else:
        cost = f"fast judge added {entry['fast_added_s_per_question']:.3f} s per question"
    return f"{entry['set']} ({cost})\n" + _table(entry["judges"])


def _table(judges: list[dict[str, Any]]) -> str:
    lines = [
        "| judge | " + " | ".join(END_TO_END) + " | rerank s/question |",
        "|---|" + "---:|" * (len(END_TO_END) + 1),
    ]
    for r in judges:
        cells = ["–" if r.get(m) is None else f"{r[m]:.3f}" for m in END_TO_END]
        per_question = r["rerank_s_per_question"]
        lines.append(f"| {r['judge']} | " + " | ".join(cells) + f" | {per_question} |")
    return "\n".join(lines)
