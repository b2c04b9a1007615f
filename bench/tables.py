"""Tables as first-class chunks: questions whose answer sits in one table cell.

Generated at bench time: twelve tables of twenty invented entities (unique names and values, so
one cell answers each question; names share words, "Orion Vela van" and "Orion Lyra van") spread
over xlsx (two sheets), csv, pptx, html, docx, markdown and an e-mail (.eml) that carries its table
as a csv attachment, which is ingested as a document of its own. Each table is larger than a chunk,
so it is split into row groups that repeat the header. Each row is asked about one of its cells,
the columns taking turns ("What is the range in km of the Orion Vela van?"); it counts when the
answer holds the cell's value and one of its citations lies on that table row, and for the formats
with anchors when the citation's anchor names that row (slide row, sheet range, "table 1, row 7"
for html, docx and markdown). Target: >= 90 %.
"""

from __future__ import annotations

import csv
import io
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "tables"
DESCRIPTION = "generated tables in 7 formats: one-cell questions answered and cited to their row"
TARGET = 0.90
SEED = 17
ROWS_PER_TABLE = 20

# (table name, entity column, entity noun, [(column, unit, low, high)]): values are drawn unique.
TABLES = [
    (
        "Vehicles",
        "Vehicle",
        "van",
        [("Range in km", "", 150, 900), ("Payload in kg", "", 300, 3000)],
    ),
    (
        "Warehouses",
        "Warehouse",
        "depot",
        [("Floor area in m2", "", 1000, 90000), ("Staff", "", 100, 990)],
    ),
    ("Plans", "Plan", "plan", [("Monthly price", "€", 5, 300), ("Storage in GB", "", 10, 5000)]),
    ("Servers", "Server", "node", [("Memory in GB", "", 8, 1024), ("Price", "€", 1000, 20000)]),
    ("Courses", "Course", "course", [("Duration in hours", "", 100, 990), ("Fee", "€", 50, 3000)]),
    (
        "Vessels",
        "Vessel",
        "ship",
        [("Length in m", "", 20, 400), ("Displacement in t", "", 1000, 99000)],
    ),
    ("Kilns", "Kiln", "kiln", [("Max temperature", "°C", 600, 1400), ("Volume in l", "", 20, 900)]),
    (
        "Drones",
        "Drone",
        "drone",
        [("Range in m", "", 500, 9000), ("Payload in g", "", 100, 9000)],
    ),
    ("Bridges", "Bridge", "bridge", [("Span in m", "", 30, 1900), ("Toll in cents", "", 100, 990)]),
    ("Pumps", "Pump", "pump", [("Flow in l per min", "", 40, 4000), ("Head in m", "", 100, 990)]),
    (
        "Libraries",
        "Library",
        "library",
        [("Books", "", 1000, 90000), ("Reading seats", "", 20, 900)],
    ),
    (
        "Satellites",
        "Satellite",
        "satellite",
        [("Orbit in km", "", 300, 36000), ("Mass in kg", "", 50, 6000)],
    ),
]
FORMAT_OF = [
    "xlsx",
    "xlsx",
    "csv",
    "pptx",
    "html",
    "docx",
    "md",
    "eml",
    "pptx",
    "html",
    "docx",
    "md",
]
NAMES = [
    "Orion",
    "Altair",
    "Borealis",
    "Cygnus",
    "Draco",
    "Eridanus",
    "Fornax",
    "Gemini",
    "Hydra",
    "Indus",
    "Lyra",
    "Mensa",
    "Norma",
    "Octans",
    "Pavo",
    "Pyxis",
    "Reticulum",
    "Sagitta",
    "Scutum",
    "Taurus",
    "Vela",
    "Volans",
    "Aquila",
    "Carina",
    "Columba",
    "Corvus",
    "Crater",
    "Delphinus",
    "Dorado",
    "Grus",
    "Lacerta",
    "Lepus",
    "Lupus",
    "Musca",
    "Pictor",
    "Puppis",
    "Sextans",
    "Tucana",
    "Vulpecula",
    "Antlia",
    "Apus",
    "Caelum",
    "Chamaeleon",
    "Circinus",
    "Equuleus",
    "Horologium",
    "Monoceros",
    "Phoenix",
    "Serpens",
    "Telescopium",
    "Triangulum",
    "Aries",
    "Cancer",
    "Leo",
    "Libra",
    "Virgo",
    "Pisces",
    "Andromeda",
    "Perseus",
    "Cassiopeia",
    "Cepheus",
    "Auriga",
    "Bootes",
    "Hercules",
    "Ophiuchus",
    "Pegasus",
    "Centaurus",
    "Scorpius",
    "Capricornus",
    "Aquarius",
    "Mira",
    "Vega",
    "Rigel",
    "Deneb",
    "Sirius",
    "Polaris",
]


