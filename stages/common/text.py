"""Text helpers shared by indexing, retrieval, evidence and guardrails.

One tokenizer for index and query sides: if they differed, BM25 would silently miss terms.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

import snowballstemmer

# A word that negates what its sentence states (shared by the guardrails' polarity check and
# rerank's check that a negated question has negated evidence).
NEGATION_RE = re.compile(
    r"\b(not|no|never|none|neither|nor|without|cannot|nothing|nobody|unavailable|excluded?)\b|n't\b",
    re.IGNORECASE,
)
TOKEN_RE = re.compile(r"[0-9]+(?:[.,:][0-9]+)*%?|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "per",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "about",
        "any",
        "all",
        "also",
        "may",
        "might",
        "much",
        "many",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "very",
        "just",
    ]
)

# A sentence ends at . ! ? followed by whitespace, or at a line break; decimals ("99.9") survive.
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9€$£])|\n+")
# A period after these (or after one capital letter, an initial: "George W. Bush") does not end a
# sentence: "the St. Lawrence", "Mt. Everest", "Dr. Lee", "Jan. 5" stay whole, so a span quotes
# the whole fact. Words that often end a sentence ("etc.", "Inc.", "U.S.") are left out.
_ABBREVIATED = "st mt ft mr mrs ms dr prof sr jr gen gov col capt lt sgt rev fr vs e.g i.e"
# street words of addresses in other languages ("ul. Floriańska 15", "Hauptstr. 5"), which
# practically never end an English sentence
_STREETS = "ul str"
_MONTHS = "jan feb mar apr jun jul aug sep sept oct nov dec"
ABBREVIATIONS = frozenset(f"{_ABBREVIATED} {_STREETS} fig figs approx {_MONTHS}".split())
# A table row as `stages.formats.tables.row_line` writes it, "City: Krakow; Address: ul.
# Floriańska 15; Head count: 87": a whole line of at least two "header: value" cells joined by
# "; ", the first header without a sentence end (so "Billed monthly. Plan: A; Price: 5." is prose
# and then a row). A row is one unit of evidence, so nothing inside it (an abbreviation in any
# language) ends a sentence.
TABLE_ROW_RE = re.compile(r"[^\n;:.!?]{1,80}: [^\n;]*(?:; [^\n;:]{1,80}: [^\n;]*)+")
INITIAL_RE = re.compile(r"\b[A-Z][a-z]+ (?:[A-Z]\. )*[A-Z]\.$")
# leading initials, "J. A. Hobson": one followed by another, or the last of a run of them
NEXT_INITIAL_RE = re.compile(r"[A-Z]\.\s")
INITIALS_BEFORE_RE = re.compile(r"(?:^|[\s(\"'])[A-Z]\. [A-Z]\.$")
ABBREVIATION_RE = re.compile(r"(?:^|[\s(\"'])([A-Za-z]{1,5}|[a-z]\.[a-z])\.$")

# Thousands may be grouped by a no-break or thin space ("1 200", as French and SI style write
# them); a plain space is not taken as one ("1 200" in prose may be two figures).
_GROUP_SPACES = "\u00a0\u202f\u2009"
NUMBER_RE = re.compile(
    rf"(?<![\w.])(?:[€$£]\s?)?(?:\d{{1,3}}(?:[{_GROUP_SPACES}]\d{{3}})+|\d+)(?:[.,:]\d+)*"
    r"(?:\s?(?:%|percent\b|per\s?cent\b|pct\b))?",
    re.IGNORECASE,
)
# "12 %", "12 percent", "12 per cent", "12 pct": one percentage, written "12%"
PERCENT_RE = re.compile(r"(\d)\s?(?:%|percent\b|per\s?cent\b|pct\b)", re.IGNORECASE)
GROUPED_RE = re.compile(rf"(?<=\d)[{_GROUP_SPACES}](?=\d{{3}}\b)")


def normalize_text(text: str) -> str:
    """NFKC, unified line breaks, trimmed lines, at most one blank line in a row."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# A snowball stemmer keeps its word in instance state, so one shared instance breaks when
# per-question batches run in parallel threads (IndexError inside the stemmer): one per thread.
_STEMMERS = threading.local()
MARKER_GROUP_RE = re.compile(r"((?:\s*\[E\d+\])+)")
MARKER_RE = re.compile(r"\[(E\d+)\]")  # an evidence marker "[E3]"; group 1 is the id


