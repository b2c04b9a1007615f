"""Ingestion: every format parses to real chunks with metadata; every bad file is an error row."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import yaml

from stages import ingestion
from stages.store import ArtifactStore

FORMATS = ("md", "html", "txt", "pdf", "docx")


@pytest.fixture(scope="module")
def sample_tables(sample_run, sample_config):
    store = ArtifactStore(sample_config.store)
    ref = sample_run.refs["ingestion"]
    return {
        name: store.read_table(ref, name).to_pylist()
        for name in ("documents", "chunks", "ingestion_errors")
    }


def test_every_format_parses_to_nonempty_chunks(sample_tables):
    chunks_by_doc = {}
    for chunk in sample_tables["chunks"]:
        chunks_by_doc.setdefault(chunk["doc_id"], []).append(chunk)
    seen = set()
    for doc in sample_tables["documents"]:
        suffix = Path(doc["path"]).suffix.lstrip(".")
        chunks = chunks_by_doc.get(doc["doc_id"], [])
        assert chunks, f"{doc['path']} produced no chunks"
        assert sum(len(c["text"]) for c in chunks) > 200, f"{doc['path']} is suspiciously short"
        seen.add(suffix)
    assert seen >= set(FORMATS)
    # nothing fails; the only note is that the scanned page was read by OCR
    notes = {(e["path"], e["error_kind"], e["severity"]) for e in sample_tables["ingestion_errors"]}
    assert notes == {("pricing/partner-discounts-2026-scanned.pdf", "ocr_used", "warning")}


def test_chunk_offsets_slice_the_normalized_document(sample_tables):
    texts = {d["doc_id"]: d["text"] for d in sample_tables["documents"]}
    for chunk in sample_tables["chunks"]:
        assert texts[chunk["doc_id"]][chunk["char_start"] : chunk["char_end"]] == chunk["text"]


def test_metadata_comes_from_the_catalog(sample_tables, sample_config):
    catalog = yaml.safe_load((sample_config.corpus / "catalog.yaml").read_text())["documents"]
    expected = {entry["doc_id"]: entry for entry in catalog}
    for chunk in sample_tables["chunks"]:
        entry = expected[chunk["doc_id"]]
        assert chunk["permission_set"] == entry["permission_set"]
        assert chunk["trust_tier"] == entry["trust_tier"]
        assert chunk["version"] == str(entry["version"])
        assert chunk["published_at"] == entry["published_at"]
        assert chunk["chunk_id"].startswith(chunk["doc_id"] + "#")
        assert chunk["indexed_at"] is not None and len(chunk["content_hash"]) == 16


def test_pdf_chunks_carry_pages_and_md_chunks_carry_sections(sample_tables):
    pdf_pages = {
        c["page_number"]
        for c in sample_tables["chunks"]
        if c["doc_id"] == "security-data-retention-policy"
    }
    assert {1, 2} <= pdf_pages
    backups = [c for c in sample_tables["chunks"] if "retained for 35 days" in c["text"]]
    assert backups and backups[0]["page_number"] == 2
    md_sections = [
        c["section_path"] for c in sample_tables["chunks"] if c["doc_id"] == "price-list-2026"
    ]
    assert all(md_sections) and any(" > " in s for s in md_sections)


def test_tables_are_kept_whole(sample_tables):
    price_tables = [
        c for c in sample_tables["chunks"] if c["doc_id"] == "price-list-2026" and c["is_table"]
    ]
    assert price_tables
    plan_table = next(c for c in price_tables if "Plan: Enterprise" in c["text"])
    for plan in ("Starter", "Business", "Enterprise"):
        assert f"Plan: {plan}" in plan_table["text"]


def test_chunk_size_is_respected_except_for_whole_tables():
    text = " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(200))
    blocks = [ingestion.Block("heading", "Title", None), ingestion.Block("text", text, None)]
    ingestion.parsing._layout(blocks)
    spans = ingestion.chunk_spans(blocks, size=300, overlap=80)
    assert len(spans) > 5
    for pieces in spans:
        assert pieces[-1].end - pieces[0].start <= 300 + 60  # at most one sentence over
    # consecutive chunks overlap by whole sentences
    assert spans[1][0].start < spans[0][-1].end


# ---------------------------------------------------------------- bad input


def _blank_pdf() -> bytes:
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def _text_pdf(text: str) -> bytes:
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.drawString(72, 720, text)
    pdf.save()
    return buffer.getvalue()


BAD_FILES = {
    "corrupt.pdf": (b"%PDF-1.4\n this is not really a pdf \x00\x01", "parse_error"),
    "corrupt.docx": (b"PK\x03\x04 not a zip archive at all", "parse_error"),
    "zero.md": (b"", "empty_file"),
    "blank.txt": (b"   \n\n  \n", "empty_document"),
    "notes.xyz": (b"some text in an unknown format", "unsupported_type"),
    "binary.txt": (bytes(range(256)) * 4, "undecodable_text"),
    "scanned.pdf": (_blank_pdf(), "no_text"),
    "huge.md": (b"# Big\n\n" + b"word " * 5000, "too_large"),
}


def _corpus(tmp_path: Path, files: dict[str, bytes], catalog: list[dict]) -> Path:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump({"documents": catalog}))
    return tmp_path


def _entry(path: str, **extra) -> dict:
    doc_id = path.replace(".", "-")
    return {
        "path": path,
        "doc_id": doc_id,
        "permission_set": ["everyone"],
        "trust_tier": "verified",
        **extra,
    }


def test_each_bad_file_kind_becomes_an_error_row_and_the_run_goes_on(tmp_path):
    files = {name: data for name, (data, _) in BAD_FILES.items()}
    files["good.md"] = b"# Good\n\nThis document is perfectly fine and has real content."
    files["good.pdf"] = _text_pdf("A PDF with a real sentence of text in it.")
    catalog = [_entry(name) for name in files]
    root = _corpus(tmp_path, files, catalog)
    config = ingestion.Config(max_file_bytes=10_000)
    outputs = ingestion.run(
        {"corpus_files": ingestion.snapshot_corpus(root, config.max_file_bytes)}, config
    )
    errors = {row["path"]: row for row in outputs["ingestion_errors"].to_pylist()}
    for name, (_, kind) in BAD_FILES.items():
        assert name in errors, f"{name} was skipped silently"
        assert errors[name]["error_kind"] == kind, (name, errors[name])
        assert errors[name]["message"]
    documents = {d["doc_id"] for d in outputs["documents"].to_pylist()}
    assert documents == {"good-md", "good-pdf"}
    assert outputs["chunks"].num_rows >= 2


def test_invalid_metadata_is_an_error_naming_the_field_and_the_doc_is_not_used(tmp_path):
    files = {"a.md": b"# A\n\nSome content here.", "b.md": b"# B\n\nOther content here."}
    catalog = [_entry("a.md", trust_tier="gold"), _entry("b.md")]
    root = _corpus(tmp_path, files, catalog)
    (root / "b.md.meta.yaml").write_text(
        "doc_id: b\npermission_set: [hr]\ntrust_tier: canonical\ncolour: red\n"
    )
    outputs = ingestion.run({"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config())
    errors = outputs["ingestion_errors"].to_pylist()
    assert {e["path"] for e in errors} == {"a.md", "b.md"}
    messages = " ".join(e["message"] for e in errors)
    assert "trust_tier" in messages and "colour" in messages
    assert outputs["documents"].num_rows == 0


def test_sidecar_metadata_overrides_the_catalog(tmp_path):
    root = _corpus(tmp_path, {"a.md": b"# A\n\nSome content here."}, [_entry("a.md")])
    (root / "a.md.meta.yaml").write_text(
        "doc_id: alpha\npermission_set: [hr]\ntrust_tier: canonical\n"
    )
    outputs = ingestion.run({"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config())
    document = outputs["documents"].to_pylist()[0]
    assert (document["doc_id"], document["permission_set"]) == ("alpha", ["hr"])


def test_a_file_without_metadata_is_ingested_with_a_warning(tmp_path):
    root = _corpus(tmp_path, {"orphan.md": b"# Orphan\n\nNo catalog entry for me."}, [])
    outputs = ingestion.run({"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config())
    errors = outputs["ingestion_errors"].to_pylist()
    assert [(e["path"], e["error_kind"], e["severity"]) for e in errors] == [
        ("orphan.md", "missing_metadata", "warning")
    ]
    assert outputs["documents"].to_pylist()[0]["trust_tier"] == "untrusted"


def test_a_folder_without_any_catalog_gets_citable_defaults_and_file_dates(tmp_path):
    (tmp_path / "notes.md").write_bytes(b"# Team notes\n\nThe review happens every March.")
    os.utime(tmp_path / "notes.md", (1_700_000_000, 1_700_000_000))  # 2023-11-14 UTC
    outputs = ingestion.run(
        {"corpus_files": ingestion.snapshot_corpus(tmp_path)}, ingestion.Config()
    )
    [document] = outputs["documents"].to_pylist()
    assert document["trust_tier"] == ingestion.Config().default_trust_tier == "verified"
    assert document["title"] == "Team notes"
    assert document["last_modified"].isoformat() == "2023-11-14"
    [warning] = outputs["ingestion_errors"].to_pylist()
    assert warning["error_kind"] == "missing_metadata" and "tier verified" in warning["message"]


def test_a_catalogued_corpus_snapshot_does_not_follow_file_dates(tmp_path):
    root = _corpus(tmp_path, {"a.md": b"# A\n\nSome content here."}, [_entry("a.md")])
    before = ingestion.snapshot_corpus(root)
    os.utime(root / "a.md", (1_000_000_000, 1_000_000_000))
    assert ingestion.snapshot_corpus(root).equals(before)  # same rows, so the same cache key
    assert ingestion.FILE_DATES_PATH not in before.column("path").to_pylist()


def test_cp1252_text_is_decoded_and_the_encoding_recorded(tmp_path):
    latin = "Preis: 49 \u20ac f\u00fcr M\u00fcller".encode("cp1252")
    root = _corpus(tmp_path, {"latin1.txt": latin}, [_entry("latin1.txt")])
    outputs = ingestion.run({"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config())
    assert "49 \u20ac f\u00fcr M\u00fcller" in outputs["documents"].to_pylist()[0]["text"]
    [row] = outputs["ingestion_errors"].to_pylist()
    assert (row["error_kind"], row["message"]) == ("encoding_detected", "decoded as cp1252")


def test_catalog_entry_without_file_is_reported(tmp_path):
    root = _corpus(tmp_path, {}, [_entry("ghost.md")])
    outputs = ingestion.run({"corpus_files": ingestion.snapshot_corpus(root)}, ingestion.Config())
    assert [e["error_kind"] for e in outputs["ingestion_errors"].to_pylist()] == ["missing_file"]
