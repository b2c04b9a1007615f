"""Shared fixtures. The sample pipeline is built once per session in a temporary store."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "data" / "sample" / "docs"
SAMPLE_QUESTIONS = ROOT / "data" / "sample" / "questions.jsonl"

# Prefect's ephemeral database goes to a throwaway home, not the developer's ~/.prefect.
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="prefect-home-"))
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def load_test_config(tmp: Path, **overrides):
    from flows.config import load_config

    return load_config(
        ROOT / "configs" / "pipeline.yaml",
        {"store": str(tmp / "artifacts"), "runs_dir": str(tmp / "runs"), **overrides},
    )


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sample")


@pytest.fixture(scope="session")
def sample_config(sample_store):
    return load_test_config(sample_store)


@pytest.fixture(scope="session")
def sample_questions():
    from flows.pipeline import load_questions

    return load_questions(SAMPLE_QUESTIONS, "employee", "general")


@pytest.fixture(scope="session")
def sample_run(sample_config, sample_questions):
    """The whole pipeline on the sample knowledge base (plain runner, no Prefect)."""
    from flows.pipeline import run_stages

    return run_stages(sample_config, sample_questions)
