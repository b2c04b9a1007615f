"""Claims over table rows are checked against the cells of the row they are about: the right
value is supported with the cell as its span, another row's or a wrong value is contradicted
naming row, header and both values, and anything else takes the usual path."""

from __future__ import annotations

import pytest

from stages.guardrails import Config, check_answer, table_rows
from stages.guardrails.table_rows import check_claim, rows_of

PLANS = (
    "Plan | Monthly price | Storage | Launched | Owner\n"
    "Plan: Basic; Monthly price: €9; Storage: 50 GB; Launched: 2021-03-01; Owner: Ana Lima.\n"
    "Plan: Team; Monthly price: €19; Storage: 200 GB; Launched: 2022-06-15; Owner: Bo Berg.\n"
    "Plan: Enterprise; Monthly price: €49; Storage: 1,000 GB; Launched: 2023-11-01; "
    "Owner: Carla Diaz."
)
OFFICES = (
    "Office | Head count | Growth\n"
    "Office: Oslo; Head count: 1,250; Growth: 12 %.\n"
    "Office: Lisbon; Head count: 840; Growth: 7.5 %."
)
# a row group of a larger table: the header line is repeated in each chunk
GROUP = (
    "Vehicle | Range in km | Price\n"
    "Vehicle: Orion Vela; Range in km: 450; Price: EUR 52,000.00.\n"
    "Vehicle: Orion Lyra; Range in km: 610; Price: EUR 61,500.00."
)


def verdict(claim: str, spans: list[str] | None = None, question: str = "") -> table_rows.Verdict:
    found = check_claim(claim, spans or [PLANS], question)
    assert found is not None
    return found


def test_rows_are_read_back_with_their_cells_offsets():
    rows = rows_of(PLANS)
    assert [r.key() for r in rows] == ["Basic", "Team", "Enterprise"]
    enterprise = rows[2]
    assert [c.header for c in enterprise.cells] == [
        "Plan",
        "Monthly price",
        "Storage",
        "Launched",
        "Owner",
    ]
    for cell in enterprise.cells:
        assert PLANS[cell.start : cell.end] == cell.text
    assert enterprise.cells[-1].text == "Carla Diaz"  # the row's full stop is not the value's
    assert PLANS[enterprise.start : enterprise.end].startswith("Plan: Enterprise;")


def test_prose_and_text_without_rows_are_not_tables():
    assert rows_of("The Enterprise plan costs €49 per user; support is extra.") == ()
    assert rows_of("Note: see the appendix.") == ()
    assert check_claim("The Enterprise plan costs €49.", ["Enterprise costs €49."]) is None


@pytest.mark.parametrize(
    "claim",
    [
        "The Enterprise plan costs €49 per month.",
        "Enterprise costs 49 EUR monthly.",
        "The monthly price of Enterprise is EUR 49.00.",
        "Enterprise costs 49 euros per month.",
    ],
)
def test_a_price_written_another_way_is_the_cell(claim):
    found = verdict(claim)
    assert found.status == "supported", found.as_row()
    [match] = found.matched
    assert (match.row.key(), match.cell.header, match.cell.text) == (
        "Enterprise",
        "Monthly price",
        "€49",
    )


def test_a_wrong_price_is_contradicted_naming_row_header_and_both_values():
    found = verdict("The Enterprise plan costs €59 per month [E1].")
    assert found.status == "contradicted"
    [reason] = found.reasons(["E1"])
    assert "'€59'" in reason and "'Enterprise'" in reason
    assert "Monthly price" in reason and "'€49'" in reason and "E1" in reason


def test_another_rows_value_is_contradicted_as_that_rows():
    found = verdict("The Enterprise plan costs €9 per month.")
    assert found.status == "contradicted"
    [finding] = found.contradicted
    assert finding.other is not None and finding.other.key() == "Basic"
    assert finding.cell.text == "€49"
    assert "row 'Basic'" in found.reasons()[0]


def test_a_two_row_swap_is_contradicted_and_the_right_pairing_supported():
    right = verdict("Basic costs €9 per month and Enterprise costs €49 per month.")
    assert right.status == "supported"
    assert {(f.row.key(), f.cell.text) for f in right.matched} == {
        ("Basic", "€9"),
        ("Enterprise", "€49"),
    }
    swapped = verdict("Basic costs €49 per month and Enterprise costs €9 per month.")
    assert swapped.status == "contradicted"
    assert {(f.row.key(), f.other.key()) for f in swapped.contradicted} == {
        ("Basic", "Enterprise"),
        ("Enterprise", "Basic"),
    }


