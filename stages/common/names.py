"""The names a question asks about, and whether a set of sources ever writes them.

"What is the termination notice in our contract with Initech?" cannot be answered from sources
that never write "Initech", however well a Fabrikam contract matches the rest of the question:
the grounding design's "irrelevant result" (a general template cited for a specific client). A
name here is a capitalised word after the question's first (acronyms are left out: sources spell
them out), split at hyphens, of at least `MIN_LETTERS` letters. A name counts as written when the
sources write it, a spelling one edit away (a typo: "Frensh", "Bismark") or a form derived from
the same stem ("Revolutionary", "revolution"), accents and inflection aside ("Celoron" is
"Céloron", "Initech's" is "Initech").

A one-edit spelling counts only when the sources write it as a name: capitalised inside a
sentence. "Paris" is one edit from "parks", whose stem a folder writing "parking"
holds; a typo of a name ("Celeron", "Liszy") lands on a name, a city landing on a common word is
a near miss, not a typo (scripts/name_near_misses.py measured the trade on SQuAD 2.0 articles).

A year works the same way: "What did the Enterprise plan cost in 2019?" cannot be answered from
sources that never write 2019, and SQuAD 2.0 makes near misses by changing one ("appointed in
1765" where the text says 1756). A year is written only as itself.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from stages.common.text import STOPWORDS, stem, tokenize

NAME_RE = re.compile(r"\b[A-Z][\w&'’-]*")
MIN_LETTERS = 4
MIN_PREFIX = 5
# Capitalised because they are names of days, months and units, not parties: "Is support open on
# Monday?" may be answered by "weekdays".
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august")
MONTHS += ("september", "october", "november", "december")
MONTHS += ("sept",)  # "In Sept 1760": the abbreviations of 4 letters or more
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CALENDAR = frozenset(MONTHS + DAYS)
UNITS = frozenset(("celsius", "fahrenheit", "kelvin"))  # sources write °C, °F, K
LETTERS = "abcdefghijklmnopqrstuvwxyz"
# 1765, 2019; not "the 1600s", a span the sources may write as "the 17th century" or "1650"
YEAR_RE = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b(?!['’]?s\b)")


# letters with no decomposition into a base letter and an accent
UNDECOMPOSED = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ß": "ss", "æ": "ae", "œ": "oe"})


def fold(text: str) -> str:
    """Lower case without accents: 'Céloron' -> 'celoron', 'Gładkowska' -> 'gladkowska'."""
    decomposed = unicodedata.normalize("NFKD", text.lower().translate(UNDECOMPOSED))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def folded_forms(term: str) -> list[str]:
    """A vocabulary term as names are looked up: folded, and the word after an elision
    ("d'agoult" is also "agoult")."""
    folded = fold(term)
    tail = re.split(r"['’]", folded)[-1]
    return [folded, tail] if tail != folded else [folded]


def _title_cased(question: str) -> bool:
    """Most longer words capitalised ("What Is The Refund Policy?"): capitals say nothing there."""
    longer = re.findall(r"[^\W\d_]{4,}", question)[1:]
    return len(longer) >= 3 and sum(w[0].isupper() for w in longer) >= 0.75 * len(longer)


def asked_names(question: str) -> list[str]:
    """The question's names, folded, in order, without repeats, then its years (see the module
    docstring)."""
    years = list(dict.fromkeys(YEAR_RE.findall(question)))
    if _title_cased(question):
        return years
    names: list[str] = []
    for match in NAME_RE.finditer(question):
        if match.start() == len(question) - len(question.lstrip()):  # the first word
            continue
        word = match.group()
        if word.isupper():  # an acronym
            continue
        for part in re.split(r"[-&]", re.sub(r"['’]s?$", "", word)):
            part = fold(part)
            ordinary = part in STOPWORDS or part in CALENDAR or part in UNITS
            if len(part) >= MIN_LETTERS and part.isalpha() and not ordinary and part not in names:
                names.append(part)
    return names + years


def spellings(word: str) -> Iterable[str]:
    """The word, then every spelling one edit away (words of 5 letters or more only)."""
    yield word
    if len(word) < 5:
        return
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        for letter in LETTERS:
            yield head + letter + tail
        if tail:
            yield head + tail[1:]
            for letter in LETTERS:
                yield head + letter + tail[1:]
        if len(tail) > 1:
            yield head + tail[1] + tail[0] + tail[2:]


@dataclass(frozen=True)
class Vocabulary:
    """What a set of sources writes, as stemmed, accent-folded terms."""

    occurs: Callable[[str], bool]  # the term occurs in them
    starting: Callable[[str], list[str]]  # their terms that start with a prefix
    # the term occurs capitalised inside a sentence (a name); None: unknown, any term counts
    as_name: Callable[[str], bool] | None = None

    @classmethod
    def of_texts(cls, texts: Iterable[str]) -> Vocabulary:
        """The vocabulary of plain texts, tokenized as the BM25 index tokenizes chunks (tests,
        benches; the pipeline reads its index's: `search.Bm25Index.written`)."""
        texts = list(texts)
        terms = sorted({form for text in texts for t in tokenize(text) for form in folded_forms(t)})
        named = {term for text in texts for term in name_terms(text)}

        def starting(prefix: str) -> list[str]:
            start = bisect.bisect_left(terms, prefix)
            return terms[start : bisect.bisect_left(terms, prefix + "\uffff")]

        return cls(set(terms).__contains__, starting, named.__contains__)


SENTENCE_END = frozenset(".!?:;\n\r\t•*#>|")
WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")


def _heading(line: str) -> bool:
    """A line whose every word of four letters or more is capitalised ("Office Parking")."""
    longer = re.findall(r"[^\W\d_]{4,}", line)
    return bool(longer) and all(word[0].isupper() for word in longer)


def name_terms(text: str) -> set[str]:
    """The folded stems of the words a text writes capitalised inside a sentence: "Paris" in
    "offices in Paris", not "Parking" opening a sentence or a heading."""
    found: set[str] = set()
    for line in text.splitlines():
        if _title_cased(line) or _heading(line):  # capitals say nothing there
            continue
        for match in WORD_RE.finditer(line):
            if not match.group()[0].isupper():
                continue
            before = line[: match.start()].rstrip(" \u00a0\"'“‘(")
            if not before or before[-1] in SENTENCE_END:
                continue  # a sentence's, line's or list item's first word says nothing
            for part in re.split(r"[-]", re.sub(r"['’]s?$", "", match.group())):
                if part:
                    found.update(folded_forms(stem(part.lower())))
    return found


def is_written(name: str, vocabulary: Vocabulary) -> bool:
    """The name, a spelling one edit away, or a word sharing its stem's start: a derived form
    ("Revolutionary" where the sources write "revolution", "Canada" where they write
    "Canadian") shares a prefix of at least `MIN_PREFIX` letters and three quarters of the name."""
    if name.isdigit():  # a year is written as such or not at all
        return vocabulary.occurs(name)
    if vocabulary.occurs(fold(stem(name))):
        return True
    for spelling in spellings(name):  # a typo lands on a name, never on a common word
        term = fold(stem(spelling))
        if vocabulary.occurs(term) and (vocabulary.as_name is None or vocabulary.as_name(term)):
            return True
    root = fold(stem(name))
    if any(vocabulary.occurs(root[:end]) for end in range(MIN_PREFIX, len(root))):
        return True  # the sources write a shorter stem the name starts with
    shared = max(MIN_PREFIX, math.ceil(0.75 * len(name)))
    return len(name) > shared and bool(vocabulary.starting(name[:shared]))


def unwritten_names(question: str, vocabulary: Vocabulary) -> list[str]:
    """The question's names that the sources never write."""
    return [name for name in asked_names(question) if not is_written(name, vocabulary)]
