"""Structured evidence, checked structurally: a claim over a JSON tool result is matched against
the result's leaves (key path and value, normalised) before any judge.

Each element of the claim that can be checked (a number with its unit or currency, a date or a
time, a name or identifier, a yes/no fact) is looked up among the leaves:

- it equals a leaf's value (numbers across separators, scales, rounding and percent; dates and
  times across formats and zones; names across `_`/`-`/camelCase/case): matched, with the leaf's
  JSON pointer (RFC 6901);
- it differs from the value of a leaf whose key the claim names (the `temperature` is 68, the
  claim says 72): contradicted, with that pointer.

A claim is `supported` when at least one element matched, none contradicted, nothing is
unmatched, it negates nothing, and every other word is a key of the result, a word of the tool's
name or of the call's arguments, or a connective ("the call returned … with …"): what a
restatement of a result is made of; or, for the words left over, when none of them can carry a
fact the match did not check (`agents.checking.residue`: names, negations, quantifiers, days,
states, comparisons, added clauses block; the answer's own verbs and nouns are reported as
`unchecked_words`). It is `contradicted` when any element contradicts a leaf. Anything else
(`open`) is left to the claim checker's judge, unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import agents.checking.derived_leaves as derived_leaves
import agents.checking.near_identifiers as near_identifiers
import agents.checking.residue as residue
import agents.checking.run_words as run_words
import agents.checking.state_words as state_words
from agents.checking.formats import AgentRun
from agents.checking.restatement_words import CONNECTIVES, cognate, glossed
from stages.common import values
from stages.common.text import NEGATION_RE, STOPWORDS, stem

VERSION = "1.6.0"
MAX_LEAVES = 2000  # a result beyond this many scalar values is left to the judge
# what a claim writes before the tail of an identifier it names by its end only
TAIL_RE = re.compile(
    r"(?:ending(?: in| with)?|ends(?: in| with)?|last (?:\w+ )?digits?|endet(?: auf| mit)?|"
    r"endend(?: auf| mit)?|termina(?:da|do|ndo)? (?:en|con|in)|se terminant par|terminant par|"
    r"finissant par|se termine par|che termina (?:in|con))\W{0,3}$",
    re.IGNORECASE,
)
TAIL_CHARS = 3  # a tail this long at least, shorter than the identifier it ends
MIN_PREFIX = 3  # a key word this long may be the start of the claim's word ("temp")
NAME_MIN_CHARS = 2
SUFFIX_CHARS = 4  # a word this long may be the end of a key written as one word ("dealstage")
# a text value this short (an address, a label) lends its words to a restatement; a passage
# does not (its words in another order may say something else: the judge decides)
SHORT_TEXT_WORDS = 12
NEAR_CHARS = 30  # a value given at most this far after the key it is the value of
OUT_OF_RE = re.compile(
    r"\bout of (?:stock|service|order|range|date)\b", re.IGNORECASE
)  # a one-letter string value ("a") is not a name to look for


@dataclass(frozen=True)
class Leaf:
    tool: str
    call_id: str | None
    pointer: str  # RFC 6901 pointer into the result
    key: str  # the leaf's own key (the parent's for a list item)
    words: tuple[str, ...]  # the key path's words, stemmed
    value: Any
    derived: bool = False  # the count of a list ("2 meetings" over two events), not a value
    unit: str | None = None  # a derived duration's unit: it matches a number of that unit only
    via: str = ""  # a derived duration's other end ("end - start"), or the pointers summed
    local: tuple[values.Moment, ...] = ()  # an instant's moments in the user's zones

    def anchor(self) -> str:
        via = f" - {self.via}" if self.via and not derived_leaves.is_total(self) else ""
        via = f" ({self.via})" if derived_leaves.is_total(self) else via
        return f"{self.tool}#{self.call_id or ''}{self.pointer}{via}"


@dataclass
class Finding:
    element: str  # the claim's text of the element
    pointer: str  # the leaf's anchor (tool#call_id/pointer)
    value: Any  # the leaf's value
    relation: str  # matches | contradicts
    start: int = 0  # the element's place in the claim
    end: int = 0

    def as_row(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Verdict:
    status: str  # supported | contradicted | open
    matched: list[Finding] = field(default_factory=list)
    contradicted: list[Finding] = field(default_factory=list)
    residual: list[str] = field(default_factory=list)  # words no leaf, key or connective covers
    unmatched: list[str] = field(default_factory=list)  # numbers and dates no leaf holds
    # words of a supported claim that carry no fact and that nothing checked ("arriverebbero")
    unchecked: list[str] = field(default_factory=list)
    blocking: list[str] = field(default_factory=list)  # left-over words that may carry a fact

    def reasons(self) -> list[str]:
        if self.status == "contradicted":
            return [
                f"'{f.element}' contradicts {f.pointer} = {_shown(f.value)}"
                for f in self.contradicted
            ]
        if self.status == "supported":
            found = [f"'{f.element}' = {f.pointer}" for f in self.matched]
            if self.unchecked:
                found.append(f"words not checked: {', '.join(self.unchecked)}")
            return found
        return []

    def as_row(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "matched": [f.as_row() for f in self.matched],
            "contradicted": [f.as_row() for f in self.contradicted],
            "residual": self.residual,
            "unmatched": self.unmatched,
            "unchecked_words": self.unchecked,
            "blocking_words": self.blocking,
        }


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _stems(words: list[str]) -> tuple[str, ...]:
    return tuple(stem(w) for w in words if w not in STOPWORDS)


def leaves(content: Any, tool: str, call_id: str | None) -> list[Leaf]:
    """Every scalar of a JSON result, with its pointer and key path."""
    found: list[Leaf] = []

    def walk(value: Any, pointer: str, path: tuple[str, ...], key: str) -> None:
        if len(found) >= MAX_LEAVES:
            return
        if isinstance(value, dict):
            for child_key, child in value.items():
                words = values.key_words(str(child_key))
                walk(child, f"{pointer}/{_escape(child_key)}", path + _stems(words), child_key)
        elif isinstance(value, list):
            if value:
                found.append(Leaf(tool, call_id, pointer, str(key), path, len(value), True))
            for index, child in enumerate(value):
                walk(child, f"{pointer}/{index}", path, key)
        elif value != "":  # a null is kept: it says a state is unset (`shipped_at: null`)
            found.append(Leaf(tool, call_id, pointer, str(key), path, value))

    walk(content, "", (), "")
    return found + _durations(found)


# the keys of a span's two ends ("start"/"end", "startTime"/"endTime", "from"/"until")
_START = "start starts begin begins from departure departs check_in"
_END = "end ends until finish finishes to arrival arrives check_out"
START_WORDS = frozenset(_START.split())
END_WORDS = frozenset(_END.split())
MAX_DURATION_MINUTES = 14 * 24 * 60


def _durations(found: list[Leaf]) -> list[Leaf]:
    """The time between a record's start and end leaves ("45 minutes" over a start at 18:00 and
    an end at 18:45), in minutes and in hours: derived leaves, which alone prove nothing."""
    timed = []
    for leaf in found:
        moment = None if leaf.derived else values.moment_of(leaf.value)
        if moment is not None and moment.time and moment.date and len(moment.date) == 10:
            timed.append((leaf, moment))
    out: list[Leaf] = []
    for start, one in timed:
        for end, two in timed:
            if not _span_ends(start.pointer, end.pointer):
                continue
            two = two.at(one.offset) if one.offset is not None else two
            begin = datetime.fromisoformat(f"{one.date}T{one.time}")
            minutes = (datetime.fromisoformat(f"{two.date}T{two.time}") - begin).total_seconds()
            minutes /= 60
            if not 0 < minutes <= MAX_DURATION_MINUTES:
                continue
            for unit, amount in (("minute", minutes), ("hour", minutes / 60)):
                out.append(
                    Leaf(
                        end.tool,
                        end.call_id,
                        end.pointer,
                        "duration",
                        ("duration",),
                        amount,
                        derived=True,
                        unit=unit,
                        via=start.pointer,
                    )
                )
    return out


def _span_ends(first: str, second: str) -> bool:
    """Two pointers that differ in one segment only, a start key in the first and an end key
    in the second: /start/dateTime and /end/dateTime."""
    one, two = first.split("/"), second.split("/")
    if len(one) != len(two):
        return False
    differ = [i for i, (a, b) in enumerate(zip(one, two, strict=True)) if a != b]
    if len(differ) != 1:
        return False
    a = set(values.key_words(one[differ[0]]))
    b = set(values.key_words(two[differ[0]]))
    return bool(a & START_WORDS) and bool(b & END_WORDS)


def run_leaves(run: AgentRun, evidence_calls: set[str | None]) -> list[Leaf]:
    """The leaves of the run's structured results that count as evidence (`evidence_calls`:
    the call ids, or tool names for results without one, of results classified as evidence)."""
    found: list[Leaf] = []
    for result in sorted(run.results, key=lambda r: r.position):
        if (result.call_id or result.name) not in evidence_calls:
            continue
        if isinstance(result.content, dict | list):
            own = leaves(result.content, result.name, result.call_id)
            found += own + derived_leaves.url_tails(own) + derived_leaves.totals(own)
    return derived_leaves.zoned(found, derived_leaves.zones_of(run.user_texts, run.answer))


def _zero(value: Any) -> bool:
    """0, as a number or as a number written in a string ("0", "0.00")."""
    number = values.number_of(value) if isinstance(value, int | float | str) else None
    return number == 0 and (not isinstance(value, str) or bool(re.fullmatch(r"[\d.,\s]+", value)))


def _covered(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def _key_mentioned(leaf: Leaf, claim_stems: set[str]) -> bool:
    """The claim names the leaf's own key (all of its words; a short key word as the start of
    a claim's word: `temp` for "temperature", `qty` aside)."""
    own = _stems(values.key_words(leaf.key))
    return bool(own) and all(_said(w, claim_stems) for w in own)


