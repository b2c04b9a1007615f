"""Rows written outside the stages (revise requests, a question file's records, the gold-evidence
axis's inputs, the ranker's SQuAD corpus) are built strictly against their contract: a field
missing, one the contract lacks or a value of the wrong type fails naming the builder and the
field, never as a silent null."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pytest

from eval import gold_evidence
from flows import question_files, revise
from scripts import train_ranker
from stages import contracts

ROOT = Path(__file__).resolve().parent.parent


def _without(row: dict, name: str) -> dict:
    return {k: v for k, v in row.items() if k != name}


def _broken_three_ways(row: dict, missing: str, mistyped: tuple[str, object]):
    """(row, the error it must raise): the field left out, an extra one, one of the wrong type."""
    name, value = mistyped
    return [
        (_without(row, missing), f"missing field '{missing}'"),
        ({**row, "spare": 1}, "field 'spare' is not in the contract"),
        ({**row, name: value}, f"field '{name}' expects"),
    ]


# ---------------------------------------------------------------- revise requests


def _report() -> dict:
    claim = {"text": "The notice period is 60 days.", "status": "unsupported"}
    return {
        "question_id": "q1",
        "action": "revise",
        "claims": [claim, {"text": "Hello.", "status": "not_a_claim"}],
        "feedback": ["60 days is not in the sources"],
        "reasons": [],
    }


def test_revision_requests_are_their_contract_table():
    rows = revise.revision_requests([_report(), {**_report(), "action": "emit"}], 1)
    table = revise.requests_table(rows)
    assert table.schema == contracts.schema_of("revision_requests")
    assert table.to_pylist() == [
        {
            "question_id": "q1",
            "round": 1,
            "unsupported_claims": ["The notice period is 60 days."],
            "feedback": ["60 days is not in the sources"],
        }
    ]


@pytest.mark.parametrize("case", range(3), ids=["missing", "extra", "mistyped"])
def test_a_wrong_revision_request_fails_by_name(case):
    (row,) = revise.revision_requests([_report()], 2)
    broken, message = _broken_three_ways(row, "feedback", ("round", 1.5))[case]
    with pytest.raises(contracts.ContractError, match=message) as error:
        revise.requests_table([row, broken])
    assert "stage 'revise', table 'revision_requests', row 1 (question_id 'q1')" in str(error.value)


# ---------------------------------------------------------------- question files


def test_a_question_file_with_omitted_and_unknown_columns_reads(tmp_path):
    """Users omit the optional columns and add their own: the rows are still whole."""
    path = tmp_path / "questions.csv"
    path.write_text("question,notes\nWhat is the notice period?,from HR\n", encoding="utf-8")
    read = question_files.read_question_file(path, "employee", "general")
    assert read.errors == []
    assert read.table.schema == contracts.schema_of("questions")
    (row,) = read.table.to_pylist()
    assert row["question_id"] == "q00001"
    assert (row["principal"], row["query_type"]) == ("employee", "general")
    assert row["language"] == "en"


@pytest.mark.parametrize("case", range(3), ids=["missing", "extra", "mistyped"])
def test_a_question_row_the_reader_writes_wrong_fails_by_name(tmp_path, monkeypatch, case):
    record = question_files._record

    def wrong(raw, principal, query_type):
        row, error = record(raw, principal, query_type)
        return _broken_three_ways(row, "language", ("question_id", 7))[case][0], error

    monkeypatch.setattr(question_files, "_record", wrong)
    path = tmp_path / "questions.jsonl"
    path.write_text('{"question_id": "a", "question": "What is the notice period?"}\n')
    message = _broken_three_ways({}, "language", ("question_id", 7))[case][1]
    with pytest.raises(contracts.ContractError, match=message) as error:
        question_files.read_question_file(path, "employee", "general")
    assert "stage 'question-file', table 'questions'" in str(error.value)


# ---------------------------------------------------------------- the gold-evidence axis


def _gold_inputs() -> tuple[list[dict], list[str], list[dict]]:
    question = {
        "question_id": "q1",
        "question": "What is the notice period?",
        "principal": "employee",
        "query_type": "general",
        "gold_doc_ids": ["d1"],
        "gold_answers": ["30 days"],
    }
    document = {
        "doc_id": "d1",
        "text": "Welcome. The notice period is 30 days. Ask HR.",
        "title": "Handbook",
        "version": "1",
        "published_at": dt.date(2026, 1, 5),
        "indexed_at": dt.datetime(2026, 2, 1, tzinfo=dt.UTC),
    }
    rows = gold_evidence.gold_evidence([question], {"d1": document}, {})
    return [question], ["q1"], rows


def test_gold_evidence_inputs_are_their_contract_tables():
    asked, covered, rows = _gold_inputs()
    tables = gold_evidence.gold_tables(asked, covered, rows)
    for name, table in tables.items():
        assert table.schema == contracts.schema_of(name)
    (evidence,) = tables["evidence"].to_pylist()
    assert evidence["text"] == "The notice period is 30 days."
    assert evidence["anchor"] is None
    assert tables["rerank_status"].to_pylist()[0]["state"] == "success"


@pytest.mark.parametrize("case", range(3), ids=["missing", "extra", "mistyped"])
def test_a_wrong_gold_evidence_row_fails_by_name(case):
    asked, covered, (row,) = _gold_inputs()
    broken, message = _broken_three_ways(row, "anchor", ("char_start", "9"))[case]
    with pytest.raises(contracts.ContractError, match=message) as error:
        gold_evidence.gold_tables(asked, covered, [broken])
    assert "stage 'gold-evidence', table 'evidence', row 0 (question_id 'q1')" in str(error.value)


# ---------------------------------------------------------------- the ranker's SQuAD corpus


def test_the_rankers_squad_corpus_is_its_contract_tables():
    chunks = [train_ranker.squad_chunk(f"a00p00{i}", "Super_Bowl", f"Text {i}.") for i in (0, 1)]
    tables = train_ranker.squad_tables(chunks, ["Who won?", "Where?"])
    for name, table in tables.items():
        assert table.schema == contracts.schema_of(name)
    assert tables["chunks"].column("title").to_pylist() == ["Super Bowl", "Super Bowl"]
    assert tables["eligibility"].num_rows == 4


@pytest.mark.parametrize("case", range(3), ids=["missing", "extra", "mistyped"])
def test_a_wrong_squad_chunk_fails_by_name(case):
    row = train_ranker.squad_chunk("a00p000", "Super_Bowl", "Text.")
    broken, message = _broken_three_ways(row, "content_hash", ("chunk_index", "0"))[case]
    with pytest.raises(contracts.ContractError, match=message) as error:
        train_ranker.squad_tables([broken], ["Who won?"])
    assert "stage 'train-ranker', table 'chunks', row 0" in str(error.value)


# ---------------------------------------------------------------- no lenient builder left


def test_no_contract_table_is_built_leniently_outside_the_benches_and_tests():
    """`contracts.from_rows` fills a forgotten field with nulls: only the benches, which build
    corpora from public data sets, and the tests still call it."""
    lenient = []
    for folder in ("agents", "cli", "eval", "flows", "quality", "scripts", "stages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == "from_rows"
                    and path.name != "contracts.py"
                ):
                    lenient.append(str(path.relative_to(ROOT)))
    assert lenient == []
