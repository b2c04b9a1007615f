"""`grounding serve`: schedules from configs/, a real Prefect server on loopback, the inbox flow
answering a dropped question set once, and the corpus re-index that runs only on change."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from stages.common.offline import OFFLINE_ENV
from tests.conftest import ROOT
from tests.test_logs import write_tiny_inputs

SCHEDULES = ROOT / "configs" / "schedules.yaml"


# ---------------------------------------------------------------- schedules


def test_the_schedules_file_builds_three_cron_deployments():
    from flows.serve import build_deployments, load_schedules

    specs = load_schedules(SCHEDULES)
    assert {s.flow for s in specs.values()} == {"question-inbox", "release-eval", "corpus-reindex"}
    deployments = build_deployments(specs, "configs/pipeline.yaml")
    by_name = {d.name: d for d in deployments}
    assert set(by_name) == set(specs)
    for name, spec in specs.items():
        (schedule,) = by_name[name].schedules
        assert schedule.schedule.cron == spec.cron
        assert schedule.schedule.timezone == spec.timezone
        assert by_name[name].parameters["config_path"] == "configs/pipeline.yaml"
    assert by_name["question-inbox"].parameters["inbox"] == "data/inbox"
    assert by_name["question-inbox"].entrypoint == "flows.scheduled.question_inbox_flow"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"flow": "question-inbox", "cron": "*/5 * * * *", "parameters": {"inbx": "x"}}, "inbx"),
        ({"flow": "nightly", "cron": "0 2 * * *"}, "unknown flow"),
        ({"flow": "corpus-reindex", "cron": "0 2 * * *", "timezone": "Mars/Base"}, "timezone"),
        ({"flow": "corpus-reindex", "cron": "every night"}, "cron"),
    ],
)
def test_a_bad_schedule_names_what_is_wrong(tmp_path, body, message):
    from flows.serve import ScheduleError, load_schedules

    path = tmp_path / "schedules.yaml"
    path.write_text(yaml.safe_dump({"deployments": {"broken": body}}))
    with pytest.raises(ScheduleError, match=message):
        load_schedules(path)


def test_serve_help_names_the_schedules_and_the_server():
    result = subprocess.run(
        [sys.executable, "-m", "cli", "serve", "--help"],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "configs/schedules.yaml" in result.stdout and "make server" in result.stdout


def test_serve_without_a_server_says_how_to_start_one():
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    result = subprocess.run(
        [sys.executable, "-m", "cli", "serve"],
        cwd=ROOT,
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "PREFECT_API_URL is not set" in result.stderr and "make server" in result.stderr


# ---------------------------------------------------------------- corpus re-index


def test_reindex_runs_ingestion_and_indexing_only_when_the_corpus_changed(tmp_path):
    from flows.scheduled import reindex
    from tests.conftest import load_test_config

    corpus, _ = write_tiny_inputs(tmp_path)
    config = load_test_config(tmp_path, corpus=str(corpus))
    first = reindex(config, corpus)
    assert first["changed"] and first["previous_key"] is None
    assert [r["stage"] for r in first["stages"]] == ["corpus", "ingestion", "indexing"]
    assert not any(r["cache_hit"] for r in first["stages"][1:])

    unchanged = reindex(config, corpus)
    assert not unchanged["changed"] and unchanged["snapshot_key"] == first["snapshot_key"]
    assert [r["stage"] for r in unchanged["stages"]] == ["corpus"]  # nothing re-ingested

    (corpus / "pricing.md").write_text("# Pricing\n\nThe Starter plan is free for one user.\n")
    changed = reindex(config, corpus)
    assert changed["changed"] and changed["previous_key"] == first["snapshot_key"]
    assert not any(r["cache_hit"] for r in changed["stages"][1:])
    ingestion = {r["stage"]: r for r in changed["stages"]}["ingestion"]
    assert ingestion["key"] != first["stages"][1]["key"]


# ---------------------------------------------------------------- a real server


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    """In its own process group, so stopping it stops its children (uvicorn, flow runs) too."""
    handle = open(log, "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
    )


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def _wait_until(check, process: subprocess.Popen, log: Path, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{what}: process exited\n{log.read_text()[-3000:]}")
        try:
            found = check()
        except Exception:  # not up yet
            found = None
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what}: timed out\n{log.read_text()[-3000:]}")


def _schedules(tmp_path: Path, inbox: Path, corpus: Path) -> Path:
    overrides = {
        "store": str(tmp_path / "artifacts"),
        "runs_dir": str(tmp_path / "runs"),
        "corpus": str(corpus),
    }
    body = {
        "deployments": {
            "question-inbox": {
                "flow": "question-inbox",
                "cron": "0 0 1 1 *",  # never during the test: the run is triggered by hand
                "timezone": "UTC",
                "parameters": {"inbox": str(inbox), "overrides": overrides},
            }
        }
    }
    path = tmp_path / "schedules.yaml"
    path.write_text(yaml.safe_dump(body))
    return path


def test_a_served_inbox_deployment_answers_a_dropped_question_set_once(tmp_path):
    import httpx
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    corpus, questions = write_tiny_inputs(tmp_path)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    questions.rename(inbox / "questions.jsonl")
    schedules = _schedules(tmp_path, inbox, corpus)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(OFFLINE_ENV)
    env.update(
        PREFECT_HOME=str(tmp_path / "prefect-home"),  # a fresh server database, not ephemeral
        PREFECT_LOGGING_LEVEL="WARNING",
        PREFECT_RUNNER_POLL_FREQUENCY="2",
        COLUMNS="200",
    )
    server_log, serve_log = tmp_path / "server.log", tmp_path / "serve.log"
    prefect = str(Path(sys.executable).parent / "prefect")
    server = _start(
        [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)], env, server_log
    )
    serving = None
    try:
        _wait_until(
            lambda: httpx.get(f"{url}/health", timeout=2).status_code == 200,
            server,
            server_log,
            120,
            "server health",
        )
        serving = _start(
            [sys.executable, "-m", "cli", "--log-format", "json", "--log-level", "INFO"]
            + ["serve", "--schedules", str(schedules)],
            {**env, "PREFECT_API_URL": url},
            serve_log,
        )
        with temporary_settings(updates={PREFECT_API_URL: url}):
            with get_client(sync_client=True) as client:
                _wait_until(
                    lambda: client.read_deployment_by_name("question-inbox/question-inbox"),
                    serving,
                    serve_log,
                    90,
                    "deployment registered",
                )
            first = run_deployment("question-inbox/question-inbox", timeout=300, poll_interval=2)
            assert first.state.is_completed(), f"{first.state}\n{serve_log.read_text()[-4000:]}"
            answers = tmp_path / "runs" / "inbox" / "questions" / "answers.parquet"
            assert answers.is_file()
            record = json.loads((tmp_path / "runs" / "inbox" / "processed.json").read_text())
            assert record["questions.jsonl"]["status"] == "done"
            assert record["questions.jsonl"]["questions"] == 2

            second = run_deployment("question-inbox/question-inbox", timeout=300, poll_interval=2)
            assert second.state.is_completed(), f"{second.state}\n{serve_log.read_text()[-4000:]}"
            again = json.loads((tmp_path / "runs" / "inbox" / "processed.json").read_text())
            assert again == record  # answered once: the second tick found it processed
            with get_client(sync_client=True) as client:
                (latest,) = client.read_artifacts(
                    artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["question-inbox"])),
                    sort=ArtifactSort.CREATED_DESC,
                    limit=1,
                )
            assert latest.flow_run_id == second.id
            assert "already processed" in str(latest.data)
    finally:
        if serving is not None:
            _stop(serving)
        _stop(server)
    assert server.returncode is not None and serving.returncode is not None
    # the flow run's log lines, relayed by the serving process: JSON, scoped to the question set
    logged = [json.loads(line) for line in serve_log.read_text().splitlines() if line[:1] == "{"]
    answering = [line for line in logged if line["logger"] == "flows.scheduled"]
    assert answering and answering[0]["run_id"] == "inbox/questions", serve_log.read_text()[-3000:]
