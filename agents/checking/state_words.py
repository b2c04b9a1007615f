"""States and relative days said in words, checked against a run's JSON results.

An answer says a record's state in words of its own language ("Der Merge-Status wird noch
geprüft" over `merge_status: "checking"`, "C'est encore un brouillon" over `Status: "DRAFT"`,
"em distribuição" over "On FedEx vehicle for delivery", "urgenza alta" over `urgency: "high"`)
and a day relative to the run's date ("arrivé hier", "Entrega prevista: hoje").

States: the words are the enum vocabulary's (`enum_vocabulary.yaml`, groups STATE_GROUPS); a
leaf's value says a state when it spells one of its members. A claim's state

- matches a leaf that holds that state, or a state that implies it (IMPLIES: a package out for
  delivery is in transit and shipped);
- negated ("pas encore expédiée", "ainda não foi expedido", "not yet shipped") matches a leaf
  that says the state does not hold: a state that excludes it (EXCLUSIVE: "unfulfilled"), or a
  null whose key names the state (`fulfillment_status: null`, `shipped_at: null`);
- contradicts a leaf whose state excludes it ("delivered" over "In transit", "closed" over
  "open", "bassa" over urgency "high"), or, negated, a leaf that holds it ("not shipped" over
  "fulfilled"), when no leaf matches it and the words are said as the state (a strong word, a
  word beside its role, or a status word right after "is"/"est"/"ist"/"è"/...).

Relative days: "today", "hier", "gestern", "mañana", ... are the run's date plus a number of
days (`run_clock`); `structured` matches them to a date leaf of that day (in the leaf's own zone
or the user's). `day_words` leaves out the words that only look like one ("hier" in German,
"esta mañana"); `day_unheld` says when a day no leaf holds is an element left unmatched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import agents.checking.enum_words as enum_words
import agents.checking.run_clock as run_clock
from stages.common import values
from stages.common.text import stem

# vocabulary groups whose concepts are states a record is in
STATE_GROUPS = frozenset({"status", "priority"})
# groups whose weak words are read as a state after a linking verb ("is closed", "ist offen");
# a priority word needs its role ("urgenza alta"), as "low" and "high" say much else
LINKED_GROUPS = frozenset({"status"})

# a record in the first state is also in each of the others
IMPLIES: dict[str, frozenset[str]] = {
    "status:out_for_delivery": frozenset({"status:in_transit", "status:shipped"}),
    "status:in_transit": frozenset({"status:shipped"}),
    "status:delivered": frozenset({"status:shipped"}),
    "status:triggered": frozenset({"status:active", "status:open"}),
    "status:acknowledged": frozenset({"status:active", "status:open"}),
    "status:in_progress": frozenset({"status:open"}),
}
# states that exclude each other: a state of one set excludes every state of the others in its
# row (a record is in at most one of them)
_EXCLUSIVE_ROWS = (
    ("open active triggered acknowledged in_progress", "closed resolved cancelled"),
    ("active triggered", "inactive cancelled"),
    ("paid", "unpaid"),
    ("draft", "approved paid"),
    ("approved", "rejected"),
    ("unshipped", "shipped in_transit out_for_delivery delivered"),
    ("in_transit out_for_delivery", "delivered"),
    ("merge_checking", "mergeable", "unmergeable"),
)
_EXCLUSIVE_PRIORITY = ("lowest low", "medium", "high highest urgent critical")


def _exclusions() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for group, row in (("status", _EXCLUSIVE_ROWS), ("priority", (_EXCLUSIVE_PRIORITY,))):
        for parts in row:
            sets = [{f"{group}:{w}" for w in part.split()} for part in parts]
            for i, one in enumerate(sets):
                others = set().union(*(s for j, s in enumerate(sets) if j != i))
                for concept in one:
                    table.setdefault(concept, set()).update(others)
    return {k: frozenset(v) for k, v in table.items()}


EXCLUDES = _exclusions()

# words that negate the state said a few words after them, in the six languages (folded;
# "n" is the French "n'", "t" the English "n't")
_NEGATIONS = "not no never t nicht kein keine nie pas n ne jamais non nao nunca nem mai"
NEGATIONS = frozenset(_NEGATIONS.split())
NEGATION_REACH = 4  # words between a negation and the state it negates, at most
# linking verbs and adverbs a state follows when it is said as the record's state (folded)
_LINKS = (
    "is are was were be been being has have had now still already currently "
    "est sont etait ete encore deja desormais actuellement "
    "ist sind war wurde worden hat noch schon jetzt bereits derzeit "
    "e sta stato stata ancora gia ora attualmente "
    "es esta estan fue ha han sido sigue todavia ya ahora actualmente "
    "foi fica ficou ainda ja agora atualmente c"
)
LINKS = frozenset(_LINKS.split())
LINK_REACH = 2
# a state followed by where, when or by whom it happens is an event or an intent, not the
# record's state now ("sera livrée au 58 rue ...", "passa a ser entregue em ...", "opened on
# May 3", "opened by Jane"): no contradiction is read from it
_WHERE = (
    "to at au aux a em en an in nach para al presso na no on le am el il since depuis seit "
    "by par von por da dal"
)
WHERE_WORDS = frozenset(_WHERE.split())
# states whose words, before a place, say where a record goes ("livrée au ...": the shipping
# address), and the key words of the leaf that holds that place
DELIVERY = frozenset({"status:shipped", "status:delivered"})
ADDRESS_STEMS = frozenset({stem("address"), stem("addresses")})
_DESTINATION = "shipping delivery destination recipient ship deliver"
DESTINATION = frozenset(stem(w) for w in _DESTINATION.split())

# the states a null leaves a record in when its key names the state they exclude
# (`fulfillment_status: null`: unfulfilled; `paid_at: null`: unpaid)
NOT_YET = frozenset({"status:unshipped", "status:unpaid"})
# words that close a negated state ("not shipped yet")
YET = frozenset({"yet"})

# keys whose words say nothing of the state a null value leaves unset
_GENERIC = "status state at date time on timestamp value code"
GENERIC_KEYS = frozenset(_GENERIC.split())


@dataclass(frozen=True)
class Said:
    """A state or a day the claim says, and the leaf it matches or contradicts."""

    text: str
    start: int
    end: int
    leaf: Any
    relation: str  # matches | contradicts


def _concepts(value: Any) -> frozenset[str]:
    """The states a leaf's value says, with the states they imply."""
    if not isinstance(value, str) or len(value) > 60:
        return frozenset()
    own = {c for c in enum_words.concepts_of(value) if c.split(":")[0] in STATE_GROUPS}
    return frozenset(own.union(*(IMPLIES.get(c, frozenset()) for c in own)))


