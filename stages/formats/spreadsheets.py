"""Spreadsheets: .xlsx with openpyxl (saved values only) and .csv with the stdlib csv module.

One section per sheet (a .csv is one sheet named after the file). A sheet's blocks of rows,
separated by blank rows, are tables; a first row of text labels is their header. Anchors:
{"sheet": name, "range": "A4:C4"} per row, the group's range on the table block. A formula whose
value was never saved (a file written by a program that does not calculate) is left empty and
reported as a warning: the value is never computed or guessed here. A .csv whose columns are a
ticket export's (stages.formats.tickets) is read as tickets.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Iterable
from typing import Any

from stages.common.text import normalize_text
from stages.formats import Block, ParseError, ReadOptions, tickets
from stages.formats.anchors import column_letter
from stages.formats.archive import check_zip
from stages.formats.tables import table_blocks

CSV_DELIMITERS = ",;\t|"
CURRENCY_RE = re.compile(r"[€$£¥]")
DECIMALS_RE = re.compile(r"0\.(0+)")
SHOWN_FORMULAS = 5  # cells named per sheet in the warning


def read(data: bytes, options: ReadOptions) -> list[Block]:
    if options.path.lower().endswith(".csv"):
        return read_csv(data, options)
    return read_xlsx(data, options)


# ---------------------------------------------------------------- csv


def csv_rows(text: str) -> list[list[str]]:
    """The rows of a CSV text, its dialect sniffed; an unclosed quote is an error."""
    try:
        dialect: Any = csv.Sniffer().sniff(text[:65_536], delimiters=CSV_DELIMITERS)
    except csv.Error:
        dialect = csv.excel
    try:
        return [
            [_cell_text(c) for c in row]
            for row in csv.reader(io.StringIO(text), dialect, strict=True)
        ]
    except csv.Error as exc:
        raise ParseError("parse_error", f"malformed CSV: {exc}") from exc


def read_csv(data: bytes, options: ReadOptions) -> list[Block]:
    rows = csv_rows(options.text(data))
    header = next((row for row in rows if any(row)), [])
    if tickets.is_ticket_header(header):
        return tickets.read_table_rows(rows, options)
    name = options.path.rsplit("/", 1)[-1] or "sheet"
    options.title_hint = options.stem or None
    grid = [(number, row) for number, row in enumerate(rows, start=1)]
    blocks = sheet_blocks(name, grid, options.chunk_size)
    if not blocks:
        return []
    return [Block("heading", options.stem or name, None, depth=1, anchor={"sheet": name}), *blocks]


# ---------------------------------------------------------------- xlsx


def read_xlsx(data: bytes, options: ReadOptions) -> list[Block]:
    check_zip(data, "xl/workbook.xml", ".xlsx", options.max_file_bytes)
    import openpyxl

    try:
        values = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
        formulas = openpyxl.load_workbook(io.BytesIO(data), data_only=False, read_only=True)
    except (KeyError, ValueError, TypeError, OSError) as exc:
        raise ParseError(
            "parse_error", f"not a readable .xlsx: {type(exc).__name__}: {exc}"
        ) from exc
    title = normalize_text(values.properties.title or "") if values.properties else ""
    options.title_hint = title or options.stem or None
    blocks: list[Block] = []
    budget = options.max_text_chars
    for sheet in values.worksheets:
        grid, unsaved = _sheet_grid(sheet, formulas[sheet.title], budget)
        budget -= sum(len(c) for _, row in grid for c in row)
        if unsaved:
            options.warn("formula_without_value", _unsaved_message(sheet.title, unsaved))
        sheet_tables = sheet_blocks(sheet.title, grid, options.chunk_size)
        if sheet_tables:
            anchor = {"sheet": sheet.title}
            blocks += [Block("heading", sheet.title, None, depth=1, anchor=anchor), *sheet_tables]
    formulas.close()
    return blocks


def _sheet_grid(sheet: Any, formula_sheet: Any, budget: int) -> tuple[list, list[str]]:
    """(row number, cell texts) for each row, merged cells filled from their first cell, and
    the cells holding a formula without a saved value."""
    merged = {}
    for cells in sheet.merged_cells.ranges:
        value = sheet.cell(cells.min_row, cells.min_col)
        for row in range(cells.min_row, cells.max_row + 1):
            for column in range(cells.min_col, cells.max_col + 1):
                merged[(row, column)] = value
    formula_cells = {
        cell.coordinate
        for row in formula_sheet.iter_rows()
        for cell in row
        if isinstance(cell.value, str) and cell.value.startswith("=")
    }
    grid, unsaved, chars = [], [], 0
    for row in sheet.iter_rows():
        texts = []
        for cell in row:
            source = merged.get((cell.row, cell.column), cell)
            if source.value is None and cell.coordinate in formula_cells:
                unsaved.append(cell.coordinate)
            texts.append(format_cell(source.value, source.number_format))
        chars += sum(len(t) for t in texts)
        if chars > budget:
            raise ParseError("too_large", f"sheet {sheet.title!r} holds more text than the budget")
        if texts:
            grid.append((row[0].row, texts))
    return grid, unsaved


def _unsaved_message(sheet: str, cells: list[str]) -> str:
    shown = ", ".join(cells[:SHOWN_FORMULAS])
    more = f" and {len(cells) - SHOWN_FORMULAS} more" if len(cells) > SHOWN_FORMULAS else ""
    return (
        f"{sheet}!{shown}{more}: formula without a saved value (the file was saved without "
        "calculating); left empty, not computed"
    )


def format_cell(value: Any, number_format: str = "General") -> str:
    """A cell as the spreadsheet shows it, near enough: dates as ISO, percentages, currency."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, int | float):
        return _number(value, number_format or "General")
    return _cell_text(str(value))


