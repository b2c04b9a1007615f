"""Real RAG answers as LLMs write them: framing, figures written another way, the question's
names, and answers that do not hold the type of value their question asks for (no model: the
lexical judge)."""

from __future__ import annotations

import pytest

from stages import guardrails
from stages.common.text import canonical_number, content_tokens
from stages.guardrails import answer_type, framing, groundedness

LEXICAL = guardrails.Config(judge="none", consistency_probes=0)


# ---------------------------------------------------------------- framing


@pytest.mark.parametrize(
    "text",
    [
        "It is difficult to definitively say which option is better.",
        "Therefore, without more information, it is hard to tell.",
        "It may be necessary to check the manufacturer's instructions.",
        "It's always best to consult your local council before you start.",
        "Note: The exact baking time may vary depending on the thickness of the fries.",
        "Please note that these instructions are based on the provided passages.",
        "If additional information or context is needed, I may need to revise my answer.",
        "However, if your cough persists, it is recommended to seek medical help.",
        "It depends on the specific situation.",
    ],
)
def test_hedges_remarks_and_advice_to_look_elsewhere_are_framing(text):
    assert framing.kind_of(text) == "framing"


@pytest.mark.parametrize(
    "text",
    [
        # a figure or a name is a fact to check, however hedged
        "It may be necessary to wait at least 8 weeks between rounds.",
        "Prices can vary depending on the season, from $40 to $90 a night.",
        "Visit the Rollstone Bank website and look for the Tax Payment section.",
        # facts with a condition are still facts
        "Chickens can lay eggs once a day, depending on the breed.",
        "The severity depends on the type of pollutant and the duration of exposure.",
        "It depends on how the drive was wiped and whether the files were overwritten.",
        "Check the roast frequently and baste with the juices.",
    ],
)
def test_a_hedge_or_advice_with_a_fact_stays_a_claim(text):
    assert framing.kind_of(text) == "claim"


def test_a_hedge_costs_no_judge_call_and_never_blocks():
    evidence = {"E1": {"text": "Bake the fries at 220 °C for 25 minutes."}}
    answer = (
        "Bake the fries at 220 °C for 25 minutes [E1]. "
        "The exact baking time may vary depending on the oven."
    )
    report = guardrails.check_answer(answer, evidence, config=LEXICAL)
    assert [c["status"] for c in report["claims"]] == ["supported", "not_a_claim"]
    assert report["action"] == "emit"


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("Based on the given passages, it is known that Odom played for Rhode Island.", "Odom"),
        ("Therefore, the answer to the question is: Fill the pan with water.", "Fill"),
        ("It appears that the battery is drained.", "The battery"),
        ("The second passage explains that the bridge opened in 1937.", "The bridge"),
    ],
)
def test_a_lead_in_is_set_aside_before_the_statement_is_checked(text, body):
    assert groundedness.strip_lead_in(text).startswith(body)


# ---------------------------------------------------------------- figures


@pytest.mark.parametrize(
    ("claim", "span"),
    [
        ("Revenue grew 12%.", "Revenue grew 12 % year over year."),
        ("Revenue grew 12 percent.", "Revenue grew 12 per cent year over year."),
        ("Revenue grew 12 per cent.", "Revenue grew 12%."),
        ("It has 1,200 staff.", "It has 1\u00a0200 staff."),
        ("It has 1200 staff.", "It has 1\u202f200 staff."),
        ("It costs $5.", "It costs $5.00."),
        ("It grew 12.0%.", "It grew 12%."),
        ("The total is 92.30 euros.", "amount: 92.3\ncurrency: EUR"),
        ("It costs $1.2M.", "It costs $1,200,000."),
        ("It raised €3bn.", "It raised €3 billion."),
        ("It costs USD 49.", "It costs $49."),
        ("It takes 2 to 3 days.", "It takes 2-3 days."),
    ],
)
def test_a_figure_written_another_way_is_in_evidence(claim, span):
    result = groundedness.check_figures(claim, [span])
    assert result.score == 1.0 and not result.reasons, result.reasons


@pytest.mark.parametrize(
    ("claim", "span"),
    [
        ("Revenue grew 13%.", "Revenue grew 12 % year over year."),
        ("It has 1,300 staff.", "It has 1\u00a0200 staff."),
        ("It costs $1.3M.", "It costs $1,200,000."),
        ("It has 1 200 staff.", "It has 1200 staff."),  # a plain space: two figures
    ],
)
def test_a_different_figure_is_still_not_in_evidence(claim, span):
    assert groundedness.check_figures(claim, [span]).score == 0.0


def test_one_figure_is_one_token_however_it_is_written():
    assert content_tokens("grew 12 % a year") == content_tokens("grew 12% a year")
    assert content_tokens("1,200 staff") == content_tokens("1200 staff")
    assert canonical_number("12 per cent") == "12%"
    assert canonical_number("€ 1,200.50") == "1200.5"


def test_a_short_answer_with_the_percent_written_apart_is_supported():
    """The local LLM answered "12% [E1]" from "grew 12 % year over year" and was blocked at 0."""
    evidence = {"E1": {"text": "Revenue grew 12 % year over year."}}
    report = guardrails.check_answer("12% [E1]", evidence, config=LEXICAL)
    assert report["claims"][0]["score"] == 1.0
    assert report["action"] == "emit"


