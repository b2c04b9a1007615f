"""Build the paraphrase claim/evidence pair set: eval/sets/paraphrase-pairs-v1/.

    python scripts/build_paraphrase_pairs.py [--squad PATH] [--out DIR]

(default --squad: ../shared/datasets/squad2/train_first10_articles.json)

Why: the guardrails pass HaluEval because its right answers copy the knowledge word for word; an
LLM generator paraphrases. This set asks the per-claim verdict to tell a faithful paraphrase of
the evidence from one that changes a single fact.

Source: SQuAD 2.0 *train*, its first 10 articles (CC BY-SA 4.0), never the frozen eval slices'
articles nor SciFact. For a seeded sample of answerable questions, the sentence of the paragraph
that holds the answer is rewritten by templates (`paraphrase`): number words, date formats,
possessives, a fronted or moved time phrase, synonyms from a small list, passive voice for a few
verbs, a hedging lead-in ("According to the source, ..."), or the clause that holds the answer
only. The evidence is the whole paragraph; the question is kept (the judge sees it).

- supported: the paraphrase;
- unsupported: a second paraphrase of the same sentence with one fact changed (`corrupt`):
  a figure or a date shifted, a name swapped for another name of the same article (from this
  paragraph or another one), a negation added, a direction flipped; or a paraphrased sentence of
  another paragraph of the same article.

Every source sentence gives one pair of each label, so the set is balanced. Articles 1-5 are the
`dev` split (thresholds are chosen there), articles 6-10 the `test` split (figures reported
there). Same input, same seed: the same bytes. `manifest.json` holds the sha256 of each file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from stages.common.text import sentence_spans  # noqa: E402

DEFAULT_SQUAD = ROOT.parent / "shared" / "datasets" / "squad2" / "train_first10_articles.json"
OUT = ROOT / "eval" / "sets" / "paraphrase-pairs-v1"
SEED = 12
SOURCES_PER_ARTICLE = 13  # 10 articles x 13 sentences x 2 labels = 260 pairs
DEV_ARTICLES = 5
MIN_WORDS, MAX_WORDS = 8, 45

NUMBER_WORDS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen", "twenty"),
]
MONTHS = [
    *("January", "February", "March", "April", "May", "June", "July", "August"),
    *("September", "October", "November", "December"),
]
# A small synonym list: the words LLM paraphrases swap most, both directions where it reads well.
SYNONYMS = {
    "began": "started",
    "started": "began",
    "begin": "start",
    "received": "got",
    "famous": "well-known",
    "popular": "well-liked",
    "large": "big",
    "largest": "biggest",
    "built": "constructed",
    "created": "made",
    "located": "situated",
    "important": "significant",
    "several": "a number of",
    "many": "numerous",
    "however": "but",
    "also": "additionally",
    "approximately": "about",
    "about": "around",
    "died": "passed away",
    "called": "named",
    "named": "called",
    "known as": "referred to as",
    "including": "among them",
    "during": "in the course of",
    "because": "since",
    "help": "assist",
    "helped": "assisted",
    "used": "employed",
    "uses": "employs",
    "wanted": "wished",
    "major": "main",
    "won": "earned",
    "earned": "won",
    "early": "initial",
    "later": "afterwards",
    "often": "frequently",
    "only": "just",
    "together": "jointly",
    "show": "demonstrate",
    "showed": "demonstrated",
    "stated": "said",
    "said": "stated",
    "announced": "declared",
    "described": "characterised",
    "decided": "chose",
    "allowed": "permitted",
    "needed": "required",
    "main": "principal",
    "city": "town",
    "country": "nation",
    "film": "movie",
    "song": "track",
    "album": "record",
    "children": "kids",
}
PASSIVE_VERBS = (
    "released|founded|built|wrote|recorded|produced|designed|created|directed|published|signed|"
    "formed|established|discovered|introduced|announced|launched|developed|acquired|composed|"
    "performed|received|won|hosted|replaced|praised|criticized|described|named|sold|opened"
)
PASSIVE_RE = re.compile(
    rf"^(?P<subj>(?:The |the )?[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){{0,3}}) (?P<verb>{PASSIVE_VERBS}) "
    r"(?P<obj>[^,;]+?)(?P<end>[.!?]?)$"
)
PASSIVE_PARTICIPLE = {"wrote": "written", "won": "won", "sold": "sold", "built": "built"}
LEAD_INS = (
    "According to the source, {s}",
    "The text states that {s}",
    "It is reported that {s}",
)
DIRECTION_FLIPS = {
    "before": "after",
    "after": "before",
    "more": "fewer",
    "most": "least",
    "first": "last",
    "last": "first",
    "largest": "smallest",
    "highest": "lowest",
    "lowest": "highest",
    "earlier": "later",
    "increased": "decreased",
    "increase": "decrease",
    "older": "younger",
    "best": "worst",
    "early": "late",
    "late": "early",
}
AUXILIARIES = r"is|was|were|are|has|had|have|could|would|can|will|did|does"
LOWERABLE_STARTS = frozenset(
    ("The", "It", "In", "On", "At", "By", "For", "From", "During", "After", "Before", "This")
    + ("That", "These", "Those", "A", "An", "His", "Her", "Their", "Its", "She", "He", "They")
    + ("As",)
)
YEAR_PHRASE_RE = re.compile(r",? (in|by|during|since) ((?:early |late |mid-)?\d{4}s?)(?=[.,]|$)")
NAME_RE = re.compile(r"(?<!^)(?<![.!?] )\b[A-Z][a-zé]+(?: [A-Z][a-zé]+)*")
NUMBER_RE = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w.,]\d)")
DATE_RE = re.compile(rf"\b({'|'.join(MONTHS)}) (\d{{1,2}}), (\d{{4}})\b")


# ---------------------------------------------------------------- paraphrase templates


def _match_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def to_number_words(s: str, rng: random.Random) -> str | None:
    """A small figure written as a word ("3" -> "three"), a percent sign spelled out."""
    small = [m for m in re.finditer(r"(?<![\w.,$€£])(\d{1,2})(?![\w%]|[.,]\d)", s)]
    small = [m for m in small if int(m.group(1)) <= 20 and not _next_to_month(s, m)]
    if small:
        m = rng.choice(small)
        return s[: m.start()] + NUMBER_WORDS[int(m.group(1))] + s[m.end() :]
    if "%" in s:
        return re.sub(r"(\d)\s?%", r"\1 percent", s, count=1)
    words_re = rf"\b({'|'.join(NUMBER_WORDS[2:13])})\b"
    if m := re.search(words_re, s):
        return s[: m.start()] + str(NUMBER_WORDS.index(m.group(1))) + s[m.end() :]
    return None


def _next_to_month(s: str, m: re.Match) -> bool:
    around = s[max(0, m.start() - 10) : m.end() + 10]
    return any(month in around for month in MONTHS)


def date_format(s: str, rng: random.Random) -> str | None:
    """Dates: "September 4, 1981" -> "4 September 1981"."""
    if not DATE_RE.search(s):
        return None
    return DATE_RE.sub(lambda m: f"{m.group(2)} {m.group(1)} {m.group(3)}", s, count=1)


def possessive(s: str, rng: random.Random) -> str | None:
    """Possessives: "the debut album of Beyoncé" -> "Beyoncé's debut album"."""
    m = re.search(
        r"\bthe ((?:[a-z]+ )?[a-z]+) of ([A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"
        r"(?=[,.;)]| (?:in|on|at|and|was|were|is|to|with|by|from|for|during)\b|$)",
        s,
    )
    if not m or m.group(2).endswith("'s"):
        return None
    return s[: m.start()] + f"{m.group(2)}'s {m.group(1)}" + s[m.end() :]


def move_year_phrase(s: str, rng: random.Random) -> str | None:
    """Fronting: "X did Y in 1999." -> "In 1999, x did Y." (the first word lower-cased)."""
    m = YEAR_PHRASE_RE.search(s)
    first = s.split(" ", 1)[0]
    if not m or first not in LOWERABLE_STARTS or m.start() < 10:
        return None
    rest = (s[: m.start()] + s[m.end() :]).strip()
    rest = rest[0].lower() + rest[1:]
    return f"{m.group(1).capitalize()} {m.group(2)}, {rest}"


def synonyms(s: str, rng: random.Random) -> str | None:
    """Up to two words swapped for synonyms from `SYNONYMS`."""
    found = [  # lower case only: a capitalised word may be part of a name ("New York City")
        m for w in SYNONYMS for m in re.finditer(rf"\b{re.escape(w)}\b", s)
    ]
    found.sort(key=lambda m: m.start())
    if not found:
        return None
    chosen, taken = [], set()
    for m in rng.sample(found, min(len(found), 2)):
        if not taken & set(range(m.start(), m.end())):
            chosen.append(m)
            taken |= set(range(m.start(), m.end()))
    for m in sorted(chosen, key=lambda m: -m.start()):
        word = m.group(0)
        s = s[: m.start()] + _match_case(word, SYNONYMS[word.lower()]) + s[m.end() :]
    return s


def passive(s: str, rng: random.Random) -> str | None:
    """Passive: "Beyoncé released the album." -> "The album was released by Beyoncé"."""
    m = PASSIVE_RE.match(s)
    if not m or len(m.group("obj").split()) > 12:
        return None
    verb = m.group("verb")
    participle = PASSIVE_PARTICIPLE.get(verb, verb)
    obj = m.group("obj")
    plural = obj.split()[0].lower() in ("two", "three", "several", "many") or (
        obj.split()[-1].endswith("s") and not obj.split()[-1].endswith("ss")
    )
    subject = m.group("subj")
    subject = subject[0].lower() + subject[1:] if subject.startswith("The ") else subject
    be = "were" if plural else "was"
    return f"{obj[0].upper()}{obj[1:]} {be} {participle} by {subject}{m.group('end') or '.'}"


def drop_parenthetical(s: str, rng: random.Random) -> str | None:
    """A summary drops asides: "(born September 4, 1981)", "(r. 1368-98)"."""
    out = re.sub(r" \([^()]{1,80}\)", "", s, count=1)
    return out if out != s else None


def active_voice(s: str, rng: random.Random) -> str | None:
    """Active: "The album was released by Beyoncé in 2003." -> "Beyoncé released the album…"."""
    m = re.match(
        r"^(?P<obj>(?:The|the|A|An|His|Her|Its|Their) [^,;]{2,60}?) (?:was|were) "
        r"(?P<verb>[a-z]+ed) by (?P<agent>[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){0,3})(?P<rest>.*)$",
        s,
    )
    if not m:
        return None
    obj = m.group("obj")
    obj = obj[0].lower() + obj[1:]
    return f"{m.group('agent')} {m.group('verb')} {obj}{m.group('rest')}"


def lead_in(s: str, rng: random.Random) -> str | None:
    first = s.split(" ", 1)[0]
    body = s[0].lower() + s[1:] if first in LOWERABLE_STARTS else s
    return rng.choice(LEAD_INS).format(s=body)


def answer_clause(s: str, rng: random.Random, answer: str = "") -> str | None:
    """Only the clause that holds the answer (a summary drops the rest of the sentence)."""
    parts = re.split(r"(?<=[a-z0-9)]), (?:and |while |but )?", s)
    # the main clause only: a later piece may be a relative or participial clause
    main = parts[0]
    if len(parts) < 2 or not answer or answer not in main or len(main.split()) < 5 or ";" in main:
        return None
    clause = parts[0].rstrip(".")
    return clause[0].upper() + clause[1:] + "."


TEMPLATES = (
    ("number_words", to_number_words),
    ("date_format", date_format),
    ("possessive", possessive),
    ("move_year_phrase", move_year_phrase),
    ("passive", passive),
    ("drop_parenthetical", drop_parenthetical),
    ("active_voice", active_voice),
    ("synonyms", synonyms),
    ("answer_clause", None),  # needs the answer
    ("lead_in", lead_in),
)


def paraphrase(sentence: str, answer: str, rng: random.Random) -> tuple[str, list[str]] | None:
    """One to three template rewrites that apply, the structural ones first; None if none does."""
    text, applied = sentence, []
    order = list(TEMPLATES[:7])
    rng.shuffle(order)
    order += [TEMPLATES[7], TEMPLATES[8], TEMPLATES[9]]
    budget = rng.choice((1, 2, 2, 3))
    for name, fn in order:
        if len(applied) >= budget:
            break
        if name == "lead_in" and (applied or rng.random() < 0.7):
            continue  # a lead-in alone only now and then
        if name == "answer_clause":
            out = answer_clause(text, rng, answer) if rng.random() < 0.5 else None
        else:
            out = fn(text, rng)
        if out and out != text:
            text, applied = out, [*applied, name]
    if not applied:
        out = lead_in(text, rng)
        text, applied = out or text, ["lead_in"]
    return (text, applied) if text != sentence else None


# ---------------------------------------------------------------- one-fact corruptions


def swap_figure(s: str, rng: random.Random, **_) -> str | None:
    if m := DATE_RE.search(s):
        month = MONTHS[(MONTHS.index(m.group(1)) + rng.randint(1, 11)) % 12]
        return s[: m.start()] + f"{month} {m.group(2)}, {m.group(3)}" + s[m.end() :]
    numbers = list(NUMBER_RE.finditer(s))
    if not numbers:
        return None
    m = rng.choice(numbers)
    raw = m.group(0).replace(",", "")
    if "." in raw:
        value = f"{float(raw) * rng.choice((2, 3)):.{len(raw.split('.')[1])}f}"
    elif len(raw) == 4 and raw.startswith(("1", "2")):
        value = str(int(raw) + rng.choice((-7, -3, -2, 2, 3, 6)))
    else:
        value = str(int(raw) + rng.choice((1, 2, 5, 10)) if int(raw) < 50 else int(raw) * 2)
    return s[: m.start()] + value + s[m.end() :]


def swap_number_word(s: str, rng: random.Random, **_) -> str | None:
    m = re.search(rf"\b({'|'.join(NUMBER_WORDS[2:13])})\b", s, flags=re.IGNORECASE)
    if not m:
        return None
    index = NUMBER_WORDS.index(m.group(1).lower())
    other = NUMBER_WORDS[index + 1 if index < 12 else index - 1]
    return s[: m.start()] + _match_case(m.group(1), other) + s[m.end() :]


def swap_name(s: str, rng: random.Random, *, names: list[str], source: str = "", **_) -> str | None:
    """A name of the source sentence (never its first word) replaced by another name."""
    own = set(names_of(source))
    present = [m for m in NAME_RE.finditer(s) if m.group(0) in own]
    if not present:
        return None
    m = rng.choice(present)
    choices = [n for n in names if n != m.group(0) and n not in s and n not in MONTHS]
    if not choices:
        return None
    return s[: m.start()] + rng.choice(choices) + s[m.end() :]


def negate(s: str, rng: random.Random, **_) -> str | None:
    if re.search(r"\b(not|never|no)\b|n't", s):
        return None
    m = re.search(rf"\b({AUXILIARIES})\b(?! (?:not|been)\b)", s)
    if m:
        return s[: m.end()] + " not" + s[m.end() :]
    m = re.search(r"\b([a-z]+ed)\b", s[1:])
    if m:
        start = m.start() + 1
        return s[:start] + "did not " + _base_form(m.group(1)) + s[start + len(m.group(1)) :]
    return None


def _base_form(verb: str) -> str:
    """'cited' -> 'cite', 'listed' -> 'list', 'stopped' -> 'stop', 'carried' -> 'carry'."""
    vowels = "aeiou"
    stem = verb[:-2]
    if verb.endswith("ied"):
        return verb[:-3] + "y"
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsfz":
        return stem[:-1]
    if (
        len(stem) > 2
        and stem[-1] in "tvszcgdrnkp"
        and stem[-2] in vowels
        and stem[-3] not in vowels
    ):
        return stem + "e"
    return stem


def flip_direction(s: str, rng: random.Random, **_) -> str | None:
    found = [m for w in DIRECTION_FLIPS for m in re.finditer(rf"\b{w}\b", s, flags=re.IGNORECASE)]
    if not found:
        return None
    m = rng.choice(sorted(found, key=lambda m: m.start()))
    word = m.group(0)
    return s[: m.start()] + _match_case(word, DIRECTION_FLIPS[word.lower()]) + s[m.end() :]


CORRUPTIONS = (
    ("figure", swap_figure),
    ("number_word", swap_number_word),
    ("name_in_paragraph", swap_name),
    ("name_in_article", swap_name),
    ("negation", negate),
    ("direction", flip_direction),
)


# ---------------------------------------------------------------- the set


def names_of(text: str) -> list[str]:
    return sorted({m.group(0) for m in NAME_RE.finditer(text) if m.group(0) not in MONTHS})


def whole_sentences(context: str) -> list[str]:
    """Sentences of a paragraph that read as whole sentences: a split after an abbreviation
    ("St.", "r.", "Jr.") or inside a footnote mark leaves fragments, which are dropped."""
    # the splitter paraphrase-pairs-v1 was built with, so the builder still reproduces it
    spans = sentence_spans(context, abbreviations=False)
    kept = []
    for i, (begin, end) in enumerate(spans):
        sentence = context[begin:end]
        previous = context[spans[i - 1][0] : spans[i - 1][1]] if i else ""
        clean_end = re.search(r"[a-z]{3,}[.!?]\"?$|\d[.!?]$|\)[.!?]$", sentence)
        clean_start = not previous or re.search(r"[a-z]{3,}[.!?]\"?$|\d[.!?]$|\)[.!?]$", previous)
        whole = clean_end and clean_start and "[" not in sentence and sentence[0].isupper()
        if whole and MIN_WORDS <= len(sentence.split()) <= MAX_WORDS:
            kept.append(sentence)
    return kept


def answer_sentence(context: str, answer: str, start: int) -> str | None:
    for sentence in whole_sentences(context):
        begin = context.find(sentence)
        if begin <= start < begin + len(sentence) and answer in sentence:
            return sentence
    return None


def candidates(article: dict) -> list[dict]:
    """(paragraph index, question, answer, sentence) of each answerable question, one per
    sentence."""
    seen, found = set(), []
    for p_index, paragraph in enumerate(article["paragraphs"]):
        context = paragraph["context"]
        for qa in paragraph["qas"]:
            if qa.get("is_impossible") or not qa["answers"]:
                continue
            answer = qa["answers"][0]
            sentence = answer_sentence(context, answer["text"], answer["answer_start"])
            if sentence and sentence not in seen:
                seen.add(sentence)
                found.append(
                    {"p": p_index, "question": qa["question"], "qid": qa["id"],
                     "answer": answer["text"], "sentence": sentence}
                )  # fmt: skip
    return found


def corrupt(
    text: str,
    kind: str,
    rng: random.Random,
    paragraph_names: list[str],
    article_names: list[str],
    source: str,
) -> str | None:
    fn = dict(CORRUPTIONS)[kind]
    if kind == "name_in_paragraph":
        return fn(text, rng, names=paragraph_names, source=source)
    if kind == "name_in_article":
        names = [n for n in article_names if n not in paragraph_names]
        return fn(text, rng, names=names, source=source)
    return fn(text, rng)


def unsupported_for(
    source: dict, article: dict, rng: random.Random, turn: int, article_names: list[str]
) -> dict | None:
    """A one-fact corruption of a fresh paraphrase, in turn with a sentence of another paragraph."""
    context = article["paragraphs"][source["p"]]["context"]
    kinds = [k for k, _ in CORRUPTIONS] + ["other_paragraph"]
    start = turn % len(kinds)
    for kind in kinds[start:] + kinds[:start]:
        if kind == "other_paragraph":
            others = [
                i for i, p in enumerate(article["paragraphs"]) if i != source["p"] and p["qas"]
            ]
            rng.shuffle(others)
            for other in others[:5]:
                sentences = whole_sentences(article["paragraphs"][other]["context"])
                if not sentences:
                    continue
                pick = rng.choice(sentences)
                if pick in context:
                    continue
                para = paraphrase(pick, "", rng)
                return {"claim": para[0] if para else pick, "kind": kind,
                        "templates": para[1] if para else []}  # fmt: skip
            continue
        para = paraphrase(source["sentence"], source["answer"], rng)
        base, templates = para if para else (source["sentence"], [])
        changed = corrupt(base, kind, rng, names_of(context), article_names, source["sentence"])
        if changed and changed != base:
            return {"claim": changed, "kind": kind, "templates": templates}
    return None


def build(squad_path: Path, seed: int = SEED) -> list[dict]:
    data = json.loads(squad_path.read_text(encoding="utf-8"))["data"]
    rng = random.Random(seed)
    pairs: list[dict] = []
    for a_index, article in enumerate(data):
        split = "dev" if a_index < DEV_ARTICLES else "test"
        article_names = names_of(" ".join(p["context"] for p in article["paragraphs"]))
        pool = candidates(article)
        rng.shuffle(pool)
        taken = 0
        for source in pool:
            if taken >= SOURCES_PER_ARTICLE:
                break
            supported = paraphrase(source["sentence"], source["answer"], rng)
            unsupported = unsupported_for(source, article, rng, taken, article_names)
            if not supported or not unsupported:
                continue
            context = article["paragraphs"][source["p"]]["context"]
            common = {"split": split, "article": article["title"], "question": source["question"],
                      "squad_id": source["qid"], "evidence": context,
                      "source_sentence": source["sentence"]}  # fmt: skip
            pairs.append(
                {
                    **common,
                    "claim": supported[0],
                    "label": "supported",
                    "kind": "paraphrase",
                    "templates": supported[1],
                }  # fmt: skip
            )
            pairs.append({**common, **unsupported, "label": "unsupported"})
            taken += 1
    for number, pair in enumerate(pairs, start=1):
        pair["pair_id"] = f"pp{number:04d}"
    return pairs


NOTICE = """# Notice: SQuAD 2.0 material in this pair set