def strip_markers(text: str) -> str:
    """The text without its evidence markers (and the space before each)."""
    return MARKER_GROUP_RE.sub("", text)


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    if word[0].isdigit():
        return word
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def words(text: str) -> list[str]:
    """Lower-cased word and number tokens, unstemmed."""
    return [token.lower().replace("’", "'") for token in TOKEN_RE.findall(text)]


def tokenize(text: str) -> list[str]:
    """Stemmed tokens, stopwords kept (BM25 handles their weight): 'governed' matches 'governs'."""
    return [stem(word) for word in words(text)]


def content_tokens(text: str) -> list[str]:
    """Stemmed tokens that carry meaning: no stopwords, no one-letter words. A figure is one
    token however it is written ("12 %", "12 per cent" and "12%"; "1,200" and "1200")."""
    return [
        figure_token(stem(w))
        for w in words(written_figures(text))
        if w not in STOPWORDS and (len(w) > 1 or w.isdigit())
    ]


def written_figures(text: str) -> str:
    """Percentages written "12%" and thousands grouped by a no-break space joined: the spellings
    of one figure read as one token."""
    if not any(c.isdigit() for c in text):
        return text
    return GROUPED_RE.sub("", PERCENT_RE.sub(r"\1%", text))


def figure_token(token: str) -> str:
    """A number token in one form: "1,200" -> "1200", "12.0" -> "12", "1.50%" -> "1.5%"."""
    if not token[:1].isdigit():
        return token
    percent = "%" if token.endswith("%") else ""
    digits = token.removesuffix("%")
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", digits):
        digits = digits.replace(",", "")
    if re.fullmatch(r"\d+\.\d+", digits):
        digits = digits.rstrip("0").rstrip(".")
    return digits + percent


def states_nothing(sentence: str, min_tokens: int) -> bool:
    """A question, or a heading or label with fewer than `min_tokens` content words ("Governing
    law."): a sentence that cannot state an answer. The evidence stage does not quote one on its
    word match alone, and the answerability judges never take one as the answer."""
    return sentence.rstrip().endswith("?") or len(content_tokens(sentence)) < min_tokens


def cited_sentences(answer: str) -> list[tuple[str, list[str]]]:
    """Split an answer into (sentence without markers, evidence ids cited right after it).

    A marker group such as "[E1][E2]" closes the sentence before it; text with no marker is
    split into plain sentences that cite nothing.
    """
    pieces = MARKER_GROUP_RE.split(answer or "")
    result = []
    for index in range(0, len(pieces), 2):
        text = pieces[index]
        ids = MARKER_RE.findall(pieces[index + 1]) if index + 1 < len(pieces) else []
        sentences = [text[s:e] for s, e in sentence_spans(text)]
        if not sentences:
            continue
        for sentence in sentences[:-1]:
            result.append((sentence, []))
        result.append((sentences[-1], ids))
    return result


def _after_abbreviation(text: str, match: re.Match) -> bool:
    """True when the whitespace `match` follows an abbreviation's period, not a sentence's."""
    found = ABBREVIATION_RE.search(text, max(0, match.start() - 8), match.start())
    if found is None:
        return False
    word = found.group(1)
    if len(word) == 1 and word.isupper():  # an initial: "George W. Bush", "J. R. R. Tolkien"
        return bool(
            INITIAL_RE.search(text, max(0, match.start() - 40), match.start())
            or NEXT_INITIAL_RE.match(text, match.end())
            or INITIALS_BEFORE_RE.search(text, max(0, match.start() - 8), match.start())
        )
    return word.lower() in ABBREVIATIONS


def _inside_table_row(text: str, match: re.Match, rows: dict[int, bool]) -> bool:
    """True when the whitespace `match` lies inside a line that is a whole table row. `rows`
    remembers each line's answer by its start, so a long paragraph is matched once."""
    line_start = text.rfind("\n", 0, match.start()) + 1
    if line_start not in rows:
        line_end = text.find("\n", match.end())
        line = text[line_start : len(text) if line_end < 0 else line_end].strip()
        rows[line_start] = "; " in line and TABLE_ROW_RE.fullmatch(line) is not None
    return rows[line_start]