def _said(word: str, claim_stems: set[str]) -> bool:
    return word in claim_stems or (
        len(word) >= MIN_PREFIX and any(s.startswith(word) for s in claim_stems)
    )


def _bool_words(leaf: Leaf) -> tuple[str, ...]:
    """The words of a yes/no key without its 'is'/'has' prefix: is_available -> available."""
    words = [w for w in values.key_words(leaf.key) if w not in ("is", "has", "can", "should")]
    kept = [w for w in words if w not in CONNECTIVES]  # `open_now`: "open" says it
    return _stems(kept or words)


def _state_stems(token: str) -> set[str]:
    """The English one-word states a word of another language says ("abierta": open)."""
    return {stem(w) for w in values.STATE_WORDS.get(token, ()) if " " not in w}


def _parent(anchor: str) -> str:
    return anchor.rsplit("/", 1)[0]


def _mentions(leaf: Leaf, tokens: list[tuple[str, int, int]]) -> list[int]:
    """Where the claim names the leaf's own key: the end offset of each mention of its last
    word (a key word as the start of a claim's word counts: `temp` for "temperature")."""
    own = _stems(values.key_words(leaf.key))
    if not own:
        return []
    said = {stem(t) for t, _, _ in tokens}
    if not all(_said(w, said) for w in own):
        return []
    last = own[-1]
    return [
        e
        for t, _, e in tokens
        if stem(t) == last or (len(last) >= MIN_PREFIX and stem(t).startswith(last))
    ]


