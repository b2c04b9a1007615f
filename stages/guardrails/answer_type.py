"""Does the answer hold a value of the type its question asks for?

"When is the crane upgrade?" is not answered by "Crane upgrade in Bergen.": every word of that
answer may be in the evidence, and still it names no time. A question that opens by asking for a
date or time ("When…", "What year…"), a figure ("How many…", "How much…"), a person ("Who…") or a
place ("Where…") is answered only by text that holds at least one value of that kind.

The check is conservative by construction: it fires only when the answer holds no value of the
type at all, and what counts as one is broad (any digit, a month, a weekday, a season, a word
of time such as "before" or "annually" for a date; any digit or number word, "several", "free"
for a figure; any capitalised name, a pronoun or a word for people for a person; any name or
place preposition for a place). Only the question's first words decide the type: "what is the
best time to…" asks for no date here. An answer that says the evidence lacks the value (a
refusal) is not checked: it answers honestly that it cannot.
"""

from __future__ import annotations

import re

from stages.common.text import STOPWORDS

VERSION = "1.0.1"

# The question's first words -> the type it asks for. Only these openings: a type is asked
# for plainly, or not at all.
ASKS = (
    (
        "date",
        re.compile(
            r"(?i)^\W*(?:when\b|(?:in |on |at |by |until |since )?(?:what|which) "
            r"(?:year|years|date|dates|day|days|month|months|time|century|decade|season)\b"
            r"|what time\b|how long ago\b)"
        ),
    ),
    (
        "figure",
        re.compile(
            r"(?i)^\W*(?:how (?:many|much|old|tall|high|far|long|big|large|heavy|fast|often|"
            r"deep|wide)\b|what (?:percentage|percent|proportion|share|number|amount|"
            r"fraction) of\b|what is the (?:number|amount|percentage|cost|price) of\b)"
        ),
    ),
    ("person", re.compile(r"(?i)^\W*who(?:m)?\b(?!')")),
    ("place", re.compile(r"(?i)^\W*where\b")),
)
LABELS = {"date": "a date or time", "figure": "a figure", "person": "a person", "place": "a place"}

_MONTHS = (
    "january february march april june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday weekday weekend weekends"
_TIME_WORDS = (
    "today tomorrow yesterday tonight now currently soon later earlier recently recent ago "
    "morning mornings afternoon afternoons evening evenings night nights noon midnight dawn dusk "
    "sunrise sunset day days daily week weeks weekly month months monthly year years yearly "
    "annually annual decade decades century centuries season seasons seasonal spring summer "
    "autumn fall winter hour hours minute minutes second seconds time times period era age ages "
    "early late mid beginning end start before after during until till since once whenever "
    "when while upon then first last next previous following prior soonest anytime always "
    "never immediately quarter semester term holiday holidays christmas easter birthday "
    "schedule scheduled deadline"
)
DATE_WORDS = frozenset(f"{_MONTHS} {_DAYS} {_TIME_WORDS}".split())
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred hundreds thousand thousands million millions billion billions trillion dozen "
    "dozens half quarter double triple twice thrice once single couple pair several few many "
    "multiple numerous none no nothing all every each free most majority minority some "
    "percent percentage"
)
FIGURE_WORDS = frozenset(_NUMBER_WORDS.split())
_PERSON_WORDS = (
    "he she him her his hers they them their someone somebody anyone anybody everyone everybody "
    "nobody people person persons man men woman women child children family member members "
    "team staff group parents parent mother father king queen"
)
PERSON_WORDS = frozenset(_PERSON_WORDS.split())
# a word for someone who does something: "a doctor", "the manufacturer", "a dentist"
PERSON_SUFFIX_RE = re.compile(r"(?i)\b\w{3,}(?:er|or|ist|ian|ant|ent|ee)s?\b")
_PLACE_WORDS = (
    "in at on near inside outside under over above below behind beside between across along "
    "around through throughout within from to into onto nearby here there where everywhere "
    "anywhere somewhere home online abroad locally north south east west northern southern "
    "eastern western central downtown upstairs downstairs left right top bottom side"
)
PLACE_WORDS = frozenset(_PLACE_WORDS.split())
# A capitalised word past a sentence's first, or an acronym: a name
NAME_RE = re.compile(r"(?<![.!?:]\s)(?<!^)\b(?:[A-Z][a-z]+[\w&'-]*|[A-Z]{2,}s?)\b", re.M)


def asked_type(question: str) -> str | None:
    """date | figure | person | place when the question's opening asks for one, else None."""
    for kind, pattern in ASKS:
        if pattern.search(question or ""):
            return kind
    return None


def _words(text: str) -> set[str]:
    """The text's words, each also without a plural "s" ("on Sundays" names a day)."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    return words | {w[:-1] for w in words if len(w) > 3 and w.endswith("s")}


def holds(kind: str, text: str) -> bool:
    """The text holds at least one value of `kind` (see the module's note: broad on purpose)."""
    if kind in ("date", "figure") and re.search(r"\d", text):
        return True
    found = _words(text)
    if kind == "date":  # "May" the month, not "may" the verb
        return bool(found & DATE_WORDS) or re.search(r"\bMay\b", text) is not None
    if kind == "figure":
        return bool(found & FIGURE_WORDS)
    if kind == "person":
        return bool(_named(text) or found & PERSON_WORDS or PERSON_SUFFIX_RE.search(text))
    if kind == "place":
        return bool(_named(text) or found & PLACE_WORDS)
    return True


def _named(text: str) -> bool:
    """A name anywhere: a capitalised word past a sentence's first, or a first word that is no
    common word ("Madonna", "Hawaii" as the whole answer)."""
    if NAME_RE.search(text):
        return True
    first = re.match(r"\W*([A-Z][\w&'-]*)", text)
    return bool(first) and first.group(1).lower() not in STOPWORDS | PERSON_WORDS


def mismatch(question: str, texts: list[str]) -> str | None:
    """The reason when the question asks for a type that none of `texts` (the answer's claims)
    holds: "answer_type_mismatch: …". None when it holds one, or asks for no type."""
    kind = asked_type(question)
    if kind is None or not texts:
        return None
    if any(holds(kind, text) for text in texts):
        return None
    return f"answer_type_mismatch: the question asks for {LABELS[kind]} and the answer holds none"