# ---------------------------------------------------------------- names


def test_a_name_the_question_gives_is_not_invented_by_the_answer():
    spans = ["Connect the phone to the laptop with a USB cable and copy the photos."]
    claim = "Connect the phone to your Acer laptop with a USB cable."
    assert groundedness.check_entities(claim, spans).score == 0.0
    asked = "how to transfer photos from lg g3 to acer laptop"
    assert groundedness.check_entities(claim, spans, context=asked).score == 1.0
    sewer = ["Replacing a sewer line costs $3,000 to $25,000."]
    claim = "A sewer line in Michigan costs $3,000 to $25,000."
    assert groundedness.check_entities(claim, sewer, context="sewer line cost michigan").score == 1
    # what the claim is about, the question's name must be in the evidence
    knowledge = ["Jonathan Stark won two Grand Slam doubles titles."]
    asked = "Who won more Grand Slam titles, Henri Leconte or Jonathan Stark?"
    claim = "Henri Leconte won more Grand Slam titles."
    assert groundedness.check_entities(claim, knowledge, context=asked).score == 0.0


def test_an_acronym_the_claim_defines_from_the_evidence_is_known():
    spans = ["The right lower quadrant holds the appendix."]
    assert groundedness.check_entities("The right lower quadrant (RLQ) holds it.", spans).score == 1
    # the initials must spell it, and the words must be the evidence's
    assert groundedness.check_entities("The right lower quadrant (RUQ) holds it.", spans).score == 0
    assert groundedness.check_entities("The left upper quadrant (LUQ) holds it.", spans).score == 0


def test_passage_is_a_reference_not_a_name():
    spans = ["Cut the potatoes into fries."]
    assert groundedness.check_entities("Cut the potatoes (Passage or Passage).", spans).score == 1


# ---------------------------------------------------------------- answer type


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When is the crane upgrade?", "date"),
        ("What year did the bridge open?", "date"),
        ("How many staff work in Bergen?", "figure"),
        ("How much does the plan cost?", "figure"),
        ("Who founded the company?", "person"),
        ("Where is the head office?", "place"),
        ("What is the best time to plant tulips?", None),
        ("how to cook asparagus", None),
        ("Whose car is it?", None),
    ],
)
def test_the_question_s_opening_says_what_type_it_asks_for(question, kind):
    assert answer_type.asked_type(question) == kind


@pytest.mark.parametrize(
    ("kind", "text", "holds"),
    [
        ("date", "Crane upgrade in Bergen.", False),
        ("date", "The upgrade is planned for 14 March 2026.", True),
        ("date", "Plant them in the fall, before the ground freezes.", True),
        ("date", "It may be in Bergen.", False),
        ("date", "The badge readers are offline on Sundays.", True),  # a plural weekday
        ("figure", "The plan is priced per user.", False),
        ("figure", "It is free for students.", True),
        ("figure", "Eight people work there.", True),
        ("person", "The company was founded by Ada Lovelace.", True),
        ("person", "It was founded by a local baker.", True),
        ("place", "It is in Bergen.", True),
        ("place", "Hawaii", True),  # a short answer's first word is its name
        ("person", "Madonna", True),
        ("person", "It was approved last year.", False),
    ],
)
def test_what_counts_as_a_value_of_the_type_is_broad(kind, text, holds):
    assert answer_type.holds(kind, text) is holds


EVIDENCE = {
    "E1": {"text": "Slide 4: Crane upgrade in Bergen. The crane upgrade is planned for 14 March."}
}


def test_an_answer_without_the_asked_type_is_not_emitted():
    """Held out: "When is the crane upgrade?" answered "Crane upgrade in Bergen." was emitted."""
    report = guardrails.check_answer(
        "Crane upgrade in Bergen. [E1]",
        EVIDENCE,
        question="When is the crane upgrade?",
        config=LEXICAL,
    )
    assert report["action"] != "emit"
    assert any(r.startswith("answer_type_mismatch") for r in report["reasons"])
    assert any("asks for" in f for f in report["feedback"])


def test_the_same_answer_passes_a_question_of_another_type_or_none():
    for question in ("Where is the crane upgrade?", "", "Tell me about the crane upgrade."):
        report = guardrails.check_answer(
            "Crane upgrade in Bergen. [E1]", EVIDENCE, question=question, config=LEXICAL
        )
        assert not any("answer_type_mismatch" in r for r in report["reasons"]), question


def test_an_answer_with_the_asked_type_or_a_refusal_is_not_held_to_it():
    dated = guardrails.check_answer(
        "The crane upgrade is planned for 14 March. [E1]",
        EVIDENCE,
        question="When is the crane upgrade?",
        config=LEXICAL,
    )
    assert dated["action"] == "emit"
    refusal = guardrails.check_answer(
        "The passages do not mention a date for the upgrade.",
        {"E1": {"text": "Crane upgrade in Bergen."}},
        question="When is the crane upgrade?",
        config=LEXICAL,
    )
    assert not any("answer_type_mismatch" in r for r in refusal["reasons"])


def test_the_blocked_answer_tells_the_reader_it_does_not_give_what_was_asked():
    from stages.guardrails import answers

    reasons = [answer_type.mismatch("When is the crane upgrade?", ["Crane upgrade in Bergen."])]
    assert "does not give what the question asks for" in answers._failure_mode(reasons, "revise")