`pairs.jsonl` holds paragraphs of SQuAD 2.0 train (its first 10 articles), their questions, and
claims derived from their sentences by `scripts/build_paraphrase_pairs.py` (template paraphrases
and one-fact corruptions). SQuAD 2.0 (Rajpurkar, Jia and Liang, 2018) is licensed CC BY-SA 4.0
(https://creativecommons.org/licenses/by-sa/4.0/); this derived set is shared under the same
license. The paragraphs come from Wikipedia articles (CC BY-SA).
"""


def write(pairs: list[dict], out: Path = OUT) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    fields = ("pair_id", "split", "label", "kind", "templates", "article", "squad_id",
              "question", "claim", "evidence", "source_sentence")  # fmt: skip
    lines = [json.dumps({k: p[k] for k in fields}, ensure_ascii=False) for p in pairs]
    (out / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "NOTICE.md").write_text(NOTICE, encoding="utf-8")
    files = {
        name: hashlib.sha256((out / name).read_bytes()).hexdigest()
        for name in ("NOTICE.md", "pairs.jsonl")
    }
    counts = {
        f"{split}/{label}": sum(1 for p in pairs if p["split"] == split and p["label"] == label)
        for split in ("dev", "test")
        for label in ("supported", "unsupported")
    }
    manifest = {
        "name": out.name,
        "kind": "claim-evidence pairs (not a question set for `grounding eval`)",
        "description": f"{len(pairs)} paraphrase pairs from SQuAD 2.0 train, seed {SEED}",
        "counts": counts,
        "files": files,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not args.squad.is_file():
        print(f"SQuAD 2.0 train file not found: {args.squad}", file=sys.stderr)
        return 2
    manifest = write(build(args.squad), args.out)
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
