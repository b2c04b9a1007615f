"""A stage's rows are built against the schema they must satisfy: `contracts.table_of` (rows) and
`contracts.table_of_columns` (whole columns) refuse a row with a field missing, a field the
contract lacks or a value of the wrong type, naming the stage, the table, the row and the field;
and every stage builds its output tables through them."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from stages import contracts
from stages.catalog import STAGES

ROOT = Path(__file__).resolve().parent.parent


def attempt(**changes) -> dict:
    row = {
        "question_id": "q7",
        "attempt": 1,
        "query_text": "What is the notice period?",
        "state": "success",
        "confidence": 0.9,
        "stop_reason": "success",
    }
    return {**row, **changes}


def claim(**changes) -> dict:
    row = {
        "text": "The notice period is 30 days.",
        "evidence_ids": ["E1"],
        "evidence_spans": [{"evidence_id": "E1", "doc_id": "d1", "char_start": 0, "char_end": 9}],
        "score": 1.0,
        "critical": True,
        "status": "supported",
        "judge": "verbatim",
        "checks": [{"name": "figures", "version": "1", "score": 1.0}],
        "reasons": [],
        "char_start": 0,
        "char_end": 29,
    }
    return {**row, **changes}


def report(**changes) -> dict:
    row = {
        "question_id": "q7",
        "claims": [claim()],
        "tool_call_validations": [],
        "consistency_probes": [],
        "answer_check": None,
        "overall_score": 1.0,
        "action": "emit",
        "reasons": [],
        "feedback": [],
        "redactions": [],
        "pii_detector": "regex",
        "check_versions": ["claims@1"],
        "version": "1",
    }
    return {**row, **changes}


def test_whole_rows_build_the_contract_table_with_its_schema():
    table = contracts.table_of("rerank_attempts", [attempt(), attempt(attempt=2)], stage="rerank")
    assert table.schema == contracts.schema_of("rerank_attempts")
    assert table.column("attempt").to_pylist() == [1, 2]
    nested = contracts.table_of("hallucination_reports", [report()], stage="guardrails")
    assert nested.to_pylist()[0]["claims"][0]["judge"] == "verbatim"
    assert contracts.table_of("ranked", [], stage="rerank").schema == contracts.schema_of("ranked")


def test_a_missing_field_is_named_with_the_stage_table_and_row():
    row = attempt()
    del row["stop_reason"]
    with pytest.raises(contracts.ContractError) as error:
        contracts.table_of("rerank_attempts", [attempt(), row], stage="rerank")
    assert str(error.value) == (
        "stage 'rerank', table 'rerank_attempts', row 1 (question_id 'q7'): "
        "missing field 'stop_reason'"
    )


def test_a_field_the_contract_lacks_is_named():
    with pytest.raises(contracts.ContractError, match=r"row 0 .*field 'score' is not in the contr"):
        contracts.table_of("rerank_attempts", [attempt(score=0.4)], stage="rerank")


def test_a_value_of_the_wrong_type_is_named_with_its_field():
    rows = [attempt(), attempt(attempt="two")]
    with pytest.raises(contracts.ContractError) as error:
        contracts.table_of("rerank_attempts", rows, stage="rerank")
    message = str(error.value)
    assert message.startswith("stage 'rerank', table 'rerank_attempts', row 1 (question_id 'q7')")
    assert "field 'attempt' expects int32, got 'two' (str)" in message
    # Arrow would turn 1.5 into 1 without a word
    with pytest.raises(contracts.ContractError, match=r"field 'attempt' expects int32, got 1.5"):
        contracts.table_of("rerank_attempts", [attempt(attempt=1.5)], stage="rerank")
    with pytest.raises(contracts.ContractError, match=r"field 'confidence' expects double"):
        contracts.table_of("rerank_attempts", [attempt(confidence="high")], stage="rerank")
    with pytest.raises(contracts.ContractError, match=r"row 0: the row is a list"):
        contracts.table_of("rerank_attempts", [list(attempt().values())], stage="rerank")


def test_a_struct_inside_a_row_is_held_to_its_fields_too():
    partial = claim()
    del partial["judge"]
    with pytest.raises(contracts.ContractError, match=r"missing field 'claims\[1\]\.judge'"):
        contracts.table_of(
            "hallucination_reports", [report(claims=[claim(), partial])], stage="guardrails"
        )
    spans = [{"evidence_id": "E1", "doc_id": "d1", "char_start": 0, "char_end": 9, "page": 2}]
    with pytest.raises(contracts.ContractError, match=r"'claims\[0\]\.evidence_spans\[0\]\.page'"):
        contracts.table_of(
            "hallucination_reports",
            [report(claims=[claim(evidence_spans=spans)])],
            stage="guardrails",
        )
    with pytest.raises(contracts.ContractError, match=r"field 'claims\[0\]\.char_start' expects"):
        contracts.table_of(
            "hallucination_reports", [report(claims=[claim(char_start=2.5)])], stage="guardrails"
        )


def test_columns_are_held_to_the_contract_as_rows_are():
    columns = {"row": [0, 1], "term_id": [3, 4], "weight": [0.5, 1.25]}
    table = contracts.table_of_columns("bm25_postings", columns, stage="indexing")
    assert table.schema == contracts.schema_of("bm25_postings")
    with pytest.raises(contracts.ContractError, match=r"'indexing', .*missing column 'weight'"):
        contracts.table_of_columns("bm25_postings", {"row": [0], "term_id": [3]}, stage="indexing")
    with pytest.raises(contracts.ContractError, match=r"column 'rank' is not in the contract"):
        contracts.table_of_columns("bm25_postings", {**columns, "rank": [1, 2]}, stage="indexing")
    with pytest.raises(contracts.ContractError, match=r"column 'term_id' expects int32"):
        contracts.table_of_columns(
            "bm25_postings", {**columns, "term_id": [3, 4.5]}, stage="indexing"
        )


def test_dates_and_times_keep_their_contract_types():
    when = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)
    row = {
        "question_id": "q1",
        "evidence_id": "E1",
        "sub_question": 0,
        "doc_id": "d1",
        "chunk_id": "d1#0000",
        "char_start": 0,
        "char_end": 4,
        "text": "Text",
        "score": 1.0,
        "title": "T",
        "section_path": "T",
        "page_number": None,
        "version": None,
        "published_at": dt.date(2026, 1, 1),
        "indexed_at": when,
        "is_stale": False,
        "confidence": 0.5,
        "anchor": None,
    }
    table = contracts.table_of("evidence", [row], stage="evidence")
    assert table.column("published_at").type == pa.date32()
    assert table.to_pylist()[0]["indexed_at"] == when


def _calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{node.func.value.id}.{node.func.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    ]


def test_every_stage_builds_its_outputs_against_their_contract():
    """No stage builds a contract table the lenient way (`from_rows` fills a forgotten field with
    nulls; `pa.table` + `conform` drops an unexpected one); each calls `table_of` or
    `table_of_columns`."""
    lenient = []
    for path in sorted((ROOT / "stages").rglob("*.py")):
        if path.name in ("contracts.py", "store.py") or "models" in path.parts:
            continue
        for call in _calls(path):
            if call in ("contracts.from_rows", "contracts.conform"):
                lenient.append(f"{path.relative_to(ROOT)}: {call}")
    assert lenient == []
    builders = {"contracts.table_of", "contracts.table_of_columns"}
    for name, module in STAGES.items():
        package = Path(module.__file__)
        files = package.parent.rglob("*.py") if package.name == "__init__.py" else [package]
        assert any(builders & set(_calls(f)) for f in files), f"{name} builds no contract table"
