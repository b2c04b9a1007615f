"""Answers as other LLMs write them (markdown lists, framing, refusals, their own
citation styles) are split, checked and gated so that formatting never decides a verdict, while
an invented figure or name is still caught. Deterministic: a fake judge with a fixed P(yes)."""

from __future__ import annotations

import pytest

from stages.guardrails import Config, check_answer, claims, framing, gate, groundedness, judge

EVIDENCE = {
    "E1": {
        "text": "The Business plan costs €44 per user per month. Support is included.",
        "title": "Pricing",
    },
    "E2": {"text": "The Enterprise SLA guarantees 99.9% monthly uptime.", "title": "SLA"},
    "E3": {
        "text": "Ticks are removed with tweezers, pulled gently and steadily.",
        "title": "Ticks",
    },
}
LIST_ANSWER = """Sure, I can help you with that! Based on the given passages, here are the facts:

1. **Price:** The Business plan costs €44 per user per month (Passage 1).
2. The Enterprise SLA guarantees 99.9% monthly uptime [2].
3. Passage 3 further states that ticks are removed with tweezers.

I hope this helps!"""


class FakeJudge(judge.Judge):
    """A fixed P(yes) per claim text fragment (default `score`); records what it was asked."""

    def __init__(self, score: float, by_text: dict[str, float] | None = None) -> None:
        super().__init__("llm", "fake", self._answer, None)
        self.fixed, self.by_text = score, by_text or {}
        self.asked: list[str] = []

    def _answer(self, claim: str, spans: list[str], question: str | None, part: bool = False):
        self.asked.append(claim)
        return next((p for k, p in self.by_text.items() if k in claim), self.fixed)


def run(answer: str, fake: FakeJudge, **settings) -> dict:
    config = Config(judge="llm", judge_cache_dir=None, consistency_probes=0, **settings)
    from stages import guardrails

    toolkit = guardrails.Toolkit(config)
    toolkit._judge = fake
    return check_answer(answer, EVIDENCE, question="What do I get?", config=config, toolkit=toolkit)


# --- claims ---------------------------------------------------------------------------------


def test_list_markers_and_framing_are_no_claims_and_each_item_keeps_its_span():
    decomposed = claims.decompose(LIST_ANSWER)
    kinds = [(c.kind, c.text) for c in decomposed]
    assert kinds[0] == ("framing", "Sure, I can help you with that!")
    assert kinds[1][0] == "framing" and kinds[-1] == ("framing", "I hope this helps!")
    facts = [c for c in decomposed if c.kind == "claim"]
    assert [c.text for c in facts] == [
        "Price: The Business plan costs €44 per user per month.",
        "The Enterprise SLA guarantees 99.9% monthly uptime.",
        "ticks are removed with tweezers.",
    ]
    assert [c.refs for c in facts] == [["1"], ["2"], ["3"]]
    for claim in facts:  # the span shows the item in the answer (its references included)
        shown = LIST_ANSWER[claim.char_start : claim.char_end]
        assert claim.text.split()[-1].rstrip(".") in shown
    assert not any(c.text.strip(".").isdigit() for c in decomposed)


TABLE_ANSWER = """Here is how the plans compare:

| Plan | Price | Uptime |
|:-----|------:|--------|
| **Business** | €44 per user per month [E1] | – |
| Enterprise | – | 99.9% [E2] |

Let me know if you need more."""


def test_a_table_row_is_one_claim_naming_its_cells_and_the_header_is_framing():
    decomposed = claims.decompose(TABLE_ANSWER)
    assert [(c.kind, c.text) for c in decomposed][1] == ("framing", "Plan | Price | Uptime")
    rows = [c for c in decomposed if c.kind == "claim"]
    assert [c.text for c in rows] == [
        "Plan: Business; Price: €44 per user per month",  # an empty cell ("–") says nothing
        "Plan: Enterprise; Uptime: 99.9%",
    ]
    assert [c.evidence_ids for c in rows] == [["E1"], ["E2"]]
    for row in rows:  # the span is the row in the answer, pipes and all
        assert TABLE_ANSWER[row.char_start : row.char_end].strip().startswith("|")
    assert not any("|" in c.text for c in rows) and not any("---" in c.text for c in decomposed)
    (cited,) = [
        c for c in claims.decompose(TABLE_ANSWER.replace("[E2]", "[2]")) if "99.9" in c.text
    ]
    assert cited.refs == ["2"] and cited.text == "Plan: Enterprise; Uptime: 99.9%"


