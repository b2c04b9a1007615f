"""bench ragtruth on a tiny synthetic RAGTruth file (no model: the lexical judge)."""

from __future__ import annotations

import json

import pytest

from bench import common, ragtruth

PASSAGES = (
    "passage 1:The Golden Gate Bridge opened in 1937. It spans the Golden Gate strait.\n\n"
    "passage 2:The bridge is painted International Orange.\n\n"
    "passage 3:Its main span is 1,280 metres long."
)


def record(rid: str, source: str, response: str, labels: list[dict], model: str = "gpt-4-0613"):
    return {
        "id": rid,
        "source_id": source,
        "model": model,
        "temperature": 0.7,
        "quality": "good",
        "question": "when did the golden gate bridge open",
        "passages": PASSAGES,
        "response": response,
        "labels": labels,
    }


WRONG = "The Golden Gate Bridge opened in 1937. It was designed by Gustave Eiffel."
RECORDS = [
    record("1", "s1", "The Golden Gate Bridge opened in 1937.", []),
    record(
        "2",
        "s1",
        WRONG,
        [
            {
                "start": WRONG.index("It was"),
                "end": len(WRONG),
                "text": "It was designed by Gustave Eiffel.",
                "label_type": "Evident Baseless Info",
                "implicit_true": False,
                "due_to_null": False,
            }
        ],
        model="llama-2-7b-chat",
    ),
    # labelled, but implicit_true: not a hallucination under the data set's rule
    record(
        "3",
        "s2",
        "The bridge is painted International Orange.",
        [
            {
                "start": 0,
                "end": 10,
                "text": "The bridge",
                "label_type": "Subtle Baseless Info",
                "implicit_true": True,
                "due_to_null": False,
            }
        ],  # fmt: skip
    ),
    record("4", "s3", "Its main span is 1,280 metres long.", []),
]


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    folder = tmp_path / "datasets" / ragtruth.FOLDER
    folder.mkdir(parents=True)
    lines = [json.dumps(r) for r in RECORDS] + ["{not json"]
    (folder / ragtruth.FILES[0]).write_text("\n".join(lines) + "\n")
    (folder / "LICENSE").write_text("MIT License (synthetic test data)\n")
    monkeypatch.setattr(common, "DATASETS", tmp_path / "datasets")
    monkeypatch.setattr(ragtruth, "CLAIM_ROWS", tmp_path / "claims.jsonl")
    monkeypatch.setattr(ragtruth, "PARTIAL_ITEMS", tmp_path / "items.partial.jsonl")
    return folder


def test_passages_labels_and_split():
    parts = ragtruth.passages(PASSAGES)
    assert len(parts) == 3 and parts[1] == "The bridge is painted International Orange."
    assert ragtruth.evidence_of(RECORDS[0])["E3"]["title"] == "Passage 3"
    assert ragtruth.hallucinated_spans(RECORDS[1]) == [(WRONG.index("It was"), len(WRONG))]
    assert ragtruth.hallucinated_spans(RECORDS[2]) == []
    assert ragtruth.split_of("s1") == ragtruth.split_of("s1") in ragtruth.SPLITS
    # about half of many ids each way
    fits = sum(ragtruth.split_of(str(i)) == "fit" for i in range(400))
    assert 150 < fits < 250


def test_metrics():
    items = [
        {"flagged": True, "hallucinated": True, "flagged_spans": [[0, 10]], "spans": [[5, 15]]},
        {"flagged": True, "hallucinated": False, "flagged_spans": [[0, 10]], "spans": []},
        {"flagged": False, "hallucinated": False, "flagged_spans": [], "spans": []},
        {"flagged": False, "hallucinated": True, "flagged_spans": [], "spans": [[0, 10]]},
    ]
    response = ragtruth.response_metrics(items)
    assert (response["precision"], response["recall"], response["correct_flag_rate"]) == (
        0.5,
        0.5,
        0.5,
    )
    span = ragtruth.span_metrics(items)
    assert span["precision"] == 0.25 and span["recall"] == 0.25  # 5 of 20 chars each way


