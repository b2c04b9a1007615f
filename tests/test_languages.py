"""Questions in other languages: detected offline, recorded, and refused as
`unsupported_language` (never "insufficient evidence") where the English corpus and models cannot
serve them; an English question is never refused for its language.

The detection figures are measured on two small sets written for this: the set the thresholds
were chosen on (tests/data/language_questions.jsonl, 7 languages) and one written after them
(language_questions_heldout.jsonl, 7 languages, two not in the first set).
`python -m tests.test_languages` prints both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stages import contracts, generation
from stages.common.languages import UNDETERMINED, detect, is_served, language_name

DATA = Path(__file__).parent / "data"
SETS = ("language_questions.jsonl", "language_questions_heldout.jsonl")


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


def measure(name: str) -> dict:
    """Per set: exact language accuracy on questions not in English, and how the serve/refuse
    decision goes for each side (English served, others refused)."""
    rows = _rows(name)
    detected = [(row["language"], detect(row["question"])[0]) for row in rows]
    english = [got for gold, got in detected if gold == "en"]
    other = [(gold, got) for gold, got in detected if gold != "en"]
    return {
        "questions": len(rows),
        "languages": len({gold for gold, _ in detected}),
        "english": len(english),
        "english_served": sum(is_served(got) for got in english),
        "english_undetermined": sum(got == UNDETERMINED for got in english),
        "other": len(other),
        "other_refused": sum(not is_served(got) for _, got in other),
        "other_exact": sum(gold == got for gold, got in other),
    }


@pytest.mark.parametrize("name", SETS)
def test_no_english_question_is_refused_for_its_language(name):
    figures = measure(name)
    assert figures["languages"] >= 5
    assert figures["english_served"] == figures["english"], figures


@pytest.mark.parametrize("name", SETS)
def test_questions_in_other_languages_are_detected(name):
    figures = measure(name)
    assert figures["other_refused"] >= 0.95 * figures["other"], figures
    assert figures["other_exact"] >= 0.9 * figures["other"], figures


def test_too_little_text_is_undetermined_and_served():
    for text in ("SLA?", "GDPR", "", "   ", "Enterprise plan price?", "12 345 €"):
        language, _ = detect(text)
        assert language == UNDETERMINED and is_served(language)
    assert is_served(None) and is_served("en") and not is_served("es")
    assert language_name("es") == "Spanish (es)" and language_name("xx") == "xx"


def _generate(questions: list[dict]) -> dict[str, dict]:
    inputs = {
        "questions": contracts.from_rows(questions, "questions"),
        "rerank_status": contracts.from_rows(
            [
                {"question_id": q["question_id"], "state": "not_found", "is_error": False}
                for q in questions
            ],
            "rerank_status",
        ),
        "evidence": contracts.empty("evidence"),
        "retrieval_queries": contracts.empty("retrieval_queries"),
    }
    rows = generation.run(inputs, generation.Config())["generations"].to_pylist()
    return {row["question_id"]: row for row in rows}


def test_a_question_in_a_language_not_served_is_refused_as_unsupported_language():
    base = {"principal": "employee", "query_type": "general"}
    rows = _generate(
        [
            {**base, "question_id": "es", "question": "¿Cuánto cuesta?", "language": "es"},
            {**base, "question_id": "en", "question": "How much is it?", "language": "en"},
            {**base, "question_id": "und", "question": "Price?", "language": UNDETERMINED},
            {**base, "question_id": "none", "question": "Price?", "language": None},
        ]
    )
    assert rows["es"]["refusal_reason"] == "unsupported_language"
    assert rows["es"]["missing"] == [
        "an answer in Spanish (es): the sources and models serve English (en)"
    ]
    for qid in ("en", "und", "none"):  # served: no evidence is then the reason
        assert rows[qid]["refusal_reason"] == "insufficient_evidence"
    answer = {
        "question_id": "es",
        "question": "¿Cuánto cuesta?",
        "status": "refused",
        "action": "emit",
        "state": "not_found",
        "refusal_reason": "unsupported_language",
        "missing": [],
        "citations": [],
    }
    assert contracts.final_answer_problems(answer) == []


def test_the_person_reads_which_language_was_not_served():
    from stages.guardrails.answers import final_answer

    generated = {
        "state": "not_found",
        "refusal_reason": "unsupported_language",
        "missing": ["an answer in Spanish (es): the sources and models serve English (en)"],
    }
    final = final_answer(
        {"question_id": "es", "question": "¿Cuánto cuesta?"},
        {"status": "refused"},
        generated,
        {"action": "emit", "reasons": []},
        None,
    )
    assert final["status"] == "refused"
    assert "Spanish (es)" in final["rendered_answer"]
    assert "English (en)" in final["rendered_answer"]
    assert "available sources" in final["rendered_answer"]


def test_a_configured_language_is_served():
    config = generation.Config(languages=["en", "es"])
    question = {
        "question_id": "es",
        "question": "¿Cuánto cuesta?",
        "principal": "employee",
        "query_type": "general",
        "language": "es",
    }
    inputs = {
        "questions": contracts.from_rows([question], "questions"),
        "rerank_status": contracts.from_rows(
            [{"question_id": "es", "state": "not_found", "is_error": False}], "rerank_status"
        ),
        "evidence": contracts.empty("evidence"),
        "retrieval_queries": contracts.empty("retrieval_queries"),
    }
    row = generation.run(inputs, config)["generations"].to_pylist()[0]
    assert row["refusal_reason"] == "insufficient_evidence"


if __name__ == "__main__":  # pragma: no cover - the figures for the docs and the report
    for set_name in SETS:
        print(set_name, json.dumps(measure(set_name)))


def test_the_mapped_tables_rank_every_language_as_the_loaded_ones_do():
    """The identifier's big tables live in a read-only file mapping, not in the process's own
    memory: same values, so the same ranking to the last digit, on every question of both sets."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from stages.common import languages

    mapped = languages._identifier()
    assert isinstance(mapped.tk_nextmove, memoryview)
    assert not mapped.nb_ptc.flags.owndata and not mapped.nb_ptc.flags.writeable  # read-only map
    assert mapped._full_model[0] is mapped.nb_ptc  # nothing keeps the loaded copy alive
    loaded = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    texts = [row["question"] for name in SETS for row in _rows(name)]
    texts += ["SLA?", "", "ÉTÉ 2024 — TARIFS", "価格はいくらですか？", "x" * 3000]
    for text in texts:
        assert mapped.rank(text) == loaded.rank(text), text