def test_a_bold_title_line_and_a_sources_line_are_framing_not_claims():
    answer = (
        "**Tokyo time**\n\n- Time: 14:05\n\n*Source: clock_api*\n\n"
        "References:\n1. get_order\n2. search_kb"
    )
    kinds = [(c.text, c.kind) for c in claims.decompose(answer)]
    assert ("Tokyo time", "framing") in kinds and ("Time: 14:05", "claim") in kinds
    assert ("Source: clock_api", "framing") in kinds
    assert [k for t, k in kinds if t.startswith("References:")] == ["framing"] * 3
    # a bold sentence with a verb, or a sources line with a figure, is still checked
    assert claims.decompose("**Refunds are issued within 14 days**")[0].kind == "claim"
    assert framing.kind_of("Source: the 2024 report says revenue grew.") == "claim"
    assert framing.kind_of("Did you know the Pro plan costs 29 EUR?") == "claim"  # a figure


@pytest.mark.parametrize(
    "answer",
    [
        "The Pro plan costs 29 EUR per month【4:0†pricing.md】.",
        "The Pro plan costs 29 EUR per month.[^1]\n\n[^1]: pricing_api, retrieved 2 May 2026",
        "The Pro plan costs 29 EUR per month<sup>1</sup>.",
    ],
)
def test_chat_products_citation_marks_are_lifted_and_no_figure(answer):
    (claim,) = claims.decompose(answer)
    assert claim.text == "The Pro plan costs 29 EUR per month." and claim.kind == "claim"
    evidence = {"E1": {"evidence_id": "E1", "text": "Pro plan: 29 EUR per month.", "title": "x"}}
    config = Config(judge="none")
    marked = check_answer(answer, evidence, question="Price?", config=config)["claims"][0]
    plain = check_answer(claim.text, evidence, question="Price?", config=config)["claims"][0]
    assert (marked["score"], marked["status"]) == (plain["score"], plain["status"])
    failing = {c["name"] for c in marked["checks"] if c["score"] < 1}
    assert not failing & {"figures", "citations"}  # the marks are no figure and no citation


def test_a_full_dates_month_is_no_name_but_the_date_is_still_compared():
    spans = ["order_id: ORD-12345\nstatus: shipped\nshipped_at: 2026-03-02"]
    right = groundedness.check_entities("Your order ORD-12345 shipped on 2 March 2026.", spans)
    assert right.score == 1.0  # the JSON result's ISO date holds "2 March 2026"
    wrong = groundedness.check_figures("Your order ORD-12345 shipped on 2 April 2026.", spans)
    assert wrong.score == 0.0 and "2026-04-02" in " ".join(wrong.reasons)
    # without its year the month is still a name the evidence must write
    partial = groundedness.check_entities("Your order ORD-12345 shipped on 2 March.", spans)
    assert partial.score == 0.0 and "March" in " ".join(partial.reasons)


def test_an_invented_figure_in_a_table_row_is_caught():
    report = run(TABLE_ANSWER.replace("€44", "€54"), FakeJudge(0.99))
    (wrong,) = [c for c in report["claims"] if "€54" in c["text"]]
    assert wrong["score"] == 0.0 and report["action"] != "emit"


def test_a_list_item_without_a_verb_is_read_with_the_line_that_opened_the_list():
    answer = (
        "The Business plan includes:\n"
        "- Priority support. It is answered within a day.\n"
        "- Single sign-on\n"
        "- Exports run nightly\n"
        "Other plans differ.\n"
        "- Audit logs"
    )
    texts = [c.text for c in claims.decompose(answer) if c.kind == "claim"]
    assert texts == [
        "The Business plan includes: Priority support.",
        "It is answered within a day.",  # a second sentence of an item is no item
        "The Business plan includes: Single sign-on",  # the lead holds past that sentence
        "Exports run nightly",  # an item with a verb says what it says
        "Other plans differ.",
        "Audit logs",  # a line that is no item ends the list: no lead for what follows
    ]
    (item,) = [c for c in claims.decompose(answer) if c.text.endswith("Single sign-on")]
    assert answer[item.char_start : item.char_end] == "Single sign-on"  # the span: the item


@pytest.mark.parametrize(
    ("answer", "refs"),
    [
        ("Support is included (passages 1 and 3).", ["1", "3"]),
        ("Support is included [1][3].", ["1", "3"]),
        ("Support is included [Source: Pricing].", ["title:Pricing"]),
        ("According to passage 1, support is included.", ["1"]),
        ("As noted in the first passage, support is included.", ["1"]),
        ("Passage 1 mentions that support is included.", ["1"]),
        ("Support is included (Passage 1:2).", ["1"]),
    ],
)
def test_a_models_own_citation_is_lifted_out_of_the_claim(answer, refs):
    (claim,) = claims.decompose(answer)
    assert claim.refs == refs
    assert claim.text.lower().startswith("support is included")
    assert claims.resolve_refs(claim.refs, EVIDENCE)[0][0] == "E1"


