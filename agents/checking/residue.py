"""Which words left over by the structural check (`agents.checking.structured`) can still carry
a fact, in the languages agents answer in (English, Spanish, French, German, Italian,
Portuguese; folded: lower case, no accents).

A claim over a JSON result whose every checkable element matched a leaf (at least one proven,
none unmatched, none contradicted) may hold other words: the answer's own verbs and nouns
("Arriverebbero 1.170,86 CHF", "Die Operation endete mit Status DONE"). A word blocks the claim
(it stays `open`, for the judge) only when it is of a kind that can state a fact the match has
not checked; every other left-over word is residue, reported as unchecked. Decided per word, by
what it is, never by how many there are:

- a name: a capitalised word that does not start its sentence, an all-caps word, a word with
  digits, a word with a capital inside ("PepsiCo"), or a capitalised first word written before a
  code in brackets ("Airbus (AIR.PA)");
- a negation, or a word that changes one ("not yet", "noch nicht", "pas encore");
- a quantifier ("all", "only", "tous", "nur"), unless it is true of the leaves by construction:
  every item of the list the claim's value sits in holds that value ("Tous en STANDARD" over
  objects that all have StorageClass STANDARD; "both" over a list of two);
- a date, a time or a relative day (weekday and month names, "today", "hier", "heute"): those
  are values to match, not residue;
- a state, an enum member or a yes/no word (the state tables of `stages.common.values`, the
  groups of `enum_vocabulary.yaml`, STATES here) that no leaf and no argument of the run
  holds: said in words, a state the result does not hold is a contradiction;
- a number, a unit, a currency or a price said in words ("three", "free", "gratis");
- a comparison, a superlative or an order ("above", "cheapest", "più", "first", "dernier"),
  unless it is checked by construction: it restates the direction of a filter the call itself
  applied (`> 100` in a query's arguments: "149 orders above that amount"), the matched value
  is the least (most) of its list ("l'offerta più economica costa 1.377,49 €"), or "last"
  restates the key of the value it is said of (`/latestStatusDetail/scanLocation/city`);
- the word right after a matched number, naming what it counts ("3 threads" over a count of
  messages), where no key, argument or gloss says it;
- a word of the restatement glossary (`restatement_words`: "supprimé", "cancelado") whose
  meaning the run does not hold: an action or a field the run has nothing of;
- (a sentence of advice or a hedge inside the claim, `answer_framing`, is set aside whole);
- any left-over word in a part of the claim (between commas, semicolons, brackets, full stops
  or a conjunction) that holds no value matched or passed by the call: a clause added beside
  the checked ones ("…, and shipping is free") states something nothing checked.

Some words state nothing beside what the values check, by construction: an idiom that a
thing holds ("is in place", "in Kraft"); "local time" ("heure locale", "Ortszeit") in a sentence
with a matched time; "under"/"sous"/"unter" before a path every part of which a call passed (its
prefix); "the last N days" ("les N derniers jours", "die letzten N Tage") where a call's
argument sets a window of N days (`maxAgeInDays: N`); a part of a hyphenated compound
("drop-off": the compound names no state, so "off" does not); a weak enum word ("leitura",
"view") away from every word of its role. In German, a capitalised word after an article or a
determiner ("die Regel", "in der Testphase") is a noun, not a name: it is judged like any other
word (a state, a glossary word, a clause with no value). A value written across a comma
("Samstag, 6 März") is in both clauses it spans.

A word for a date's kind ("Fecha:") beside a matched date is that date's label. In a
Portuguese answer "no" is "in the" (its negation is "não").

A leading answer particle ("Yes:", "Oui :", "Sí,", "Ja,", "Sim:", "Sì:") is not a fact by
itself: it is consistent with a count above zero or a true yes/no value, and blocks where the
matched values include a zero or the result a false yes/no value. A leading "No" is a
negation and stays checked as one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import agents.checking.answer_framing as answer_framing
import agents.checking.enum_words as enum_words
import agents.checking.run_clock as run_clock
from agents.checking.restatement_words import GLOSSARY
from stages.common import values

VERSION = "1.2.0"


CHECKED = ""  # a word the check made true by construction: neither blocking nor unchecked


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


NEGATIONS = _words(
    "not no never none neither nor without cannot nothing nobody nowhere t "
    "nicht kein keine keinen keinem keiner keines nie niemals nichts ohne weder "
    "ne n pas ni jamais aucun aucune rien sans nul nulle "
    "nunca ningun ninguna ninguno nada sin tampoco jamas "
    "non mai nessuno nessuna niente nulla senza neanche nemmeno "
    "nao nenhum nenhuma sem nem"
)
# what turns a state into its absence or its future beside a negation ("not yet", "noch nicht")
PARTNERS = _words("yet still anymore longer noch mehr encore plus ainda todavia aun ancora piu ja")
UNIVERSAL = _words(
    "all every each everything everyone everybody entire whole "
    "tous toutes tout chaque chacun chacune "
    "alle allen aller alles jede jeder jedes jeden jedem samtliche "
    "todos todas todo cada "
    "tutti tutte tutto ogni ciascuno ciascuna "
    "cada todos todas"
)
BOTH = _words("both beide beiden ambos ambas entrambi entrambe")
RESTRICTIVE = _words(
    "only solely just exclusively merely nur lediglich ausschliesslich allein "
    "seulement uniquement seul seule seuls seules solo sola solamente unicamente "
    "soltanto unicamente apenas somente so"
)
# words for days relative to today, besides the weekday and month names of `values`: the run
# clock's, and those that name a part of a day or a day beside another
RELATIVE_DAYS = run_clock.DAY_WORDS | _words(
    "weekend anoche pasado aujourd hui soir veille lendemain abend stamattina"
)
NUMBER_WORDS = _words(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty "
    "hundred thousand million billion dozen half twice double triple single "
    "cero dos tres cuatro cinco seis siete ocho nueve diez once doce veinte cien ciento mil "
    "millon millones medio media doble "
    "deux trois quatre cinq six sept huit neuf dix onze douze vingt cent mille moitie "
    "null zwei drei vier funf sechs sieben acht neun zehn elf zwolf zwanzig hundert tausend "
    "halb halbe doppelt "
    "due tre quattro cinque sei sette otto nove dieci undici dodici venti cento mezzo "
    "dois duas quatro sete oito nove dez onze doze vinte cem metade dobro"
)
PRICE_WORDS = _words(
    "free gratis gratuit gratuite gratuits gratuites gratuito gratuita gratuitos gratuitas "
    "kostenlos kostenfrei gebuhrenfrei provisionsfrei spesenfrei umsonst "
    "cheap expensive cher chere chers cheres teuer billig gunstig barato barata caro cara "
    "economico economica economici economiche costoso costosa"
)
# a direction: what a filter's `>` or `<` says
UP = _words(
    "above over more greater exceeding exceeds higher upward "
    "uber mehr oberhalb hoher "
    "dessus superieur superieure superieurs superieures "
    "encima mayor mayores superior superiores mas "
    "sopra oltre maggiore maggiori "
    "acima maior maiores mais"
)
DOWN = _words(
    "below under less fewer lower downward "
    "unter weniger unterhalb niedriger "
    "moins dessous inferieur inferieure inferieurs inferieures "
    "debajo menor menores inferior inferiores menos "
    "sotto meno minore minori "
    "abaixo"
)
# comparisons that no filter states, superlatives and orders
RANKS = _words(
    "most least best worst top bottom first last latest earliest next previous prior "
    "cheapest cheaper dearest biggest bigger largest larger smallest smaller highest lowest "
    "fastest faster slowest slower longest longer shortest shorter nearest closest farthest "
    "newest newer oldest older earlier later better worse same different late early soon "
    "tarde temprano pronto tard tot bientot spat fruh bald tardi presto cedo logo "
    "premier premiere premiers dernier derniere derniers dernieres prochain prochaine "
    "precedent precedente meilleur meilleure pire moindre meme memes "
    "erste ersten erster erstes letzte letzten letzter letztes nachste nachsten vorherige "
    "beste besten schlechteste hochste niedrigste gunstigste billigste teuerste schnellste "
    "besser schlechter grosser kleiner fruher spater gleich gleiche anders andere "
    "primero primera primeros ultimo ultima ultimos ultimas proximo proxima anterior "
    "mejor mejores peor peores mismo misma distinto distinta "
    "primo prima primi ultimi ultime prossimo prossima precedente migliore peggiore stesso "
    "stessa diverso diversa "
    "primeiro primeira melhor pior mesmo mesma diferente"
)
# a change said by its direction: true of a matched change of that sign ("fell 2.3 %" over -2.3)
RISE = _words(
    "rose risen rising rises gained gaining gains climbed climbing increased increasing grew "
    "grown jumped up upward subio sube subido aumento aumentado ganado hausse monte augmente "
    "progresse gestiegen steigt zugelegt gewonnen salito aumentato guadagnato rialzo "
    "subiu aumentou ganhou valorizou"
)
FALL = _words(
    "fell fallen falling falls dropped dropping declined declining decreased decreasing lost "
    "losing slipped plunged down downward bajo cayo caido disminuyo perdido baisse chute "
    "recule diminue perdu gefallen fallt gesunken verloren sceso scende calato diminuito perso "
    "ribasso caiu diminuiu perdeu desvalorizou queda"
)
CHANGE_KEYS = frozenset({"change", "delta", "diff", "difference", "variation", "growth", "trend"})
# the ends of a list's range: true of a value that is the least (or the most) of its list
LEAST = _words(
    "cheapest lowest smallest least fewest shortest earliest billigste billigsten gunstigste "
    "gunstigsten niedrigste niedrigsten kleinste kleinsten"
)
MOST = _words(
    "highest largest biggest priciest longest latest hochste hochsten teuerste teuersten "
    "grosste grossten"
)
CHEAP = _words("cheap economico economica economici economiche barato barata baratos baratas")
CHEAP |= _words("billig gunstig economique economiques")
DEAR = _words("expensive cher chere chers cheres caro cara caros caras costoso costosa teuer")
# the words that make an adjective a superlative: "più economica", "la plus chère", "am billigsten"
DEGREE = _words("most piu mas plus mais")
# "last": true of a value whose own key path says it is the latest
LATEST = _words("last latest dernier derniere letzte letzten letzter ultimo ultima ultimos ultimas")
LATEST_KEYS = frozenset({"latest", "last", "recent", "newest"})
MOMENT_STEMS = frozenset({"date", "day", "time", "hour"})
# function words that state a quantity or an order: checked though a restatement's function
# words are not ("all", "only", "more")
FUNCTION_FACTS = _words("all only more most same")
# states and outcomes beside those of `values.STATE_WORDS` and the enum vocabulary
STATES = _words(
    "refunded reembolsado reembolsada rembourse remboursee erstattet ruckerstattet rimborsato "
    "rimborsata voided expired expirado expirada expire expiree abgelaufen scaduto scaduta "
    "disputed suspended suspendido suspendida suspendu suspendue gesperrt sospeso sospesa "
    "suspenso suspensa archived archivado archivada archive archivee archiviert archiviato "
    "arquivado paused pausado pausada pausiert overdue vencido vencida uberfallig scaduto "
    "delayed retrasado retrasada verspatet ritardo atrasado atrasada lost perdido perdida "
    "verloren perso persa blocked bloqueado bloqueada bloque bloquee blockiert bloccato "
    "locked unlocked deleted removed bounced rebote rebotado rebotada rejete rejetee "
    "unzustellbar rimbalzato rimbalzata devolvido devolvida escalated escalado escalada "
    "escalade eskaliert escalato escalata cancelled canceled declined rejected"
)
YES_WORDS = _words("yes yeah yep oui si ja sim")
# idioms that say a thing exists and holds, nothing beside the value they follow ("is in place")
IDIOMS = (
    ("in", "place"), ("en", "place"), ("en", "vigor"), ("in", "kraft"), ("in", "vigore"),
    ("em", "vigor"), ("en", "vigueur"), ("il", "fait"),
)  # fmt: skip
# a time said to be the place's own: true of the time a result gives, beside a matched time
LOCAL_TIME = (
    ("local", "time"), ("your", "time"), ("heure", "locale"), ("votre", "heure"),
    ("hora", "local"), ("su", "hora"), ("tu", "hora"), ("ortszeit",), ("lokale", "zeit"),
    ("ora", "locale"), ("sua", "hora"),
)  # fmt: skip
# "under alb/2027/": where a path a call passed sits, not a comparison
PATH_WORDS = _words("under sous unter bajo sotto sob")
# "the last 90 days": a window of time back from now, as a call's argument sets it
WINDOW_LAST = _words(
    "last past ultimos ultimas derniers dernieres letzten vergangenen ultimi ultime passati "
    "pasados passes"
)
WINDOW_UNITS = {
    "day": _words("day days dia dias jour jours tag tage tagen giorno giorni"),
    "hour": _words("hour hours hora horas heure heures stunde stunden ora ore"),
    "week": _words("week weeks semana semanas semaine semaines woche wochen settimana settimane"),
    "month": _words("month months mes meses mois monat monate monaten mese mesi"),
}
WINDOW = "@window:"  # a context word: a call argument sets a window of N units ("@window:day#90")
# German articles and determiners (with their contractions): the capitalised word after one is
# a noun, as German writes every noun ("die Regel", "das Abo", "in der Testphase")
DE_DETERMINERS = _words(
    "der die das den dem des ein eine einen einem einer eines kein keine keinen keinem keiner "
    "keines dieser diese dieses diesen diesem jeder jede jedes jeden jedem im am zum zur vom "
    "beim ins mein meine meinen meinem meiner meines dein deine deinen deinem deiner deines "
    "sein seine seinen seinem seiner seines ihr ihre ihren ihrem ihrer ihres unser unsere "
    "unseren unserem unserer euer eure euren eurem eurer"
)
# Portuguese function words that are a negation or a comparison in Spanish or English
PT_FUNCTION_WORDS = _words("no nos mas")
_FIRST_CHARS = ".!?:;\n•"
CLAUSE_RE = re.compile(
    r"[;()\[\]|–—]|,(?!\d)|\.(?=\s|$)|"
    r"\s(?:and|but|or|while|whereas|und|aber|oder|sondern|et|mais|ou|y|pero|o|sino|e|ma|"
    r"oppure|mas)\s",
    re.IGNORECASE,
)
STOPS = "()[]{}\"'«»“”„‘’`"
# a code written as one run: a path, an address, a handle, a dotted or hyphenated name with digits
JOINED_CODE_RE = re.compile(r"\w[/_@#]\w|[^\W\d]\.[^\W\d]|(?=.*\d).*\w-\w")
BRACKETED_CODE_RE = re.compile(r"\s*\(\s*[A-Z0-9][A-Z0-9.:\-]*\s*\)")
IPV4_RE = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?")
ITEM_RE = re.compile(r"^(?P<list>.*?)/(?P<index>\d+)(?P<rest>/.*)$")
FILTER_UP = "@filter>"  # a context word: a call argument filters on "greater than"
FILTER_DOWN = "@filter<"
CONTEXT = enum_words.CONTEXT_WINDOW  # words either side of a weak word where its role may be
# comparison operators and argument keys as APIs and queries write them
_UP_RE = re.compile(r"(?<![<>=!-])>=?(?![>=])|\$gte?\b|\bgte?\b|\bmin(?:imum)?[_A-Z]")
_DOWN_RE = re.compile(r"(?<![<>=!-])<=?(?![<=>-])|\$lte?\b|\blte?\b|\bmax(?:imum)?[_A-Z]")
# enum groups whose words are dates and times: values to match, never covered as a state
_TIME_GROUPS = frozenset({"weekday", "month", "time of day"})


@dataclass(frozen=True)
class Word:
    text: str  # as the claim writes it
    folded: str
    start: int
    end: int


@dataclass
class Residue:
    blocking: list[tuple[str, str]]  # (word, why it can carry a fact)
    unchecked: list[str]  # words left over that carry none

    def reasons(self) -> list[str]:
        return [f"'{w}' {why}" for w, why in self.blocking]


def filter_words(args: Any) -> set[str]:
    """The directions a call's arguments filter on (`total_cents > 10000`, `{"min_price": 5}`,
    `{"amount": {"$gte": 5}}`), as context words `judge` reads."""
    found: set[str] = set()
    for text in _strings_and_keys(args):
        if _UP_RE.search(text):
            found.add(FILTER_UP)
        if _DOWN_RE.search(text):
            found.add(FILTER_DOWN)
    return found


def window_words(args: Any) -> set[str]:
    """The windows of time a call's arguments set (`{"maxAgeInDays": 90}`: 90 days back), as
    context words `judge` reads."""
    found: set[str] = set()
    for key, value in _keyed_scalars(args):
        number = values.number_of(value) if isinstance(value, int | float | str) else None
        if number is None or isinstance(value, bool):
            continue
        said = {k.removesuffix("s") for k in values.key_words(key)}
        found |= {f"{WINDOW}{unit}#{number:g}" for unit in WINDOW_UNITS if unit in said}
    return found


def _keyed_scalars(value: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, child in value.items():
            if isinstance(child, dict | list):
                yield from _keyed_scalars(child)
            else:
                yield str(key), child
    elif isinstance(value, list):
        for child in value:
            yield from _keyed_scalars(child)


def _phrases_at(tokens: list[tuple[str, int, int]], phrases: Iterable[tuple[str, ...]]):
    """The spans (first start, last end) of each phrase among the tokens."""
    words = [t for t, _, _ in tokens]
    for phrase in phrases:
        n = len(phrase)
        for i in range(len(words) - n + 1):
            if tuple(words[i : i + n]) == phrase:
                yield tokens[i][1], tokens[i + n - 1][2]


def _windows_at(tokens: list[tuple[str, int, int]], context_words: set[str]):
    """The spans of "the last N days" ("les N derniers jours") whose window a call's argument
    sets: a restatement of that argument."""
    for i in range(len(tokens) - 2):
        three = [t for t, _, _ in tokens[i : i + 3]]
        number, last = (three[1], three[0]) if three[0] in WINDOW_LAST else (three[0], three[1])
        n = values.number_of(number) if number.isdigit() else None
        if last not in WINDOW_LAST or n is None:
            continue
        for unit, words in WINDOW_UNITS.items():
            if three[2] in words and f"{WINDOW}{unit}#{n:g}" in context_words:
                yield tokens[i][1], tokens[i + 2][2]


def _compound(claim: str, word: Word) -> tuple[str, ...] | None:
    """The folded parts of the hyphenated compound of letters the word is a part of
    ("drop-off"), or None."""
    joined = _joined(claim, word)
    if "-" not in joined or not re.fullmatch(r"[^\W\d_]+(?:-[^\W\d_]+)+", joined):
        return None
    return tuple(values.fold(p) for p in joined.split("-"))


def _path_restated(claim: str, word: Word, context_words: set[str]) -> bool:
    """The word ("under alb/2027/02/04/") is followed by a path every part of which a call
    passed (its prefix or folder): where the things sit, not a comparison."""
    following = re.match(r"\s+(\S+)", claim[word.end :])
    if word.folded not in PATH_WORDS or following is None or "/" not in following[1]:
        return False
    parts = [t for t, _, _ in values.tokens_with_spans(following[1])]
    return bool(parts) and all(p in context_words for p in parts)


def _strings_and_keys(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield str(key)
            yield from _strings_and_keys(child)
    elif isinstance(value, list):
        for child in value:
            yield from _strings_and_keys(child)
    elif isinstance(value, str):
        yield value


def _sentence_first(claim: str, word: Word, previous_end: int | None) -> bool:
    gap = claim[previous_end or 0 : word.start]
    return previous_end is None or any(c in gap for c in _FIRST_CHARS)


def _joined(claim: str, word: Word) -> str:
    """The run of characters without a space or a bracket the word is written in."""
    start, end = word.start, word.end
    while start > 0 and not claim[start - 1].isspace() and claim[start - 1] not in STOPS:
        start -= 1
    while end < len(claim) and not claim[end].isspace() and claim[end] not in STOPS:
        end += 1
    return claim[start:end].rstrip(".,;:!?")


def in_code(claim: str, start: int, end: int) -> bool:
    """The word at start:end is a part of a code written as one run (an address, a path):
    a word there is a character of the code, never a cognate or a gloss of a word."""
    word = Word(claim[start:end], "", start, end)
    return JOINED_CODE_RE.search(_joined(claim, word)) is not None


def _name_like(claim: str, word: Word, previous_end: int | None, noun: bool = False) -> bool:
    """`noun`: the word follows a German article or determiner, where a capital marks a noun."""
    text = word.text
    joined = _joined(claim, word)
    if any(c.isdigit() for c in text) or JOINED_CODE_RE.search(joined):
        return True  # a part of a path, an address or a code: "billing-service-legacy"
    if len(text) >= 2 and text.isupper():
        return True
    if any(c.isupper() for c in text[1:]):
        return True
    if not text[:1].isupper() or noun:
        return False
    if not _sentence_first(claim, word, previous_end):
        return True
    return BRACKETED_CODE_RE.match(claim, word.end) is not None


def _clauses(claim: str) -> list[tuple[int, int]]:
    cuts = [0]
    for match in CLAUSE_RE.finditer(claim):
        cuts += [match.start(), match.end()]
    cuts.append(len(claim))
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]


SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")


def _sentences(claim: str) -> list[tuple[int, int]]:
    cuts = [0] + [m.end() for m in SENTENCE_END_RE.finditer(claim)] + [len(claim)]
    return [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1) if cuts[i] < cuts[i + 1]]


def _same_clause(claim: str, one: int, two: int) -> bool:
    return any(a <= one < b and a <= two < b for a, b in _clauses(claim))


def _counts(claim: str, word: Word, matched: list[Any]) -> bool:
    """The word follows a matched number with nothing but a space between: it names what
    the number counts or measures ("3 threads")."""
    return any(
        f.end <= word.start
        and not claim[f.end : word.start].strip()
        and not IPV4_RE.fullmatch(claim[f.start : f.end])
        and not isinstance(f.value, bool)
        and _one_quantity(f.element)
        and values.moment_of(f.value) is None
        for f in matched
    )


def _one_quantity(element: str) -> bool:
    """The element is one number with its unit or currency, nothing else (not an address)."""
    found = values.quantities(element)
    return (
        len(found) == 1
        and not element[: found[0].start].strip(" #")
        and not (element[found[0].end :].strip())
    )


def _sign(finding: Any) -> bool | None:
    """Whether a matched change (a leaf whose key says it is one: `change`, `delta`) is a rise
    (True) or a fall (False); None for any other value."""
    if isinstance(finding.value, bool):
        return None
    if not set(values.key_words(finding.pointer)) & CHANGE_KEYS:
        return None
    number = values.number_of(finding.value)
    if number is None or number == 0:
        return None
    return number > 0 and not str(finding.value).strip().startswith("-")


def _held_concepts(held: Iterable[str]) -> set[str]:
    concepts: set[str] = set()
    for value in held:
        concepts |= enum_words.concepts_of(value)
        for state in values.STATE_WORDS.get(values.fold(value).replace("_", " ").strip(), ()):
            concepts.add(f"state:{state}")
    return concepts


def _strong_concepts(word: str) -> set[str]:
    """The concepts a word names by itself, with no word of their role beside it."""
    concepts = {m.concept for m in enum_words.mentions((word,)) if not m.weak}
    concepts |= enum_words.concepts_of(word)
    return concepts | {f"state:{s}" for s in values.STATE_WORDS.get(word, ())}


def _named_concepts(word: str) -> set[str]:
    concepts = {m.concept for m in enum_words.mentions((word,))} | enum_words.concepts_of(word)
    concepts |= {f"state:{s}" for s in values.STATE_WORDS.get(word, ())}
    return concepts


def _universal_true(matched: list[Any], leaves: list[Any], both: bool) -> bool:
    """Every item of the list a matched value sits in holds that value at the same place (and
    there are two of them, for "both")."""
    by_anchor = {leaf.anchor(): leaf for leaf in leaves}
    for finding in matched:
        item = ITEM_RE.match(finding.pointer)
        if item is None or isinstance(finding.value, bool):
            continue
        count = by_anchor.get(item["list"])
        if count is None or not count.derived or not isinstance(count.value, int):
            continue
        if both and count.value != 2:
            continue
        own = values.ident_key(str(finding.value))
        others = [by_anchor.get(f"{item['list']}/{i}{item['rest']}") for i in range(count.value)]
        if all(o is not None and values.ident_key(str(o.value)) == own for o in others):
            return True
    return False


def _extreme_true(matched: list[Any], leaves: list[Any], least: bool) -> bool:
    """A matched number in a list's item that is the least (or the most) of the numbers at the
    same place in every item of that list: "the cheapest costs 1,377.49" over two offers."""
    by_anchor = {leaf.anchor(): leaf for leaf in leaves}
    for finding in matched:
        item = ITEM_RE.match(finding.pointer)
        own = values.number_of(finding.value)
        if item is None or own is None or isinstance(finding.value, bool):
            continue
        count = by_anchor.get(item["list"])
        if count is None or not count.derived or not isinstance(count.value, int):
            continue
        others = [by_anchor.get(f"{item['list']}/{i}{item['rest']}") for i in range(count.value)]
        numbers = [values.number_of(o.value) if o is not None else None for o in others]
        if count.value < 2 or any(n is None for n in numbers):
            continue
        if own == (min(numbers) if least else max(numbers)):
            return True
    return False


def _particle(claim: str, word: Word, opens: bool) -> bool:
    """A yes-word that opens the claim, set apart by a mark: "Yes:", "Oui :", "Sí,"."""
    mark = re.match(r"\s*[:,.!—–-]", claim[word.end :])
    return opens and word.folded in YES_WORDS and mark is not None


def _yes_consistent(matched: list[Any], leaves: list[Any]) -> bool:
    """A "yes" beside the values: none of them is zero, no yes/no value of the result false."""
    if any(isinstance(f.value, bool) and not f.value for f in matched):
        return False
    if any(isinstance(leaf.value, bool) and not leaf.value for leaf in leaves):
        return False
    return not any(
        not isinstance(f.value, bool) and values.number_of(f.value) == 0 for f in matched
    )


def judge(
    claim: str,
    residual: list[tuple[str, int, int]],
    matched: list[Any],
    covered: list[tuple[int, int]],
    leaves: list[Any],
    context_words: set[str],
    tokens: list[tuple[str, int, int]],
    language: str | None = None,
) -> Residue:
    """Which of a claim's left-over words (`residual`: folded word, start, end) can carry a
    fact its matched values (`matched`: findings with `pointer`, `value`, `start`, `end`) do not
    check, given the spans the check `covered` (values matched or passed by a call), the run's
    `leaves` and the `context_words` of its calls."""
    starts = {s: i for i, (_, s, _) in enumerate(tokens)}
    spans = [(s, e) for s, e in covered if e > s]
    clauses = _clauses(claim)
    held = [str(leaf.value) for leaf in leaves if isinstance(leaf.value, str)]
    held_concepts = _held_concepts([*held, *context_words])
    held_words = {w for h in held for w, _, _ in values.tokens_with_spans(h)} | context_words
    # a word naming an option the run holds ("urgenza alta" over urgency "high") is checked,
    # and so is a phrase of several ("parcialmente nublado" over "Partly cloudy")
    spans += [(s, e) for t, s, e in tokens if _named_concepts(t) & held_concepts]
    held_phrases = [
        (tokens[m.start][1], tokens[m.end - 1][2])
        for m in enum_words.mentions(tuple(t for t, _, _ in tokens))
        if m.end - m.start > 1 and m.concept in held_concepts
    ]
    spans += held_phrases
    blocking: list[tuple[str, str]] = []
    unchecked: list[str] = []
    framing = [
        (a, b)
        for a, b in _sentences(claim)
        if not any(a <= s < b for s, _ in spans) and answer_framing.is_framing(claim[a:b])
    ]
    # phrases that state nothing the values do not: an idiom, "local time" beside a matched
    # time, "the last 90 days" over a call's window of 90 days
    timed = [f for f in matched if (m := values.moment_of(f.value)) is not None and m.time]
    quiet = [*_phrases_at(tokens, IDIOMS), *_windows_at(tokens, context_words), *held_phrases]
    quiet += [
        (a, b)
        for a, b in _phrases_at(tokens, LOCAL_TIME)
        if any(x <= a < y and x <= f.start < y for f in timed for x, y in _sentences(claim))
    ]
    for folded, start, end in residual:
        if any(a <= start < b for a, b in framing):
            continue  # a sentence of advice or a hedge the claim holds: it states nothing
        if any(a <= start < b for a, b in quiet):
            continue
        word = Word(claim[start:end], folded, start, end)
        if language == "pt" and folded in PT_FUNCTION_WORDS:
            continue  # "no nó": "in the"; "mas": "but", not "more" as in Spanish
        index = starts.get(start, 0)
        previous_end = tokens[index - 1][2] if index > 0 else None
        first = _sentence_first(claim, word, previous_end)
        after = tokens[index + 1][0] if index + 1 < len(tokens) else ""
        before = tokens[index - 1][0] if index > 0 else ""
        near = [t for t, _, _ in tokens[max(0, index - CONTEXT) : index + CONTEXT + 1]]
        if folded in DEGREE and (after in CHEAP or after in DEAR):
            # "più economica": a superlative, true when the matched value is its list's end
            true = _extreme_true(matched, leaves, least=after in CHEAP)
            why = CHECKED if true else "is a superlative the leaves do not make true"
        elif before in DEGREE and (folded in CHEAP or folded in DEAR):
            true = _extreme_true(matched, leaves, least=folded in CHEAP)
            why = CHECKED if true else "is a superlative the leaves do not make true"
        else:
            why = _why(
                claim,
                word,
                previous_end,
                first,
                language == "de" and before in DE_DETERMINERS,
                near,
                matched,
                leaves,
                context_words,
                held_concepts,
                held_words,
            )
        if why is None:
            clause = next(((a, b) for a, b in clauses if a <= start < b), (0, len(claim)))
            # a value may span a comma ("bis Samstag, 6 März in der Testphase")
            if not any(s < clause[1] and e > clause[0] for s, e in spans):
                why = "is in a part of the claim that no matched value is in"
        if why is None:
            unchecked.append(word.text)
        elif why == CHECKED:
            continue
        else:
            blocking.append((word.text, why))
    return Residue(blocking, unchecked)


def _why(
    claim: str,
    word: Word,
    previous_end: int | None,
    first: bool,
    noun: bool,
    near: list[str],
    matched: list[Any],
    leaves: list[Any],
    context_words: set[str],
    held_concepts: set[str],
    held_words: set[str],
) -> str | None:
    w = word.folded
    clause = [f for f in matched if _same_clause(claim, f.start, word.start)]
    if _particle(claim, word, first and not re.search(r"\w", claim[: word.start])):
        return CHECKED if _yes_consistent(matched, leaves) else "says yes beside a zero or a no"
    if _name_like(claim, word, previous_end, noun):
        return "may be a name or a code"
    if w == "n" and claim[word.end : word.end + 1] in ("°", "º", "."):
        return None  # "n° 1590": the number sign, not "n'" of a negation
    if w in NEGATIONS or w in PARTNERS:
        return "negates or qualifies a fact"
    if w in UNIVERSAL or w in BOTH:
        if _universal_true(matched, leaves, both=w in BOTH):
            return CHECKED
        return "is a quantifier the leaves do not make true"
    if w in RESTRICTIVE:
        return "is a quantifier"
    if w in values.WEEKDAYS or w in values.MONTHS or w in RELATIVE_DAYS:
        return "is a date or a day"
    named = _named_concepts(w)
    if any(c.split(":")[0] in _TIME_GROUPS for c in named):
        return "is a date or a time"
    if _path_restated(claim, word, context_words):
        return CHECKED  # "3 files under alb/2027/02/04/" over the call's prefix
    if w in UP or w in DOWN:
        own, other = (FILTER_UP, FILTER_DOWN) if w in UP else (FILTER_DOWN, FILTER_UP)
        if own in context_words and other not in context_words:
            return CHECKED  # the direction of the call's own filter
        return "is a comparison no filter of the call states"
    if w in RISE or w in FALL:
        signs = [_sign(f) for f in clause if _sign(f) is not None]
        if signs and all(sign == (w in RISE) for sign in signs):
            return CHECKED  # the direction of the matched change
        return "is a direction of change the matched values do not have"
    if w in LEAST or w in MOST:
        if _extreme_true(matched, leaves, least=w in LEAST):
            return CHECKED
        return "is a superlative the leaves do not make true"
    if w in LATEST and any(set(values.key_words(f.pointer)) & LATEST_KEYS for f in clause):
        return CHECKED  # "last scanned in Köln" over /latestStatusDetail/scanLocation/city
    if w in RANKS:
        return "is a comparison or an order"
    if named & held_concepts:
        return CHECKED  # an option or a state the run holds ("prioridad media" over medium)
    if w in NUMBER_WORDS or w in PRICE_WORDS or w in values.UNITS:
        return "is a number, a unit or a price"
    if w in values.CURRENCY_CODES or w in values.CURRENCY_SYMBOLS:
        return "is a currency"
    if w in YES_WORDS or w in ("true", "false", "vrai", "faux", "wahr", "falsch"):
        return "is a yes/no value"
    compound = _compound(claim, word)
    if compound is not None:  # "drop-off": the compound is the word, not "off"
        w = "".join(compound)
        whole = enum_words.mentions(compound)
        named = {m.concept for m in whole if m.end - m.start == len(compound)}
        named |= _named_concepts(w)
    elif named:  # a weak word ("leitura", "view") names its option only beside its role
        named = {c for c in named if c in _strong_concepts(w) or enum_words.role_beside(c, near)}
    if named:
        return "names a state or an option the run does not hold"
    if w in STATES and not any(w == values.fold(h) for h in held_words):
        return "is a state the run does not hold"
    if GLOSSARY.get(w, frozenset()) & MOMENT_STEMS and any(
        values.moment_of(f.value) is not None for f in matched
    ):
        return CHECKED  # "Fecha: el sábado 1 de mayo": the label of the date it gives
    if w in GLOSSARY:  # a word for an action or a field; glossed, it would not be left over
        return "names an action or a field the run does not hold"
    if _counts(claim, word, matched):
        return "names what a number counts, and no key says it"
        return "names an action or a field the run does not hold"
    return None