@lru_cache(maxsize=1024)
def _key_states(key: str) -> frozenset[str]:
    """The states a key's words name ("shipped" of `shipped_at`, "fulfillment" of
    `fulfillment_status`: a member's other English form)."""
    found: set[str] = set()
    members = enum_words.tables().members
    for word in values.key_words(key):
        if word in GENERIC_KEYS or len(word) < 4:
            continue
        for member, concepts in members.items():
            if member == word or (
                len(member) >= 4 and member.isalpha() and enum_words.english_form(member, word)
            ):
                found |= {c for c in concepts if c.split(":")[0] in STATE_GROUPS}
    return frozenset(found)


def _said(leaf: Any) -> frozenset[str]:
    """The states a leaf says hold: its value's, or, for a null, the not-yet state of what its
    key names."""
    if leaf.value is None:
        named = _key_states(leaf.key)
        return frozenset(c for c in NOT_YET if EXCLUDES.get(c, frozenset()) & named)
    return _concepts(leaf.value)


def _denied(leaf: Any) -> frozenset[str]:
    """The states a leaf says do not hold: those its state excludes, or, for a null, the
    states its key names and every state that implies one of them."""
    if leaf.value is None:
        named = _key_states(leaf.key)
        return frozenset(named | {c for c, implied in IMPLIES.items() if implied & named})
    said = _concepts(leaf.value)
    return frozenset().union(*(EXCLUDES.get(c, frozenset()) for c in said))


def _negation(msg: enum_words.Message, first: int) -> int | None:
    """The word index of a negation a few words before word `first`, in the same clause (the
    first of two: "n'est pas", "ne ... pas")."""
    found = None
    for k in range(first - 1, max(-1, first - 1 - NEGATION_REACH), -1):
        if msg.sentence[k] != msg.sentence[first]:
            break
        between = msg.text[msg.tokens[k][2] : msg.tokens[k + 1][1]]
        if any(mark in between for mark in ",;:()"):
            break
        if msg.words[k] in NEGATIONS and _negation_word(msg, k):
            found = k
    return found


