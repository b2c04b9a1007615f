"""The ONNX pair scorer refuses a missing or corrupt model, and builds passages with offsets."""

import pytest

from stages.models import onnx_pairs


def test_missing_model_is_an_error_not_a_score(tmp_path):
    with pytest.raises(onnx_pairs.PairModelError, match="missing"):
        onnx_pairs.load(tmp_path / "nowhere")


def test_corrupt_model_fails_its_sha256(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "model.onnx.sha256").write_text("0" * 64 + "  model.onnx\n")
    with pytest.raises(onnx_pairs.PairModelError, match="sha256"):
        onnx_pairs.OnnxPairScorer(tmp_path)


def test_sentence_passages_carry_offsets_title_and_previous_sentence():
    text = "Plans are sold yearly. The Enterprise plan costs 49 EUR per user."
    passages = onnx_pairs.sentence_passages("Price list", text)
    assert [text[s:e] for s, e, _ in passages] == [
        "Plans are sold yearly.",
        "The Enterprise plan costs 49 EUR per user.",
    ]
    assert passages[0][2] == "Plans are sold yearly. | Price list"
    assert passages[1][2] == (
        "The Enterprise plan costs 49 EUR per user. | Price list | Plans are sold yearly."
    )