def test_bench_runs_on_a_synthetic_file(dataset, tmp_path):
    overrides = {"guardrails": {"judge": "none"}}
    result = ragtruth.run(tmp_path / "results", overrides, speed=False)
    assert result["data"]["answers"] == 4  # the bad line is skipped with a message
    total = result["all"]["response"]
    assert total["hallucinated"] == 1
    assert total["tp"] == 1  # the invented designer is flagged
    assert result["all"]["span"]["recall"] > 0.5  # and its span is the one shown
    assert result["all"]["judge_calls"] == 0
    written = json.loads((tmp_path / "results" / "ragtruth.json").read_text())
    assert written["bench"] == "ragtruth" and "machine" in written
    rows = [json.loads(line) for line in (tmp_path / "claims.jsonl").read_text().splitlines()]
    assert {r["id"] for r in rows} == {"1", "2", "3", "4"}
    eiffel = [r for r in rows if "Eiffel" in (r["text"] or "")]
    assert eiffel and eiffel[0]["label_overlap"] == 1.0 and eiffel[0]["status"] != "supported"
    assert "RAGTruth" in ragtruth.summarize(result)
    # a split and a limit name their own result file
    ragtruth.run(tmp_path / "results", overrides, split="fit", limit=1, speed=False)
    assert (tmp_path / "results" / "ragtruth-fit-1.json").is_file()


def test_the_train_set_and_a_guardrails_yaml_name_their_result(dataset, tmp_path):
    train = dataset.parent / ragtruth.DATA["train"][0]
    train.mkdir()
    (train / ragtruth.DATA["train"][1]).write_text(json.dumps(RECORDS[1]) + "\n")
    settings = tmp_path / "gate.yaml"
    settings.write_text("judge: none\nanswer_threshold: 0.5\n")
    overrides = {"guardrails": {"answer_threshold": 0.6}}  # --set wins over the file
    result = ragtruth.run(
        tmp_path / "results", overrides, speed=False, data="train", config_file=settings
    )
    assert result["data"]["set"] == "train" and result["data"]["answers"] == 1
    assert result["config"]["judge"] == "none" and result["config"]["overrides"]["guardrails"] == {
        "judge": "none",
        "answer_threshold": 0.6,
    }
    assert (tmp_path / "results" / "ragtruth-train-gate.json").is_file()
    # every answer's item was kept as it was checked
    assert len((tmp_path / "items.partial.jsonl").read_text().splitlines()) == 1
    with pytest.raises(ValueError, match="data must be"):
        ragtruth.run(tmp_path / "results", overrides, data="test")


def test_skips_without_the_data_set(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "DATASETS", tmp_path / "nothing")
    with pytest.raises(common.Skipped, match="ragtruth_qa_dev"):
        ragtruth.run(tmp_path / "results")


def test_freeze_takes_the_report_split_in_turn_by_model(dataset, tmp_path, monkeypatch):
    from eval import detection_sets as detection

    monkeypatch.setattr(ragtruth, "split_of", lambda source_id: "report")
    out = tmp_path / "sets" / "toy-ragtruth-v1"
    manifest = ragtruth.freeze(dataset, out, {"hallucinated": 1, "correct": 2})
    dset = detection.load_detection_set(out)
    assert [r["label"] for r in dset.records].count("correct") == 2
    assert manifest["counts"]["hallucinated/llama-2-7b-chat"] == 1
    assert "MIT License (synthetic" in (out / "NOTICE.md").read_text()
    with pytest.raises(FileExistsError):
        ragtruth.freeze(dataset, out)


def test_claims_of_one_answer_share_the_whole_evidence_as_prefix():
    from stages.guardrails import judge

    spans = [" ".join(f"word{i}" for i in range(120)) + ". The bridge opened in 1937.", "Other."]
    claims = ["The bridge opened in 1937.", "Other words here."]
    shared = [judge.evidence_for(c, spans, "q?", True, 80, 400) for c in claims]
    assert shared == [spans, spans]  # same prompt prefix for every claim of the answer
    # a one-claim answer, or evidence over the budget, is focused as before
    assert judge.evidence_for(claims[0], spans, "q?", False, 80, 400) == judge.focus(
        claims[0], spans, "q?", 80
    )
    assert judge.evidence_for(claims[0], spans, "q?", True, 80, 50) != spans
    prompts = [judge.user_prompt(c, spans, "q?", part=True) for c in claims]
    common_prefix = len(prompts[0]) - len(prompts[0].split("One part of the answer:")[1])
    assert prompts[0][:common_prefix] == prompts[1][:common_prefix]