def build_tables(rng: random.Random) -> list[dict[str, Any]]:
    pairs = [f"{a} {b}" for a in NAMES[:20] for b in NAMES[20:40]]
    names = iter(rng.sample(pairs, len(pairs)))
    used: set[str] = set()
    tables = []
    for (title, key, noun, columns), kind in zip(TABLES, FORMAT_OF, strict=True):
        header = [key] + [c for c, _, _, _ in columns]
        rows = []
        for _ in range(ROWS_PER_TABLE):
            row = [f"{next(names)} {noun}"]
            for _, unit, low, high in columns:
                # unique in the whole corpus, so only its own cell holds the answer
                value = rng.randint(low, high)
                for _ in range(10_000):
                    if str(value) not in used:
                        break
                    value = rng.randint(low, high)
                else:
                    raise ValueError(f"{title}: too few distinct values in {low}..{high}")
                used.add(str(value))
                row.append(f"{unit}{value}" if unit in "€$" and unit else f"{value} {unit}".strip())
            rows.append(row)
        tables.append({"title": title, "kind": kind, "header": header, "rows": rows})
    return tables


def questions(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    asked = []
    for table in tables:
        for index, row in enumerate(table["rows"]):
            for column in (1 + index % (len(table["header"]) - 1),):
                name = table["header"][column]
                asked.append(
                    {
                        "question_id": f"{table['title'].lower()}-{index + 1}-{column}",
                        "question": f"What is the {name.lower()} of the {row[0]}?",
                        "table": table["title"],
                        "kind": table["kind"],
                        "row": index + 1,
                        "gold": row[column].split(" ")[0].lstrip("€$"),
                        "entity": row[0],
                    }
                )
    return asked


# ---------------------------------------------------------------- files


def write_files(tables: list[dict[str, Any]], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for table in tables:
        by_kind.setdefault(table["kind"], []).append(table)
    for kind, group in by_kind.items():
        for number, table in enumerate(group, start=1):
            if kind == "xlsx" and number > 1:
                continue  # one workbook, one sheet per table
            writer = WRITERS[kind]
            writer(group if kind == "xlsx" else table, folder / f"{kind}-{number}.{kind}")


def _xlsx(tables: list[dict[str, Any]], path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for table in tables:
        sheet = book.create_sheet(table["title"])
        sheet.append(table["header"])
        for row in table["rows"]:
            sheet.append(row)
    book.save(path)


def _csv(table: dict[str, Any], path: Path) -> None:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(table["header"])
    writer.writerows(table["rows"])
    path.with_name(f"{table['title'].lower()}.csv").write_text(out.getvalue())


def _pptx(table: dict[str, Any], path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Overview"
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = table["title"]
    rows = [table["header"], *table["rows"]]
    shape = slide.shapes.add_table(
        len(rows), len(rows[0]), Inches(0.5), Inches(1.5), Inches(9), Inches(4)
    )
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    deck.save(path)


def _html(table: dict[str, Any], path: Path) -> None:
    head = "".join(f"<th>{h}</th>" for h in table["header"])
    body = "".join(
        "<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in table["rows"]
    )
    path.write_text(
        f"<html><head><title>{table['title']}</title></head><body><h1>{table['title']}</h1>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></body></html>"
    )


def _docx(table: dict[str, Any], path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading(table["title"], level=1)
    rows = [table["header"], *table["rows"]]
    grid = document.add_table(rows=len(rows), cols=len(rows[0]))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    document.save(path)


def _md(table: dict[str, Any], path: Path) -> None:
    lines = [f"# {table['title']}", "", "| " + " | ".join(table["header"]) + " |"]
    lines.append("|" + "---|" * len(table["header"]))
    lines += ["| " + " | ".join(row) + " |" for row in table["rows"]]
    path.write_text("\n".join(lines) + "\n")


def _eml(table: dict[str, Any], path: Path) -> None:
    from email.message import EmailMessage

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(table["header"])
    writer.writerows(table["rows"])
    message = EmailMessage()
    message["From"] = "Fleet Office <fleet@example.org>"
    message["To"] = "Site Managers <sites@example.org>"
    message["Date"] = "Mon, 2 Nov 2026 10:30:00 +0100"
    message["Subject"] = f"{table['title']} list"
    message.set_content(f"The current {table['title'].lower()} list is attached.\n")
    message.add_attachment(
        out.getvalue().encode(), maintype="text", subtype="csv", filename=_attached_csv(table)
    )
    path.write_bytes(message.as_bytes())


def _attached_csv(table: dict[str, Any]) -> str:
    return f"{table['title'].lower()}.csv"


WRITERS = {
    "xlsx": _xlsx,
    "csv": _csv,
    "pptx": _pptx,
    "html": _html,
    "docx": _docx,
    "md": _md,
    "eml": _eml,
}


# ---------------------------------------------------------------- scoring


def _row_line(table: dict[str, Any], row: int) -> str:
    cells = table["rows"][row - 1]
    return "; ".join(f"{h}: {c}" for h, c in zip(table["header"], cells, strict=True)) + "."


def _expected_anchor(question: dict[str, Any], table: dict[str, Any]) -> str | None:
    """The label the citation must carry, for the formats with anchors."""
    width = len(table["header"])
    if question["kind"] == "xlsx":
        return f"{table['title']}!A{question['row'] + 1}:{chr(64 + width)}{question['row'] + 1}"
    if question["kind"] == "csv":
        name = f"{table['title'].lower()}.csv"
        return f"{name}!A{question['row'] + 1}:{chr(64 + width)}{question['row'] + 1}"
    if question["kind"] == "eml":  # the attached csv, a document of its own
        name = _attached_csv(table)
        return f"{name}!A{question['row'] + 1}:{chr(64 + width)}{question['row'] + 1}"
    if question["kind"] == "pptx":
        return f"slide 2, table row {question['row']}"
    if question["kind"] in ("html", "docx", "md"):
        return f"table 1, row {question['row']}"  # one table per file; rows under the header
    return None


def score(asked: list[dict], tables: dict[str, dict], answers: dict, texts: dict) -> list[dict]:
    from stages.formats.anchors import anchor_label

    rows = []
    for question in asked:
        table = tables[question["table"]]
        answer = answers[question["question_id"]]
        line = _row_line(table, question["row"])
        answered = answer["status"] == "answered"
        gold = re.compile(rf"(?<![\d.,]){re.escape(question['gold'])}(?![\d])")
        correct = answered and bool(gold.search(answer["answer"] or ""))
        on_row, anchored = False, None
        expected = _expected_anchor(question, table)
        for citation in answer["citations"] or []:
            text = texts.get(citation["doc_id"], "")
            start = text.find(line)
            if start >= 0 and start <= citation["char_start"] < citation["char_end"] <= start + len(
                line
            ):
                on_row = True
                if expected is not None:
                    anchored = anchor_label(citation["anchor"]) == expected
        rows.append(
            {
                "question_id": question["question_id"],
                "kind": question["kind"],
                "answered": answered,
                "correct": correct,
                "cited_row": on_row,
                "anchor_ok": anchored,
                "ok": correct and on_row and anchored is not False,
            }
        )
    return rows


def run(results_dir: Path | None = None, **_: Any) -> dict[str, Any]:
    from flows.executor import run_stages
    from flows.pipeline_config import load_config
    from stages import contracts

    rng = random.Random(SEED)
    tables = build_tables(rng)
    asked = questions(tables)
    with tempfile.TemporaryDirectory(prefix="bench-tables-") as tmp:
        work = Path(tmp)
        write_files(tables, work / "corpus")
        config = load_config(
            common.ROOT / "configs" / "pipeline.yaml",
            {
                "corpus": str(work / "corpus"),
                "store": str(work / "store"),
                "runs_dir": str(work / "runs"),
            },
        )
        records = [
            {
                "question_id": q["question_id"],
                "question": q["question"],
                "principal": "employee",
                "query_type": "general",
            }
            for q in asked
        ]
        started = time.perf_counter()
        result = run_stages(config, contracts.from_rows(records, "questions"))
        seconds = time.perf_counter() - started
        store = config.artifact_store()
        documents = store.read_table(result.refs["ingestion"], "documents").to_pylist()
        errors = store.read_table(result.refs["ingestion"], "ingestion_errors").to_pylist()
    answers = {a["question_id"]: a for a in result.final_answers.to_pylist()}
    texts = {d["doc_id"]: d["text"] for d in documents}
    rows = score(asked, {t["title"]: t for t in tables}, answers, texts)
    by_kind = {}
    for kind in dict.fromkeys(FORMAT_OF):
        members = [r for r in rows if r["kind"] == kind]
        by_kind[kind] = {
            "questions": len(members),
            "ok": round(sum(r["ok"] for r in members) / len(members), 3),
            "correct": round(sum(r["correct"] for r in members) / len(members), 3),
            "cited_row": round(sum(r["cited_row"] for r in members) / len(members), 3),
            "anchor_names_row": round(
                sum(r["anchor_ok"] is True for r in members) / len(members), 3
            ),
        }
    total = len(rows)
    payload = {
        "status": "ok",
        "questions": total,
        "tables": len(tables),
        "documents": len(documents),
        "ingestion_errors": [e for e in errors if e["severity"] == "error"],
        "answered": round(sum(r["answered"] for r in rows) / total, 3),
        "correct": round(sum(r["correct"] for r in rows) / total, 3),
        "cited_row": round(sum(r["cited_row"] for r in rows) / total, 3),
        "ok": round(sum(r["ok"] for r in rows) / total, 3),
        "target": TARGET,
        "by_format": by_kind,
        "failures": [r for r in rows if not r["ok"]][:20],
        "pipeline_s": round(seconds, 1),
        "runtime_s": round(seconds, 1),
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    met = "met" if result["ok"] >= result["target"] else "NOT met"
    kinds = ", ".join(f"{k} {v['ok']:.0%}" for k, v in result["by_format"].items())
    return (
        f"{result['questions']} one-cell questions over {result['tables']} generated tables "
        f"({result['documents']} files): answered {result['answered']:.1%}, answer holds the cell "
        f"{result['correct']:.1%}, cites its row {result['cited_row']:.1%}; both, with the right "
        f"anchor where the format has one: {result['ok']:.1%} (target >= {result['target']:.0%}: "
        f"{met}). By format: {kinds}. Pipeline {result['pipeline_s']} s."
    )
