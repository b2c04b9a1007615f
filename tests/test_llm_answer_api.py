"""The public entry point `check_answer`: an answer someone else wrote, checked by the one claim
checker, returns a HallucinationReport that fits the contract. Deterministic (`judge: none`)."""

from __future__ import annotations

from stages import contracts
from stages.guardrails import Config, check_answer

DET = Config(judge="none", judge_cache_dir=None, consistency_probes=0)
EVIDENCE = {
    "E1": {"text": "The Business plan costs €44 per user per month.", "title": "Pricing"},
    "E2": {"text": "The Enterprise SLA guarantees 99.9% monthly uptime."},
}


def test_check_answer_returns_a_contract_report_and_fails_an_invented_figure():
    right = check_answer(
        "The Business plan costs €44 per user per month.", EVIDENCE, question="Price?", config=DET
    )
    wrong = check_answer("The Business plan costs €55 per user per month.", EVIDENCE, config=DET)
    assert right["action"] == "emit" and right["claims"][0]["status"] == "supported"
    assert wrong["action"] != "emit" and wrong["claims"][0]["score"] == 0.0
    for report in (right, wrong):
        contracts.from_rows([{"question_id": "q", **report}], "hallucination_reports")
    # evidence given as bare {"text"} dicts under any ids is accepted
    bare = check_answer("Uptime is 99.9%.", {"1": {"text": "Uptime is 99.9%."}}, config=DET)
    assert bare["claims"][0]["evidence_spans"][0]["evidence_id"] == "1"
