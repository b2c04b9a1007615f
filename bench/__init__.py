"""Benchmarks for retrieval and rerank: `python -m bench [names...]` (see `--help`).

Each bench is a module with NAME, DESCRIPTION, `run(results_dir=..., **options) -> dict` (it
writes `bench/results/<NAME>.json`) and `summarize(result) -> str` (Markdown for the README).
A bench whose public data set is absent raises `bench.common.Skipped`; the runner prints why.
"""

from __future__ import annotations

# name -> module, in the order `python -m bench` runs them
BENCHES = {
    "speed": "bench.speed",
    "scifact": "bench.scifact",
    "ranking": "bench.ranking",
    "calibration": "bench.calibration",
    "generation": "bench.generation",
    "halueval": "bench.halueval",
    "paraphrase": "bench.paraphrase",
    "ops": "bench.ops",
    "user_folder": "bench.user_folder",
    "answerability": "bench.answerability",
    "question_checks": "bench.question_checks",
    "llm_answers": "bench.llm_answers",
    "ocr": "bench.ocr",
    "tables": "bench.tables",
    "scale": "bench.scale",
    "embeddings": "bench.embeddings",
    "setup": "bench.setup",
    "veto_ceiling": "bench.veto_ceiling",
    "agent_runs": "bench.agent_runs",
    "ragtruth": "bench.ragtruth",
    "judge_ceiling": "bench.judge_ceiling",
    "agent_runs_ragtruth": "bench.agent_runs_ragtruth",
    "agent_runs_v2": "bench.agent_runs_v2",
    "agent_runs_v3": "bench.agent_runs_v3",
    "serving": "bench.serving",
}