def test_the_header_the_claim_names_decides_which_cell_is_compared():
    assert verdict("Enterprise has 1000 GB of storage.").status == "supported"
    found = verdict("The storage of Enterprise is 200 GB.")
    assert found.status == "contradicted"
    assert found.contradicted[0].cell.header == "Storage"


def test_dates_in_any_format():
    assert verdict("Enterprise was launched on November 1, 2023.").status == "supported"
    assert verdict("Enterprise was launched on 01.11.2023.").status == "supported"
    found = verdict("Enterprise was launched on 15 June 2022.")
    assert found.status == "contradicted"
    assert found.contradicted[0].other.key() == "Team"


def test_people_of_another_row_are_contradicted():
    assert verdict("The owner of Enterprise is Carla Diaz.").status == "supported"
    found = verdict("The owner of Enterprise is Bo Berg.")
    assert found.status == "contradicted"
    assert found.contradicted[0].cell.text == "Carla Diaz"


def test_thousands_separators_and_percentages():
    assert verdict("Oslo has a head count of 1250.", [OFFICES]).status == "supported"
    question = "What was Oslo's growth year over year?"
    assert verdict("Oslo's growth was 12% year over year.", [OFFICES], question).status == (
        "supported"
    )
    assert verdict("Lisbon's growth was 7.5 percent.", [OFFICES]).status == "supported"
    assert verdict("Lisbon's growth was 12 %.", [OFFICES]).status == "contradicted"


def test_a_row_group_with_its_header_repeated():
    spans = [PLANS, GROUP]
    found = verdict("The Orion Lyra costs EUR 61,500.", spans)
    assert found.status == "supported"
    assert found.matched[0].row.span == 1
    wrong = verdict("The Orion Lyra has a range of 450 km.", spans)
    assert wrong.status == "contradicted"
    assert wrong.contradicted[0].other.key() == "Orion Vela"
    # a bare number no row holds, under the header the claim names farther off
    far = verdict("The range in km of the vehicle called Orion Lyra is 999.", spans)
    assert far.status == "contradicted"
    assert (far.contradicted[0].cell.header, far.contradicted[0].cell.text) == (
        "Range in km",
        "610",
    )


def test_a_short_answer_is_about_the_row_its_question_names():
    question = "What is the monthly price of the Enterprise plan?"
    assert verdict("€49", question=question).status == "supported"
    assert verdict("€19", question=question).status == "contradicted"
    assert verdict("€49", question="What does a plan cost?").status == "open"
    # a row named only by the question: another row's value with other words is left open
    assert verdict("Prices start at €9 for small teams.", question=question).status == "open"


@pytest.mark.parametrize(
    "claim",
    [
        "Enterprise costs more than €40 per month.",  # a comparison
        "Enterprise does not cost €49 per month.",  # negated
        "Enterprise costs €49 per month and includes phone support.",  # words no cell holds
        "Enterprise was the first plan to cost €49.",
        "The plans differ in price.",  # no value stated
        "Enterprise customers get 24/7 phone support.",  # bare numbers no cell states
    ],
)
def test_what_the_row_cannot_decide_takes_the_usual_path(claim):
    assert verdict(claim).status == "open"


def test_check_answer_records_the_rule_and_the_cell_span():
    config = Config(judge="none", consistency_probes=0)
    evidence = {"E1": {"text": PLANS, "doc_id": "plans.csv", "char_start": 10}}
    evidence["E1"]["char_end"] = 10 + len(PLANS)
    right = check_answer(
        "The Enterprise plan costs €49 per month [E1].", evidence, config=config, generated=False
    )
    [claim] = right["claims"]
    assert claim["status"] == "supported" and claim["judge"] == "table_row"
    [span] = claim["evidence_spans"]
    assert PLANS[span["char_start"] - 10 : span["char_end"] - 10] == "€49"
    assert claim["table_row"]["status"] == "supported"
    assert claim["table_row"]["matched"][0]["header"] == "Monthly price"
    assert any(c["name"] == "table_rows" for c in claim["checks"])
    assert right["action"] == "emit"
    assert f"table_rows@{table_rows.VERSION}" in right["check_versions"]

    wrong = check_answer(
        "The Enterprise plan costs €59 per month [E1].", evidence, config=config, generated=False
    )
    [claim] = wrong["claims"]
    assert claim["status"] == "unsupported" and claim["judge"] == "table_row"
    assert claim["critical"] is True
    assert wrong["action"] != "emit"


