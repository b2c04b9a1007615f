"""bench.agent_runs_ragtruth: RAGTruth answers framed as agent runs (no data set needed)."""

from __future__ import annotations

from agents.checking import make_toolkit, parse_run, tool_evidence
from bench import agent_runs_ragtruth

RECORD = {
    "id": "r1",
    "question": "how long is the eiffel tower",
    "answer": "The Eiffel Tower is 330 metres tall (Passage 1). It was finished in 1889.",
    "evidence": {
        "E1": {"title": "Passage 1", "text": "The Eiffel Tower is 330 metres tall."},
        "E2": {"title": "Passage 2", "text": "It was completed in 1889 for the World's Fair."},
        "E3": {"title": "Passage 3", "text": "Paris is the capital of France."},
    },
    "label": "correct",
}


def test_both_shapes_carry_the_three_passages_as_evidence():
    text = tool_evidence.collect(parse_run(agent_runs_ragtruth.as_run(RECORD, "text")))[0]
    as_json = tool_evidence.collect(parse_run(agent_runs_ragtruth.as_run(RECORD, "json")))[0]
    assert len(text) == 3 and len(as_json) == 3
    assert "330 metres" in text[0].text and "330 metres" in as_json[0].text
    assert [s.pointer for s in as_json] == ["/results/0", "/results/1", "/results/2"]


def test_a_split_is_scored_as_the_ragtruth_bench_scores_it():
    invented = {**RECORD, "id": "r2", "label": "hallucinated"}
    invented["answer"] = "The Eiffel Tower is 412 metres tall."
    config = {"judge": "none"}
    figures = agent_runs_ragtruth.check_split(
        [RECORD, invented], "json", make_toolkit(config), config
    )
    assert figures["n"] == 2 and figures["recall"] == 1.0  # the invented figure is caught
    assert figures["judge_calls"] == 0
    assert any(k.startswith("hallucinated: unsupported_claims") for k in figures["diagnosis"])
