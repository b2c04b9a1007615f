"""`grounding check`: exit codes, JSON output, reports on disk, and the batch's
resumable content-addressed artifacts (the plain-Python path of the `agent-run-check` flow)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agents.checking import Config
from cli.app import app
from flows import agent_check

runner = CliRunner()


def generic(run_id: str, answer: str, content: object = None) -> dict:
    return {
        "run_id": run_id,
        "question": "What is the status of order ORD-12345?",
        "tool_results": [
            {
                "tool": "get_order",
                "call_id": "c1",
                "args": {"order_id": "ORD-12345"},
                "content": content
                if content is not None
                else {"order": {"id": "ORD-12345", "status": "shipped"}},
            }
        ],
        "answer": answer,
    }


GOOD = generic("good", "Order ORD-12345 was shipped.")
EMPTY = generic("empty", "It was delivered to Berlin on Monday.", {"results": []})


def invoke(*args: str):
    return runner.invoke(app, ["check", *args, "--judge", "none"])


def test_all_emitted_exits_0(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    result = invoke(str(path))
    assert result.exit_code == 0, result.output
    assert "good  EMIT" in result.output and "grounded" in result.output


def test_a_blocked_run_exits_1_and_json_goes_to_stdout(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(EMPTY) + "\n")
    result = runner.invoke(app, ["check", str(path), "--judge", "none", "--format", "json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert [r["run_id"] for r in document["reports"]] == ["good", "empty"]
    assert document["reports"][1]["action"] == "block"
    assert document["reports"][1]["diagnosis"]["mode"] == "answered_without_evidence"
    assert document["errors"] == []


def test_unreadable_input_exits_2_and_the_rest_is_still_checked(tmp_path):
    assert invoke(str(tmp_path / "missing.json")).exit_code == 2
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{broken\n")
    result = invoke(str(path), "--out", str(tmp_path / "reports"))
    assert result.exit_code == 2
    assert "good  EMIT" in result.output and "runs:2  ERROR" in result.output
    assert json.loads((tmp_path / "reports" / "good.json").read_text())["action"] == "emit"
    assert "not JSON" in (tmp_path / "reports" / "errors.jsonl").read_text()


def test_a_bad_config_exits_2(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    bad = tmp_path / "check.yaml"
    bad.write_text("emit_threshold: 7\n")
    assert invoke(str(path), "--config", str(bad)).exit_code == 2


def test_the_batch_writes_artifacts_and_resumes(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "monday.jsonl").write_text(json.dumps(GOOD) + "\n" + json.dumps(EMPTY) + "\n")
    (logs / "tuesday.json").write_text(json.dumps(GOOD))
    store = tmp_path / "store"
    config = Config(judge="none")
    first = agent_check.run_agent_check(logs, store, config)
    assert [(o["partition"], o["status"]) for o in first] == [
        ("monday.jsonl", "done"),
        ("tuesday.json", "done"),
    ]
    assert first[0]["block"] == 1 and first[0]["emit"] == 1
    reports = agent_check.read_partition(store, first[0]["key"], "agent_reports").to_pylist()
    assert [(r["run_id"], r["action"]) for r in reports] == [("good", "emit"), ("empty", "block")]
    calls = agent_check.read_partition(store, first[0]["key"], "agent_tool_calls").to_pylist()
    assert calls[0]["tool"] == "get_order" and calls[0]["status"] == "valid"
    claims = agent_check.read_partition(store, first[0]["key"], "agent_claims").to_pylist()
    # each element of the claim is anchored at the JSON leaf it rests on
    assert claims[0]["anchors"] == ["get_order#c1/order/id", "get_order#c1/order/status"]
    # a rerun finds every partition done; a changed file is checked again
    again = agent_check.run_agent_check(logs, store, config)
    assert [o["status"] for o in again] == ["skipped", "skipped"]
    assert again[0]["block"] == 1 and again[0]["emit"] == 1  # the audit's counts still hold
    (logs / "tuesday.json").write_text(json.dumps(EMPTY))
    third = agent_check.run_agent_check(logs, store, config)
    assert [o["status"] for o in third] == ["skipped", "done"]
    # other settings are another artifact
    stricter = agent_check.run_agent_check(logs, store, Config(judge="none", emit_threshold=0.9))
    assert [o["status"] for o in stricter] == ["done", "done"]


def test_a_killed_batch_leaves_no_partial_partition(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.json").write_text(json.dumps(GOOD))
    (logs / "b.json").write_text(json.dumps(GOOD))
    store = tmp_path / "store"
    real = agent_check.artifact_tables
    calls = {"n": 0}

    def dies_on_second(items, rows):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(items, rows)

    monkeypatch.setattr(agent_check, "artifact_tables", dies_on_second)
    with pytest.raises(KeyboardInterrupt):
        agent_check.run_agent_check(logs, store, Config(judge="none"))
    monkeypatch.setattr(agent_check, "artifact_tables", real)
    outcomes = agent_check.run_agent_check(logs, store, Config(judge="none"))
    assert [o["status"] for o in outcomes] == ["skipped", "done"]
