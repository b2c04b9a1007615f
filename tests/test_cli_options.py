"""Every command that reads a run or the store takes `--config` and `--set` as `run` does."""

from __future__ import annotations

import json

import pytest
import typer.main
from typer.testing import CliRunner

from cli.app import app
from tests.conftest import ROOT

RUNNER = CliRunner()
READS_THE_SETTINGS = [["run"], ["ask"], ["warm"], ["ingest"], ["trace"], ["backfill"]]
READS_THE_SETTINGS += [["artifacts", "ls"], ["artifacts", "show"], ["artifacts", "gc"]]
READS_THE_SETTINGS += [["review", name] for name in ("sample", "sample-judge", "batches")]
READS_THE_SETTINGS += [["review", name] for name in ("serve", "import", "report")]
READS_THE_SETTINGS += [["calibrate"], ["trend"], ["shadow"], ["promote"]]
READS_THE_SETTINGS += [["api"], ["mcp"], ["agent"]]
# Commands whose options of these names mean something else, or that read no pipeline settings:
# `eval --set` names the eval set (settings are `--set-override`), `check --config` is the
# agent-run check's YAML, `serve --config` is the default of deployments that name none.
OTHER_MEANINGS = {("eval",), ("check",), ("serve",), ("tools",)}


def _command(path: list[str]):
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


def _params(path: list[str]) -> set[str]:
    return {opt for param in _command(path).params for opt in param.opts}


def _leaves(command, path: tuple[str, ...] = ()):
    if not getattr(command, "commands", None):
        yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _leaves(sub, (*path, name))


@pytest.mark.parametrize("path", READS_THE_SETTINGS, ids=" ".join)
def test_the_same_config_and_set_options(path):
    """The options themselves, not look-alikes: the short flag, the help and the default of
    `cli.options`."""
    from cli import options

    shared = {
        "--config": options.ConfigOption.__metadata__[0],
        "--set": options.SetOption.__metadata__[0],
    }
    params = {opt: param for param in _command(path).params for opt in param.opts}
    assert {"--config", "--set"} <= set(params)
    for name, info in shared.items():
        assert params[name].help == info.help
    assert params["--config"].opts == ["--config", "-c"]
    assert params["--config"].default == options.DEFAULT_CONFIG


def test_every_command_is_listed_with_the_shared_options_or_an_other_meaning():
    """A new command is either given the shared `--config`/`--set` or named here with why."""
    listed = {tuple(path) for path in READS_THE_SETTINGS} | OTHER_MEANINGS
    assert set(_leaves(typer.main.get_command(app))) == listed


def test_no_command_module_defines_its_own_pipeline_options():
    """One dialect: the pipeline's `--config`/`--set` are written once, in cli/options.py."""
    own = []
    for path in sorted((ROOT / "cli").glob("*.py")):
        if path.name in ("options.py", "eval.py", "check.py", "serve.py"):
            continue
        text = path.read_text(encoding="utf-8")
        own += [f"{path.name}: {flag}" for flag in ('"--config"', '"--set"') if flag in text]
    assert own == []


# what each command needs besides the options to reach its settings
REQUIRED = {
    "ask": ["What?"],
    "trace": ["r1", "q1"],
    "backfill": ["--questions", "nowhere"],
    "artifacts show": ["x"],
    "review sample": ["r1"],
    "review sample-judge": ["r1"],
    "review serve": ["b", "--reviewer", "me"],
    "review import": ["VERDICTS", "--batch", "b"],
    "calibrate": ["--from-reviews"],
    "shadow": ["--candidate", "configs/pipeline.yaml"],
    "promote": ["configs/pipeline.yaml"],
    "agent": ["What?"],
}


@pytest.mark.parametrize("path", READS_THE_SETTINGS, ids=" ".join)
def test_a_set_naming_no_setting_is_the_same_one_line_error_everywhere(path, tmp_path):
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("answer_id,verdict\n")
    args = [str(verdicts) if a == "VERDICTS" else a for a in REQUIRED.get(" ".join(path), [])]
    done = RUNNER.invoke(app, [*path, *args, "--set", "nope=1"])
    assert done.exit_code == 2, done.output
    assert isinstance(done.exception, SystemExit)  # no traceback
    assert "config error: --set nope: 'nope' is neither a stage" in " ".join(done.output.split())


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