def check_claim(
    claim: str, leaves_: list[Leaf], context_words: set[str], language: str | None = None
) -> Verdict:
    """The structural verdict of one claim over the run's leaves. `context_words`: words a
    restatement may use besides keys and values (the tools' names, the calls' arguments).
    `language`: the answer's, where known ("no" is a negation in English and Spanish, "in the"
    in Portuguese)."""
    nulls = [leaf for leaf in leaves_ if leaf.value is None]
    leaves_ = [leaf for leaf in leaves_ if leaf.value is not None]
    if not leaves_:
        return Verdict("open")
    tokens = values.tokens_with_spans(claim)
    claim_stems = {stem(t) for t, _, _ in tokens}
    covered: list[tuple[int, int]] = []
    matched: list[Finding] = []
    # unmatched elements: text, place, the leaves they may contradict, whether a number
    pending: list[tuple[str, int, int, list[Leaf], bool]] = []
    negated = _negates(claim, language)
    unit_conflicts: list[Finding] = []
    numbers = [(leaf, values.number_of(leaf.value)) for leaf in leaves_]
    numbers = [(leaf, n) for leaf, n in numbers if n is not None]
    moments_ = [(leaf, values.moment_of(leaf.value)) for leaf in leaves_ if not leaf.derived]
    moments_ = [(leaf, m) for leaf, m in moments_ if m is not None]
    moments_ += [(leaf, m) for leaf in leaves_ for m in leaf.local]  # in the user's zones

    def match(text: str, start: int, end: int, leaf: Leaf) -> None:
        matched.append(Finding(text, leaf.anchor(), leaf.value, "matches", start, end))
        covered.append((start, end))

    # values written whole: a length of time, digits in groups, an IP network
    whole = _written_whole(claim, leaves_, context_words, match, covered, pending)
    # dates and times
    claimed_moments = values.moments(claim)
    for moment in claimed_moments:
        if any(s < moment.end and moment.start < e for s, e in covered + whole):
            continue
        start = moment.start - moment.lead  # its weekday with it ("Friday, May 29")
        text = claim[start : moment.end]
        hit = next((leaf for leaf, m in moments_ if values.same_moment(moment, m)), None)
        pair = _date_and_time(moment, moments_) if hit is None else None
        if hit is not None:
            match(text, start, moment.end, hit)
        elif pair is not None:  # {"date": "2026-08-12", "time": "19:00"}: one record holds both
            match(text, start, moment.end, pair[0])
            matched.append(Finding(text, pair[1].anchor(), pair[1].value, "matches"))
        elif run_words.moment_key(moment) in context_words and not _rival_moment(moment, moments_):
            # a time the call passed ("leaving at 08:00") that no date or time of the result
            # could be meant by
            covered.append((start, moment.end))
        else:
            rivals = [leaf for leaf, _ in moments_]
            pending.append((text, start, moment.end, rivals, False))
    # a day counted from the run's today ("yesterday", "hoje") that a leaf's date is; one that
    # none is, where the result has dates, is an element left unmatched
    today = next(
        (
            w.removeprefix(run_words.TODAY_KEY)
            for w in context_words
            if w.startswith(run_words.TODAY_KEY)
        ),
        "",
    )
    for shift, start, end in state_words.day_words(claim) if today else []:
        day = (date.fromisoformat(today) + timedelta(days=shift)).isoformat()
        hit = next((leaf for leaf, m in moments_ if m.date == day), None)
        if _covered(covered, start, end):
            continue
        if hit is not None:
            match(claim[start:end], start, end, hit)
        elif state_words.day_unheld(claim[start:end], leaves_, context_words):
            pending.append((claim[start:end], start, end, [x for x, _ in moments_], False))
    # numbers, with their units and currencies
    for quantity in values.quantities(claim):
        text = claim[quantity.start : quantity.end]
        if any(s < quantity.end and quantity.start < e for s, e in covered + whole):
            continue  # a part of a value written whole
        hits = [
            leaf
            for leaf, n in numbers
            if (leaf.unit is None or leaf.unit == quantity.unit)
            and (values.same_number(quantity, n) or _minor_units(quantity, leaf, leaves_))
            and (
                not derived_leaves.is_total(leaf)
                or derived_leaves.says_total(claim, quantity.start, quantity.end)
            )
        ]
        if hits:
            near = [leaf for leaf in hits if _mentions(leaf, tokens)]
            hit = (near or hits)[0]
            match(text, quantity.start, quantity.end, hit)
            bad = _unit_conflict(quantity, hit, leaves_)
            if bad is not None:
                unit_conflicts.append(
                    Finding(
                        text, bad.anchor(), bad.value, "contradicts", quantity.start, quantity.end
                    )
                )
            continue
        if (
            values.ident_key(text) in context_words
            or run_words.number_key(quantity.value) in context_words
        ):
            # a number the call passed (an address, the amount of a payout it sent)
            covered.append((quantity.start, quantity.end))
            continue
        rivals = [leaf for leaf, _ in numbers if not leaf.derived]
        pending.append((text, quantity.start, quantity.end, rivals, True))
    # "free of charge", "gebührenfrei", "sans frais": a fee, cost or price of 0
    for start, end in _free_spans(tokens):
        zero = next(
            (leaf for leaf, n in numbers if n == 0 and not leaf.derived and _fee_like(leaf)), None
        )
        if zero is not None and not _covered(covered, start, end):
            match(claim[start:end], start, end, zero)
    # names, identifiers, enum and other string values
    strings = [
        leaf
        for leaf in leaves_
        if isinstance(leaf.value, str)
        and values.number_of(leaf.value) is None
        and values.moment_of(leaf.value) is None
    ]
    for leaf in strings:
        key = values.ident_key(leaf.value)
        if len(key) < NAME_MIN_CHARS or key in STOPWORDS:
            continue
        for start, end in values.find_ident(leaf.value, tokens):
            if not _covered(covered, start, end):
                match(claim[start:end], start, end, leaf)
        # a state said in other words or another language: "abierto" for "open"
        for start, end in values.state_spans(leaf.value, claim):
            if not _covered(covered, start, end):
                match(claim[start:end], start, end, leaf)
    # a state said in the vocabulary's words, or negated ("pas encore expédiée")
    states = state_words.states_said(claim, leaves_ + nulls, covered)
    for said in (s for s in states if s.relation == "matches"):
        match(said.text, said.start, said.end, said.leaf)
    # the records the claim is about: a key it names elsewhere is read in them only
    derived = {leaf.anchor() for leaf in leaves_ if leaf.derived}
    parents = {_parent(f.pointer) for f in matched if f.pointer not in derived}
    # the words of the text values of those records ("Mountain View, CA 94043" of an address)
    # or of a text the claim restates (two content words of it: "free until 24h before")
    texts = [leaf for leaf in strings if 1 < len(str(leaf.value).split()) <= SHORT_TEXT_WORDS]
    words_of = {
        leaf.anchor(): {t for t, _, _ in values.tokens_with_spans(leaf.value)} for leaf in texts
    }
    content = {
        t for t, _, _ in tokens if t not in STOPWORDS and t not in CONNECTIVES and t.isalpha()
    }
    texts = [
        leaf
        for leaf in texts
        if (parents and _in_scope(leaf, parents, [])) or len(content & words_of[leaf.anchor()]) >= 2
    ]
    words_of = {leaf.anchor(): words_of[leaf.anchor()] for leaf in texts}
    # a number inside an identifier the claim matched whole ("RMA-729648") is that identifier
    pending = [e for e in pending if not _covered(covered, e[1], e[2])]
    pending = _tails(claim, pending, strings, match)
    still = []
    for element in pending:
        text, start, end, _, number = element
        holder = next(
            (
                x
                for x in texts
                if number
                and (
                    values.ident_key(text) in words_of[x.anchor()]
                    or _quantity_in(text, str(x.value))
                )
            ),
            None,
        )
        if holder is not None:
            match(text, start, end, holder)
        else:
            still.append(element)
    pending = still
    in_texts = set().union(*words_of.values()) if words_of else set()
    contradicted: list[Finding] = list(unit_conflicts)
    # yes/no facts: "is available" over {"available": true}
    bools = [leaf for leaf in leaves_ if isinstance(leaf.value, bool)]
    # a key word said in another language as a state ("abierta" for `open_now`)
    said_stems = claim_stems | {w for t, _, _ in tokens for w in _state_stems(t)}
    for leaf in bools:
        words = _bool_words(leaf)
        if not words or not all(w in said_stems for w in words):
            continue
        if not _in_scope(leaf, parents, [b for b in bools if _bool_words(b) == words]):
            continue
        spans = [(s, e) for t, s, e in tokens if stem(t) in words or _state_stems(t) & set(words)]
        said = _yes_no_after(claim, tokens, spans[-1][1])
        if said is not None:  # "proxied false", "online: ja": the value given after its key
            flag, flag_end = said
            spans.append((spans[-1][1], flag_end))
        element = claim[spans[0][0] : spans[-1][1]]
        finding = Finding(element, leaf.anchor(), leaf.value, "matches", spans[0][0], spans[-1][1])
        if (flag != leaf.value) if said is not None else (negated != (not leaf.value)):
            finding.relation = "contradicts"
            contradicted.append(finding)
        else:
            matched.append(finding)
            covered.extend(spans)
    # an element that matched no leaf, given right after a key the claim names: contradicts
    unmatched = []
    for text, start, _end, rivals, _ in pending:
        named = [
            leaf
            for leaf in rivals
            if any(0 <= start - e <= NEAR_CHARS for e in _mentions(leaf, tokens))
            and _in_scope(leaf, parents, rivals)
        ]
        if named:
            leaf = named[0]
            contradicted.append(
                Finding(text, leaf.anchor(), leaf.value, "contradicts", start, _end)
            )
        else:
            unmatched.append(text)
    # a string value the claim names by its key but gives otherwise
    in_scope = [leaf for leaf in strings if _in_scope(leaf, parents, strings)]
    contradicted += _string_conflicts(claim, tokens, in_scope, covered, claim_stems)
    contradicted += _mixed_records(matched, leaves_, derived)
    contradicted += _other_states(claim, in_scope, covered)
    contradicted += [
        Finding(s.text, s.leaf.anchor(), s.leaf.value, "contradicts", s.start, s.end)
        for s in states
        if s.relation == "contradicts"
    ]
    contradicted += [
        Finding(text, leaf.anchor(), leaf.value, "contradicts", start, end)
        for text, leaf, start, end in near_identifiers.changed_identifiers(
            claim, strings, lambda a, b: _covered(covered, a, b), context_words
        )
    ]
    if contradicted:
        return Verdict("contradicted", matched, contradicted, unmatched=unmatched)
    keys = {w for leaf in leaves_ for w in leaf.words}
    own_keys = {w for leaf in leaves_ for w in values.key_words(leaf.key)}
    left = [
        (t, s, e)
        for t, s, e in tokens
        if not _covered(covered, s, e)
        and t not in STOPWORDS
        and t not in CONNECTIVES
        and stem(t) not in keys
        and not any(len(k) >= MIN_PREFIX and stem(t).startswith(k) for k in keys)
        and not any(len(t) >= SUFFIX_CHARS and k.endswith(t) for k in own_keys)
        and t not in in_texts
        and stem(t) not in context_words
        and t not in context_words
        and not (t.isdigit() and _covered([(m.start, m.end) for m in claimed_moments], s, e))
    ]
    if left:
        vocab = _vocabulary(leaves_, keys, own_keys, context_words)
        left = [
            x
            for x in left
            if residue.in_code(claim, x[1], x[2])
            or not (glossed(x[0], vocab) or cognate(x[0], vocab))
        ]
    has_bool = any(f for f in matched if isinstance(f.value, bool))
    if has_bool and negated:  # "(not proxied)": the negation is the yes/no value's, checked
        left = [x for x in left if not NEGATION_RE.fullmatch(x[0])]
    # a function word that states a quantity or an order ("all", "only") is judged too
    left += [
        (t, s, e)
        for t, s, e in tokens
        if t in residue.FUNCTION_FACTS and not _covered(covered, s, e) and (t, s, e) not in left
    ]
    left.sort(key=lambda x: x[1])
    residual = [t for t, _, _ in left]
    # a count alone proves nothing, unless the claim names the list it counts ("3 messages")
    counted = {
        leaf.anchor()
        for leaf in leaves_
        if leaf.derived and leaf.unit is None and _mentions(leaf, tokens)
    }
    proven = [f for f in matched if f.pointer not in derived or f.pointer in counted]
    if negated and not has_bool:  # a negation inside a value ("«Pay does not respond»") is its own
        outside = values.blank(claim, covered)
        negated = _negates(outside, language)
    # a key the claim names whose value is nothing (0, null, empty) and none of whose values
    # matched: the claim says what the result does not ("is in stock" over `stock: 0`)
    said_of = {f.pointer for f in matched} | {s.leaf.anchor() for s in states}
    silent = [
        leaf.key
        for leaf in leaves_ + nulls
        if not leaf.derived
        and not isinstance(leaf.value, bool)
        and (leaf.value is None or leaf.value == "" or _zero(leaf.value))
        and leaf.anchor() not in said_of
        and _parent(leaf.anchor()) in parents  # in a record the claim is about
        and _key_mentioned(leaf, claim_stems)
    ]
    if proven and not unmatched and silent:
        reason = f"names {silent[0]!r}, whose value is nothing, and gives none"
        return Verdict("open", matched, [], residual, unmatched, blocking=[reason])
    if proven and not unmatched and (not negated or has_bool):
        if not left:
            return Verdict("supported", matched, [], [])
        # every value matched: the words left decide, each by whether it can carry a fact
        rest = residue.judge(
            claim, left, matched, covered, leaves_, context_words, tokens, language
        )
        if not rest.blocking:
            return Verdict("supported", matched, [], [], unchecked=rest.unchecked)
        return Verdict("open", matched, [], residual, unmatched, blocking=rest.reasons())
    return Verdict("open", matched, [], residual, unmatched)