def _negation_word(msg: enum_words.Message, k: int) -> bool:
    """The word negates: "n" only as the French "n'" (not "n°"), "t" only as "n't"."""
    _, start, end = msg.tokens[k]
    if msg.words[k] == "n":
        return msg.text[end : end + 1] in ("'", "’")
    if msg.words[k] == "t":
        return msg.text[max(0, start - 2) : start] in ("n'", "n’")
    return True


def _role_beside(msg: enum_words.Message, first: int, after: int, group: str) -> tuple[int, int]:
    """The state's words with a word of its role right beside them ("urgenza alta",
    "priorité : haute"): the role word is the key the state is the value of."""
    role = enum_words.tables().context.get(group, [])
    for k in (first - 1, after):
        if 0 <= k < len(msg.words) and msg.sentence[k] == msg.sentence[first]:
            lo, hi = min(k, first), max(k + 1, after)
            gap = msg.text[msg.tokens[lo][2] : msg.tokens[lo + 1][1]] if k < first else ""
            gap += msg.text[msg.tokens[after - 1][2] : msg.tokens[k][1]] if k >= after else ""
            if gap.strip(" :-") == "" and any(enum_words._matches(p, msg.words[k]) for p in role):
                return lo, hi
    return first, after


def _linked(msg: enum_words.Message, first: int) -> bool:
    """The words right before word `first` link it to the record ("est encore", "ist")."""
    return any(
        msg.words[k] in LINKS and msg.sentence[k] == msg.sentence[first]
        for k in range(max(0, first - LINK_REACH), first)
    )


def states_said(
    claim: str, leaves: Sequence[Any], covered: Sequence[tuple[int, int]]
) -> list[Said]:
    """The states `claim` says in words, each with the leaf it matches or contradicts.
    `covered`: character spans already matched (a value the claim writes as the result does)."""
    msg = enum_words.message(claim)
    if not msg.found:
        return []
    held = [(leaf, _said(leaf), _denied(leaf)) for leaf in leaves]
    held = [(leaf, said, denied) for leaf, said, denied in held if said or denied]
    if not held:
        return []
    by_span: dict[tuple[int, int], list[enum_words.Mention]] = {}
    for mention in msg.found:
        if mention.concept.split(":")[0] in STATE_GROUPS:
            by_span.setdefault((mention.start, mention.end), []).append(mention)
    spans = sorted(by_span, key=lambda span: (span[0], -span[1]))
    matched: list[Said] = []
    words: list[tuple[int, int]] = []  # the word spans matched, with their role words
    rest = []
    for first, after in spans:
        start, end = msg.tokens[first][1], msg.tokens[after - 1][2]
        if any(s <= start and end <= e for s, e in covered) or _within(first, after, words):
            continue
        group = by_span[(first, after)]
        negation = _negation(msg, first)
        agree = 1 if negation is None else 2  # the leaf's said (1) or denied (2) states
        concepts = {m.concept for m in group}
        hit = next((h for h in held if concepts & h[agree]), None)
        if hit is None:
            rest.append((first, after, negation, agree))
            continue
        lo, hi = _role_beside(msg, first, after, group[0].concept.split(":")[0])
        if negation is not None:
            lo = min(lo, negation)
            if hi < len(msg.words) and msg.words[hi] in YET:
                hi += 1
        while lo > 0 and first - lo < LINK_REACH and msg.words[lo - 1] in LINKS:
            lo -= 1  # the linking verb that says it ("a été livré", "wurde zugestellt")
        start, end = msg.tokens[lo][1], msg.tokens[hi - 1][2]
        matched.append(Said(claim[start:end], start, end, hit[0], "matches"))
        words.append((lo, hi))
    found = list(matched)
    # the event a date leaf's key names ("opened" of `opened_at`): a time, not a state
    events = {
        w
        for leaf in leaves
        if leaf.value is not None and values.moment_of(leaf.value) is not None
        for w in values.key_words(leaf.key)
    }
    for first, after, negation, agree in rest:
        if _within(first, after, words):
            continue  # a role word of a state matched beside it ("urgence" of "urgence haute")
        group = by_span[(first, after)]
        if after < len(msg.words) and msg.words[after] in WHERE_WORDS:
            where = _destination(msg, after + 1, leaves)
            if where is not None and {m.concept for m in group} & DELIVERY:
                start, end = msg.tokens[first][1], msg.tokens[after][2]
                found.append(Said(claim[start:end], start, end, where, "matches"))
            continue
        if events & set(msg.words[first:after]):
            continue
        if not any(_said_as_state(msg, m, first, after, held) for m in group):
            continue
        concepts = {m.concept for m in group}
        other = next((h for h in held if concepts & h[3 - agree]), None)
        if other is not None:
            start = msg.tokens[first if negation is None else negation][1]
            end = msg.tokens[after - 1][2]
            found.append(Said(claim[start:end], start, end, other[0], "contradicts"))
            words.append((first, after))
    return found


