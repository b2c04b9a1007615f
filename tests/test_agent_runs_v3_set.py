"""The frozen held-out set agent-runs-v3: it is what its generator writes, it holds what its
README promises (six languages, six formats, tools v2 does not have, every mutation kind), each
mutated run differs from its valid pair by exactly the change its label names, and its bench
reads it under its own names."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

import scripts.make_agent_runs_v3 as generator
from agents.checking.formats import parse_run
from eval.detection_sets import load_detection_set
from scripts.agent_run_sets import MUTATIONS


@pytest.fixture(scope="module")
def dset():
    return load_detection_set("agent-runs-v3")  # refuses a file changed since it was frozen


@pytest.fixture(scope="module")
def by_id(dset):
    return {r["id"]: r for r in dset.records}


def test_the_frozen_records_are_what_the_generator_writes(dset, tmp_path):
    module = generator
    module.write(tmp_path / "again")
    for name in ("records.jsonl", "README.md", "manifest.json"):
        assert (tmp_path / "again" / name).read_bytes() == (dset.path / name).read_bytes(), name


def test_the_set_covers_what_its_readme_promises(dset):
    counts = Counter(r["label"] for r in dset.records)
    assert counts["correct"] >= 300 and counts["valid_call"] == counts["correct"]
    assert sum(counts[k] for k in MUTATIONS) >= counts["correct"]
    assert all(counts[k] >= 30 for k in MUTATIONS), counts
    valid = [r for r in dset.records if r["label"] == "correct"]
    tools = {t for r in valid for t in r["tools"]}
    assert len(tools) >= 30
    v2 = load_detection_set("agent-runs-v2")
    assert not tools & {t for r in v2.records for t in r["tools"]}  # no tool of v2's
    langs = Counter(r["lang"] for r in valid)
    assert langs.keys() == {"en", "es", "de", "fr", "it", "pt"}
    assert min(langs.values()) >= 30
    assert set(Counter(r["format"] for r in dset.records)) == {
        "openai", "anthropic", "gemini", "generic", "langchain", "openai_responses"
    }  # fmt: skip
    assert len({r["style"] for r in valid}) >= 6
    assert sum(r["calls"] > 1 for r in valid) >= 30  # two steps, or parallel calls


def test_every_run_reads_as_its_format_and_names_its_date(dset):
    for record in dset.records:
        run = parse_run(record["run"], record["id"])
        assert run.format == record["format"], record["id"]
        ends_on_call = record["label"] in ("valid_call", "invented_value") or record[
            "label"
        ].startswith("changed_")
        assert (run.answer is None) == ends_on_call, record["id"]
        assert run.calls, record["id"]
        # the system turn states today's date, so relative dates resolve
        assert any(re.search(r"\b20\d\d-\d\d-\d\d\b", t) for t in run.user_texts), record["id"]


def _leaf(args, pointer: str):
    for part in pointer.strip("/").split("/"):
        args = args[int(part)] if isinstance(args, list) else args[part]
    return args


def _as_written(value, like) -> str:
    """A number with the decimals of the user's (480.7 against 480.75 reads 480.70)."""
    if isinstance(value, float) and isinstance(like, float):
        return f"{value:.{len(repr(like).split('.')[1])}f}"
    return str(value)


def test_a_changed_value_is_one_character_or_one_enum_step_from_the_users(dset, by_id):
    for record in dset.records:
        if not record["label"].startswith("changed_"):
            continue
        m = record["mutation"]
        before, after = (
            _as_written(m["user_value"], m["user_value"]),
            _as_written(m["call_value"], m["user_value"]),
        )
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


def _leaves(value) -> set[str]:
    if isinstance(value, dict):
        return {x for v in value.values() for x in _leaves(v)}
    if isinstance(value, list):
        return {x for v in value for x in _leaves(v)}
    return {json.dumps(value, ensure_ascii=False).strip('"')}


def test_an_invented_value_is_nowhere_in_the_request_or_the_valid_call(dset, by_id):
    for record in (r for r in dset.records if r["label"] == "invented_value"):
        m = record["mutation"]
        run = parse_run(record["run"])
        call = next(c for c in reversed(run.calls) if c.name == m["tool"])
        assert _leaf(call.args, m["argument"]) == m["call_value"]
        pair = parse_run(by_id[record["pair"]]["run"])
        key = m["argument"].strip("/")
        before = [c.args.get(key) for c in pair.calls if c.name == m["tool"]]
        new = _leaves(m["call_value"]) - {x for b in before if b is not None for x in _leaves(b)}
        assert new, record["id"]  # an argument added, or a value added inside one
        said = [x for x in new if re.search(rf"(?<![\w.]){re.escape(x)}(?![\w.])", run.question)]
        assert not said, (record["id"], said)


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


def test_the_bench_reads_v3_under_its_own_names(monkeypatch, tmp_path):
    """The bench is v2's on another set: v3's records, v3's result file, v2's left alone."""
    from bench import agent_runs_v2, agent_runs_v3

    seen: list[str] = []

    def rows(records, settings, rows_file=None, name=""):
        seen.append(name)
        return [{"id": r["id"], "label": r["label"], "lang": r["lang"], "format": r["format"],
                 "style": r["style"], "pair": r["pair"], "domain": r["domain"], "mode": None,
                 "action": "emit", "flagged": False, "calls": 1, "calls_rejected": 0,
                 "rejected_reasons": [], "claim_statuses": [], "seconds": 0.0}
                for r in records]  # fmt: skip

    monkeypatch.setattr(agent_runs_v2, "check_records", rows)
    overrides = {"agent_runs_v3": {"judge": "none", "limit": 2}}
    result = agent_runs_v3.run(results_dir=tmp_path, overrides=overrides)
    assert result["set"] == "agent-runs-v3" and result["scenarios"] == 2 and result["limited"]
    assert seen == ["agent_runs_v3"]
    assert [p.name for p in tmp_path.glob("*.json")] == ["agent_runs_v3-judge-none.json"]
    assert agent_runs_v3.summarize(result).startswith("agent-runs-v3 (held out; 6 records")


def test_halves_split_scenarios_stably_and_give_each_half_its_figures():
    from bench import agent_runs_v2, agent_runs_v3

    pairs = [f"v3-{i:04d}" for i in range(200)]
    halves = [agent_runs_v3.half_of(p) for p in pairs]
    assert set(halves) == {"open", "held"}
    assert 60 <= halves.count("held") <= 140
    assert halves == [agent_runs_v3.half_of(p) for p in pairs]  # a pure function of the name
    rows = [
        {"id": "a", "label": "valid_call", "pair": "p1", "flagged": True, "calls": 2,
         "calls_rejected": 1, "rejected_reasons": ["x"], "lang": "en", "format": "openai",
         "domain": "d", "style": None, "action": "block", "mode": None, "claim_statuses": [],
         "seconds": 0.1},
        {"id": "b", "label": "changed_date", "pair": "p1", "flagged": False, "calls": 1,
         "calls_rejected": 0, "rejected_reasons": [], "lang": "en", "format": "openai",
         "domain": "d", "style": None, "action": "emit", "mode": None, "claim_statuses": [],
         "seconds": 0.1, "call_rejected": False},
    ]  # fmt: skip
    figures = agent_runs_v2.compact(agent_runs_v2.summarize_rows(rows))
    assert figures["valid_call_flag_rate"] == 0.5
    assert figures["caught"] == {"changed_date": 0.0}
