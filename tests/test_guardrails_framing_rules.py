"""Framing rules as LLMs write them: hedges, remarks about the passages, lead-ins whose only
figures spell a name, refusals said in other words, and a split clause whose "it" is a passage.
Every rule also keeps a sentence that carries a checkable fact as a claim."""

from __future__ import annotations

import pytest

from stages.guardrails import claims, framing


@pytest.mark.parametrize(
    "text",
    [
        "To pair a wireless controller with an Xbox 360, follow these steps:",
        "Based on the passages, here's how to connect an iPhone 6 to the car:",
        "Good luck with your G1 test!",
        "Here are the steps for Windows 10:",
        "Whether to prune now or later would depend on the specific variety you grow.",
        "The right dose can vary depending on your own situation.",
        "There may be other factors at play that could change the outcome.",
        "There might also be local regulations to take into account before you dig.",
        "Further research or expert advice may be needed to finish the repair.",
        "With these steps and a little patience, you should be able to grow healthy tomatoes.",
        "If something goes wrong, refer to the passages for more guidance.",
    ],
)
def test_framing_as_llms_write_it(text: str) -> None:
    assert framing.kind_of(text) == "framing"


@pytest.mark.parametrize(
    "text",
    [
        "Neither of the passages mentions a recipe for the sauce.",
        "None of the passages provide the opening hours.",
        "However, there is no exact formula given for the bonus.",
        "The exact share of patients who get a rash is not specified.",
    ],
)
def test_refusals_in_other_words(text: str) -> None:
    assert framing.kind_of(text) == "refusal"


@pytest.mark.parametrize(
    "text",
    [
        # a figure with a unit, a year, a count: facts, whatever frames them
        "Here are the 2019 tax changes:",
        "Here are the steps to reset a 4-digit combination lock:",
        "The Model 3 costs 40000 dollars:",
        "Good luck, the exam lasts 90 minutes!",
        "The cost would depend on the specific model, about 300 dollars for the base one.",
        # a named entity not hedged away
        "The fee depends on the specific plan chosen at Acme Bank.",
        "There may be other factors, such as the rules of the Ontario Ministry of Transport.",
        # a plain fact that only sounds like a remark
        "The statement is not provided by the seller until the end of the month.",
        "With the lid on, the soup keeps for 3 days.",
    ],
)
def test_a_checkable_fact_stays_a_claim(text: str) -> None:
    assert framing.kind_of(text) == "claim"


def test_name_figures_are_not_counted() -> None:
    assert not framing._plain_figures("Set up the Xbox 360 with an iPhone 6 and the G1 app")
    assert framing._plain_figures("The iPhone 6 costs 199 dollars")
    assert framing._plain_figures("Windows 2000 was released then")  # a year stays a figure


def test_a_split_clause_whose_it_is_the_passage_is_a_refusal() -> None:
    pieces = claims.decompose(
        "The passages discuss the stages of candy making, but they do not mention baking."
    )
    assert [p.kind for p in pieces] == ["claim", "refusal"]
    assert pieces[1].text == "The passages do not mention baking."
    assert pieces[1].char_end == len(
        "The passages discuss the stages of candy making, but they do not mention baking."
    )


def test_a_split_clause_about_a_thing_stays_a_claim() -> None:
    pieces = claims.decompose("The charger costs 20 dollars, but it does not include a cable.")
    assert [p.kind for p in pieces] == ["claim", "claim"]
    assert pieces[1].text == "it does not include a cable."


def test_the_sentence_before_names_the_passage_its_pronoun_stands_for() -> None:
    pieces = claims.decompose(
        "Passage 2 lists the side effects of the drug. However, it does not give their frequency."
    )
    assert [p.kind for p in pieces] == ["claim", "refusal"]
    assert pieces[1].text == "Passage does not give their frequency."


def test_a_pronoun_after_a_sentence_about_a_thing_stays_a_claim() -> None:
    pieces = claims.decompose("Passage 1 covers cats.\nThe dog barks. It does not mention fleas.")
    assert [p.kind for p in pieces] == ["claim", "claim", "claim"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Based on the passages, these methods should help in removing the stains.", "framing"),
        ("These steps will help you save 20 dollars a month.", "claim"),
        ("These remedies may help with Lyme disease.", "claim"),
    ],
)
def test_the_answer_vouching_for_itself(text: str, kind: str) -> None:
    assert framing.kind_of(text) == kind
