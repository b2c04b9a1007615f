"""Claims over table rows, checked structurally: the row the claim is about, cell by cell.

Ingestion writes a table as one citable line per row, each cell labelled with its header
(`stages/formats/tables.py`): a header line "Plan | Price", then "Plan: Enterprise; Price: €49.".
`rows_of` reads such lines of an evidence text back into records (header -> cell text, with the
cell's offsets in the text). `check_claim` then decides a claim over them:

- the rows it is about: a cell value that tells its row apart from the others of its column
  ("Enterprise"), written in the claim (across case and separators); where the claim names
  several columns' values, those of the leftmost column name the rows (the key column). A claim
  that names no row (a short answer, "€49") is about the row its question names, when that is one;
- every value it states (numbers with units and currencies, dates, names of another column) is
  compared, normalised with `stages.common.values`, with the cells of that row: the cell under
  the header the claim names next to the value, else any cell of the row;
- `supported`: at least one value stated, each equal to a cell of its row, nothing negated,
  compared or approximated, and every other word a header, a cell word, a word of the question or
  a connective ("the Enterprise plan costs €49");
- `contradicted`: a value differs from the row's cell under the header the claim names, or it is
  the value of another row (Basic's price given for Enterprise), or (no other word unexplained)
  it differs from the row's one cell of its currency or unit;
- `open` otherwise: the claim checker's usual path (lexical / judge) decides, unchanged.

Pure functions, no model; an evidence text with no row line costs one substring test.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from stages.common import values
from stages.common.text import NEGATION_RE, STOPWORDS, stem, strip_markers

VERSION = "1.0.0"
NAME = "table_rows"

LABEL_RE = re.compile(r"(?P<header>[^:;|\n]{1,60}?):\s+(?P<value>\S.*)", re.DOTALL)
MIN_LABELLED = 2  # a line with fewer labelled cells is prose ("Note: see below.")
NAME_MIN_CHARS = 2
HEADER_BEFORE = 40  # a value at most this far after the header it is given for ("price is €49")
HEADER_AFTER = 20  # or this far before it ("49 GB of storage")
# currency codes written before the number ("EUR 49.00"): `values.quantities` reads symbols there
CODE_BEFORE_RE = re.compile(
    r"\b(" + "|".join(sorted(values.CURRENCY_CODES, key=len, reverse=True)) + r")\s?$",
    re.IGNORECASE,
)
# a comparison, a range or an approximation states no cell's value: the judge decides
COMPARE_RE = re.compile(
    r"\b(more|less|fewer|over|under|above|below|than|least|most|up to|nearly|about|approximately|"
    r"around|almost|roughly|exceeds?|exceeding|higher|lower|cheaper|dearer|bigger|smaller|"
    r"larger|twice|half|double|triple|between|ranging|per cent of|times)\b",
    re.IGNORECASE,
)
PERIOD_OVER_RE = re.compile(r"\b(year|month|quarter|week|day) over \1\b", re.IGNORECASE)
_CONNECTIVES = (
    "a an the is are was were be been being has have had with and or of for to in on at by as "
    "its it this that these those there their which who whose costs cost costing priced price "
    "prices charged charges charge pay pays paid amounts amount comes come stands stood "
    "according table row rows column columns listed lists list shows show shown gives given "
    "states stated says said reports reported value values figure total each per "
    "currently current set entry record"
)
CONNECTIVES = frozenset(_CONNECTIVES.split())
UNIT_WORDS = frozenset(
    [*values.CURRENCY_CODES, *values.UNITS, "degrees", "degree", "per", "cent", "percent"]
)


@dataclass(frozen=True)
class Cell:
    header: str | None
    text: str  # the cell's value as written
    start: int  # the value's offsets in the evidence text
    end: int


@dataclass(frozen=True)
class Row:
    span: int  # index of the evidence text it was read from
    cells: tuple[Cell, ...]
    start: int  # the row line's offsets in that text
    end: int

    def key(self) -> str:
        return self.cells[0].text

    def cell(self, header: str | None) -> Cell | None:
        return next((c for c in self.cells if header and c.header == header), None)


@dataclass
class Finding:
    element: str  # the claim's text of the value
    relation: str  # matches | contradicts
    row: Row
    cell: Cell  # the cell it equals, or the one it contradicts
    why: str = ""  # for a contradiction: "under the header it names", "is <row>'s value"
    other: Row | None = None  # the row whose value it is, when another's

    def as_row(self) -> dict[str, Any]:
        return {
            "element": self.element,
            "relation": self.relation,
            "span": self.row.span,
            "row": self.row.key(),
            "header": self.cell.header,
            "value": self.cell.text,
            "char_start": self.cell.start,
            "char_end": self.cell.end,
            "other_row": self.other.key() if self.other else None,
        }


@dataclass
class Verdict:
    status: str  # supported | contradicted | open
    rows: list[Row] = field(default_factory=list)
    matched: list[Finding] = field(default_factory=list)
    contradicted: list[Finding] = field(default_factory=list)
    residual: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    def reasons(self, names: list[str] | None = None) -> list[str]:
        """One line per finding, naming the evidence (`names`: the spans' ids), row and header."""

        def where(f: Finding) -> str:
            name = names[f.row.span] if names and f.row.span < len(names) else f"span {f.row.span}"
            return f"{name} chars {f.cell.start}-{f.cell.end}"

        if self.status == "contradicted":
            return [
                f"table row: '{f.element}' contradicts row '{f.row.key()}', "
                f"{f.cell.header or 'cell'} = '{f.cell.text}' ({where(f)}){f.why}"
                for f in self.contradicted
            ]
        if self.status == "supported":
            return [
                f"table row: '{f.element}' = row '{f.row.key()}', "
                f"{f.cell.header or 'cell'} '{f.cell.text}' ({where(f)})"
                for f in self.matched
            ]
        return []

    def as_row(self) -> dict[str, Any]:
        return {
            "rule": NAME,
            "version": VERSION,
            "status": self.status,
            "rows": [r.key() for r in self.rows],
            "matched": [f.as_row() for f in self.matched],
            "contradicted": [f.as_row() for f in self.contradicted],
            "residual": self.residual,
            "unmatched": self.unmatched,
        }


@dataclass(frozen=True)
class TableCheck:
    """The rule's entry among a claim's checks (same fields as groundedness.CheckResult)."""

    score: float
    reasons: list[str] = field(default_factory=list)
    critical: bool = True
    name: str = NAME
    version: str = VERSION


# ---------------------------------------------------------------- reading rows


def _cells(line: str, offset: int) -> list[Cell]:
    """The cells of one 'Header: value; Header: value.' line ([] when it is not one)."""
    body = line.rstrip()
    if body.endswith("."):
        body = body[:-1]  # the row's full stop (a value ending in one has no other added)
    cells: list[Cell] = []
    position = 0
    for part in body.split("; "):
        start = offset + position
        position += len(part) + 2
        match = LABEL_RE.fullmatch(part.strip())
        lead = len(part) - len(part.lstrip())
        if match is None:
            if not cells or not part.strip():
                return []
            value = part.strip()
            cells.append(Cell(None, value, start + lead, start + lead + len(value)))
            continue
        value = match.group("value").strip()
        begin = start + lead + match.start("value")
        cells.append(Cell(match.group("header").strip(), value, begin, begin + len(value)))
    if sum(c.header is not None for c in cells) < MIN_LABELLED:
        return []
    return cells


@functools.lru_cache(maxsize=4096)
def rows_of(text: str, span: int = 0) -> tuple[Row, ...]:
    """The row lines of an evidence text as records, with their offsets in it. A header line
    ("Plan | Price") names the columns of the rows under it: a row whose labels are not all
    among them is not read as one of its rows (but still as a labelled line)."""
    if ": " not in text or "; " not in text:
        return ()
    found: list[Row] = []
    offset = 0
    for line in text.split("\n"):
        cells = _cells(line, offset)
        if cells:
            found.append(Row(span, tuple(cells), offset, offset + len(line)))
        offset += len(line) + 1
    return tuple(found)


# ---------------------------------------------------------------- values of cells and claims


def _quantities(text: str) -> list[values.Quantity]:
    """`values.quantities` with a currency code written before the number ("EUR 49.00")."""
    found = []
    for q in values.quantities(text):
        code = CODE_BEFORE_RE.search(text[: q.start])
        if q.currency is None and code:
            q = values.Quantity(
                q.value,
                q.decimals,
                q.written,
                q.unit,
                values.CURRENCY_CODES[code.group(1).lower()],
                code.start(1),
                q.end,
                q.alt,
            )
        found.append(q)
    return found


@functools.lru_cache(maxsize=16384)
def _cell_quantities(text: str) -> tuple[values.Quantity, ...]:
    return tuple(_quantities(text))


@functools.lru_cache(maxsize=16384)
def _cell_moments(text: str) -> tuple[values.Moment, ...]:
    return tuple(values.moments(text))


def _is_text(cell: Cell) -> bool:
    """A name-like cell: no number and no date in it."""
    return not _cell_quantities(cell.text) and not _cell_moments(cell.text)


def same_quantity(claimed: values.Quantity, cell: values.Quantity) -> bool:
    """The claim's number states the cell's: equal across writings, in the same currency and
    unit where both name one."""
    if claimed.currency and cell.currency and claimed.currency != cell.currency:
        return False
    if claimed.unit and cell.unit and claimed.unit != cell.unit:
        return False
    if claimed.currency and cell.unit or claimed.unit and cell.currency:
        return False
    return any(values.same_number(claimed, v) for v in cell.readings())


def _holds_number(cell: Cell, claimed: values.Quantity) -> bool:
    return any(same_quantity(claimed, q) for q in _cell_quantities(cell.text))


def _holds_moment(cell: Cell, claimed: values.Moment) -> bool:
    return any(values.same_moment(claimed, m) for m in _cell_moments(cell.text))


def _header_stems(header: str | None) -> tuple[str, ...]:
    if not header:
        return ()
    words = [w for w in values.key_words(header) if w not in STOPWORDS and w not in UNIT_WORDS]
    return tuple(stem(w) for w in words)


def _said(word: str, stems: set[str]) -> bool:
    return word in stems or (len(word) >= 3 and any(s.startswith(word) for s in stems))


def _header_mentions(
    header: str | None, tokens: list[tuple[str, int, int]]
) -> list[tuple[int, int]]:
    """Where the claim names a header (all of its words): the span of each mention of its last
    word; [] when it does not name it."""
    own = _header_stems(header)
    stems = {stem(t) for t, _, _ in tokens}
    if not own or not all(_said(w, stems) for w in own):
        return []
    last = own[-1]
    return [
        (s, e)
        for t, s, e in tokens
        if stem(t) == last or (len(last) >= 3 and stem(t).startswith(last))
    ]


# ---------------------------------------------------------------- the claim


@dataclass
class _Hit:
    row: Row
    column: int
    start: int
    end: int


def _name_hits(rows: list[Row], tokens: list[tuple[str, int, int]]) -> list[_Hit]:
    """The name-like cells written in a text; a hit inside a longer one ("Pro" in "Pro Plus")
    is dropped."""
    hits = []
    for row in rows:
        for column, cell in enumerate(row.cells):
            key = values.ident_key(cell.text)
            if len(key) < NAME_MIN_CHARS or key in STOPWORDS or not _is_text(cell):
                continue
            for start, end in values.find_ident(cell.text, tokens):
                hits.append(_Hit(row, column, start, end))
    return [
        h
        for h in hits
        if not any(
            o.start <= h.start and h.end <= o.end and (o.end - o.start) > (h.end - h.start)
            for o in hits
        )
    ]


def _distinct(hit: _Hit, rows: list[Row]) -> bool:
    """The hit's cell tells its row apart: no other row has that value under that header."""
    cell = hit.row.cells[hit.column]
    key = values.ident_key(cell.text)
    return not any(
        row is not hit.row
        and any(c.header == cell.header and values.ident_key(c.text) == key for c in row.cells)
        for row in rows
    )


def _named_rows(hits: list[_Hit], rows: list[Row]) -> list[_Hit]:
    """The hits that name rows: distinct values of the leftmost column among those written."""
    naming = [h for h in hits if _distinct(h, rows)]
    if not naming:
        return []
    column = min(h.column for h in naming)
    return [h for h in naming if h.column == column]


def check_claim(claim: str, spans: list[str], question: str = "") -> Verdict | None:
    """The structural verdict of a claim over the table rows of its evidence texts; None when
    they hold no row line (the claim takes the usual path, at the cost of a substring test)."""
    rows = [row for index, text in enumerate(spans) for row in rows_of(text, index)]
    if not rows:
        return None
    text = strip_markers(claim)
    if NEGATION_RE.search(text) or COMPARE_RE.search(PERIOD_OVER_RE.sub(" ", text)):
        return Verdict("open")
    tokens = values.tokens_with_spans(text)
    hits = _name_hits(rows, tokens)
    keys = _named_rows(hits, rows)
    by_question = not keys
    if keys:
        named = list(dict.fromkeys(h.row for h in keys))
    else:  # a short answer: the row its question names
        asked = _named_rows(_name_hits(rows, values.tokens_with_spans(question)), rows)
        named = list(dict.fromkeys(h.row for h in asked))
        if len(named) != 1:
            return Verdict("open")
    key_spans = [(h.start, h.end) for h in keys]
    verdict = Verdict("open", rows=named)
    covered: list[tuple[int, int]] = list(key_spans)
    pending_typed: list[tuple[str, Finding]] = []  # contradictions that need no residual word

    def contradict(found: Finding, strong: bool) -> None:
        """A contradiction stands at once when it is strong (a value with its unit, currency or
        type, given for a row the claim names); otherwise only if no other word of the claim is
        unexplained (a bare "24" of "24/7 support" is no cell's value)."""
        if strong and not by_question:
            verdict.contradicted.append(found)
        else:
            pending_typed.append((found.element, found))

    def row_at(start: int) -> Row:
        """The named row a value at `start` is given for: the nearest key written before it."""
        before = [h for h in keys if h.end <= start]
        if before:
            return max(before, key=lambda h: h.end).row
        after = [h for h in keys if h.start >= start]
        return min(after, key=lambda h: h.start).row if after else named[0]

    def named_cell(row: Row, start: int, end: int, kind: Any) -> Cell | None:
        """The cell of `row` under the header the claim names next to the value: the nearest
        named before it ("Range in km: 616; Payload …"), else just after it ("49 GB of
        storage"), else the only header of the value's kind it names."""
        best: tuple[int, int, Cell] | None = None
        for cell in row.cells:
            if not kind(cell):
                continue
            for s, e in _header_mentions(cell.header, tokens):
                after = int(e > start)
                gap = s - end if after else start - e
                limit = HEADER_AFTER if after else HEADER_BEFORE
                if 0 <= gap <= limit and (best is None or (after, gap) < best[:2]):
                    best = (after, gap, cell)
        if best:
            return best[2]
        # farther off ("the range in km of the Orion Vela van is 450"): the one header of its
        # kind the claim names
        anywhere = [c for c in row.cells if kind(c) and _header_mentions(c.header, tokens)]
        return anywhere[0] if len(anywhere) == 1 else None

    def decide(
        element: str, start: int, end: int, holds: Any, kind: Any, typed: Any, strong: bool
    ) -> None:
        row = row_at(start)
        covered.append((start, end))
        cell = named_cell(row, start, end, kind)
        if cell is not None:
            if holds(cell):
                verdict.matched.append(Finding(element, "matches", row, cell))
            else:
                other = _holder(rows, row, cell.header, holds)
                why = f", the header the claim names, holds no '{element}'"
                if other is not None:
                    why += f"; '{element}' is row '{other.key()}''s {cell.header}"
                contradict(Finding(element, "contradicts", row, cell, why, other), True)
            return
        same = next((c for c in row.cells if kind(c) and holds(c)), None)
        if same is not None:
            verdict.matched.append(Finding(element, "matches", row, same))
            return
        for other in rows:
            if other is row or not _same_table(other, row):
                continue
            theirs = next((c for c in other.cells if kind(c) and holds(c)), None)
            mine = row.cell(theirs.header) if theirs is not None else None
            if mine is not None:
                why = f"; '{element}' is row '{other.key()}''s {theirs.header}"
                contradict(Finding(element, "contradicts", row, mine, why, other), strong)
                return
        candidates = [c for c in row.cells if kind(c) and typed(c)]
        if len(candidates) == 1:
            why = f", the row's only such cell, holds no '{element}'"
            contradict(Finding(element, "contradicts", row, candidates[0], why), False)
            return
        verdict.unmatched.append(element)

    claimed_moments = [m for m in values.moments(text) if not _overlaps(key_spans, m.start, m.end)]
    for moment in claimed_moments:
        decide(
            text[moment.start : moment.end],
            moment.start,
            moment.end,
            lambda c, m=moment: _holds_moment(c, m),
            lambda c: bool(_cell_moments(c.text)),
            lambda c: True,
            True,
        )
    for quantity in _quantities(text):
        if _overlaps(key_spans, quantity.start, quantity.end):
            continue
        if _overlaps([(m.start, m.end) for m in claimed_moments], quantity.start, quantity.end):
            continue
        if not quantity.currency and not quantity.unit and _in_header(text, quantity, named):
            continue  # "Top 10 ..." of a header the claim repeats
        decide(
            text[quantity.start : quantity.end],
            quantity.start,
            quantity.end,
            lambda c, q=quantity: _holds_number(c, q),
            lambda c: bool(_cell_quantities(c.text)),
            lambda c, q=quantity: _same_kind(q, c),
            bool(quantity.currency or quantity.unit),
        )
    # names of another column ("managed by Alice"): the named row's, or another row's
    for hit in hits:
        if any(h is hit for h in keys) or _overlaps(covered, hit.start, hit.end):
            continue
        element = text[hit.start : hit.end]
        cell = hit.row.cells[hit.column]
        covered.append((hit.start, hit.end))
        if hit.row in named:
            verdict.matched.append(Finding(element, "matches", hit.row, cell))
            continue
        row = row_at(hit.start)
        mine = row.cell(cell.header)
        if mine is not None and values.ident_key(mine.text) != values.ident_key(cell.text):
            why = f"; '{element}' is row '{hit.row.key()}''s {cell.header}"
            contradict(Finding(element, "contradicts", row, mine, why, hit.row), True)
        elif mine is None:
            verdict.unmatched.append(element)
    verdict.residual = _residual(text, tokens, covered, named, question)
    if not verdict.residual:
        verdict.contradicted += [f for _, f in pending_typed]
    elif pending_typed:
        verdict.unmatched += [e for e, _ in pending_typed]
    if verdict.contradicted:
        verdict.status = "contradicted"
    elif verdict.matched and not verdict.unmatched and not verdict.residual:
        verdict.status = "supported"
    return verdict


def _same_table(a: Row, b: Row) -> bool:
    """Rows of one table: read from one text, or under the same headers (a retriever returns a
    table's rows as separate evidence items)."""
    return a.span == b.span or [c.header for c in a.cells] == [c.header for c in b.cells]


def _holder(rows: list[Row], row: Row, header: str | None, holds: Any) -> Row | None:
    """Another row of the same table whose cell under `header` holds the value."""
    for other in rows:
        if other is row or not _same_table(other, row):
            continue
        cell = other.cell(header)
        if cell is not None and holds(cell):
            return other
    return None


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e in spans)