def test_references_resolve_by_id_or_position_and_an_unretrieved_one_is_reported():
    numbered = {"1": {"text": "a"}, "2": {"text": "b"}}
    assert claims.resolve_refs(["2"], numbered) == (["2"], [])
    assert claims.resolve_refs(["2", "title:Nothing"], EVIDENCE) == (["E2"], [])
    assert claims.resolve_refs(["7"], EVIDENCE) == ([], ["passage 7"])


@pytest.mark.parametrize(
    "text",
    [
        "Sure!",
        "Based on the given passages, here's a brief history of the plan:",
        "To remove a tick, follow these steps:",
        "I hope this helps!",
        "Let me know if you have any other questions.",
        "In summary:",
        "It is always best to consult a veterinarian.",
        "However, for a more detailed guide, you may need to consult additional sources.",
        "The passages provide the necessary information to answer the question.",
        "Would you like me to track the parcel for you?",
        "Is there anything else I can help you with?",
        "Source: pricing_api",
    ],
)
def test_framing_is_recognised(text):
    assert framing.kind_of(text) == "framing"


def test_a_sentence_about_a_passage_is_framing_once_its_reference_is_lifted():
    found = claims.decompose("Passage 3 provides the necessary information to answer the question.")
    assert [c.kind for c in found] == ["framing"]


@pytest.mark.parametrize(
    "text",
    [
        "Based on the passages, the plan costs €44.",
        "Overall, support is included in the Business plan.",
        "There are 3 plans:",  # a figure: checkable
        "Check the oil level with the dipstick.",
        "The passages contain information about the 1998 merger.",
    ],
)
def test_a_fact_after_a_preamble_stays_a_claim(text):
    assert framing.kind_of(text) == "claim"


def test_a_refusal_is_checked_against_the_evidence():
    spans = [e["text"] for e in EVIDENCE.values()]
    lacking = "The passages do not mention the price of the Starter plan."
    present = "The passages do not mention the monthly uptime of the Enterprise SLA."
    assert framing.kind_of(lacking) == framing.kind_of(present) == "refusal"
    assert framing.refusal_support(lacking, spans)[0] == 1.0
    assert framing.refusal_support(present, spans)[0] < 0.85


def test_each_item_of_a_list_a_refusal_opens_is_a_refusal_of_that_item():
    answer = (
        "The Business plan costs €44 per user per month.\n\n"
        "Unable to answer based on the given passages:\n\n"
        "* Whether it includes phone support\n"
        "* The monthly uptime of the Enterprise SLA"
    )
    found = [c for c in claims.decompose(answer) if c.kind == "refusal"]
    assert [c.text.split(": ")[-1] for c in found[1:]] == [
        "Whether it includes phone support",
        "The monthly uptime of the Enterprise SLA",
    ]
    spans = [e["text"] for e in EVIDENCE.values()]
    assert framing.refusal_support(found[1].text, spans)[0] == 1.0  # "phone" is in no span
    assert framing.refusal_support(found[2].text, spans)[0] < 0.85  # every word is


def test_a_conditional_refusal_is_a_refusal():
    text = "If these signs are not present in the passages, it is not possible to answer."
    assert framing.kind_of(text) == "refusal"


# --- checks ---------------------------------------------------------------------------------


def test_framing_costs_no_judge_call_and_never_blocks():
    fake = FakeJudge(0.99)
    report = run(LIST_ANSWER, fake)
    framed = [c for c in report["claims"] if c["status"] == "not_a_claim"]
    assert len(framed) == 3 and all(c["score"] is None for c in framed)
    assert not any("Sure" in asked or "hope" in asked for asked in fake.asked)
    assert report["action"] == "emit", report["reasons"]
    for claim in report["claims"]:
        assert isinstance(claim["char_start"], int) and claim["char_end"] > claim["char_start"]


def test_an_invented_figure_in_a_list_item_is_still_caught():
    fake = FakeJudge(0.99)
    report = run(LIST_ANSWER.replace("€44", "€54"), fake)
    (wrong,) = [c for c in report["claims"] if "€54" in c["text"]]
    assert wrong["score"] == 0.0 and "figure or date not in evidence: 54" in wrong["reasons"][0]
    assert report["action"] != "emit"
    shown = LIST_ANSWER.replace("€44", "€54")[wrong["char_start"] : wrong["char_end"]]
    assert "€54" in shown


