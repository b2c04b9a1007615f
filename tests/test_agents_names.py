"""A one-edit typo of a name ("Paris" for "parks") counts only when it lands on a name."""

from __future__ import annotations

import pytest

from stages.common.names import Vocabulary, name_terms, unwritten_names

TRAVEL = (
    "Travel policy. Hotel limits per night: up to 180 EUR in Berlin and 240 GBP in London. "
    "Book through the travel desk."
)
PARKING = "Parking notice. The parking garage is closed on Fridays for cleaning."
OFFICES = "Our offices are in Berlin, London and Lisbon. The roadmap is reviewed by Celoron."


def vocabulary() -> Vocabulary:
    return Vocabulary.of_texts([TRAVEL, PARKING, OFFICES])


def test_a_city_one_edit_from_a_common_word_is_not_written():
    assert unwritten_names("What is the hotel limit per night in Paris?", vocabulary()) == ["paris"]


@pytest.mark.parametrize(
    "question", ["What is the hotel limit in Londn?", "Who reviews the roadmap, Celeron?"]
)
def test_a_typo_of_a_written_name_still_counts(question):
    assert unwritten_names(question, vocabulary()) == []


def test_written_names_and_inflections_are_unchanged():
    assert unwritten_names("What is the hotel limit in Berlin?", vocabulary()) == []
    assert unwritten_names("Is the Parking garage open?", vocabulary()) == []


def test_name_terms_skip_sentence_starts_and_headings():
    found = name_terms("Office Parking Rules\nParking is free. Staff in Berlin park here.")
    assert "berlin" in found
    assert "park" not in found and "rule" not in found


def test_paris_is_not_found_end_to_end(tmp_path):
    """A user's own folder, no catalog, through the real stages (the issue's report)."""
    from agents.serving.agents_config import load_agents_config
    from agents.serving.engine import Engine
    from tests.conftest import ROOT, load_test_config

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "travel-policy.md").write_text(f"# Travel policy\n\n{TRAVEL}\n")
    (folder / "parking.md").write_text(f"# Parking notice\n\n{PARKING}\n")
    (folder / "offices.md").write_text(f"# Offices\n\n{OFFICES}\n")
    config = load_test_config(tmp_path, corpus=str(folder))
    agents = load_agents_config(ROOT / "configs" / "agents.yaml", confidence_check_query_types=[])
    engine = Engine(config, agents)
    paris = engine.search("What is the hotel limit per night in Paris?", "employee")
    assert paris.status == "not_found" and paris.is_error
    assert paris.unwritten_names == ["paris"] and paris.sources == []
    berlin = engine.search("What is the hotel limit per night in Berlin?", "employee")
    assert berlin.status in ("success", "low_relevance") and "180 EUR" in berlin.content
