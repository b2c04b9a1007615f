"""The names a question asks about, and whether the sources write them (stages.common.names)."""

from __future__ import annotations

import pytest

from stages.common import names


def vocabulary(text: str) -> names.Vocabulary:
    return names.Vocabulary.of_texts([text])


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the notice period in our contract with Initech?", ["initech"]),
        ("Initech: what is the notice period?", []),  # the first word is any question's capital
        ("What does the MSA say about SLA credits?", []),  # acronyms are spelled out in sources
        ("What are Contoso Retail's payment terms?", ["contoso", "retail"]),
        ("How did Saint-Girard respond to Céloron?", ["saint", "girard", "celoron"]),
        ("Is support open on Monday in Sept?", []),  # days and months are not parties
        ("How hot is it in Celsius?", []),  # sources write °C
        ("What Is The Refund Policy For Annual Plans?", []),  # title case: capitals say nothing
        ("Does the Zeta plan cost more than the Zeta add-on?", ["zeta"]),
        ("In 2019, what did the Zeta plan cost?", ["zeta", "2019"]),  # a year, first word or not
        ("Which wars did France fight in the 1600s?", ["france"]),  # a span, not a year
    ],
)
def test_asked_names(question, expected):
    assert names.asked_names(question) == expected


SOURCES = (
    "The Fabrikam agreement renews yearly. Céloron met Marie d'Agoult and Gładkowska. "
    "The revolution began with the Canadian militia."
)


@pytest.mark.parametrize(
    "name",
    ["fabrikam", "fabrikams", "fabrikan", "celoron", "agoult", "gladkowska", "revolutionary"],
)
def test_a_name_is_written_in_any_form_the_sources_use(name):
    """Itself, a typo one edit away, accents and elisions aside, or a derived form."""
    assert names.is_written(name, vocabulary(SOURCES))


@pytest.mark.parametrize("name", ["initech", "quantum", "globex", "tokyo"])
def test_a_name_the_sources_never_write_is_not_written(name):
    """The name "quantum" shares only "quant" with "quantity": under three quarters of it."""
    assert not names.is_written(name, vocabulary(SOURCES + " The quantity is fixed."))


def test_unwritten_names_of_a_question():
    question = "What is the notice period in the Fabrikam contract with Initech?"
    assert names.unwritten_names(question, vocabulary(SOURCES)) == ["initech"]


def test_a_year_is_written_only_as_itself():
    sources = vocabulary("The 2026 price list replaces the 2025 one.")
    assert names.is_written("2025", sources)
    assert not names.is_written("2024", sources)  # one edit away, but another year
    question = "What did the plan cost in 2024?"
    assert names.unwritten_names(question, sources) == ["2024"]