def test_a_reference_to_a_passage_that_was_not_retrieved_fails_citations():
    report = run("Support is included (Passage 7).", FakeJudge(0.99))
    assert any("not retrieved" in r for r in report["claims"][0]["reasons"])


@pytest.mark.parametrize(
    ("claim", "span"),
    [
        ("The trip is about 100 miles.", "The trip is 98 miles long."),  # about + rounding
        ("It runs 161 km.", "It runs 100 miles."),  # a unit conversion
        ("In September it is 58 degrees Fahrenheit (14 degrees Celsius).", "September: 58 °F."),
        ("Together they cost €30.", "The pen costs €10 and the book costs €20."),  # a sum
        ("There are two types: essential and non-essential.", "Essential and non-essential."),
        # "of" after the counted noun is no noun: the spans' "eight of them" counts nothing here
        ("There are two types of amino acids - essential and non-essential.", "Eight of them."),
        # a timeline: the year on its own line, the day and month under it
        ("It took effect on November 1, 1765.", "1765____. Nov. 1: The act takes effect."),
    ],
)
def test_a_derived_figure_goes_to_the_judge(claim, span):
    result = groundedness.check_figures(claim, [span])
    assert result.score == 1.0 and "derived figure" in result.reasons[0]


@pytest.mark.parametrize(
    ("claim", "span"),
    [
        ("The trip is 120 miles long.", "The trip is 98 miles long."),
        ("It was founded in 1998.", "It was founded in 1996."),
        ("The three founders left.", "Both founders left."),
        # the timeline's day and month, another year; the spans' own full date with another year
        ("It took effect on November 1, 1766.", "1765____. Nov. 1: The act takes effect."),
        ("It was repealed on March 18, 1765.", "In 1765 it passed. Repealed March 18, 1766."),
        ("It took effect on November 2, 1765.", "1765____. Nov. 1: The act takes effect."),
    ],
)
def test_a_changed_figure_is_not_taken_for_a_derived_one(claim, span):
    assert groundedness.check_figures(claim, [span]).score == 0.0


def test_a_figure_the_question_gives_goes_to_the_judge():
    question = "How many euros is 100 US dollars today?"
    span = ["amount: 92.3\ncurrency: EUR"]
    asked = groundedness.check_figures("100 US dollars is 92.3 euros.", span, question)
    assert asked.score == 1.0 and "left to the judge: 100" in asked.reasons[0]
    # the question's figure is no licence for another one
    changed = groundedness.check_figures("100 US dollars is 120 euros.", span, question)
    assert changed.score == 0.0 and changed.reasons == ["figure or date not in evidence: 120"]
    assert groundedness.check_figures("100 US dollars is 92.3 euros.", span).score == 0.0


def test_an_imperative_opener_or_list_label_is_not_a_name():
    span = ["Use a meat thermometer and gather the data."]
    for text in ("Allow it to dry completely.", "Collect your data: Decide on a scale."):
        assert groundedness.check_entities(text, span).score == 1.0, text
    assert groundedness.check_entities("Fabrikam released the data.", span).score == 0.0
    # a word the claim also writes in lower case is a word where it opens a sentence or item
    labels = "Add labels and titles: Label each bar with its category."
    assert groundedness.check_entities(labels, ["Each bar shows a category."]).score == 1.0
    # an imperative the tagger calls a proper noun is a verb once lower-cased; a name is not
    imperative = "Label the x-axis with the categories you compare."
    assert groundedness.check_entities(imperative, span).score == 1.0
    assert groundedness.check_entities("Mark visited the plant.", span).score == 0.0
    nics = ["Employers pay lower NICs."]
    assert groundedness.check_entities("They pay National Insurance Contributions (NICs).", nics)


def test_a_negation_proves_nothing_about_a_word_the_sentence_also_restates_without_one():
    poach = [
        "Float the pod in the boiling water, making sure it stays upright and no water gets in."
    ]
    claim = "Place the pod in the boiling water and make sure it stays upright."
    assert groundedness.check_polarity(claim, poach).score == 1.0
    both = [
        "Nonessential amino acids can be made by the body, while essential amino acids "
        "cannot be made by the body."
    ]
    claim = "Essential amino acids are those that cannot be made by the body."
    assert groundedness.check_polarity(claim, both).score == 1.0
    # a negation over words restated only there still proves a flip, either way
    assert (
        groundedness.check_polarity(
            "Make sure water gets into the pod.", ["Make sure no water gets into the pod."]
        ).score
        == 0.0
    )
    assert (
        groundedness.check_polarity(
            "Essential amino acids can be made by the body.",
            ["Essential amino acids cannot be made by the body."],
        ).score
        == 0.0
    )


