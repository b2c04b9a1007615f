"""Choose the claim judge's training recipe out of fold, then train it: one GPU call.

The fast judge's quality is its claim AUC on the RAGTruth FIT split's judged claims, scored by a
model that did not train on their question (`train_claim_judge.fold_of`, three folds). On two CPU
cores one training takes about 9 minutes, so claim-judge-minilm-v1 was one recipe, never compared.
On a GPU machine every recipe below trains its three fold models side by side; each is scored on
its held-out fold, the recipe with the best out-of-fold AUC is trained once more on every row, and
its weights come back as fp16 (export to int8 ONNX happens here: `train_claim_judge.py export`).

Only torch, transformers, tokenizers, safetensors and onnxruntime are needed there (no project
install): the rows, the fit claims, the fp16 init checkpoint and snowballstemmer travel in
`.gpu/` (ignored by git; name it in the device call's `carry`), made here by `prepare`. The
tracked ONNX models must be moved out of the working tree for the call (at most 64 MiB travels).

Session 28 (bench/results/claim_judge_sweep.json): "distill" won (out-of-fold claim AUC 0.784
against 0.761 for v1's recipe, the GGUF 0.805); held out its model was better per claim (AUC 0.777
against v1's 0.723) but not per answer, so claim-judge-minilm-v1 stays configured.

The folds are those of the claims file: three on the dev fit split (v1's sweep), five question
folds on RAGTruth QA train (claim-judge-minilm-v2; claims recorded without the GGUF, so no
teacher). A claim read in windows is one row per window.

Usage:
  python -m scripts.sweep_claim_judge prepare --data .cache/cj2-data --out .gpu     # here
  PYTHONPATH=.gpu/site python -m scripts.sweep_claim_judge run --carried .gpu \
      --out "$OUT"                                                                 # GPU machine
  python -m scripts.sweep_claim_judge join --parts DIR --out .cache/claim-judge-v2  # here
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from scripts import train_answerability as base  # needs only snowballstemmer at import time

ROOT = Path(__file__).resolve().parent.parent

MAX_LENGTH = 192  # train_claim_judge.MAX_LENGTH (not imported: that module needs the project)
CHUNK = 15 * 2**20  # what comes back from the GPU machine: at most 16 MiB a file

# name -> (SQuAD questions kept, epochs, lr, batch, seeds, RAGTruth rows repeated)
RECIPES: dict[str, dict] = {
    "v1": {"squad": 1500, "epochs": 2, "lr": 4e-5, "batch": 16, "seeds": [41], "repeat": 1},
    "all-squad": {"squad": 10**6, "epochs": 2, "lr": 4e-5, "batch": 16, "seeds": [41], "repeat": 1},
    "all-squad-3ep": {
        **{"squad": 10**6, "epochs": 3, "lr": 3e-5, "batch": 32, "seeds": [41], "repeat": 1}
    },
    "all-squad-soup": {
        **{"squad": 10**6, "epochs": 2, "lr": 4e-5, "batch": 16, "seeds": [41, 42, 43], "repeat": 1}
    },
    # RAGTruth rows' target: the mean of the human label and the GGUF judge's P(yes) (a teacher
    # whose claim AUC is higher; the held-out fold's P(yes) is never read by its fold model)
    "distill": {
        **{"squad": 10**6, "epochs": 2, "lr": 4e-5, "batch": 16, "seeds": [41], "repeat": 1},
        "distill": True,
    },
    "all-squad-4ep": {
        **{"squad": 10**6, "epochs": 4, "lr": 3e-5, "batch": 16, "seeds": [41], "repeat": 1}
    },
    "ragtruth-x3": {
        **{"squad": 10**6, "epochs": 2, "lr": 4e-5, "batch": 16, "seeds": [41], "repeat": 3}
    },
}


# ---------------------------------------------------------------- here: what travels


def prepare(data: Path, records: Path, init: Path, out: Path) -> None:
    """rows.jsonl.gz (train_claim_judge data --holdout none), claims.jsonl (every judged fit
    claim: fold, the judge's two sides, label, the GGUF's P(yes)) and the fp16 init checkpoint."""
    from safetensors.torch import load_file, save_file

    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "rows.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write((data / "train.jsonl").read_text(encoding="utf-8"))
    claims = []
    for line in records.read_text(encoding="utf-8").splitlines():
        answer = json.loads(line)
        for index, claim in enumerate(answer["claims"]):
            judged = claim.get("judged")
            # a long claim's windows: one row each (its logit is their minimum, `fit_logits`)
            windows = (judged or {}).get("windows") or (
                [(judged["claim_side"], judged["evidence_side"])] if judged else []
            )
            for claim_side, evidence_side in windows:
                claims.append(
                    {
                        "answer": answer["id"],
                        "index": index,
                        "fold": answer["fold"],
                        "claim_side": claim_side,
                        "evidence_side": evidence_side,
                        "label": int(not claim["hallucinated"]),
                        "p_yes": judged["p_yes"],
                    }
                )
    (out / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    import snowballstemmer  # stages.common.text's one import the GPU machine's image lacks

    source, target = Path(snowballstemmer.__file__).parent, out / "site" / "snowballstemmer"
    if source.resolve() != target.resolve():  # (this script may have imported the carried copy)
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=ignore)
    (out / "init").mkdir(exist_ok=True)
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(init / name, out / "init" / name)
    weights = load_file(str(init / "model.safetensors"))
    half = {k: v.half().contiguous() for k, v in weights.items()}
    save_file(half, str(out / "init" / "model.safetensors"), metadata={"format": "pt"})
    print(f"wrote {out}: {len(claims)} fit claims, init as fp16")


def join(parts: Path, out: Path, init: Path) -> None:
    """The GPU run's fp16 chunks put back together as a checkpoint `export` reads."""
    out.mkdir(parents=True, exist_ok=True)
    chunks = sorted(parts.glob("model.safetensors.part*"), key=lambda p: int(p.suffix[5:]))
    (out / "model.safetensors").write_bytes(b"".join(c.read_bytes() for c in chunks))
    shutil.copy(parts / "config.json", out / "config.json")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(init / name, out / name)
    print(f"wrote {out} from {len(chunks)} chunks")