# "no" and "nos" are "in the" in Portuguese (em + o), whose negation is "não"
_PT_NOT_NEGATION_RE = re.compile(r"\bnos?\b", re.IGNORECASE)


def _negates(text: str, language: str | None) -> bool:
    if language == "pt":
        text = _PT_NOT_NEGATION_RE.sub(lambda m: "_" * len(m.group(0)), text)
    return bool(NEGATION_RE.search(text) or OUT_OF_RE.search(text))


# A yes/no value as a result's restatement writes it after its key ("proxied false", "online:
# yes", "instant: nein"), in the languages agents answer in (folded).
_YES = "true yes enabled si oui vrai ja wahr verdadero vero sim"
_NO = "false no disabled none null non faux nein falsch falso"
YES_NO = {w: True for w in _YES.split()} | {w: False for w in _NO.split()}
_LINK_WORDS = "is was set to es est ist"  # "proxied is false", "set to true"
_LINKS = frozenset(_LINK_WORDS.split())
_GAP_RE = re.compile(r"\s*[:=]?\s*")
# what may follow the yes/no word: the end of a clause ("available, no smoking" is no value)
_FLAG_END_RE = re.compile(r"\s*(?:$|[.,;:)\]!?]|(?:and|or|y|o|et|ou|und|oder|e)\b)", re.I)