def _number(value: float, number_format: str) -> str:
    decimals = DECIMALS_RE.search(number_format)
    places = len(decimals.group(1)) if decimals else None
    if "%" in number_format:
        value = value * 100
    if places is not None:
        text = f"{value:,.{places}f}" if "," in number_format else f"{value:.{places}f}"
    elif float(value).is_integer():
        text = f"{int(value):,}" if "," in number_format else str(int(value))
    else:
        text = f"{value:.10g}"
    if "%" in number_format:
        return text + "%"
    currency = CURRENCY_RE.search(number_format)
    if currency:
        digit = re.search(r"[0#]", number_format)
        before = digit is None or currency.start() < digit.start()
        return currency.group() + text if before else f"{text} {currency.group()}"
    return text


def _cell_text(text: str) -> str:
    return " ".join(normalize_text(text).split())


# ---------------------------------------------------------------- sheet -> blocks


def sheet_blocks(name: str, grid: Iterable[tuple[int, list[str]]], max_chars: int) -> list[Block]:
    """Table blocks for each run of non-blank rows; a header when the first row is labels."""
    blocks = []
    for region in _regions(grid):
        blocks.extend(_region_blocks(name, region, max_chars))
    return blocks


def _regions(grid: Iterable[tuple[int, list[str]]]) -> list[list[tuple[int, list[str]]]]:
    regions: list[list[tuple[int, list[str]]]] = [[]]
    for number, row in grid:
        if any(row):
            regions[-1].append((number, row))
        elif regions[-1]:
            regions.append([])
    return [r for r in regions if r]


def _region_blocks(name: str, region: list[tuple[int, list[str]]], max_chars: int) -> list[Block]:
    used = [i for _, row in region for i, cell in enumerate(row) if cell]
    first_col, last_col = min(used), max(used)
    numbers = [number for number, _ in region]
    width = last_col + 1 - first_col
    rows = [row[first_col : last_col + 1] for _, row in region]
    rows = [row + [""] * (width - len(row)) for row in rows]
    has_header = len(rows) > 1 and is_header(rows[0])
    header, body = (rows[0], rows[1:]) if has_header else (None, rows)
    body_numbers = numbers[1:] if has_header else numbers
    left, right = column_letter(first_col + 1), column_letter(last_col + 1)

    def row_number(index: int) -> int:
        return numbers[0] if index == 0 else body_numbers[index - 1]

    def row_anchor(index: int) -> dict[str, Any]:
        return {"sheet": name, "range": f"{left}{row_number(index)}:{right}{row_number(index)}"}

    def group_anchor(first: int, last: int) -> dict[str, Any]:
        return {"sheet": name, "range": f"{left}{row_number(first)}:{right}{row_number(last)}"}

    return table_blocks(
        header, body, None, max_chars, row_anchor=row_anchor, group_anchor=group_anchor
    )


def is_header(row: list[str]) -> bool:
    """A first row of distinct text labels (no figures, no dates) is a header."""
    labels = [cell for cell in row if cell]
    if len(labels) < max(1, len(row) // 2) or len(set(labels)) < len(labels):
        return False
    return not any(_is_value(cell) for cell in labels)


def _is_value(cell: str) -> bool:
    return bool(re.fullmatch(r"[-+€$£¥]?\s?[\d.,:/-]+\s?%?[€$£¥]?", cell))