def _same_kind(claimed: values.Quantity, cell: Cell) -> bool:
    """A cell whose number has the claim's currency or unit (none: no cell is its kind)."""
    if not claimed.currency and not claimed.unit:
        return False
    return any(
        (claimed.currency and q.currency == claimed.currency)
        or (claimed.unit and q.unit == claimed.unit)
        for q in _cell_quantities(cell.text)
    )


def _in_header(text: str, quantity: values.Quantity, rows: list[Row]) -> bool:
    number = text[quantity.start : quantity.end]
    return any(number in (c.header or "") for row in rows for c in row.cells)


def _residual(
    text: str,
    tokens: list[tuple[str, int, int]],
    covered: list[tuple[int, int]],
    rows: list[Row],
    question: str,
) -> list[str]:
    """The claim's words no value, header, cell, question word or connective accounts for."""
    known = set(CONNECTIVES) | UNIT_WORDS
    header_stems: set[str] = set()
    for row in rows:
        for cell in row.cells:
            known |= {t for t, _, _ in values.tokens_with_spans(cell.text)}
            header_stems |= {stem(w) for w in values.key_words(cell.header or "")}
    known |= {t for t, _, _ in values.tokens_with_spans(question)}
    question_stems = {stem(t) for t, _, _ in values.tokens_with_spans(question)}
    return [
        t
        for t, s, e in tokens
        if not _overlaps(covered, s, e)
        and t not in STOPWORDS
        and t not in known
        and stem(t) not in header_stems
        and stem(t) not in question_stems
        and not any(len(h) >= 3 and stem(t).startswith(h) for h in header_stems)
        and not t.isdigit()
    ]