def test_an_llm_answer_proven_by_a_row_must_still_answer_the_question():
    """The cells prove what the claim says, not that its row is the one asked about: an LLM
    answer decided by rows alone still gets the answer check."""
    from stages.guardrails import Toolkit
    from tests.test_guardrails import RecordingJudge

    config = Config(judge="llm", judge_cache_dir=None, consistency_probes=0)
    config = config.model_copy(update={"answer_sentence_threshold": 0.8})
    evidence = {"E1": {"text": PLANS}}
    question = "What is the monthly price of the Enterprise plan?"
    for score, action in ((0.95, "emit"), (0.2, "revise")):
        toolkit = Toolkit(config)
        toolkit._judge = fake = RecordingJudge(score)
        report = check_answer(
            "The Basic plan costs €9 per month [E1].",
            evidence,
            question=question,
            config=config,
            toolkit=toolkit,
        )
        [claim] = report["claims"]
        assert claim["judge"] == "table_row" and claim["status"] == "supported"
        assert report["answer_check"] is not None and len(fake.asked) == 1
        assert report["action"] == action


def test_a_claim_without_table_evidence_is_untouched():
    config = Config(judge="none", consistency_probes=0)
    evidence = {"E1": {"text": "The Enterprise plan costs €49 per user per month."}}
    report = check_answer(
        "The Enterprise plan costs €49 per user per month [E1].",
        evidence,
        config=config,
        generated=False,
    )
    [claim] = report["claims"]
    assert claim["judge"] == "verbatim" and "table_row" not in claim
    assert all(c["name"] != "table_rows" for c in claim["checks"])


# ---------------------------------------------------------------- end to end

PLANS_CSV = (
    "Plan,Monthly price,Storage,Owner\n"
    "Basic,€9,50 GB,Ana Lima\n"
    "Team,€19,200 GB,Bo Berg\n"
    'Enterprise,€49,"1,000 GB",Carla Diaz\n'
)


@pytest.fixture(scope="module")
def table_run(tmp_path_factory):
    """A CSV table through the stages to its evidence; the guardrails stage then checks
    answers written for that evidence."""
    from flows.executor import _load_inputs, run_stages
    from stages import contracts
    from tests.conftest import load_test_config

    work = tmp_path_factory.mktemp("table-rows-e2e")
    (work / "corpus").mkdir()
    (work / "corpus" / "plans.csv").write_text(PLANS_CSV, encoding="utf-8")
    config = load_test_config(work, corpus=str(work / "corpus"))
    question = "What is the monthly price of the Enterprise plan?"
    questions = contracts.from_rows(
        [
            {
                "question_id": "q1",
                "question": question,
                "principal": "employee",
                "query_type": "general",
            }
        ],
        "questions",
    )
    result = run_stages(config, questions)
    store = config.artifact_store()
    inputs = _load_inputs(store, "guardrails", result.refs)
    return inputs, config.stage_config("guardrails")


def _answered(table_run, answer: str) -> tuple[dict, dict]:
    import pyarrow as pa

    import stages.guardrails as guardrails

    inputs, config = table_run
    evidence = inputs["evidence"].to_pylist()
    holder = next(e for e in evidence if "Plan: Enterprise;" in e["text"])
    written = f"{answer} [{holder['evidence_id']}]."
    attributions = inputs["attributions"].to_pylist()
    attributions[0].update(status="answered", answer=written, rendered_answer=written)
    changed = dict(inputs)
    changed["attributions"] = pa.Table.from_pylist(
        attributions, schema=inputs["attributions"].schema
    )
    out = guardrails.run(changed, config)
    [report] = out["hallucination_reports"].to_pylist()
    [final] = out["final_answers"].to_pylist()
    return report, final


def test_a_csv_row_cited_with_the_right_value_is_emitted(table_run):
    report, final = _answered(table_run, "The Enterprise plan costs €49 per month")
    [claim] = report["claims"]
    assert claim["judge"] == "table_row", claim
    assert claim["status"] == "supported"
    assert report["action"] == "emit"
    assert final["status"] == "answered" and "€49" in final["answer"]
    [span] = claim["evidence_spans"]
    inputs, _ = table_run
    [item] = [e for e in inputs["evidence"].to_pylist() if e["evidence_id"] == span["evidence_id"]]
    cell = slice(span["char_start"] - item["char_start"], span["char_end"] - item["char_start"])
    assert item["text"][cell] == "€49"  # the cell, placed in the document


def test_a_csv_row_cited_with_a_wrong_value_is_not_emitted(table_run):
    report, final = _answered(table_run, "The Enterprise plan costs €19 per month")
    [claim] = report["claims"]
    assert claim["judge"] == "table_row" and claim["status"] == "unsupported"
    [reason] = claim["reasons"]
    assert "row 'Enterprise'" in reason and "Monthly price = '€49'" in reason, reason
    assert report["action"] != "emit"
    assert final["status"] != "answered" and final["answer"] is None