def test_lexical_weight_blends_the_word_share_into_judged_claims_of_long_answers_only():
    # "waived", "every", "customer" are in no span; "support", "business", "plan" are
    claim = "Support is waived for every customer on the Business plan."
    two = f"The Business plan costs €44 per user per month. {claim}"
    blended = run(two, FakeJudge(0.6), aggregate="floor_mean", lexical_weight=0.25)
    judge_alone = run(two, FakeJudge(0.6), aggregate="floor_mean")
    support = [c for c in blended["claims"] if c["text"].startswith("Support")][0]
    alone = [c for c in judge_alone["claims"] if c["text"].startswith("Support")][0]
    share = groundedness.check_lexical(claim, [EVIDENCE["E1"]["text"]]).score
    assert 0 < share < 1
    assert alone["score"] == pytest.approx(0.6 / 0.9)
    assert support["score"] == pytest.approx((0.6 + 0.25 * share) / (0.9 * 1.25), abs=0.01)
    assert "of its words in the evidence" in " ".join(support["reasons"])
    # a one-claim answer keeps the min gate and the judge's P(yes) alone
    one = run(claim, FakeJudge(0.6), aggregate="floor_mean", lexical_weight=0.25)
    assert one["claims"][0]["score"] == pytest.approx(0.6 / 0.9)


# --- the gate -------------------------------------------------------------------------------


def rows(*scores: float) -> list[dict]:
    return [
        {"text": f"c{i}", "score": s, "critical": False, "status": "x", "reasons": []}
        for i, s in enumerate(scores)
    ] + [{"text": "Sure!", "score": None, "critical": False, "status": "not_a_claim"}]


def test_floor_mean_lets_one_lukewarm_claim_through_and_not_one_unsupported():
    config = Config(aggregate="floor_mean", claim_floor=0.5, emit_threshold=0.85)
    lukewarm = rows(1.0, 1.0, 1.0, 1.0, 1.0, 0.7)
    invented = rows(1.0, 1.0, 1.0, 1.0, 1.0, 0.0)
    assert gate.aggregate(lukewarm, config) >= 0.85
    assert gate.aggregate(invented, config) == 0.0
    decide = dict(config=config, hard_reasons=[], divergent=[], rejected_tools=[], revise_round=0)
    action, _, _ = gate.decide(lukewarm, gate.aggregate(lukewarm, config), **decide)
    assert action == "emit"
    action, _, _ = gate.decide(invented, 0.0, **decide)
    assert action != "emit"
    # the pipeline's default gate is unchanged: its weakest claim decides
    assert gate.aggregate(lukewarm, Config()) == 0.7


def test_with_an_answer_line_a_claim_above_it_is_supported_and_shows_no_flagged_span():
    answer = LIST_ANSWER.replace(
        "The Enterprise SLA guarantees 99.9% monthly uptime",
        "Enterprise customers get 99.9% uptime each month",
    )
    gate_settings = {"aggregate": "floor_mean", "claim_floor": 0.7, "answer_threshold": 0.675}
    report = run(answer, FakeJudge(0.99, by_text={"uptime": 0.63}), **gate_settings)
    (uptime,) = [c for c in report["claims"] if "uptime" in c["text"]]  # 0.63 / 0.9 = 0.7
    assert uptime["judge"] == "llm" and uptime["status"] == "supported"
    assert report["action"] == "emit"
    low = run(answer, FakeJudge(0.99, by_text={"uptime": 0.5}), **gate_settings)
    assert low["action"] != "emit"


def test_floor_mean_leaves_a_one_claim_answer_to_the_min_gate():
    """floor_mean was fitted on multi-sentence answers: a single lukewarm claim (0.7) is not
    averaged with anything, so it still needs emit_threshold, as HaluEval's answers did."""
    config = Config(aggregate="floor_mean", claim_floor=0.7, answer_threshold=0.675)
    single = rows(0.7)
    assert not gate.long_answer_gate(single, config)
    assert gate.aggregate(single, config) == 0.7
    decide = dict(config=config, hard_reasons=[], divergent=[], rejected_tools=[], revise_round=0)
    action, _, _ = gate.decide(single, 0.7, **decide)
    assert action != "emit"
    several = rows(1.0, 0.7)
    assert gate.long_answer_gate(several, config)
    action, _, _ = gate.decide(several, gate.aggregate(several, config), **decide)
    assert action == "emit"