def _destination(msg: enum_words.Message, k: int, leaves: Sequence[Any]) -> Any:
    """The shipping or delivery address leaf whose value the claim writes from word `k` on
    ("livrée au 58 rue Oberkampf", "entregue em Rua Augusta 229")."""
    if k >= len(msg.tokens):
        return None
    start = msg.tokens[k][1]
    for leaf in leaves:
        path = set(leaf.words)
        if not isinstance(leaf.value, str) or not (path & ADDRESS_STEMS and path & DESTINATION):
            continue
        if any(s == start for s, _ in values.find_ident(leaf.value, msg.tokens[k:])):
            return leaf
    return None


def _within(first: int, after: int, spans: list[tuple[int, int]]) -> bool:
    return any(lo < after and first < hi for lo, hi in spans)


def _said_as_state(
    msg: enum_words.Message,
    mention: enum_words.Mention,
    first: int,
    after: int,
    held: list[tuple[Any, frozenset[str], frozenset[str]]],
) -> bool:
    """A state word said as the record's state, not in passing: a strong word, a weak one
    beside its role (its group's words or a state leaf's key), or a status word right after a
    linking verb. A word of the group's role itself ("urgence") is no state."""
    role = enum_words.tables().context.get(mention.concept.split(":")[0], [])
    if any(enum_words._matches(p, w) for p in role for w in msg.words[first:after]):
        return False
    if not mention.weak:
        return True
    group = mention.concept.split(":")[0]
    if group in LINKED_GROUPS and _linked(msg, first):
        return True
    keys = [w for leaf, _, _ in held for w in enum_words.role_words(str(leaf.key))]
    return enum_words._in_role(msg, first, after, role, keys, ())


# ----------------------------------------------------------------------------- relative days

# a day word read otherwise before these words ("esta mañana": this morning; "heute Morgen")
_MORNING = {
    "manana": "la esta por de cada toda una",
    "morgen": "am heute gestern guten jeden diesen den der einen",
}
NOT_A_DAY_AFTER = {word: frozenset(before.split()) for word, before in _MORNING.items()}
# "hier" is "here" in German: not a day in a claim with these German words
_GERMAN = "ist sind und der die das nicht ein eine wird wurde mit von auf noch"
GERMAN_WORDS = frozenset(_GERMAN.split())


def day_words(claim: str) -> list[tuple[int, int, int]]:
    """(days from the run's today, start, end) of each word of `claim` that names a day counted
    from today ("hoje", "arrived yesterday"), without the words that only look like one."""
    folded = values.fold_keeping_length(claim)
    words = {t for t, _, _ in values.tokens_with_spans(claim)}
    found = []
    for shift, start, end in run_clock.day_words(claim):
        word = folded[start:end].lower()
        before = folded[:start].split()
        previous = before[-1].strip(",.;:") if before else ""
        if previous in NOT_A_DAY_AFTER.get(word, ()):
            continue
        if word == "hier" and words & GERMAN_WORDS:
            continue
        found.append((shift, start, end))
    return found


def day_unheld(text: str, leaves: Sequence[Any], words: set[str]) -> bool:
    """A day (`text`: its word) no leaf holds, where the result has dates it could mean, and the
    word is not itself a key of the result or a word of the calls (`{"today": {...}}`)."""
    said = {t for t, _, _ in values.tokens_with_spans(text)}
    said |= {stem(t) for t in said}
    keys = {w for leaf in leaves for w in (*values.key_words(leaf.key), *leaf.words)}
    if said & (keys | words):
        return False
    return any(
        not getattr(leaf, "derived", False) and values.moment_of(leaf.value) is not None
        for leaf in leaves
    )
