"""The frozen held-out set agent-runs-v2: it is what its generator writes, it holds what its
README promises (formats, languages, tools, every mutation kind), and each mutated run differs
from its valid pair by exactly the change its label names."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import scripts.make_agent_runs_v2 as generator
from agents.checking.formats import parse_run
from eval.detection_sets import load_detection_set
from scripts.agent_run_sets import MUTATIONS


@pytest.fixture(scope="module")
def dset():
    return load_detection_set("agent-runs-v2")  # refuses a file changed since it was frozen


@pytest.fixture(scope="module")
def by_id(dset):
    return {r["id"]: r for r in dset.records}


def test_the_frozen_records_are_what_the_generator_writes(dset):
    written = (dset.path / "records.jsonl").read_text(encoding="utf-8")
    rows = generator.records()
    assert written == "".join(
        json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows
    )


def test_the_set_covers_what_its_readme_promises(dset):
    counts = Counter(r["label"] for r in dset.records)
    assert counts["correct"] >= 300 and counts["valid_call"] == counts["correct"]
    assert sum(counts[k] for k in MUTATIONS) >= counts["correct"]
    assert all(counts[k] >= 30 for k in MUTATIONS), counts
    valid = [r for r in dset.records if r["label"] == "correct"]
    assert len({t for r in valid for t in r["tools"]}) >= 30
    assert Counter(r["lang"] for r in valid).keys() == {"en", "es", "de", "fr"}
    assert min(Counter(r["lang"] for r in valid).values()) >= 30
    assert set(Counter(r["format"] for r in dset.records)) == {
        "openai", "anthropic", "gemini", "generic", "langchain", "openai_responses"
    }  # fmt: skip
    assert len({r["style"] for r in valid}) >= 6
    assert sum(r["calls"] > 1 for r in valid) >= 30  # two-step runs: an id from a result


def test_every_run_reads_as_its_format(dset):
    for record in dset.records:
        run = parse_run(record["run"], record["id"])
        assert run.format == record["format"], record["id"]
        ends_on_call = record["label"] in ("valid_call", "invented_value") or record[
            "label"
        ].startswith("changed_")
        assert (run.answer is None) == ends_on_call, record["id"]
        assert run.calls, record["id"]


def _leaf(args, pointer: str):
    for part in pointer.strip("/").split("/"):
        args = args[int(part)] if isinstance(args, list) else args[part]
    return args


def test_a_changed_value_is_one_character_or_one_enum_step_from_the_users(dset, by_id):
    for record in dset.records:
        if not record["label"].startswith("changed_"):
            continue
        m = record["mutation"]
        before, after = str(m["user_value"]), str(m["call_value"])
        assert before != after, record["id"]
        if record["label"] != "changed_enum":
            assert len(before) == len(after), record["id"]
            assert sum(a != b for a, b in zip(before, after, strict=True)) == 1, record["id"]
        run = parse_run(record["run"])
        call = next(c for c in reversed(run.calls) if c.name == m["tool"])
        assert _leaf(call.args, m["argument"]) == m["call_value"], record["id"]
        pair = parse_run(by_id[record["pair"]]["run"])
        assert any(
            c.name == m["tool"] and _leaf(c.args, m["argument"]) == m["user_value"]
            for c in pair.calls
        ), record["id"]


def test_an_invented_value_is_nowhere_in_the_request_or_the_valid_call(dset, by_id):
    for record in (r for r in dset.records if r["label"] == "invented_value"):
        m = record["mutation"]
        run = parse_run(record["run"])
        call = next(c for c in reversed(run.calls) if c.name == m["tool"])
        assert _leaf(call.args, m["argument"]) == m["call_value"]
        assert json.dumps(m["call_value"], ensure_ascii=False).strip('"') not in run.question
        pair = parse_run(by_id[record["pair"]]["run"])
        key = m["argument"].strip("/")
        assert all(key not in c.args for c in pair.calls if c.name == m["tool"]), record["id"]


def test_answer_mutations_change_only_the_answer(dset, by_id):
    for record in dset.records:
        if record["label"] not in ("contradiction", "unsupported_addition"):
            continue
        run, pair = parse_run(record["run"]), parse_run(by_id[record["pair"]]["run"])
        assert run.answer != pair.answer, record["id"]
        assert [c.args for c in run.calls] == [c.args for c in pair.calls]
        assert [r.content for r in run.results] == [r.content for r in pair.results]
        m = record["mutation"]
        if record["label"] == "contradiction":
            assert str(m["answer_value"]) in run.answer and str(m["result_value"]) in pair.answer
        else:
            assert m["addition"].removeprefix("- ") in run.answer
            assert m["addition"].removeprefix("- ") not in pair.answer


# ---------------------------------------------------------------- the bench's arithmetic


def _row(label: str, flagged: bool, pair: str, **extra) -> dict:
    base = {"id": f"{pair}:{label}", "label": label, "lang": "en", "format": "openai",
            "style": "plain", "pair": pair, "domain": "weather", "mode": "grounded",
            "action": "revise" if flagged else "emit", "flagged": flagged, "calls": 1,
            "calls_rejected": 0, "rejected_reasons": [], "claim_statuses": [],
            "seconds": 0.1}  # fmt: skip
    return {**base, **extra}


def test_the_bench_counts_per_call_per_run_and_per_kind():
    from bench.agent_runs_v2 import summarize_rows

    rows = [
        _row("valid_call", True, "a", calls=2, calls_rejected=1, rejected_reasons=["fit"]),
        _row("valid_call", False, "b", calls=2),
        _row("correct", False, "a"),
        _row("correct", True, "b"),
        _row("changed_ip", True, "a", call_rejected=True),
        _row("changed_ip", True, "b", call_rejected=False),  # flagged for another cause
        _row("contradiction", True, "a"),
        _row("contradiction", True, "b"),  # its pair was flagged too: not counted as clean
        {"id": "c", "label": "correct", "error": "RunFormatError: x"},
    ]
    out = summarize_rows(rows)
    assert out["errors"] == 1 and out["records"] == 9
    assert out["valid_calls"]["call_flag_rate"] == 0.25  # 1 of 4 calls
    assert out["valid_calls"]["run_flag_rate"] == 0.5
    assert out["valid_runs"]["emitted"] == 0.5
    ip = out["mutations"]["changed_ip"]
    assert (ip["caught"], ip["call_rejected"]) == (1.0, 0.5)
    assert (ip["pairs_passed"], ip["caught_where_pair_passed"]) == (1, 1.0)  # pair b passed
    contra = out["mutations"]["contradiction"]
    assert (contra["caught"], contra["pairs_emitted"], contra["caught_where_pair_emitted"]) == (
        1.0,
        1,
        1.0,
    )
    assert out["targets_met"]["caught.changed_ip"] and not out["targets_met"]["valid_run_emitted"]


def test_a_sample_of_the_valid_runs_is_seeded_and_summarised_alone(dset):
    import random

    from bench.agent_runs_v2 import SAMPLE_SEED, summarize_rows

    correct = [r for r in dset.records if r["label"] == "correct"]
    one = random.Random(SAMPLE_SEED).sample(correct, 5)
    again = random.Random(SAMPLE_SEED).sample(correct, 5)
    assert [r["id"] for r in one] == [r["id"] for r in again]
    out = summarize_rows([_row("correct", i % 2 == 0, r["pair"]) for i, r in enumerate(one)])
    assert out["valid_runs"]["emitted"] == 0.4 and out["valid_calls"]["call_flag_rate"] is None