def _yes_no_after(
    claim: str, tokens: list[tuple[str, int, int]], end: int
) -> tuple[bool, int] | None:
    """The yes/no word written right after a key that ends at `end`, and where it ends."""
    last = end
    for token, start, stop in tokens:
        if start < end:
            continue
        if not _GAP_RE.fullmatch(claim[last:start]):
            return None
        if token in YES_NO:
            return (YES_NO[token], stop) if _FLAG_END_RE.match(claim, stop) else None
        if token not in _LINKS:
            return None
        last = stop
    return None


# a charge of nothing said in one word, or as "without" and a word for a fee (folded)
_FREE_WORDS = (
    "free gratis gratuit gratuite gratuito gratuita kostenlos kostenfrei gebuhrenfrei "
    "provisionsfrei spesenfrei"
)
FREE_WORDS = frozenset(_FREE_WORDS.split())
_WITHOUT = frozenset(["sin", "sans", "ohne", "senza", "sem", "without", "no"])
_FEE_WORDS = "fee fees charge charges cost costs comision comisiones frais gebuhr gebuhren kosten"
FEE_WORDS = frozenset(_FEE_WORDS.split()) | frozenset(["commissione", "commissioni", "coste"])
_FEE_KEYS = "fee cost price charge commission surcharge"
FEE_STEMS = frozenset(stem(w) for w in _FEE_KEYS.split())


