"""The guardrail's real-model paths, with the packaged GGUF: few and short (each call ~1-3 s).

The judge is the local Qwen2.5-Coder-1.5B as a strict yes/no judge; the probe test runs one real
self-consistency probe. Skipped only when the model file has not been assembled (`make setup`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stages import guardrails
from stages.guardrails import consistency, judge
from stages.models import files
from stages.models.settings import LLMSettings

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / files.DEFAULT_MODEL_PATH
pytestmark = pytest.mark.skipif(not MODEL.is_file(), reason="GGUF not assembled (make setup)")

STORAGE = "The Business plan includes 250 GB of storage per user."


@pytest.fixture(scope="module")
def toolkit() -> guardrails.Toolkit:
    config = guardrails.Config(model_path=str(MODEL), judge_cache_dir=None, consistency_probes=1)
    return guardrails.Toolkit(config)


def test_llm_judge_supports_a_paraphrase_and_rejects_an_unsupported_claim(toolkit):
    the_judge = toolkit.judge()
    assert the_judge.name == "llm"
    yes = the_judge.judge("Each Business plan user gets 250 GB of storage.", [STORAGE])
    no = the_judge.judge("The Business plan includes unlimited video calls.", [STORAGE])
    assert yes.score > 0.5 > no.score
    assert yes.backend == "llm" and yes.model_id.startswith("qwen2.5-coder-1.5b")


def test_verify_claim_uses_the_judge_only_for_non_verbatim_claims(toolkit):
    before = toolkit.judge_calls
    verbatim = guardrails.verify_claim(STORAGE, [STORAGE], toolkit.config, toolkit)
    assert (verbatim.judge, verbatim.score) == ("verbatim", 1.0)
    assert toolkit.judge_calls == before
    # Same words, a different fact: lexical overlap is high, so only the judge can catch it.
    swapped = "The Business plan includes 250 GB of storage per team."
    result = guardrails.verify_claim(swapped, [STORAGE], toolkit.config, toolkit)
    assert result.judge == "llm"
    assert toolkit.judge_calls == before + 1
    assert result.score < toolkit.config.emit_threshold


def test_judge_verdicts_are_cached_on_disk(tmp_path):
    model = LLMSettings(path=str(MODEL))
    cached = judge.llm_judge(model, cache_dir=str(tmp_path))
    first = cached.judge("Users get 250 GB of storage.", [STORAGE])
    again = judge.llm_judge(model, cache_dir=str(tmp_path))
    second = again.judge("Users get 250 GB of storage.", [STORAGE])
    assert (first.cached, second.cached) == (False, True)
    assert second.score == first.score
    assert again.calls == 0


def test_one_real_consistency_probe_repeats_the_figure(toolkit):
    probe = consistency.probe_claim(
        "The Business plan includes 250 GB of storage per user.",
        "How much storage per user does the Business plan include?",
        [STORAGE],
        toolkit.client(),
        n_probes=1,
        min_agreement=0.5,
    )
    assert len(probe.probe_answers) == 1
    assert "250" in probe.probe_answers[0]
    assert (probe.status, probe.agreement) == ("agree", 1.0)
