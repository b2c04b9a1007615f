"""Every command that reads a run or the store takes `--config` and `--set` as `run` does."""

from __future__ import annotations

import json

import pytest
import typer.main
from typer.testing import CliRunner

from cli.app import app
from tests.conftest import ROOT

RUNNER = CliRunner()
READS_THE_SETTINGS = [["run"], ["trace"], ["artifacts", "ls"], ["artifacts", "show"]]
READS_THE_SETTINGS += [["artifacts", "gc"]]


def _params(path: list[str]) -> set[str]:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {opt for param in command.params for opt in param.opts}


@pytest.mark.parametrize("path", READS_THE_SETTINGS, ids=" ".join)
def test_the_same_config_and_set_options(path):
    assert {"--config", "--set"} <= _params(path)


def test_trace_finds_a_run_under_the_runs_dir_given_with_set(tmp_path):
    done = RUNNER.invoke(app, ["trace", "r1", "q1", "--set", f"runs_dir={tmp_path}"])
    assert done.exit_code == 2
    assert str(tmp_path / "r1" / "trace.jsonl") in " ".join(done.output.split())


def test_trace_takes_a_run_folder(tmp_path):
    run = tmp_path / "somewhere" / "r1"
    run.mkdir(parents=True)
    (run / "trace.jsonl").write_text(json.dumps({"question_id": "q1"}) + "\n")
    done = RUNNER.invoke(app, ["trace", str(run), "q2"])
    assert done.exit_code == 2
    assert "no question 'q2' in run" in done.output


def test_a_bad_override_is_a_one_line_error(tmp_path):
    done = RUNNER.invoke(app, ["trace", "r1", "q1", "--set", "no_such_setting=1"])
    assert done.exit_code == 2


def test_the_llm_kv_cache_follows_the_store(tmp_path):
    """`--set store=...` moves every cache the commands write, the LLM's KV states included."""
    from cli.options import DEFAULT_CONFIG, load_settings
    from stages.models import chat

    try:
        load_settings(DEFAULT_CONFIG, [f"store={tmp_path / 'store'}"])
        kv = chat.kv_cache_path(chat.DEFAULT_KV_CACHE_DIR)
        assert kv == (tmp_path / "store" / "_llm_kv").resolve()
        assert chat.kv_cache_path("/elsewhere/kv").as_posix() == "/elsewhere/kv"
    finally:
        chat.use_cache_root(None)


def test_a_set_key_that_names_no_setting_is_an_error_not_a_silent_no_op():
    """A typo in `--set` must not leave a run that looks changed unchanged."""
    from flows.pipeline_config import ConfigError, load_config

    config = ROOT / "configs" / "pipeline.yaml"
    with pytest.raises(ConfigError, match="'gaurdrails' is neither a stage"):
        load_config(config, {"gaurdrails.answer_threshold": 0.5})
    with pytest.raises(ConfigError, match="answr_threshold"):
        load_config(config, {"guardrails.answr_threshold": 0.5})
    # the YAML path of a stage setting is the same setting
    loaded = load_config(config, {"stages.guardrails.answer_threshold": 0.31})
    assert loaded.stage_config("guardrails").answer_threshold == 0.31
    assert load_config(config, {"task_runner.kind": "dask"}).task_runner.kind == "dask"