def sentence_spans(text: str, abbreviations: bool = True) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of `text`, whitespace trimmed; a table row line is
    one sentence. `abbreviations=False` splits at every ". X" as before 2026-11-24 (frozen sets
    built then rebuild byte for byte)."""
    spans, start, rows = [], 0, {}
    for match in SENTENCE_END_RE.finditer(text):
        within = abbreviations and "\n" not in match.group()
        if within and (_after_abbreviation(text, match) or _inside_table_row(text, match, rows)):
            continue
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    trimmed = []
    for begin, end in spans:
        while begin < end and text[begin].isspace():
            begin += 1
        while end > begin and text[end - 1].isspace():
            end -= 1
        if end > begin:
            trimmed.append((begin, end))
    return trimmed


def canonical_number(raw: str) -> str:
    """'€ 1,200.50' -> '1200.5'; '99.9 percent' -> '99.9%'; '12.0 %' -> '12%'. Keeps % as part
    of the value; a decimal's trailing zeros go ("$5.00" is "$5")."""
    value = PERCENT_RE.sub(r"\1%", raw.lower())
    value = re.sub(rf"[\s{_GROUP_SPACES}]", "", value)
    is_percent = value.endswith("%")
    digits = re.sub(r"[^\d.,:]", "", value)
    return figure_token(digits + ("%" if is_percent else ""))


def numbers_in(text: str) -> set[str]:
    return {canonical_number(match) for match in NUMBER_RE.findall(text)}


MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
DATE_PATTERNS = (
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s+(\d{{4}})\b", re.I), ("d", "m", "y")),
    (
        re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I),
        ("m", "d", "y"),
    ),
    (re.compile(rf"\b{_MONTH}\s+(\d{{4}})\b", re.I), ("m", "y")),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), ("y", "mn", "d")),
)


def dates_in(text: str) -> set[str]:
    """ISO dates ('2026-08-25'; '2026-08' without a day): a month shift changes them."""
    found = set()
    for pattern, order in DATE_PATTERNS:  # full dates first; their text is then blanked out
        for match in pattern.finditer(text):
            parts = dict(zip(order, match.groups(), strict=True))
            month = int(parts["mn"]) if "mn" in parts else MONTHS[parts["m"].lower()]
            iso = f"{int(parts['y']):04d}-{month:02d}"
            found.add(f"{iso}-{int(parts['d']):02d}" if "d" in parts else iso)
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return found


def replace_date(text: str, iso: str) -> str:
    """Each written form of the date `iso` as one token ("d20260302"): two wordings read alike."""
    for pattern, _ in DATE_PATTERNS:
        if matches := [m for m in pattern.finditer(text) if dates_in(m.group(0)) == {iso}]:
            for match in reversed(matches):
                text = text[: match.start()] + f" d{iso.replace('-', '')} " + text[match.end() :]
    return text


def blank_dates(text: str) -> str:
    """The text with its dates that have a year blanked (same length)."""
    for pattern, _ in DATE_PATTERNS:
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return text


def critical_values(text: str) -> set[str]:
    """Figures a claim may not invent: numbers, amounts, percentages and dates."""
    return numbers_in(text) | {f"date:{d}" for d in dates_in(text)}


def coverage(query_tokens: set[str], text_tokens: set[str]) -> float:
    """Share of the query's content tokens that occur in the text."""
    if not query_tokens:
        return 0.0
    return len(query_tokens & text_tokens) / len(query_tokens)


def sentence_match(
    query_tokens: set[str], sentence: str, heading: str, wants_quantity: bool = False
) -> float:
    """How well a sentence matches a question's content words: its own coverage, the coverage with
    its heading, and a bonus for a figure when the question asks for a quantity. Shared by the
    evidence stage (span choice) and the answerability judge (candidate sentences)."""
    sentence_tokens = set(content_tokens(sentence))
    own = coverage(query_tokens, sentence_tokens)
    if own == 0:
        return 0.0
    context = coverage(query_tokens, sentence_tokens | set(content_tokens(heading)))
    has_figure = any(ch.isdigit() for ch in sentence)
    return 0.6 * own + 0.4 * context + (0.15 if wants_quantity and has_figure else 0.0)
