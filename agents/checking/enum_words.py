"""Which member of a tool's enum a message names, in the languages agents meet (en, es, fr, de,
it, pt).

A member is named by:

1. its own words, case and `_`/`-`/camelCase aside ("IN_TRANSIT" by "in transit");
2. the words of a concept it spells, from `VOCABULARY`: a small list of the enum values APIs
   use most (units, priorities and severities, sort orders, statuses, device modes, travel
   classes, transport modes, sizes, weekdays, months, frequencies, currencies, languages,
   yes/no), each concept with the member spellings APIs give it ("celsius", "c", "metric") and
   its words in each language ("centígrados", "hohe Priorität" reads high, "absteigend"
   desc). Written from general knowledge of the languages, not from any evaluation set, so
   that it holds on requests nobody here has seen;
3. a cognate, as a fallback: a word of five letters or more sharing all but its last three
   letters (and at least five) with a one-word member ("Priorität" for "priority",
   "económica" for "economy").

Words that often serve another role ("high" in "high street", "first" in "first of all",
"on" in "on Monday", "de" the preposition for the language code "de") are *weak*: they name a
member only beside a word of its role, within a few words in the same sentence: the
argument's own name ("priority" for a `priority` argument, also by cognate), or a word of the
concept's group ("Priorität", "clase", "talla"). A cognate is weak too. A member's words
inside a longer phrase of another concept do not name it ("economy" in "premium economy",
"dollars" in "Canadian dollars").

Vocabulary format: a group has `context` words (its role) and concepts; a concept has
`members` (spellings of enum values, compared as identifiers) and per language phrases
separated by commas. In a phrase, `word*` matches any word starting with `word`, and a phrase
starting with `~` is weak. All words are compared lower-case without accents.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from stages.common import values

LANGUAGES = ("en", "es", "fr", "de", "it", "pt")
CONTEXT_WINDOW = 4  # words between a weak word and a word of its role
MIN_COGNATE = 5  # letters of a word read as a cognate, at least
COGNATE_PREFIX = 4  # first letters a cognate shares with the member, at least
COGNATE_SHARE = 0.34  # edits a cognate is away from the member, at most, per letter
ENGLISH_ENDINGS = {
    "", "s", "es", "d", "ed", "ing", "er", "ers", "ly", "y", "ies", "ied", "ion", "ions",
    "tion", "tions", "ation", "ations", "al", "ment", "ments", "ity", "ive", "ic", "ical",
    "able", "ance", "ence", "ness", "ful", "less", "ist", "ism", "ize", "ise", "ized", "ised",
}  # fmt: skip
# member words of this length or shorter read by their own spelling only beside their role
# (the language code "de", the size "m", the unit "c")
SHORT_MEMBER = 2

# the vocabulary: a data file beside this module (its format is in the docstring above)
VOCABULARY: dict[str, dict[str, Any]] = yaml.safe_load(
    (Path(__file__).with_name("enum_vocabulary.yaml")).read_text(encoding="utf-8")
)


# what sets a word apart as a value (see `_set_apart`)
VALUE_MARKS = ("->", "→", "=", ":", "=>")
QUOTES = tuple("\"'«»“”„‘’`")
AS_WORDS = {"as", "como", "comme", "als", "come"}
TO_WORDS = {"to", "into", "a", "al", "au", "en", "auf", "zu", "in", "para", "em"}
# groups whose units and currencies a number's symbol names ("°C", "€20", "5 km")
SYMBOL_GROUPS = ("temperature unit", "unit system", "distance unit", "weight unit", "currency")
# words of an argument's or tool's name that say nothing of its role
GENERIC_NAME_WORDS = {
    "type", "value", "kind", "name", "key", "code", "field", "param", "option", "options",
    "setting", "settings", "flag", "filter", "list", "get", "set", "create", "update", "delete",
    "search", "find", "add", "make", "fetch", "query", "send", "post", "put", "check", "run",
    "new", "book", "api", "the", "for", "and", "with", "from", "info", "data", "details",
}  # fmt: skip


@dataclass(frozen=True)
class Phrase:
    concept: str  # "priority:high"
    words: tuple[str, ...]  # folded words; a trailing "*" matches a prefix
    weak: bool


@dataclass(frozen=True)
class Mention:
    concept: str
    start: int  # word index
    end: int  # word index after its last word
    weak: bool


@dataclass(frozen=True)
class Tables:
    members: dict[str, frozenset[str]]  # member key -> concepts
    by_word: dict[str, list[Phrase]]  # a phrase by its first word
    by_prefix: dict[str, list[Phrase]]  # a phrase whose first word is a prefix, by 3 letters
    context: dict[str, list[str]]  # group -> the words of its role
    weak_words: frozenset[str]  # one-word phrases that are weak somewhere


def _parse(text: str) -> list[str]:
    return [w.strip() for w in values.fold(text).split(",") if w.strip()]


@lru_cache(maxsize=1)
def tables() -> Tables:
    members: dict[str, set[str]] = {}
    by_word: dict[str, list[Phrase]] = {}
    by_prefix: dict[str, list[Phrase]] = {}
    context: dict[str, list[str]] = {}
    weak_words: set[str] = set()
    for group, entries in VOCABULARY.items():
        context[group] = _parse(entries["context"])
        for name, entry in entries.items():
            if name == "context":
                continue
            concept = f"{group}:{name}"
            for spelling in entry["members"].split(","):
                members.setdefault(values.ident_key(spelling), set()).add(concept)
            for language in LANGUAGES:
                for raw in _parse(entry.get(language, "")):
                    weak = raw.startswith("~")
                    words = tuple(re.findall(r"[^\W_]+\*?", raw.lstrip("~")))
                    phrase = Phrase(concept, words, weak)
                    first = words[0]
                    if first.endswith("*"):
                        by_prefix.setdefault(first[:3], []).append(phrase)
                    else:
                        by_word.setdefault(first, []).append(phrase)
                    if weak and len(words) == 1 and not first.endswith("*"):
                        weak_words.add(first)
    return Tables(
        {k: frozenset(v) for k, v in members.items()},
        by_word,
        by_prefix,
        context,
        frozenset(weak_words),
    )


def size() -> dict[str, int]:
    """How big the vocabulary is: groups, concepts, member spellings, phrases."""
    t = tables()
    phrases = {
        (p.concept, p.words) for ps in [*t.by_word.values(), *t.by_prefix.values()] for p in ps
    }
    return {
        "groups": len(VOCABULARY),
        "concepts": len({c for cs in t.members.values() for c in cs}),
        "member_spellings": len(t.members),
        "phrases": len(phrases),
    }


def concepts_of(member: str) -> frozenset[str]:
    """The concepts a member spells ("metric" -> celsius, km, metric)."""
    return tables().members.get(values.ident_key(member), frozenset())


def role_beside(concept: str, words: Sequence[str]) -> bool:
    """A word of the concept's group's role is among `words` (those near a weak word): "leitura"
    names the access role reader only beside "acesso" or "papel", never alone."""
    context = tables().context.get(concept.split(":")[0], [])
    return any(_matches(p, w) for p in context for w in words)


def _matches(pattern: str, word: str) -> bool:
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    return word == pattern


def mentions(words: tuple[str, ...]) -> list[Mention]:
    """The vocabulary's phrases among a message's words; a phrase inside a longer one of
    another concept is dropped ("economy" in "premium economy")."""
    t = tables()
    found = []
    for i, word in enumerate(words):
        for phrase in t.by_word.get(word, []) + t.by_prefix.get(word[:3], []):
            n = len(phrase.words)
            if i + n <= len(words) and all(
                _matches(p, w) for p, w in zip(phrase.words, words[i : i + n], strict=True)
            ):
                found.append(Mention(phrase.concept, i, i + n, phrase.weak))
    return [
        m
        for m in found
        if not any(
            o.concept != m.concept
            and o.start <= m.start
            and m.end <= o.end
            and o.end - o.start > m.end - m.start
            for o in found
        )
    ]


def _shared(a: str, b: str) -> int:
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared


def _distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def cognate(a: str, b: str) -> bool:
    """Two words of five letters or more, the same word in another language or inflected:
    they share their first letters (at least four) and differ in at most a third of them
    ("priority", "priorität"; "economy", "económica"; "vacation", "vacaciones")."""
    a, b = values.fold(a), values.fold(b)
    if min(len(a), len(b)) < MIN_COGNATE or _shared(a, b) < COGNATE_PREFIX:
        return False
    return _distance(a, b) <= COGNATE_SHARE * max(len(a), len(b))


def english_form(a: str, b: str) -> bool:
    """`b` is `a` with another English ending ("delivery", "delivered"; "close", "closed"):
    in English text another word of the same family, not a translation."""
    a, b = values.fold(a), values.fold(b)
    n = _shared(a, b)
    return a[n:] in ENGLISH_ENDINGS and b[n:] in ENGLISH_ENDINGS


@dataclass
class Message:
    """A message's words, the sentence of each word and the vocabulary's phrases in it."""

    text: str
    tokens: list[tuple[str, int, int]]
    words: tuple[str, ...]
    sentence: list[int]
    found: list[Mention]
    quantities: list[values.Quantity]

    def span_text(self, start: int, end: int) -> str:
        return self.text[self.tokens[start][1] : self.tokens[end - 1][2]]


@lru_cache(maxsize=512)
def message(text: str) -> Message:
    tokens = values.tokens_with_spans(text)
    breaks = [m.start() for m in re.finditer(r"[.!?;\n]+(?:\s|$)", text)]
    sentence = [sum(1 for b in breaks if b < start) for _, start, _ in tokens]
    words = tuple(t for t, _, _ in tokens)
    return Message(text, tokens, words, sentence, mentions(words), values.quantities(text))


def role_words(*names: str) -> list[str]:
    """The words of an argument's or tool's name that say what it is about ("priority" of
    `ticket_priority`, "ticket" of `create_ticket`)."""
    return [
        w
        for name in names
        for w in values.key_words(name)
        if len(w) >= 3 and w not in GENERIC_NAME_WORDS and not w.isdigit()
    ]


def _in_role(
    msg: Message, start: int, end: int, group_words: Sequence[str], arg_words: Sequence[str],
    entity_words: Sequence[str], window: int = CONTEXT_WINDOW,
) -> bool:  # fmt: skip
    """Beside a word of its role, in the same sentence: a word of its group or of the
    argument's name (by a cognate too: "Priorität" for `priority`) within CONTEXT_WINDOW words;
    the tool's entity ("tickets" of `list_tickets`) or a number (a month's day) next to it."""
    if _set_apart(msg, start, end):
        return True
    lo, hi = max(0, start - window), min(len(msg.words), end + window)
    for k in range(lo, hi):
        if start <= k < end or msg.sentence[k] != msg.sentence[start]:
            continue
        word = msg.words[k]
        adjacent = k in (start - 1, end)
        if adjacent and word.isdigit() and "#" in group_words:
            return True
        if any(p != "#" and _matches(p, word) for p in group_words):
            return True
        if any(word.startswith(a) or cognate(word, a) for a in arg_words):
            return True
        if adjacent and any(word.startswith(e) or cognate(word, e) for e in entity_words):
            return True
    return False


def _set_apart(msg: Message, start: int, end: int) -> bool:
    """Words written as a value: quoted ("«en revisión»"), after an arrow, "=" or a colon
    ("OPS-1 -> Done", "priority: high"), after "as" ("mark it as open"), or closing a sentence
    after "to" ("set it to high.")."""
    first, last = msg.tokens[start][1], msg.tokens[end - 1][2]
    before, after = msg.text[:first].rstrip(), msg.text[last:].lstrip()
    if before.endswith(VALUE_MARKS) or (before.endswith(QUOTES) and after.startswith(QUOTES)):
        return True
    previous = msg.words[start - 1] if start > 0 and not before.endswith(",") else ""
    closing = not after or after[0] in ".!?;,)"
    # "mark it as open", not "As normal, ..." at the start of a sentence
    after_verb = start > 1 and msg.sentence[start - 2] == msg.sentence[start]
    return (previous in AS_WORDS and after_verb) or (previous in TO_WORDS and closing)


def _groups_words(concepts: frozenset[str]) -> list[str]:
    context = tables().context
    return [w for g in sorted({c.split(":")[0] for c in concepts}) for w in context[g]]


def naming(
    member: str,
    text: str,
    arg_words: Sequence[str] = (),
    entity_words: Sequence[str] = (),
    lenient: bool = False,
) -> str | None:
    """The words of `text` that name `member`, or None.

    `lenient` reads a weak word or a cognate without its role beside it: how a user names the
    member the call chose (such a reading only ever grounds a call, never flags one)."""
    t = tables()
    msg = message(text)
    key = values.ident_key(member)
    concepts = t.members.get(key, frozenset())
    groups = _groups_words(concepts)
    weak_own = len(key) <= SHORT_MEMBER or key in t.weak_words
    # a code of one or two letters ("de", "L") beside its role word only: "talla L"
    window = 1 if len(key) <= SHORT_MEMBER else CONTEXT_WINDOW
    for start_char, end_char in values.find_ident(member, msg.tokens):
        first = next(i for i, tok in enumerate(msg.tokens) if tok[1] == start_char)
        last = next(i for i, tok in enumerate(msg.tokens) if tok[2] == end_char)
        if any(  # "economy" of "premium economy": the longer phrase's concept
            m.concept not in concepts
            and m.start <= first
            and last < m.end
            and m.end - m.start > last + 1 - first
            for m in msg.found
        ):
            continue
        if (
            lenient
            or not weak_own
            or _in_role(msg, first, last + 1, groups, arg_words, entity_words, window)
        ):
            return text[start_char:end_char]
    for mention in msg.found:
        if mention.concept not in concepts:
            continue
        if (
            lenient
            or not mention.weak
            or _in_role(
                msg,
                mention.start,
                mention.end,
                _groups_words(frozenset({mention.concept})),
                arg_words,
                entity_words,
            )
        ):
            return msg.span_text(mention.start, mention.end)
    symbols = {c for c in concepts if c.split(":")[0] in SYMBOL_GROUPS}
    for q in msg.quantities:
        named = {q.unit, q.currency} - {None}
        if key in named or any(symbols & concepts_of(str(n)) for n in named):
            return text[q.start : q.end]
    if len(values.key_words(member)) == 1 and len(key) >= MIN_COGNATE:
        for k, word in enumerate(msg.words):
            # a translation names it anywhere; another English form only beside its role
            if cognate(word, key) and (
                lenient
                or not english_form(key, word)
                or _in_role(msg, k, k + 1, [], arg_words, entity_words)
            ):
                return msg.span_text(k, k + 1)
    return None
