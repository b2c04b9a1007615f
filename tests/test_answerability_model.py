"""The committed fast answerability model (data/models/answerability-minilm-v4): its
config names it by sha256, it loads offline, and it finds the sentence that states the answer."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stages import rerank
from stages.models import onnx_pairs
from stages.models.answerability import AnswerabilitySettings, answerability_judge
from tests.test_answerability import CANDIDATES
from tests.test_rerank import _inputs

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "answerability-fast.yaml"
PRICES = (
    "Pricing",
    "All plans are billed once a year. The Enterprise plan costs 49 EUR per user per month. "
    "Support by e-mail is included in every plan.",
)


def _settings() -> AnswerabilitySettings:
    settings = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["answerability"]
    return AnswerabilitySettings(**{**settings, "model_path": str(ROOT / settings["model_path"])})


def test_the_config_names_the_committed_model_by_its_sha256():
    settings = _settings()
    assert settings.kind == "fast" and settings.scale > 0
    scorer = onnx_pairs.load(settings.model_path)
    assert scorer.sha256 == settings.model_sha256
    card = (Path(settings.model_path) / "README.md").read_text(encoding="utf-8")
    assert settings.model_sha256 in card


def test_the_model_picks_the_sentence_that_states_the_answer():
    judge = answerability_judge(_settings(), None)
    question = "How much does the Enterprise plan cost per user per month?"
    judgement = judge.judge(question, [PRICES])
    _, start, end = judgement.answer
    assert "49 EUR" in PRICES[1][start:end]
    # and it is surer of that sentence than of one on the same topic that does not state it
    off_topic = ("Pricing", "All plans are billed once a year. Support is included in every plan.")
    assert judge.judge(question, [off_topic]).probabilities[0] < judgement.probabilities[0]


def test_rerank_with_the_fast_config_records_the_model_and_a_probability(tiny_index):
    out = rerank.run(_inputs(tiny_index, CANDIDATES), rerank.Config(answerability=_settings()))
    status = out["rerank_status"].to_pylist()[0]
    assert status["state"] in {"success", "low_relevance", "not_found"}
    assert status["answerability_model"] == f"fast:onnx:{_settings().model_sha256[:12]}"
    assert 0.0 <= status["answerability"] <= 1.0


def test_a_damaged_copy_of_the_model_is_refused(tmp_path):
    source = Path(_settings().model_path)
    for name in ("model.onnx.sha256", "tokenizer.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    damaged = bytearray((source / "model.onnx").read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    (tmp_path / "model.onnx").write_bytes(bytes(damaged))
    with pytest.raises(onnx_pairs.PairModelError, match="sha256"):
        onnx_pairs.OnnxPairScorer(tmp_path)


COMBINED = ROOT / "configs" / "answerability-combined.yaml"


def test_the_combined_config_names_a_committed_model_and_asks_the_gguf_about_its_sentence(
    tiny_index, monkeypatch
):
    settings = yaml.safe_load(COMBINED.read_text(encoding="utf-8"))["answerability"]
    assert settings["kind"] == "combined"
    # its own fit chose its pair model (v2 picks the sentences the GGUF judges best): by sha256
    folder = ROOT / settings["model_path"]
    assert onnx_pairs.load(str(folder)).sha256 == settings["model_sha256"]
    assert settings["model_sha256"] in (folder / "README.md").read_text(encoding="utf-8")
    assert settings["strict_weight"] > 0  # the fit found the GGUF's verdict worth a weight
    # always asked here (strict_skip_below 0): the skip has its own test
    local = {"model_path": str(folder), "strict_skip_below": 0.0}
    combined = AnswerabilitySettings(**{**settings, **local})
    asked: list[str] = []

    class Strict:
        model_id = "gguf"

        def p_yes(self, system, user):
            asked.append(user)
            return 0.9

    from stages.models import yesno

    monkeypatch.setattr(yesno, "yes_no_model", lambda llm: Strict())
    out = rerank.run(_inputs(tiny_index, CANDIDATES), rerank.Config(answerability=combined))
    status = out["rerank_status"].to_pylist()[0]
    assert status["answerability_model"] == f"combined:onnx:{combined.model_sha256[:12]}+gguf"
    assert len(asked) == 1 and 0.0 <= status["answerability"] <= 1.0