def _free_spans(tokens: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    found = [(s, e) for t, s, e in tokens if t in FREE_WORDS]
    for (one, s, _), (two, _, e) in zip(tokens, tokens[1:], strict=False):
        if one in _WITHOUT and two in FEE_WORDS:
            found.append((s, e))
    return found


def _fee_like(leaf: Leaf) -> bool:
    """A fee, cost or price leaf (by its key path: /fee/value, /shipping_cost)."""
    return bool(set(leaf.words) & FEE_STEMS) or any(
        stem(w) in FEE_STEMS for w in values.key_words(leaf.key)
    )


def _quantity_in(element: str, text: str) -> bool:
    """The claim's number with its unit is one a text value writes ("24 hours" in "free until
    24h before")."""
    claimed = values.quantities(element)
    if len(claimed) != 1:
        return False
    return any(
        values.same_number(claimed[0], q.value) and q.unit == claimed[0].unit
        for q in values.quantities(text)
    )


def _tails(claim: str, pending: list, strings: list[Leaf], match: Any) -> list:
    """A number the claim gives as the end of an identifier ("IBAN endet auf 3882", "card
    ending in 4242") matches a string leaf that ends with it ("DE35****3882"); the rest stay."""
    left = []
    for element in pending:
        text, start, end, _, number = element
        said = TAIL_RE.search(values.fold_keeping_length(claim[max(0, start - 30) : start]))
        tail = values.ident_key(text)
        holder = None
        if said and number and len(tail) >= TAIL_CHARS:
            holder = next(
                (
                    leaf
                    for leaf in strings
                    if values.ident_key(leaf.value).endswith(tail)
                    and len(values.ident_key(leaf.value)) > len(tail)
                ),
                None,
            )
        if holder is None:
            left.append(element)
        else:
            match(claim[start:end], max(0, start - 30) + said.start(), end, holder)
    return left


def _vocabulary(
    leaves_: list[Leaf], keys: set[str], own_keys: set[str], context: set[str]
) -> set[str]:
    """The words a restatement's other words may stand for: the results' keys, the tools'
    names and arguments, and the words of the results' text values."""
    words = set(keys) | set(own_keys) | set(context)
    for leaf in leaves_:
        if isinstance(leaf.value, str) and len(leaf.value) <= 200:
            words |= {t for t, _, _ in values.tokens_with_spans(leaf.value) if t.isalpha()}
    return words


ZERO_DECIMAL = frozenset({"jpy", "krw", "clp", "vnd", "isk"})
# the key words of an amount of money, which payment and delivery APIs may give in minor
# units beside a currency
_MONEY_KEYS = "amount fee fees price cost total subtotal tax tip value balance charge fare payout"
MONEY_KEYS = frozenset(_MONEY_KEYS.split())


def _minor_units(quantity: values.Quantity, leaf: Leaf, leaves_: list[Leaf]) -> bool:
    """An integer amount in the currency's minor units, as payment and delivery APIs write it
    ({"amount": 23000, "currency": "eur"}, {"fee": 675, "currency": "USD"}), stated in major
    units with that currency ("230 €", "$6.75")."""
    if not quantity.currency or quantity.currency in ZERO_DECIMAL:
        return False
    if not isinstance(leaf.value, int) or isinstance(leaf.value, bool) or leaf.derived:
        return False
    if not set(values.key_words(leaf.key)) & MONEY_KEYS:
        return False
    if abs(leaf.value / 100 - quantity.value) > 1e-9 * max(1.0, abs(quantity.value)):
        return False
    for other in leaves_:
        if other.tool != leaf.tool or other.call_id != leaf.call_id:
            continue
        if _parent(other.pointer) != _parent(leaf.pointer) or not isinstance(other.value, str):
            continue
        word = values.fold(other.value).strip()
        code = values.CURRENCY_CODES.get(word) or values.CURRENCY_SYMBOLS.get(word)
        if "currency" in values.key_words(other.key) and code == quantity.currency:
            return True
    return False


def _rival_moment(moment: values.Moment, moments_: list[tuple[Leaf, values.Moment]]) -> bool:
    return any(
        (moment.time and m.time) or (moment.date and m.date and not moment.time)
        for _, m in moments_
    )


def _date_and_time(
    moment: values.Moment, moments_: list[tuple[Leaf, values.Moment]]
) -> tuple[Leaf, Leaf] | None:
    """A claimed date with its time, held by two leaves of one record: a date alone and a time
    alone (the date's leaf first)."""
    if moment.date is None or moment.time is None:
        return None
    day = values.Moment(moment.date, None, None, moment.start, moment.end, moment.weekday)
    clock = values.Moment(None, moment.time, moment.offset, moment.start, moment.end)
    dates = [leaf for leaf, m in moments_ if m.time is None and values.same_moment(day, m)]
    times = [leaf for leaf, m in moments_ if m.date is None and values.same_moment(clock, m)]
    for first in dates:
        for second in times:
            if _parent(first.anchor()) == _parent(second.anchor()):
                return first, second
    return None


def _other_states(claim: str, strings: list[Leaf], covered: list[tuple[int, int]]) -> list[Finding]:
    """A state leaf the claim does not say, where it says the state that excludes it
    ("cerrado" over {"status": "open"}): contradicted, naming the leaf."""
    for leaf in strings:
        if values.state_spans(leaf.value, claim):
            continue
        for start, end in values.opposite_state_spans(leaf.value, claim):
            if not _covered(covered, start, end):
                text = claim[start:end]
                return [Finding(text, leaf.anchor(), leaf.value, "contradicts", start, end)]
    return []


ITEM_RE = re.compile(r"^(?P<list>.*?)/(?P<index>\d+)(?P<rest>/.*)$")


def _holds(element: str, value: Any) -> bool:
    """The claim's element states this leaf's value (a date or time, a number, a name)."""
    moment = values.moment_of(value)
    if moment is not None:
        return any(values.same_moment(m, moment) for m in values.moments(element))
    number = values.number_of(value)
    if number is not None:
        return any(values.same_number(q, number) for q in values.quantities(element))
    return values.ident_key(str(value)) == values.ident_key(element)


def _mixed_records(matched: list[Finding], leaves_: list[Leaf], derived: set[str]) -> list[Finding]:
    """Two elements of one claim matched in two records of one list, where neither record
    holds both ("09:00 Lunch with Sam" when Lunch with Sam is the first event, at 08:00, and
    09:00 the second's start), and the claim names nothing else of the second record in the
    first's place ("Lunch with Sam at 08:00, Hiring panel at 09:00" lists two records): the
    claim pairs what the result keeps apart. The element is reported against the leaf of its
    partner's record that says otherwise."""
    by_anchor = {leaf.anchor(): leaf for leaf in leaves_}
    found = []
    for a in matched:
        for b in matched:
            one, two = ITEM_RE.match(a.pointer), ITEM_RE.match(b.pointer)
            if a is b or not one or not two or a.pointer in derived or b.pointer in derived:
                continue
            if one["list"] != two["list"] or one["index"] == two["index"]:
                continue
            b_in_a = by_anchor.get(f"{one['list']}/{one['index']}{two['rest']}")
            a_in_b = by_anchor.get(f"{two['list']}/{two['index']}{one['rest']}")
            if b_in_a is None or a_in_b is None:
                continue
            if _holds(b.element, b_in_a.value) or _holds(a.element, a_in_b.value):
                continue
            own = [ITEM_RE.match(c.pointer) for c in matched if c is not a]
            if any(
                m
                and m["list"] == two["list"]
                and m["index"] == two["index"]
                and m["rest"] == one["rest"]
                for m in own
            ):
                continue  # b's own record is named beside it: a list of records in one claim
            if not any(f.element == b.element for f in found):
                found.append(
                    Finding(b.element, b_in_a.anchor(), b_in_a.value, "contradicts", b.start, b.end)
                )
    return found


def _in_scope(leaf: Leaf, parents: set[str], rivals: list[Leaf]) -> bool:
    """A leaf is read for this claim when its record holds a value the claim matched, or,
    with nothing matched, when every rival leaf sits in one record (no other to mean)."""
    if parents:
        own = _parent(leaf.anchor())
        return any(own == p or own.startswith(p + "/") or p.startswith(own + "/") for p in parents)
    return len({_parent(r.anchor()) for r in rivals}) <= 1


def _unit_conflict(quantity: values.Quantity, hit: Leaf, leaves_: list[Leaf]) -> Leaf | None:
    """A unit or currency leaf beside the matched number that says otherwise ("72°F" over
    {"temperature": 72, "unit": "celsius"})."""
    siblings = [
        leaf
        for leaf in leaves_
        if leaf.call_id == hit.call_id
        and leaf.tool == hit.tool
        and leaf.pointer.rsplit("/", 1)[0] == hit.pointer.rsplit("/", 1)[0]
        and isinstance(leaf.value, str)
    ]
    for leaf in siblings:
        word = values.fold(leaf.value).strip()
        key = values.fold(leaf.key)
        if quantity.currency and "currency" in key:
            code = values.CURRENCY_CODES.get(word) or values.CURRENCY_SYMBOLS.get(word) or word
            if code != quantity.currency:
                return leaf
        if quantity.unit in ("fahrenheit", "celsius") and "unit" in key:
            unit = values.UNITS.get(word) or values.UNITS.get(word.removeprefix("degrees "))
            if unit in ("fahrenheit", "celsius") and unit != quantity.unit:
                return leaf
    return None


NAME_AFTER_KEY_RE = r"\s*(?:is|was|are|were|of|=|:|-)?\s*(?:the\s+)?(\w[\w.-]*)"


def _string_conflicts(
    claim: str,
    tokens: list[tuple[str, int, int]],
    strings: list[Leaf],
    covered: list[tuple[int, int]],
    claim_stems: set[str],
) -> list[Finding]:
    """'location Chicago' over {"location": "Boston"}: the claim names the key, gives a
    capitalised value right after it that no leaf holds, and the leaf's own value is absent."""
    found = []
    for leaf in strings:
        if not _key_mentioned(leaf, claim_stems) or values.find_ident(leaf.value, tokens):
            continue
        own = [w for w in values.key_words(leaf.key) if w not in STOPWORDS]
        if not own:
            continue
        joined = r"[\s_-]".join(map(re.escape, own))
        pattern = re.compile(r"\b" + joined + r"\b" + NAME_AFTER_KEY_RE, re.IGNORECASE)
        for match in pattern.finditer(claim):
            start, end = match.span(1)
            word = claim[start:end].rstrip(".-")
            end = start + len(word)  # a sentence's full stop is not the value's
            enum_like = re.fullmatch(r"[a-z][a-z0-9_-]*", str(leaf.value)) is not None
            plain = values.fold(word) in STOPWORDS or values.fold(word) in CONNECTIVES
            if not (word[:1].isupper() or enum_like) or plain or _covered(covered, start, end):
                continue
            alone = [(values.fold(word), 0, len(word))]
            if any(values.find_ident(other.value, alone) for other in strings):
                continue
            found.append(Finding(word, leaf.anchor(), leaf.value, "contradicts"))
            break
    return found


def _written_whole(
    claim: str,
    leaves_: list[Leaf],
    context_words: set[str],
    match: Any,
    covered: list[tuple[int, int]],
    pending: list[tuple[str, int, int, list[Leaf], bool]],
) -> list[tuple[int, int]]:
    """The claim's values that are one value though written in parts: a length of time ("3:49",
    "3 min 49 s" over `duration_ms: 229965`), digits in groups ("649 1278 2769" over `id:
    64912782769`) and an IP address or network ("203.45.86.0/24"). Each matches a leaf that
    holds it (or is covered when a call's argument holds it); a network that none holds is
    left pending as one element, never as four numbers. The spans of networks: no number or
    time of the claim is read inside them."""
    whole: list[tuple[int, int]] = []
    timed = [(leaf, s) for leaf in leaves_ for s in derived_leaves.seconds_of(leaf)]
    for duration in values.durations(claim):
        hit = next((leaf for leaf, s in timed if values.same_duration(duration, s)), None)
        if hit is not None and not _covered(covered, duration.start, duration.end):
            match(claim[duration.start : duration.end], duration.start, duration.end, hit)
    for digits, start, end in values.digit_groups(claim):
        if _covered(covered, start, end):
            continue
        hit = next(
            (
                leaf
                for leaf in leaves_
                if not leaf.derived
                and not isinstance(leaf.value, bool | float)
                and re.fullmatch(r"\+?[\d\s().-]+", str(leaf.value))
                and re.sub(r"\D", "", str(leaf.value)) == digits
            ),
            None,
        )
        if hit is not None:
            match(claim[start:end], start, end, hit)
        elif digits in context_words:
            covered.append((start, end))
    nets = [(leaf, values.network_of(leaf.value)) for leaf in leaves_ if not leaf.derived]
    nets = [(leaf, n) for leaf, n in nets if n is not None]
    for normal, start, end in values.networks(claim):
        if _covered(covered, start, end):
            continue
        hit = next((leaf for leaf, n in nets if n == normal), None)
        if hit is not None:
            match(claim[start:end], start, end, hit)
        elif f"%{normal}" in context_words:
            covered.append((start, end))
        else:
            pending.append((claim[start:end], start, end, [leaf for leaf, _ in nets], False))
        whole.append((start, end))
    return whole