# ---------------------------------------------------------------- there: the sweep


def _rows_for(
    rows: list[dict], recipe: dict, fold: int | None, teacher: dict | None = None
) -> list[dict]:
    kept = []
    for row in rows:
        if fold is not None and row.get("fold") == fold:
            continue  # the held-out fold's questions: never trained on
        if row.get("rank", -1) >= recipe["squad"]:
            continue
        repeat = recipe["repeat"] if row["source"] == "ragtruth" else 1
        p_yes = (teacher or {}).get((row["question"], row["passage"]))  # None: no GGUF record
        if recipe.get("distill") and row["source"] == "ragtruth" and p_yes is not None:
            row = {**row, "label": 0.5 * row["label"] + 0.5 * p_yes}
        kept += [row] * repeat
    return kept


def _job(
    folder: Path, rows: list[dict], recipe: dict, seed: int, init: Path, max_steps: int | None
) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [
        *[sys.executable, __file__, "train-one", "--folder", str(folder), "--init", str(init)],
        *["--epochs", str(recipe["epochs"]), "--lr", str(recipe["lr"])],
        *["--batch-size", str(recipe["batch"]), "--seed", str(seed)],
        *(["--max-steps", str(max_steps)] if max_steps else []),  # a smoke test on a CPU
    ]


def _run_all(commands: list[list[str]], log: Path) -> None:
    """Every job at once: a small model leaves a big GPU mostly idle, one process at a time."""
    started = time.time()
    with log.open("a") as handle:
        running = [subprocess.Popen(c, stdout=handle, stderr=subprocess.STDOUT) for c in commands]
        codes = [p.wait() for p in running]
    failed = sum(1 for c in codes if c)
    print(f"{len(commands)} jobs in {time.time() - started:.0f}s, {failed} failed", flush=True)


def _scores(model, tokenizer, pairs: list[tuple[str, str]]) -> list[float]:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    out: list[float] = []
    with torch.no_grad():
        for start in range(0, len(pairs), 128):
            chunk = pairs[start : start + 128]
            encoded = tokenizer(
                [a for a, _ in chunk],
                [b for _, b in chunk],
                truncation="only_second",
                max_length=MAX_LENGTH,
                padding=True,
                return_tensors="pt",
            ).to(device)
            out += model(**encoded).logits.squeeze(-1).float().cpu().tolist()
    return out


def sweep(
    carried: Path,
    out: Path,
    work: Path,
    recipes: list[str],
    budget_s: float,
    max_steps: int | None = None,
) -> None:
    from transformers import AutoTokenizer

    started = time.time()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "train.log"
    with gzip.open(carried / "rows.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    claims = [json.loads(line) for line in (carried / "claims.jsonl").read_text().splitlines()]
    init = carried / "init"
    tokenizer = AutoTokenizer.from_pretrained(str(init))
    labels = [c["label"] for c in claims]
    folds = 1 + max(c["fold"] for c in claims)  # 3 on the dev fit split, 5 on RAGTruth train
    teacher = {(c["claim_side"], c["evidence_side"]): c["p_yes"] for c in claims}
    results: dict = {"claims": len(claims), "unsupported": labels.count(0), "folds": folds}
    if all(c["p_yes"] is not None for c in claims):  # recorded without the GGUF: no teacher
        results["gguf_auc"] = round(base._auc([c["p_yes"] for c in claims], labels), 4)
    results["recipes"] = {}
    commands, folders = [], {}
    for name in recipes:
        recipe = RECIPES[name]
        for fold in range(folds):
            for seed in recipe["seeds"]:
                folder = work / f"{name}-f{fold}-s{seed}"
                folders.setdefault((name, fold), []).append(folder / "checkpoint")
                commands.append(
                    _job(
                        folder,
                        _rows_for(rows, recipe, fold, teacher),
                        recipe,
                        seed,
                        init,
                        max_steps,
                    )
                )
    _run_all(commands, log)
    oof: dict[str, list[float]] = {}
    for name in recipes:
        logits = [0.0] * len(claims)
        try:
            for fold in range(folds):
                model = base.mean_model(folders[(name, fold)])
                mine = [i for i, c in enumerate(claims) if c["fold"] == fold]
                pairs = [(claims[i]["claim_side"], claims[i]["evidence_side"]) for i in mine]
                for i, score in zip(mine, _scores(model, tokenizer, pairs), strict=True):
                    logits[i] = score
        except OSError as error:  # a job that failed left no checkpoint
            results["recipes"][name] = {"error": str(error)[:200]}
            continue
        oof[name] = logits
        results["recipes"][name] = {
            **RECIPES[name],
            "oof_auc": round(base._auc(logits, labels), 4),
            "rows": len(_rows_for(rows, RECIPES[name], None)),
        }
        print(name, results["recipes"][name], flush=True)
    best = max(oof, key=lambda n: results["recipes"][n]["oof_auc"])
    results["chosen"] = best
    results["oof_logits"] = oof[best]
    results["phase1_s"] = round(time.time() - started)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    if time.time() - started > budget_s:
        print("no time left for the final model", flush=True)
        return
    recipe = RECIPES[best]
    finals = []
    commands = []
    for seed in recipe["seeds"]:
        folder = work / f"{best}-all-s{seed}"
        finals.append(folder / "checkpoint")
        commands.append(
            _job(folder, _rows_for(rows, recipe, None, teacher), recipe, seed, init, max_steps)
        )
    _run_all(commands, log)
    model = base.mean_model(finals)
    pairs = [(c["claim_side"], c["evidence_side"]) for c in claims]
    results["final_logits"] = _scores(model, tokenizer, pairs)  # in-sample: to compare with int8
    results["total_s"] = round(time.time() - started)
    model.half().save_pretrained(str(work / "final"))
    blob = (work / "final" / "model.safetensors").read_bytes()
    for number, start in enumerate(range(0, len(blob), CHUNK)):
        (out / f"model.safetensors.part{number}").write_bytes(blob[start : start + CHUNK])
    shutil.copy(work / "final" / "config.json", out / "config.json")
    (out / "results.json").write_text(json.dumps(results, indent=1))
    print(f"final model of {best} written, {results['total_s']}s in all", flush=True)
    from stages.models.onnx_pairs import OnnxPairScorer  # numpy only at import time

    try:  # the out-of-fold logits again, as the shipped int8 ONNX model would give them
        int8 = [0.0] * len(claims)
        for fold in range(folds):
            folder = work / f"{best}-f{fold}-mean"
            base.mean_model(folders[(best, fold)]).save_pretrained(str(folder))
            tokenizer.save_pretrained(str(folder))
            base.export(folder, folder / "onnx", per_channel=True)  # as v2 would ship
            mine = [i for i, c in enumerate(claims) if c["fold"] == fold]
            pairs = [(claims[i]["claim_side"], claims[i]["evidence_side"]) for i in mine]
            scorer = OnnxPairScorer(folder / "onnx", max_length=MAX_LENGTH)  # as `logits` does
            for i, score in zip(mine, scorer.score(pairs), strict=True):
                int8[i] = score
        results["oof_logits_int8"] = int8
        results["oof_auc_int8"] = round(base._auc(int8, labels), 4)
    except Exception as error:  # noqa: BLE001 - the fp32 logits above still stand
        results["int8_error"] = f"{type(error).__name__}: {error}"[:300]
    results["total_s"] = round(time.time() - started)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    print(f"done, {results['total_s']}s in all", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare", help="here: the files that travel to the GPU machine")
    prep.add_argument("--data", type=Path, default=ROOT / ".cache" / "cj2-data")
    prep.add_argument("--records", type=Path, default=ROOT / ".cache" / "fast-judge-fit.jsonl")
    prep.add_argument("--init", type=Path, default=ROOT / ".cache" / "claim-judge-init")
    prep.add_argument("--out", type=Path, default=ROOT / ".gpu")
    run = sub.add_parser("run", help="there: every recipe out of fold, then the best on all rows")
    run.add_argument("--carried", type=Path, default=ROOT / ".gpu")
    run.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/sweep-out")))
    run.add_argument("--work", type=Path, default=Path("/tmp/sweep"))
    run.add_argument("--recipes", nargs="*", default=list(RECIPES))
    run.add_argument("--budget-s", type=float, default=300.0)
    run.add_argument("--max-steps", type=int, default=None)
    one = sub.add_parser("train-one", help="one training job (run starts these)")
    one.add_argument("--folder", type=Path, required=True)
    one.add_argument("--init", type=Path, required=True)
    one.add_argument("--epochs", type=float, required=True)
    one.add_argument("--lr", type=float, required=True)
    one.add_argument("--batch-size", type=int, required=True)
    one.add_argument("--seed", type=int, required=True)
    one.add_argument("--max-steps", type=int, default=None)
    back = sub.add_parser("join", help="here: the returned chunks as a checkpoint")
    back.add_argument("--parts", type=Path, required=True)
    back.add_argument("--out", type=Path, default=ROOT / ".cache" / "claim-judge-v2")
    back.add_argument("--init", type=Path, default=ROOT / ".cache" / "claim-judge-init")
    args = parser.parse_args()
    base.MAX_LENGTH = MAX_LENGTH
    if args.command == "prepare":
        prepare(args.data, args.records, args.init, args.out)
    elif args.command == "run":
        sweep(args.carried, args.out, args.work, args.recipes, args.budget_s, args.max_steps)
    elif args.command == "train-one":
        base.train(
            args.folder,
            args.folder / "checkpoint",
            args.epochs,
            args.batch_size,
            args.lr,
            max_steps=args.max_steps,
            init=args.init,
            seed=args.seed,
        )
    else:
        join(args.parts, args.out, args.init)


if __name__ == "__main__":
    main()
